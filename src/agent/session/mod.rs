//! The session transcript: an append-only JSONL file `<id>.jsonl` in the project's sessions
//! folder (by default `~/.agents/sessions/<project-folder-slug>/`). The first line describes
//! the session (format version, id, created time, cwd, provider, model); every message, child
//! run and model change is one more line with its time (`ts`), written with a single `write`
//! as it happens (each tool result as soon as its call finishes), so a killed process loses
//! at most the line it was writing.
//!
//! Safety rules, each in its own module:
//! - one writer per session: an open session holds a lock ([`lock`]); a second mypi is told
//!   which process has it;
//! - resuming streams the file line by line ([`load`]): a torn last line is skipped (and cut
//!   off) with a warning, a complete last line without its newline is kept;
//! - `--continue` passes over `*.jsonl` entries that are not regular files ([`latest`]);
//! - tool calls left without a result get an "interrupted" one ([`repair`]).

mod id;
mod latest;
pub mod list;
pub mod load;
pub mod lock;
mod plan;
pub mod repair;

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::vocab::protocol::{ChildRecord, Message};
pub use id::new_id;
use load::Tail;
use lock::{LockError, SessionLock};

/// One line of a session file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Entry {
    /// The first line.
    Session {
        version: u32,
        id: String,
        cwd: String,
        created_ms: u64,
        /// The provider and model the session started with (absent in files before them).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    /// `/model` switched the provider or model; resuming goes on with the last one.
    ModelChange { provider: String, model: String },
    /// The messages before it were compacted; resuming applies it the same way.
    Compaction {
        compaction: crate::agent::compact::Compaction,
    },
    /// The session's usage after a run (tokens and cost); resuming needs none of it.
    Totals {
        usage: crate::vocab::protocol::Usage,
    },
    /// A run was cancelled by the user.
    Cancel {},
    /// A message of the conversation.
    Message { message: Message },
    /// A child agent's run, kept apart from the conversation (resuming skips it).
    Child { child: ChildRecord },
    /// An extension's own data (`api.append_entry`), never sent to the model.
    Custom {
        kind: String,
        data: serde_json::Value,
    },
    /// The session's name (`ctx.session.set_name`); the last one counts.
    SessionInfo { name: String },
}

/// The format of the files written: 2 adds the provider and model to the header, `ts` to
/// every line, and `model_change` lines (files of format 1 resume all the same).
pub const FORMAT_VERSION: u32 = 2;

/// A line with the time it was written, in milliseconds since 1970 (`ts`).
#[derive(Serialize)]
struct Stamped<'a, E: Serialize> {
    #[serde(flatten)]
    entry: &'a E,
    ts: u64,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as u64
}

/// A message line, serialized from a borrowed message (the same JSON as [`Entry::Message`]).
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum MessageLine<'a> {
    Message {
        message: &'a Message,
    },
    Child {
        child: &'a ChildRecord,
    },
    ModelChange {
        provider: &'a str,
        model: &'a str,
    },
    Compaction {
        compaction: &'a crate::agent::compact::Compaction,
    },
    Totals {
        usage: &'a crate::vocab::protocol::Usage,
    },
    /// A run was cancelled by the user.
    Cancel {},
    Custom {
        kind: &'a str,
        data: &'a serde_json::Value,
    },
    SessionInfo {
        name: &'a str,
    },
}

/// A session file could not be written, read or taken. The Display is what the user reads.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("cannot write the session file {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
    #[error("cannot read the session file {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("{}", none_to_continue(.dir, .passed_over))]
    NoneToContinue {
        dir: PathBuf,
        /// Newer `*.jsonl` entries that could not be resumed, and why.
        passed_over: Vec<String>,
    },
    /// Another process has the session open.
    #[error("session {id} is in use by mypi ({})", holder(.pid))]
    Locked {
        id: String,
        path: PathBuf,
        pid: Option<u32>,
    },
    #[error("{path} is not a mypi session file: {why}")]
    NotASession { path: PathBuf, why: String },
}

