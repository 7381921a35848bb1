//! Reading a session file back: line by line through a `BufRead`, each line parsed straight
//! into its typed entry (no whole-file string, no JSON value tree), so resuming needs about the
//! memory of the messages it keeps.
//!
//! What a resumed session keeps is what its next request needs: the messages as the last
//! compaction leaves them (a first pass notes where the message lines are and replays the
//! compactions on those places, a second reads only the messages still needed: see
//! [`super::plan`]), without their `details` (a script tool's data for renderers and
//! extensions, never sent to a model, which as a JSON value tree could take many times its
//! size in the file: it stays in the file). A line's buffer is given back after a long line,
//! so the longest line is not held for the rest of the file.
//!
//! The last line decides what happens to the file's end: a line that ends in `\n` is clean; a
//! last line without `\n` that is a complete JSON value is kept (the writer adds the missing
//! newline before its next line); one that is not (the process was killed while writing it)
//! is torn: skipped, and the caller cuts it off.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::error::Category;

use super::plan::Plan;
use super::SessionError;
use crate::vocab::protocol::{Image, Message, Role, ToolCall, Usage};

/// How the file ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// Empty, or the last line ends with `\n`.
    Clean,
    /// The last line is complete but has no `\n`: the next write must add one first.
    MissingNewline,
    /// The last line is incomplete; everything from `good_len` on is to be cut off.
    Torn,
}

/// What reading a session file found.
#[derive(Debug)]
pub struct Loaded {
    pub messages: Vec<Message>,
    pub warnings: Vec<String>,
    /// The length of the file up to the end of its last complete line.
    pub good_len: u64,
    pub tail: Tail,
    /// The provider and model last in use: the header's, or the last `model_change`'s.
    pub model: Option<(String, String)>,
    /// The session's name (its last `session_info` line).
    pub name: Option<String>,
    /// The session's totals as its last `totals` line says (every model call counted).
    pub totals: Option<crate::vocab::protocol::Usage>,
}

/// One line as stored: `{"type": "session", ...}` or `{"type": "message", "message": {...}}`.
/// A plain struct, so serde reads the fields in place; the header's fields are skipped. The
/// first pass reads the message as `IgnoredAny` (skipped, not built), the second as
/// [`StoredMessage`].
#[derive(Deserialize)]
struct Line<M> {
    #[serde(rename = "type")]
    kind: Kind,
    #[serde(default = "none")]
    message: Option<M>,
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    compaction: Option<crate::agent::compact::Compaction>,
    /// `session_info`'s.
    #[serde(default)]
    name: Option<String>,
    /// A `totals` line's.
    #[serde(default)]
    usage: Option<crate::vocab::protocol::Usage>,
}

/// A stored [`Message`] read without its `details` (serde skips them without building them).
#[derive(Deserialize)]
struct StoredMessage {
    role: Role,
    #[serde(default)]
    content: String,
    #[serde(default)]
    tool_calls: Vec<ToolCall>,
    #[serde(default)]
    tool_call_id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    is_error: bool,
    #[serde(default)]
    images: Vec<Image>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    thinking: Vec<crate::vocab::protocol::ThinkingBlock>,
}

impl From<StoredMessage> for Message {
    fn from(m: StoredMessage) -> Message {
        Message {
            role: m.role,
            content: m.content,
            tool_calls: m.tool_calls,
            tool_call_id: m.tool_call_id,
            name: m.name,
            is_error: m.is_error,
            images: m.images,
            usage: m.usage,
            details: None,
            thinking: m.thinking,
        }
    }
}

fn none<M>() -> Option<M> {
    None
}

/// A line buffer grown past this is given back after its line.
const KEPT_BUFFER: usize = 1 << 20;

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Session,
    Message,
    /// A child agent's run: not part of the conversation.
    Child,
    ModelChange,
    Compaction,
    Totals,
    Cancel,
    /// An extension's entry or the session's name: not part of the conversation.
    Custom,
    SessionInfo,
    #[serde(other)]
    Other,
}

/// At most this many bad lines are named one by one; the rest are counted.
const NAMED_BAD_LINES: usize = 5;

