//! [`HookRun`]: the `hook_run` event, one per settings hook (Claude Code's or Codex's
//! command hook) that ran, with what it answered and how long it took.

use serde::{Deserialize, Serialize};

/// One run of a settings hook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookRun {
    /// The Claude Code event it ran for (`PreToolUse`).
    pub event: String,
    /// Its command line, as the settings file wrote it.
    pub command: String,
    /// The settings file it came from.
    pub source: String,
    /// The tool (Claude Code's name) for tool events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    pub outcome: HookOutcome,
    /// Its exit code, when it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
}

/// What a hook's run came to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookOutcome {
    /// It answered and nothing was stopped (exit 0, or an `allow`).
    #[default]
    Ok,
    /// It blocked (exit 2, `deny`, `decision: block`, `continue: false`).
    Blocked,
    /// It failed (another exit code, a signal, it could not start): reported, and mypi went on.
    Error,
    /// Its timeout passed: its process group was killed, and mypi went on.
    TimedOut,
    /// The prompt was cancelled while it ran: its process group was killed.
    Cancelled,
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub fn sample() -> HookRun {
        HookRun {
            event: "PreToolUse".into(),
            command: "guard.py".into(),
            source: "/p/.claude/settings.json".into(),
            tool: Some("Bash".into()),
            outcome: HookOutcome::Blocked,
            exit_code: Some(2),
            duration_ms: 7,
        }
    }

    pub fn shape() -> serde_json::Value {
        serde_json::json!({"type":"hook_run","event":"PreToolUse","command":"guard.py",
            "source":"/p/.claude/settings.json","tool":"Bash","outcome":"blocked",
            "exit_code":2,"duration_ms":7})
    }
}