fn none_to_continue(dir: &Path, passed_over: &[String]) -> String {
    let mut text = format!(
        "no session to continue in {}; start one without --continue",
        dir.display()
    );
    if !passed_over.is_empty() {
        text.push_str(&format!(" (passed over: {})", passed_over.join("; ")));
    }
    text
}

fn holder(pid: &Option<u32>) -> String {
    match pid {
        Some(pid) => format!("pid {pid}"),
        None => "another process".to_string(),
    }
}

/// Where the agent writes its transcript: nowhere (`--no-session`), a file created on the
/// first message (so a run that only answers commands leaves no empty session; its id is
/// chosen up front, so scripts see it from the start), or an open file.
#[derive(Debug)]
pub enum SessionSlot {
    Off,
    Pending {
        dir: PathBuf,
        cwd: PathBuf,
        id: String,
        /// The provider and model for the header, once known.
        model: Option<(String, String)>,
    },
    Open(SessionWriter),
}

impl SessionSlot {
    /// A session whose file `dir/<id>.jsonl` is created on the first message.
    pub fn pending(dir: PathBuf, cwd: PathBuf) -> SessionSlot {
        SessionSlot::Pending {
            dir,
            cwd,
            id: new_id(),
            model: None,
        }
    }

    /// The session's id (none with `--no-session`).
    pub fn id(&self) -> Option<&str> {
        match self {
            SessionSlot::Off => None,
            SessionSlot::Pending { id, .. } => Some(id),
            SessionSlot::Open(w) => Some(w.id()),
        }
    }

    /// The provider and model in use: the header's, while the file is not written yet, or
    /// a `model_change` line in an open file.
    pub fn set_model(&mut self, provider: &str, model: &str) -> Result<(), SessionError> {
        match self {
            SessionSlot::Off => Ok(()),
            SessionSlot::Pending { model: m, .. } => {
                *m = Some((provider.to_string(), model.to_string()));
                Ok(())
            }
            SessionSlot::Open(w) => w.write_line(&MessageLine::ModelChange { provider, model }),
        }
    }

    /// The session's usage so far (after each run; in an open file only).
    pub fn append_totals(
        &mut self,
        usage: &crate::vocab::protocol::Usage,
    ) -> Result<(), SessionError> {
        match self {
            SessionSlot::Open(w) => w.write_line(&MessageLine::Totals { usage }),
            _ => Ok(()),
        }
    }

    /// A run was cancelled (in an open file only).
    pub fn append_cancel(&mut self) -> Result<(), SessionError> {
        match self {
            SessionSlot::Open(w) => w.write_line(&MessageLine::Cancel {}),
            _ => Ok(()),
        }
    }

    /// Records a compaction (in an open file; a pending session has had nothing to compact).
    pub fn append_compaction(
        &mut self,
        compaction: &crate::agent::compact::Compaction,
    ) -> Result<(), SessionError> {
        match self {
            SessionSlot::Open(w) => w.write_line(&MessageLine::Compaction { compaction }),
            _ => Ok(()),
        }
    }

    /// Opens the file of a pending session.
    fn open(&mut self) -> Result<(), SessionError> {
        if let SessionSlot::Pending {
            dir,
            cwd,
            id,
            model,
        } = self
        {
            *self = SessionSlot::Open(SessionWriter::create(dir, cwd, id, model.clone())?);
        }
        Ok(())
    }

    /// Appends a message, creating the file first when it is pending.
    pub fn append(&mut self, message: &Message) -> Result<(), SessionError> {
        self.open()?;
        match self {
            SessionSlot::Open(writer) => writer.append(message),
            _ => Ok(()),
        }
    }

    /// Stores a child agent's run, creating the file first when it is pending.
    pub fn append_child(&mut self, child: &ChildRecord) -> Result<(), SessionError> {
        self.open()?;
        match self {
            SessionSlot::Open(writer) => writer.write_line(&MessageLine::Child { child }),
            _ => Ok(()),
        }
    }

