//! Claude Code's command hooks as data: the `hooks` table of `~/.claude/settings.json`,
//! `.claude/settings.json` and `.claude/settings.local.json`, and Codex's `hooks.json`
//! (`~/.codex/hooks.json`, `.codex/hooks.json`), which has the same shape:
//!
//! ```json
//! {"hooks": {"PreToolUse": [{"matcher": "Write|Edit",
//!                            "hooks": [{"type": "command", "command": "...", "timeout": 30}]}]}}
//! ```
//!
//! [`load`] reads them in that order (the user's files, then the project's, only when the
//! project is trusted) into [`CommandHook`]s; what cannot be used (a file that is not JSON, a
//! hook type mypi does not run, an event it does not know) is one problem line each, naming
//! the file (and the line, when the JSON itself is broken). Running them is
//! the business of the hook runner in the hooks layer (`hooks/command`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// A hook's timeout when its entry gives none (Claude Code's default).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The Claude Code events mypi runs command hooks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClaudeEvent {
    PreToolUse,
    PostToolUse,
    UserPromptSubmit,
    Stop,
    SubagentStop,
    SessionStart,
    SessionEnd,
    PreCompact,
    Notification,
}

impl ClaudeEvent {
    pub const ALL: [ClaudeEvent; 9] = [
        ClaudeEvent::PreToolUse,
        ClaudeEvent::PostToolUse,
        ClaudeEvent::UserPromptSubmit,
        ClaudeEvent::Stop,
        ClaudeEvent::SubagentStop,
        ClaudeEvent::SessionStart,
        ClaudeEvent::SessionEnd,
        ClaudeEvent::PreCompact,
        ClaudeEvent::Notification,
    ];

    /// The name as Claude Code writes it (`PreToolUse`).
    pub fn name(self) -> &'static str {
        match self {
            ClaudeEvent::PreToolUse => "PreToolUse",
            ClaudeEvent::PostToolUse => "PostToolUse",
            ClaudeEvent::UserPromptSubmit => "UserPromptSubmit",
            ClaudeEvent::Stop => "Stop",
            ClaudeEvent::SubagentStop => "SubagentStop",
            ClaudeEvent::SessionStart => "SessionStart",
            ClaudeEvent::SessionEnd => "SessionEnd",
            ClaudeEvent::PreCompact => "PreCompact",
            ClaudeEvent::Notification => "Notification",
        }
    }

    pub fn parse(name: &str) -> Option<ClaudeEvent> {
        ClaudeEvent::ALL.into_iter().find(|e| e.name() == name)
    }
}

/// Which calls (or sources, triggers) a hook entry is for.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// No matcher, `""` or `*`.
    All,
    /// A regular expression, searched (not anchored) in the name, as Claude Code does:
    /// `Write|Edit`, `mcp__github__.*`.
    Pattern(regex::Regex),
}

impl Matcher {
    /// The matcher of an entry; an invalid regular expression is the error text.
    pub fn parse(text: Option<&str>) -> Result<Matcher, String> {
        match text.map(str::trim) {
            None | Some("") | Some("*") => Ok(Matcher::All),
            Some(p) => regex::Regex::new(p)
                .map(Matcher::Pattern)
                .map_err(|e| e.to_string()),
        }
    }

    pub fn matches(&self, name: &str) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Pattern(re) => re.is_match(name),
        }
    }

    /// As the entry wrote it (`*` for all).
    pub fn text(&self) -> &str {
        match self {
            Matcher::All => "*",
            Matcher::Pattern(re) => re.as_str(),
        }
    }
}

/// One command hook: what runs, for which event and matcher, and where it was read.
#[derive(Debug, Clone)]
pub struct CommandHook {
    pub event: ClaudeEvent,
    pub matcher: Matcher,
    pub command: String,
    pub timeout: Duration,
    /// The file it came from.
    pub source: PathBuf,
}

/// What [`load`] found.
#[derive(Debug, Default)]
pub struct Loaded {
    /// In the order of the files, then of their entries.
    pub hooks: Vec<CommandHook>,
    /// One line per thing that could not be used (with its file).
    pub problems: Vec<String>,
}

/// A settings file could not be read as JSON.
#[derive(Debug, thiserror::Error)]
#[error("{path}:{line}:{column}: {message}; its hooks are not loaded")]
pub struct BadFile {
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// The files of the user's own hooks, in the order they run.
pub fn user_files(home: &Path) -> Vec<PathBuf> {
    vec![
        home.join(".claude").join("settings.json"),
        home.join(".codex").join("hooks.json"),
    ]
}

/// The project's files that may hold hooks, in the order they run.
pub fn project_files(cwd: &Path) -> Vec<PathBuf> {
    vec![
        cwd.join(".claude").join("settings.json"),
        cwd.join(".claude").join("settings.local.json"),
        cwd.join(".codex").join("hooks.json"),
    ]
}

/// The project's files that hold at least one hook (for the trust gate's list of what an
/// untrusted project would run). A file that does not parse counts: it may hold some.
pub fn project_files_with_hooks(cwd: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    if home.is_some_and(|h| h == cwd) {
        return Vec::new();
    }
    project_files(cwd)
        .into_iter()
        .filter(|p| match std::fs::read_to_string(p) {
            Ok(text) => parse(&text).map_or(true, |s| !s.hooks.is_empty()),
            Err(_) => false,
        })
        .collect()
}

/// Reads the user's files (under `home`) and, when `trusted`, the project's (under `cwd`).
pub fn load(home: Option<&Path>, cwd: &Path, trusted: bool) -> Loaded {
    let mut files: Vec<PathBuf> = home.map(user_files).unwrap_or_default();
    if trusted {
        for p in project_files(cwd) {
            // The project is HOME: the same file once.
            if !files.contains(&p) {
                files.push(p);
            }
        }
    }
    let mut loaded = Loaded::default();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        read_file(&file, &text, &mut loaded);
    }
    loaded
}

