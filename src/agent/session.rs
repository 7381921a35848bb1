//! The session transcript: an append-only JSONL file under `.agents/sessions/<id>.jsonl`.
//! The first line describes the session; every message is one more line, written with a
//! single `write` and flushed as it happens, so a killed process loses at most the line it was
//! writing. Resuming skips (and cuts off) a torn last line with a warning.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::protocol::Message;

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
    },
    /// A message of the conversation.
    Message { message: Message },
}

/// A session file could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("cannot write the session file {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
    #[error("cannot read the session file {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("no session to continue in {0}; start one without --continue")]
    NoneToContinue(PathBuf),
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

    /// Appends a message, creating the file first when it is pending.
    pub fn append(&mut self, message: &Message) -> Result<(), SessionError> {
        if let SessionSlot::Pending { dir, cwd, id } = self {
            *self = SessionSlot::Open(SessionWriter::create(dir, cwd, id)?);
        }
        match self {
            SessionSlot::Open(writer) => writer.append(message),
            _ => Ok(()),
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

/// An open session file.
#[derive(Debug)]
pub struct SessionWriter {
    id: String,
    path: PathBuf,
    file: File,
}

/// A resumed session: its writer, its messages, and warnings about what was skipped.
#[derive(Debug)]
pub struct Resumed {
    pub writer: SessionWriter,
    pub messages: Vec<Message>,
    pub warnings: Vec<String>,
}

impl SessionWriter {
    /// Creates the session file `dir/<id>.jsonl` and writes its first line.
    pub fn create(dir: &Path, cwd: &Path, id: &str) -> Result<Self, SessionError> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let id = id.to_string();
        let path = dir.join(format!("{id}.jsonl"));
        let wrap = |source| SessionError::Write {
            path: path.clone(),
            source,
        };
        fs::create_dir_all(dir).map_err(wrap)?;
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&path)
            .map_err(wrap)?;
        let mut writer = SessionWriter { id, path, file };
        writer.write_entry(&Entry::Session {
            version: 1,
            id: writer.id.clone(),
            cwd: cwd.display().to_string(),
            created_ms: now.as_millis() as u64,
        })?;
        Ok(writer)
    }

    /// Opens the most recently modified session in `dir` and reads its messages.
    pub fn resume_latest(dir: &Path) -> Result<Resumed, SessionError> {
        let latest = fs::read_dir(dir)
            .ok()
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .max();
        match latest {
            Some((_, path)) => Self::resume(&path),
            None => Err(SessionError::NoneToContinue(dir.to_path_buf())),
        }
    }

    /// Opens an existing session file for appending and reads its messages.
    pub fn resume(path: &Path) -> Result<Resumed, SessionError> {
        let read_err = |source| SessionError::Read {
            path: path.to_path_buf(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(path)
            .map_err(read_err)?;
        let (messages, mut warnings, good_len, torn) = read_entries(&mut file, path)?;
        if torn {
            file.set_len(good_len)
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
        let id = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(Resumed {
            writer: SessionWriter {
                id,
                path: path.to_path_buf(),
                file,
            },
            messages,
            warnings,
        })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one message and flushes it.
    pub fn append(&mut self, message: &Message) -> Result<(), SessionError> {
        self.write_entry(&Entry::Message {
            message: message.clone(),
        })
    }

    fn write_entry(&mut self, entry: &Entry) -> Result<(), SessionError> {
        let mut line = serde_json::to_string(entry).map_err(|e| SessionError::Write {
            path: self.path.clone(),
            source: io::Error::other(e),
        })?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.flush())
            .map_err(|source| SessionError::Write {
                path: self.path.clone(),
                source,
            })
    }
}

/// Reads every entry; returns the messages, warnings for bad lines, the length of the file up
/// to the last complete line, and whether the last line was torn.
fn read_entries(
    file: &mut File,
    path: &Path,
) -> Result<(Vec<Message>, Vec<String>, u64, bool), SessionError> {
    let read_err = |source| SessionError::Read {
        path: path.to_path_buf(),
        source,
    };
    file.seek(SeekFrom::Start(0)).map_err(read_err)?;
    let mut reader = BufReader::new(&*file);
    let mut messages = Vec::new();
    let mut warnings = Vec::new();
    let mut good_len = 0u64;
    let mut line_no = 0;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf).map_err(read_err)?;
        if n == 0 {
            return Ok((messages, warnings, good_len, false));
        }
        line_no += 1;
        if buf.last() != Some(&b'\n') {
            return Ok((messages, warnings, good_len, true));
        }
        good_len += n as u64;
        let text = String::from_utf8_lossy(&buf);
        if text.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Entry>(&text) {
            Ok(Entry::Message { message }) => messages.push(message),
            Ok(Entry::Session { .. }) => {}
            Err(e) => warnings.push(format!(
                "{}:{line_no}: skipped a line that is not a session entry ({e})",
                path.display()
            )),
        }
    }
}

/// `YYYYMMDD-HHMMSS` in UTC for a Unix time.
/// A fresh session id: the UTC time and a few random-ish hex digits.
pub fn new_id() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format!(
        "{}-{:04x}",
        timestamp_id(now.as_secs()),
        (now.subsec_nanos() ^ std::process::id()) & 0xffff
    )
}

fn timestamp_id(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to a (year, month, day) date (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempDir;

    #[test]
    fn timestamps_are_utc_dates() {
        assert_eq!(timestamp_id(0), "19700101-000000");
        assert_eq!(timestamp_id(1_000_000_000), "20010909-014640");
        assert_eq!(timestamp_id(1_709_164_800), "20240229-000000");
    }

    #[test]
    fn append_then_resume_round_trips() {
        let tmp = TempDir::new("rt");
        let dir = tmp.0.join("sessions");
        let mut w = SessionWriter::create(&dir, Path::new("/x"), &new_id()).unwrap();
        w.append(&Message::user("hi")).unwrap();
        w.append(&Message::assistant("hello", vec![])).unwrap();
        let r = SessionWriter::resume_latest(&dir).unwrap();
        assert_eq!(r.messages.len(), 2);
        assert!(r.warnings.is_empty());
        assert_eq!(r.writer.id(), w.id());
    }

    #[test]
    fn torn_last_line_is_skipped_and_cut() {
        let tmp = TempDir::new("torn");
        let dir = tmp.0.join("sessions");
        let mut w = SessionWriter::create(&dir, Path::new("/x"), &new_id()).unwrap();
        w.append(&Message::user("kept")).unwrap();
        let path = w.path().to_path_buf();
        drop(w);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(br#"{"type":"message","message":{"role":"us"#)
            .unwrap();
        drop(f);
        let mut r = SessionWriter::resume(&path).unwrap();
        assert_eq!(r.messages, vec![Message::user("kept")]);
        assert!(r.warnings[0].contains("incomplete"), "{:?}", r.warnings);
        r.writer.append(&Message::user("next")).unwrap();
        let again = SessionWriter::resume(&path).unwrap();
        assert_eq!(again.messages.len(), 2);
        assert!(again.warnings.is_empty());
    }
}
