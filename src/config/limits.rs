//! The numeric settings of [`super::Config`]: each from its `MYPI_*` variable (or a flag),
//! checked, with its default. A value that is not a number, or a count of 0, is a
//! [`ConfigError`] naming the variable.

use std::time::Duration;

use super::{ConfigError, Overrides};
use crate::vocab::run::queue::QueueLimits;
use crate::vocab::thinking::Thinking;

/// The limits and counts, resolved.
pub(super) struct Limits {
    pub retry: RetryPolicy,
    pub ext_budget: Duration,
    pub max_turns: u32,
    pub queue: QueueLimits,
    pub read_timeout: Duration,
    pub ext_memory_bytes: usize,
    pub ext_value_bytes: usize,
    pub context_window: Option<u64>,
    /// The longest reply of every model (`MYPI_MAX_OUTPUT_TOKENS`).
    pub max_output_tokens: Option<u64>,
    /// The thinking level (`--thinking`, `MYPI_THINKING`).
    pub thinking: Thinking,
    /// Characters of the skills list in the system prompt (`MYPI_SKILLS_BUDGET`).
    pub skills_budget: usize,
    /// The MCP tools offered directly before servers are deferred: (tools, bytes).
    pub mcp_direct: (usize, usize),
    pub code_mode: CodeMode,
}

/// `[code_mode]`: whether the `code` tool is offered, and a script's budgets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CodeMode {
    /// `Some(false)`: no `code` tool; `Some(true)`: always offered; `None` (the default):
    /// offered while some tool is deferred or has `code` exposure.
    pub enabled: Option<bool>,
    /// Script time (CPU, host waits left out).
    pub budget: Duration,
    pub memory_bytes: usize,
    /// Wall-clock time of one `code` call, its tool calls included.
    pub timeout: Duration,
}

impl Default for CodeMode {
    fn default() -> Self {
        CodeMode {
            enabled: None,
            budget: Duration::from_secs(5),
            memory_bytes: 64 << 20,
            timeout: Duration::from_secs(300),
        }
    }
}

/// `[code_mode]` from the variables `var` gives.
fn code_mode(var: &dyn Fn(&str) -> Option<String>) -> Result<CodeMode, ConfigError> {
    let enabled = var("MYPI_CODE_MODE").map(|v| !matches!(v.trim(), "0" | "false"));
    Ok(CodeMode {
        enabled,
        budget: Duration::from_millis(count(var, "MYPI_CODE_BUDGET_MS", 5000)?.into()),
        memory_bytes: count(var, "MYPI_CODE_MEMORY_MB", 64)? as usize * 1024 * 1024,
        timeout: Duration::from_secs(count(var, "MYPI_CODE_TIMEOUT_S", 300)?.into()),
    })
}

/// Resolves the limits from `cli` and the variables `var` gives.
pub(super) fn limits(
    cli: &Overrides,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Limits, ConfigError> {
    let mut retry = RetryPolicy::default();
    if let Some(ms) = millis(var, "MYPI_RETRY_BASE_MS")? {
        retry.base_delay = ms;
    }
    let max_turns = match cli.max_turns {
        Some(0) => {
            return Err(ConfigError::BadCount {
                name: "--max-turns",
                value: "0".into(),
            })
        }
        Some(n) => n,
        None => count(var, "MYPI_MAX_TURNS", 50)?,
    };
    let defaults = QueueLimits::default();
    let queue = QueueLimits {
        max_len: count(var, "MYPI_QUEUE_MAX", defaults.max_len as u32)? as usize,
        max_chain: count(var, "MYPI_MAX_FOLLOW_UPS", defaults.max_chain as u32)? as usize,
        ..defaults
    };
    let mib = |n: u32| n as usize * 1024 * 1024;
    let context_window = match var("MYPI_CONTEXT_WINDOW") {
        Some(_) => Some(u64::from(count(var, "MYPI_CONTEXT_WINDOW", 1)?)),
        None => None,
    };
    let max_output_tokens = match var("MYPI_MAX_OUTPUT_TOKENS") {
        Some(_) => Some(u64::from(count(var, "MYPI_MAX_OUTPUT_TOKENS", 1)?)),
        None => None,
    };
    let thinking = match (cli.thinking, var("MYPI_THINKING")) {
        (Some(level), _) => level,
        (None, Some(v)) => Thinking::parse(&v).ok_or(ConfigError::BadThinking(v))?,
        (None, None) => Thinking::Off,
    };
    Ok(Limits {
        max_output_tokens,
        thinking,
        retry,
        ext_budget: millis(var, "MYPI_EXT_BUDGET_MS")?.unwrap_or(Duration::from_secs(1)),
        max_turns,
        queue,
        read_timeout: Duration::from_secs(count(var, "MYPI_READ_TIMEOUT_S", 120)?.into()),
        ext_memory_bytes: mib(count(var, "MYPI_EXT_MEMORY_MB", 64)?),
        ext_value_bytes: mib(count(var, "MYPI_EXT_VALUE_MB", 16)?),
        context_window,
        skills_budget: count(var, "MYPI_SKILLS_BUDGET", 16_000)? as usize,
        mcp_direct: (
            count(var, "MYPI_MCP_DIRECT_TOOLS", 40)? as usize,
            count(var, "MYPI_MCP_DIRECT_KB", 20)? as usize * 1024,
        ),
        code_mode: code_mode(var)?,
    })
}

/// A duration in milliseconds from `name`, if set.
fn millis(
    var: &dyn Fn(&str) -> Option<String>,
    name: &'static str,
) -> Result<Option<Duration>, ConfigError> {
    match var(name) {
        None => Ok(None),
        Some(ms) => match ms.trim().parse::<u64>() {
            Ok(n) => Ok(Some(Duration::from_millis(n))),
            Err(_) => Err(ConfigError::BadNumber { name, value: ms }),
        },
    }
}

/// A count above 0 from `name`, or `default`.
fn count(
    var: &dyn Fn(&str) -> Option<String>,
    name: &'static str,
    default: u32,
) -> Result<u32, ConfigError> {
    match var(name) {
        None => Ok(default),
        Some(v) => match v.trim().parse::<u32>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(ConfigError::BadCount { name, value: v }),
        },
    }
}
/// How often and how patiently to retry.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    pub max_retries: u32,
    pub base_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(500),
        }
    }
}

impl RetryPolicy {
    /// The delay before retry number `attempt` (1-based): exponential, capped at 30 s.
    pub fn delay(&self, attempt: u32) -> Duration {
        let factor = 1u32 << attempt.saturating_sub(1).min(6);
        (self.base_delay * factor).min(Duration::from_secs(30))
    }
}