/// Opens `path` for reading (and appending when `append`), refusing anything but a regular
/// file. The open does not block on a FIFO.
pub fn open_regular(path: &Path, append: bool) -> Result<File, SessionError> {
    let read_err = |source| SessionError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut options = OpenOptions::new();
    options.read(true).append(append);
    // Opening a FIFO without it would wait for a writer. On the regular file that passes the
    // check below the flag changes nothing (reads and writes of regular files never block).
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(read_err)?;
    let meta = file.metadata().map_err(read_err)?;
    if !meta.is_file() {
        return Err(SessionError::NotASession {
            path: path.to_path_buf(),
            why: "it is not a regular file".to_string(),
        });
    }
    Ok(file)
}

/// Reads every entry of an open session file from its start. Fails when the first line is
/// not a session header (the file is not a mypi session).
pub fn read_entries(file: &File, path: &Path) -> Result<Loaded, SessionError> {
    let (scan, tail) = first_pass(file, path)?;
    scan.finish(tail, file)
}

/// Goes over every line: the header, the model, the name, the warnings, how the file ends,
/// and where the message lines are (see [`Plan`]).
fn first_pass<'p>(file: &File, path: &'p Path) -> Result<(Scan<'p>, Tail), SessionError> {
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut scan = Scan::new(path);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| scan.read_error(e))?;
        if n == 0 {
            return Ok((scan, Tail::Clean));
        }
        if buf.last() == Some(&b'\n') {
            scan.line(&buf)?;
            scan.good_len += n as u64;
            if buf.capacity() > KEPT_BUFFER {
                buf = Vec::new();
            }
            continue;
        }
        // The last line, without a newline: kept when it is complete JSON.
        return match serde_json::from_slice::<Line<IgnoredAny>>(&buf) {
            Err(e) if matches!(e.classify(), Category::Eof | Category::Syntax) => {
                Ok((scan, Tail::Torn))
            }
            _ => {
                scan.line(&buf)?;
                scan.good_len += n as u64;
                Ok((scan, Tail::MissingNewline))
            }
        };
    }
}

/// Where a message line is: its byte offset, length and line number.
struct Place {
    at: u64,
    len: usize,
    line_no: usize,
}

/// The state of one pass over the lines.
struct Scan<'p> {
    path: &'p Path,
    line_no: usize,
    header_seen: bool,
    plan: Plan,
    places: Vec<Place>,
    warnings: Vec<String>,
    bad_lines: usize,
    good_len: u64,
    model: Option<(String, String)>,
    name: Option<String>,
    totals: Option<crate::vocab::protocol::Usage>,
}

impl<'p> Scan<'p> {
    fn new(path: &'p Path) -> Self {
        Scan {
            path,
            line_no: 0,
            header_seen: false,
            plan: Plan::default(),
            places: Vec::new(),
            warnings: Vec::new(),
            bad_lines: 0,
            good_len: 0,
            model: None,
            name: None,
            totals: None,
        }
    }

    /// One complete line (with or without its `\n`).
    fn line(&mut self, bytes: &[u8]) -> Result<(), SessionError> {
        self.line_no += 1;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let parsed = serde_json::from_slice::<Line<IgnoredAny>>(bytes);
        if !self.header_seen {
            return match parsed {
                Ok(Line {
                    kind: Kind::Session,
                    provider,
                    model,
                    ..
                }) => {
                    self.header_seen = true;
                    self.model = provider.zip(model);
                    Ok(())
                }
                _ => Err(self.not_a_session("its first line is not a session header")),
            };
        }
        match parsed {
            Ok(Line {
                kind: Kind::Message,
                message: Some(_),
                ..
            }) => {
                self.places.push(Place {
                    at: self.good_len,
                    len: bytes.len(),
                    line_no: self.line_no,
                });
                self.plan.message();
            }
            Ok(Line {
                kind: Kind::ModelChange,
                provider: Some(provider),
                model: Some(model),
                ..
            }) => self.model = Some((provider, model)),
            Ok(Line {
                kind: Kind::ModelChange,
                ..
            }) => self.bad_line("a model change without a provider and model"),
            Ok(Line {
                kind: Kind::Compaction,
                compaction: Some(c),
                ..
            }) => self.plan.compaction(&c),
            Ok(Line {
                kind: Kind::Compaction,
                ..
            }) => self.bad_line("a compaction without its details"),
            Ok(Line {
                kind: Kind::Totals,
                usage: Some(u),
                ..
            }) => self.totals = Some(u),
            Ok(Line {
                kind: Kind::Session | Kind::Child | Kind::Totals | Kind::Cancel | Kind::Custom,
                ..
            }) => {}
            Ok(Line {
                kind: Kind::SessionInfo,
                name,
                ..
            }) => {
                if name.is_some() {
                    self.name = name;
                }
            }
            Ok(Line {
                kind: Kind::Message,
                message: None,
                ..
            }) => self.bad_line("a message entry without a message"),
            Ok(Line {
                kind: Kind::Other, ..
            }) => self.bad_line("an entry of a type this mypi does not know"),
            Err(e) => self.bad_line(&format!("not a session entry: {e}")),
        }
        Ok(())
    }