    /// Writes a line a script added (a custom entry, the name), creating the file first
    /// when it is pending.
    pub fn append_pending(
        &mut self,
        entry: &crate::agent::control::Pending,
    ) -> Result<(), SessionError> {
        use crate::agent::control::Pending;
        self.open()?;
        let SessionSlot::Open(w) = self else {
            return Ok(());
        };
        match entry {
            Pending::Custom { kind, data } => w.write_line(&MessageLine::Custom { kind, data }),
            Pending::Name(name) => w.write_line(&MessageLine::SessionInfo { name }),
        }
    }

    /// The open file, if any.
    pub fn writer(&self) -> Option<&SessionWriter> {
        match self {
            SessionSlot::Open(w) => Some(w),
            _ => None,
        }
    }
}

/// An open session file, locked for this process while it is open.
#[derive(Debug)]
pub struct SessionWriter {
    id: String,
    path: PathBuf,
    file: File,
    /// The file's last line has no `\n` yet: the next line starts with one.
    needs_newline: bool,
    /// Dropped after `file`; `None` when the file system cannot lock.
    _lock: Option<SessionLock>,
}

/// A resumed session: its writer, its messages, and warnings about what was skipped.
#[derive(Debug)]
pub struct Resumed {
    pub writer: SessionWriter,
    pub messages: Vec<Message>,
    pub warnings: Vec<String>,
    /// The provider and model it was last using (from its header or its last `model_change`).
    pub model: Option<(String, String)>,
    /// Its name (`ctx.session.set_name`), if it has one.
    pub name: Option<String>,
    /// Its totals as its last `totals` line says (children, compaction and scripts' model
    /// calls included, which its messages do not show).
    pub totals: Option<crate::vocab::protocol::Usage>,
}

