//! Finding a project's sessions: [`list`] describes each (`mypi sessions`, `/resume`) from one
//! pass over its lines that parses only the few it needs (the header, the first prompt,
//! model changes), and [`find`] resolves an id or a unique prefix of one (`--resume ID`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Deserialize;

use super::latest;

/// What a session file says about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    pub id: String,
    pub path: PathBuf,
    pub modified: SystemTime,
    /// The prompts the user typed.
    pub turns: usize,
    pub first_prompt: Option<String>,
    /// `provider/model` last in use, when the file says.
    pub model: Option<String>,
    /// The name a script gave it (`ctx.session.set_name`), the last one.
    pub name: Option<String>,
}

#[derive(Deserialize)]
struct NameLine {
    name: String,
}

#[derive(Deserialize)]
struct Header {
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    model: Option<String>,
}

#[derive(Deserialize)]
struct UserLine {
    message: UserMessage,
}

#[derive(Deserialize)]
struct UserMessage {
    #[serde(default)]
    content: serde_json::Value,
}

/// The sessions of `dir` (and of `legacy`, the project's old folder), newest first; files
/// that are not sessions are left out.
pub fn list(dir: &Path, legacy: Option<&Path>) -> Vec<SessionInfo> {
    latest::candidates(dir, legacy)
        .into_iter()
        .filter(|c| c.not_a_file.is_none())
        .filter_map(|c| describe(&c.path, c.modified()))
        .collect()
}

/// One file, or `None` when it is not a session.
fn describe(path: &Path, modified: SystemTime) -> Option<SessionInfo> {
    let file = super::load::open_regular(path, false).ok()?;
    let mut lines = BufReader::with_capacity(1 << 16, file).split(b'\n');
    let first = lines.next()?.ok()?;
    if !contains(&first, b"\"type\":\"session\"") {
        return None;
    }
    let header: Header = serde_json::from_slice(&first).ok()?;
    let mut model = header
        .provider
        .zip(header.model)
        .map(|(p, m)| format!("{p}/{m}"));
    let (mut turns, mut first_prompt, mut name) = (0, None, None);
    for line in lines.map_while(Result::ok) {
        if contains(&line, b"\"type\":\"message\"") && contains(&line, b"\"role\":\"user\"") {
            turns += 1;
            if first_prompt.is_none() {
                first_prompt = serde_json::from_slice::<UserLine>(&line)
                    .ok()
                    .map(|l| prompt_text(&l.message.content));
            }
        } else if contains(&line, b"\"type\":\"session_info\"") {
            if let Ok(n) = serde_json::from_slice::<NameLine>(&line) {
                name = Some(n.name);
            }
        } else if contains(&line, b"\"type\":\"model_change\"") {
            if let Ok(h) = serde_json::from_slice::<Header>(&line) {
                model = h.provider.zip(h.model).map(|(p, m)| format!("{p}/{m}"));
            }
        }
    }
    Some(SessionInfo {
        id: super::id_of(path),
        path: path.to_path_buf(),
        modified,
        turns,
        first_prompt,
        model,
        name,
    })
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// A prompt's text on one line.
fn prompt_text(content: &serde_json::Value) -> String {
    let text = match content {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    crate::vocab::text::one_line(&text, usize::MAX)
}

/// Why an id did not name one session.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FindError {
    #[error("no session of this project has an id starting with {prefix:?} (`mypi sessions` lists them)")]
    None { prefix: String },
    #[error("{prefix:?} names {} sessions: {}; give more of the id", .ids.len(), .ids.join(", "))]
    Ambiguous { prefix: String, ids: Vec<String> },
}

/// The session whose id is `prefix` or starts with it, when only one does.
pub fn find(sessions: &[SessionInfo], prefix: &str) -> Result<PathBuf, FindError> {
    let prefix = prefix.trim();
    if let Some(exact) = sessions.iter().find(|s| s.id == prefix) {
        return Ok(exact.path.clone());
    }
    let matching: Vec<&SessionInfo> = sessions
        .iter()
        .filter(|s| s.id.starts_with(prefix))
        .collect();
    match matching.as_slice() {
        [one] => Ok(one.path.clone()),
        [] => Err(FindError::None {
            prefix: prefix.to_string(),
        }),
        many => Err(FindError::Ambiguous {
            prefix: prefix.to_string(),
            ids: many.iter().map(|s| s.id.clone()).collect(),
        }),
    }
}

/// This project's sessions that may be read (see [`crate::config::SessionSources`]), newest
/// first, and the notice of those that were skipped.
pub fn readable(sources: &crate::config::SessionSources) -> (Vec<SessionInfo>, Option<String>) {
    let found = match &sources.dir {
        Some(dir) => list(dir, sources.legacy.as_deref()),
        None => Vec::new(),
    };
    (found, sources.skipped.clone())
}

/// A session as one line of a list: id, time, turns, model, first prompt.
pub fn line(s: &SessionInfo, width: usize) -> String {
    let first = s.first_prompt.as_deref().unwrap_or("(no prompt)");
    let named;
    let prompt = match &s.name {
        Some(n) => {
            named = format!("[{n}] {first}");
            named.as_str()
        }
        None => first,
    };
    let head = format!(
        "{}  {}  {:>3} turn{}  {}",
        s.id,
        local_time(s.modified),
        s.turns,
        if s.turns == 1 { " " } else { "s" },
        s.model.as_deref().unwrap_or("?")
    );
    let room = width.saturating_sub(head.chars().count() + 2).max(20);
    format!("{head}  {}", crate::vocab::text::one_line(prompt, room))
}

/// `2026-12-01 18:02` in the local time zone.
pub fn local_time(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    let t = crate::platform::sys::local_time(secs);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}",
        t.year, t.month, t.day, t.hour, t.minute
    )
}