    fn bad_line(&mut self, why: &str) {
        self.bad_lines += 1;
        if self.bad_lines <= NAMED_BAD_LINES {
            self.warnings.push(format!(
                "{}:{}: skipped a line ({why})",
                self.path.display(),
                self.line_no
            ));
        }
    }

    fn not_a_session(&self, why: &str) -> SessionError {
        SessionError::NotASession {
            path: self.path.to_path_buf(),
            why: why.to_string(),
        }
    }

    fn read_error(&self, source: io::Error) -> SessionError {
        SessionError::Read {
            path: self.path.to_path_buf(),
            source,
        }
    }

    /// The second pass: reads the message lines the plan still needs, in file order.
    fn messages(&mut self, file: &File) -> Result<Vec<Message>, SessionError> {
        let needed = self.plan.needed();
        let plan = std::mem::take(&mut self.plan);
        let mut reader = BufReader::with_capacity(1 << 16, file);
        let mut pos = reader
            .seek(SeekFrom::Start(0))
            .map_err(|e| self.read_error(e))?;
        let (mut buf, mut failed, mut bad) = (Vec::new(), None, Vec::new());
        let messages = plan.assemble(|n| {
            let place = self
                .places
                .get(n)
                .filter(|_| needed[n] && failed.is_none())?;
            let read = i64::try_from(place.at - pos)
                .map_err(io::Error::other)
                .and_then(|skip| reader.seek_relative(skip));
            buf.resize(place.len, 0);
            if let Err(e) = read.and_then(|()| reader.read_exact(&mut buf)) {
                failed = Some(e);
                return None;
            }
            pos = place.at + place.len as u64;
            let parsed = serde_json::from_slice::<Line<StoredMessage>>(&buf);
            if buf.capacity() > KEPT_BUFFER {
                buf = Vec::new();
            }
            match parsed {
                Ok(Line {
                    message: Some(m), ..
                }) => Some(m.into()),
                Ok(_) => None,
                Err(e) => {
                    bad.push((place.line_no, e.to_string()));
                    None
                }
            }
        });
        if let Some(e) = failed {
            return Err(self.read_error(e));
        }
        for (line_no, e) in bad {
            self.line_no = line_no;
            self.bad_line(&format!("not a message: {e}"));
        }
        Ok(messages)
    }

    fn finish(mut self, tail: Tail, file: &File) -> Result<Loaded, SessionError> {
        if !self.header_seen {
            let why = if self.good_len == 0 && tail != Tail::Torn {
                "it is empty"
            } else {
                "its first line is not a session header"
            };
            return Err(self.not_a_session(why));
        }
        let messages = self.messages(file)?;
        if self.bad_lines > NAMED_BAD_LINES {
            self.warnings.push(format!(
                "{}: skipped {} more lines that are not session entries",
                self.path.display(),
                self.bad_lines - NAMED_BAD_LINES
            ));
        }
        Ok(Loaded {
            messages,
            warnings: self.warnings,
            good_len: self.good_len,
            tail,
            model: self.model,
            name: self.name,
            totals: self.totals,
        })
    }
}