/// The part of a settings file hooks are read from (every other key is left alone).
#[derive(Deserialize)]
struct Settings {
    #[serde(default)]
    hooks: BTreeMap<String, Vec<Entry>>,
}

#[derive(Deserialize)]
struct Entry {
    #[serde(default)]
    matcher: Option<String>,
    #[serde(default)]
    hooks: Vec<Hook>,
}

#[derive(Deserialize)]
struct Hook {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    timeout: Option<f64>,
}

fn parse(text: &str) -> Result<Settings, serde_json::Error> {
    serde_json::from_str(text)
}

/// Adds the hooks of one file (`text`, read from `file`) to `loaded`.
fn read_file(file: &Path, text: &str, loaded: &mut Loaded) {
    let shown = file.display().to_string();
    let settings = match parse(text) {
        Ok(s) => s,
        Err(e) => {
            let message = e.to_string();
            // serde's text ends with " at line L column C": the line is said once, in front.
            let message = match message.rfind(" at line ") {
                Some(at) => message[..at].to_string(),
                None => message,
            };
            let bad = BadFile {
                path: shown,
                line: e.line(),
                column: e.column(),
                message,
            };
            loaded.problems.push(bad.to_string());
            return;
        }
    };
    for (name, entries) in settings.hooks {
        let Some(event) = ClaudeEvent::parse(&name) else {
            loaded.problems.push(format!(
                "{shown}: hooks for {name} are not run by mypi (it runs {}); skipped",
                ClaudeEvent::ALL.map(ClaudeEvent::name).join(", ")
            ));
            continue;
        };
        for entry in entries {
            let matcher = match Matcher::parse(entry.matcher.as_deref()) {
                Ok(m) => m,
                Err(e) => {
                    loaded.problems.push(format!(
                        "{shown}: the {name} matcher {:?} is not a regular expression ({}); its hooks are skipped",
                        entry.matcher.unwrap_or_default(),
                        e.lines().last().unwrap_or_default()
                    ));
                    continue;
                }
            };
            for hook in entry.hooks {
                match command_of(hook) {
                    Ok((command, timeout)) => loaded.hooks.push(CommandHook {
                        event,
                        matcher: matcher.clone(),
                        command,
                        timeout,
                        source: file.to_path_buf(),
                    }),
                    Err(why) => loaded
                        .problems
                        .push(format!("{shown}: a {name} hook {why}; skipped")),
                }
            }
        }
    }
}

/// The command and timeout of a `"type": "command"` hook; why it cannot run otherwise.
fn command_of(hook: Hook) -> Result<(String, Duration), String> {
    match hook.kind.as_deref() {
        Some("command") | None => {}
        Some(other) => {
            return Err(format!(
                "of type {other:?} is not supported (mypi runs \"command\" hooks only)"
            ))
        }
    }
    let command = hook
        .command
        .filter(|c| !c.trim().is_empty())
        .ok_or_else(|| "has no command".to_string())?;
    let timeout = match hook.timeout {
        None => DEFAULT_TIMEOUT,
        Some(s) if s.is_finite() && s > 0.0 => Duration::from_secs_f64(s.min(86_400.0)),
        Some(s) => {
            return Err(format!(
                "has a timeout of {s} s, which is not a positive number"
            ))
        }
    };
    Ok((command, timeout))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Loaded {
        let mut loaded = Loaded::default();
        read_file(Path::new("/p/.claude/settings.json"), text, &mut loaded);
        loaded
    }

    #[test]
    fn entries_keep_their_order_matcher_and_timeout() {
        let loaded = read(
            r#"{"model": "x", "hooks": {"PreToolUse": [
                {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "a", "timeout": 5}]},
                {"hooks": [{"type": "command", "command": "b"}, {"type": "prompt", "prompt": "p"}]}
            ], "PermissionRequest": [], "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "c"}]}]}}"#,
        );
        let got: Vec<(&str, &str, &str, u64)> = loaded
            .hooks
            .iter()
            .map(|h| {
                (
                    h.event.name(),
                    h.matcher.text(),
                    h.command.as_str(),
                    h.timeout.as_secs(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("PreToolUse", "Write|Edit", "a", 5),
                ("PreToolUse", "*", "b", 60),
                ("Stop", "*", "c", 60)
            ]
        );
        assert_eq!(loaded.problems.len(), 2, "{:?}", loaded.problems);
        assert!(loaded.problems[0].contains("PermissionRequest are not run"));
        assert!(loaded.problems[1].contains("\"prompt\" is not supported"));
        assert!(loaded.hooks[0].matcher.matches("Edit"));
        assert!(!loaded.hooks[0].matcher.matches("Bash"));
    }

    #[test]
    fn broken_json_is_one_line_naming_file_and_line() {
        let loaded = read("{\n  \"hooks\": {\n    \"Stop\": [,]\n  }\n}\n");
        assert!(loaded.hooks.is_empty());
        assert_eq!(loaded.problems.len(), 1);
        let p = &loaded.problems[0];
        assert!(p.starts_with("/p/.claude/settings.json:3:"), "{p}");
        assert!(p.ends_with("its hooks are not loaded"), "{p}");
    }

    #[test]
    fn a_bad_matcher_skips_its_entry_only() {
        let loaded = read(
            r#"{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": [{"command": "a"}]},
                {"matcher": "*", "hooks": [{"command": "b"}]}]}}"#,
        );
        assert_eq!(loaded.hooks.len(), 1);
        assert!(loaded.problems[0].contains("not a regular expression"));
    }
}