impl SessionWriter {
    /// Locks and creates the session file `dir/<id>.jsonl` and writes its first line.
    pub fn create(
        dir: &Path,
        cwd: &Path,
        id: &str,
        model: Option<(String, String)>,
    ) -> Result<Self, SessionError> {
        let path = dir.join(format!("{id}.jsonl"));
        let wrap = |source| SessionError::Write {
            path: path.clone(),
            source,
        };
        fs::create_dir_all(dir).map_err(wrap)?;
        // Locked before the file exists, so a `--continue` elsewhere never sees it unlocked.
        let lock = take_lock(&path, id)?.0;
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&path)
            .map_err(wrap)?;
        let mut writer = SessionWriter {
            id: id.to_string(),
            path: path.clone(),
            file,
            needs_newline: false,
            _lock: lock,
        };
        let created_ms = now_ms();
        writer.write_line(&Entry::Session {
            version: FORMAT_VERSION,
            id: id.to_string(),
            cwd: cwd.display().to_string(),
            created_ms,
            provider: model.as_ref().map(|m| m.0.clone()),
            model: model.map(|m| m.1),
        })?;
        Ok(writer)
    }

    /// Resumes the most recently modified session in `dir` that is a readable session file.
    /// Newer entries passed over (a folder, a FIFO, an unreadable or foreign file) are named in
    /// the warnings. When the newest session is in use by another process the answer is
    /// [`SessionError::Locked`]: an older session is not resumed in its place.
    pub fn resume_latest(dir: &Path, legacy: Option<&Path>) -> Result<Resumed, SessionError> {
        let mut passed_over = Vec::new();
        for candidate in latest::candidates(dir, legacy) {
            let shown = candidate.path.display();
            if let Some(why) = &candidate.not_a_file {
                passed_over.push(format!("{shown}: {why}"));
                continue;
            }
            match Self::resume(&candidate.path) {
                Ok(mut resumed) => {
                    let mut warnings: Vec<String> = passed_over
                        .into_iter()
                        .map(|p| format!("skipped {p}"))
                        .collect();
                    warnings.append(&mut resumed.warnings);
                    resumed.warnings = warnings;
                    return Ok(resumed);
                }
                Err(SessionError::NotASession { why, .. }) => {
                    passed_over.push(format!("{shown}: {why}"))
                }
                Err(SessionError::Read { source, .. }) => {
                    passed_over.push(format!("{shown}: cannot read it: {source}"))
                }
                Err(e) => return Err(e),
            }
        }
        Err(SessionError::NoneToContinue {
            dir: dir.to_path_buf(),
            passed_over,
        })
    }

    /// Locks an existing session file, reads its messages and opens it for appending. A torn
    /// last line is cut off; tool calls without a result get an "interrupted" one (in memory:
    /// the file keeps what really happened).
    pub fn resume(path: &Path) -> Result<Resumed, SessionError> {
        let id = id_of(path);
        let (lock, mut warnings) = take_lock(path, &id)?;
        let file = load::open_regular(path, true)?;
        let loaded = load::read_entries(&file, path)?;
        warnings.extend(loaded.warnings);
        if loaded.tail == Tail::Torn {
            file.set_len(loaded.good_len)
                .map_err(|source| SessionError::Write {
                    path: path.to_path_buf(),
                    source,
                })?;
            warnings.push(format!(
                "{}: the last line was incomplete (the process was probably killed while \
                 writing it); it was skipped, everything before it was kept",
                path.display()
            ));
        }
        let (messages, interrupted) = repair::complete(loaded.messages);
        if interrupted > 0 {
            warnings.push(format!(
                "{}: {interrupted} tool call(s) had not finished when mypi stopped; the model \
                 is told they were interrupted",
                path.display()
            ));
        }
        let writer = SessionWriter {
            id,
            path: path.to_path_buf(),
            file,
            needs_newline: loaded.tail == Tail::MissingNewline,
            _lock: lock,
        };
        Ok(Resumed {
            writer,
            messages,
            warnings,
            model: loaded.model,
            name: loaded.name,
            totals: loaded.totals,
        })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one message as one line, written with one `write`.
    pub fn append(&mut self, message: &Message) -> Result<(), SessionError> {
        self.write_line(&MessageLine::Message { message })
    }

    fn write_line(&mut self, entry: &impl Serialize) -> Result<(), SessionError> {
        let fail = |source| SessionError::Write {
            path: self.path.clone(),
            source,
        };
        let mut line = Vec::with_capacity(256);
        if self.needs_newline {
            line.push(b'\n');
        }
        let stamped = Stamped {
            entry,
            ts: now_ms(),
        };
        serde_json::to_writer(&mut line, &stamped).map_err(|e| fail(io::Error::other(e)))?;
        line.push(b'\n');
        match self.file.write_all(&line) {
            Ok(()) => {
                self.needs_newline = false;
                Ok(())
            }
            Err(source) => {
                // Part of the line may be in the file: never let the next one join it.
                self.needs_newline = true;
                Err(fail(source))
            }
        }
    }
}

/// The messages stored in a session file, read without locking or changing it (a torn last
/// line is left out, missing results are not added).
pub fn read_messages(path: &Path) -> Result<Vec<Message>, SessionError> {
    let file = load::open_regular(path, false)?;
    Ok(load::read_entries(&file, path)?.messages)
}

/// Locks the session `path`; a file system that cannot lock gives a warning instead.
fn take_lock(path: &Path, id: &str) -> Result<(Option<SessionLock>, Vec<String>), SessionError> {
    match SessionLock::acquire(path) {
        Ok(lock) => Ok((Some(lock), Vec::new())),
        Err(LockError::Held { pid }) => Err(SessionError::Locked {
            id: id.to_string(),
            path: path.to_path_buf(),
            pid,
        }),
        Err(LockError::Io(e)) => Ok((
            None,
            vec![format!(
                "cannot lock {} ({e}); another mypi could write to this session at the same time",
                path.display()
            )],
        )),
    }
}

/// The id of the session file `path`: its name without `.jsonl`.
fn id_of(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
