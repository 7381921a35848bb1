//! A script as the extension host and its engines both know it: its language and identity
//! ([`ExtensionInfo`]), the limits of its calls ([`Limits`]), how it fails ([`ScriptError`]),
//! the ids of the functions it registered ([`CallbackId`]) and what `api.exec` gives back.
//! A leaf: it imports nothing of the host's other files.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

/// Identifies a script function the engine keeps (a handler, a tool's `execute`, a command).
pub type CallbackId = u64;

/// The language of an extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Lua,
    Rhai,
}

impl Language {
    pub fn from_path(path: &std::path::Path) -> Option<Language> {
        match path.extension()?.to_str()? {
            "lua" => Some(Language::Lua),
            "rhai" => Some(Language::Rhai),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Language::Lua => "lua",
            Language::Rhai => "rhai",
        }
    }
}

/// `api.extension`: who this script is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExtensionInfo {
    /// Path relative to its root without the suffix (`git/guard`).
    pub name: String,
    pub path: PathBuf,
    pub language: Language,
    /// The discovery root it came from (for `require` of helper modules).
    #[serde(skip)]
    pub root: PathBuf,
    /// The source of an extension that ships inside mypi (its path is then a name only).
    #[serde(skip)]
    pub embedded: Option<&'static str>,
}

impl ExtensionInfo {
    /// The script's source: the embedded text, or the file's bytes.
    pub fn source(&self) -> std::io::Result<std::borrow::Cow<'static, [u8]>> {
        match self.embedded {
            Some(text) => Ok(std::borrow::Cow::Borrowed(text.as_bytes())),
            None => std::fs::read(&self.path).map(std::borrow::Cow::Owned),
        }
    }
}

/// Most names `api.read_dir` returns.
pub const MAX_DIR_ENTRIES: usize = 10_000;

/// Per-call limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Time a call may run (the CPU budget), default 1 s; tools may set their own.
    pub budget: Duration,
    /// The VM's memory cap (Lua: its allocator limit; Rhai: what its thread allocated and
    /// has not freed, see `alloc.rs`), default 64 MiB (`MYPI_EXT_MEMORY_MB`).
    pub memory_bytes: usize,
    /// The largest value a script may hand to the host (see `crossing.rs`), default 16 MiB
    /// (`MYPI_EXT_VALUE_MB`).
    pub max_value_bytes: usize,
    /// Rhai: the deepest call nesting.
    pub max_call_levels: usize,
    /// Rhai: the largest string, array and map a script may build.
    pub max_string_bytes: usize,
    pub max_array_len: usize,
    pub max_map_len: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            budget: Duration::from_secs(1),
            memory_bytes: 64 * 1024 * 1024,
            max_value_bytes: 16 * 1024 * 1024,
            max_call_levels: 64,
            max_string_bytes: 16 * 1024 * 1024,
            max_array_len: 1_000_000,
            max_map_len: 100_000,
        }
    }
}

/// What a failed load or call reports. `message` carries `path:line: what happened`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ScriptError {
    pub kind: ErrorKind,
    pub message: String,
}

/// The kinds of script failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Syntax,
    Runtime,
    /// The call ran past its budget.
    Budget,
    /// The script hit its memory or size limits.
    Memory,
    /// The host gave up waiting (the engine is stuck in native code) or the worker is gone.
    Unavailable,
}

/// What a callback's result may be, in both languages' messages.
pub const PLAIN_DATA: &str = "return plain data (tables, strings, numbers, booleans)";

impl ScriptError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ScriptError {
            kind,
            message: message.into(),
        }
    }

    pub fn runtime(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Runtime, message)
    }

    /// A call stopped at `at` (`path:line`, or the path) for running past its CPU `budget`;
    /// the same words in both languages, and the same on a busy machine (the budget, not the
    /// time the check caught it at).
    pub fn over_budget(at: &str, budget: Duration) -> Self {
        Self::new(
            ErrorKind::Budget,
            format!(
                "{at}: stopped after {:.1} s (the CPU budget); does it loop forever?",
                budget.as_secs_f64()
            ),
        )
    }

    /// A call stopped at `at` for using more than `cap` bytes of memory; the same words in
    /// both languages.
    pub fn out_of_memory(at: &str, cap: usize) -> Self {
        Self::new(
            ErrorKind::Memory,
            format!(
                "{at}: out of memory: the script used more than its {} (MYPI_EXT_MEMORY_MB)",
                crate::vocab::text::mib(cap)
            ),
        )
    }
}

/// The result of `api.exec`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExecResult {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
}
