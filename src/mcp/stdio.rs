//! The stdio transport: a server as a child process in its own process group, speaking
//! newline-delimited JSON-RPC on stdin/stdout, written here rather than taken from the SDK so
//! that every limit is ours:
//!
//! - the child leads a new process group registered with [`crate::platform::process`], so the server and
//!   anything it started (`npx`, `sh -c`) die with mypi on every exit path;
//! - a line longer than [`MAX_LINE`] is not kept: when it is an answer whose id can be read
//!   from its first or last bytes, the waiting request gets an error saying how big it was
//!   (instead of hanging until its timeout); a line that is not JSON-RPC is logged and skipped;
//! - stderr is read into a bounded buffer whose tail `/mcp` shows when the server fails.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};

use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::config::Transport as Configured;
use crate::platform::process::Group;

/// The longest line read from a server's stdout.
pub const MAX_LINE: usize = 32 * 1024 * 1024;
/// How much of a server's stderr is kept (its tail).
pub const STDERR_KEEP: usize = 16 * 1024;
/// What is kept of each end of an over-long line to find its id.
const EDGE: usize = 4096;
/// The largest line or message buffer kept for the next one (a bigger one, left by a big
/// message, is let go).
const KEEP: usize = 64 * 1024;

/// Empties `buf` for the next message, letting a big one's memory go.
fn reuse(buf: &mut Vec<u8>) {
    if buf.capacity() > KEEP {
        *buf = Vec::new();
    } else {
        buf.clear();
    }
}

/// The tail of a server's stderr, shared with `/mcp`.
#[derive(Clone, Default)]
pub struct StderrTail(Arc<TailInner>);

#[derive(Default)]
struct TailInner {
    buf: Mutex<VecDeque<u8>>,
    /// A reader is attached (a stdio server): [`StderrTail::settled`] waits for it.
    reading: std::sync::atomic::AtomicBool,
    /// The reader reached the end of stderr.
    done: tokio_util::sync::CancellationToken,
}

impl StderrTail {
    fn push(&self, bytes: &[u8]) {
        let mut buf = self.0.buf.lock().unwrap_or_else(|p| p.into_inner());
        buf.extend(bytes);
        let extra = buf.len().saturating_sub(STDERR_KEEP);
        buf.drain(..extra);
    }

    /// Waits (at most `max`) until the server's last words are read: a server that died has
    /// closed its stderr, but the reader may not have read all of it yet.
    pub async fn settled(&self, max: std::time::Duration) {
        if self.0.reading.load(std::sync::atomic::Ordering::SeqCst) {
            let _ = tokio::time::timeout(max, self.0.done.cancelled()).await;
        }
    }

    /// The last `lines` lines.
    pub fn tail(&self, lines: usize) -> String {
        let buf = self.0.buf.lock().unwrap_or_else(|p| p.into_inner());
        let (a, b) = buf.as_slices();
        let text = String::from_utf8_lossy(&[a, b].concat()).into_owned();
        let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

/// A started server process: its transport for the SDK and what outlives the transport.
pub struct Spawned {
    pub transport: StdioTransport,
    pub child: Child,
    pub group: Group,
    pub pgid: i32,
    pub stderr: StderrTail,
}

/// Starts the server of a stdio entry (no shell: `command` is run with `args` as given).
pub fn spawn(transport: &Configured, base: &Path, log: LineLog) -> std::io::Result<Spawned> {
    let Configured::Stdio {
        command,
        args,
        env,
        cwd,
    } = transport
    else {
        return Err(std::io::Error::other("not a stdio server"));
    };
    let mut cmd = Command::new(command);
    cmd.args(args)
        .envs(env)
        .current_dir(cwd.as_ref().map(|c| base.join(c)).unwrap_or(base.into()))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let (mut child, group) = crate::platform::process::spawn_group(cmd)?;
    let pgid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .unwrap_or(0);
    let (Some(stdin), Some(stdout), Some(err)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(std::io::Error::other(
            "the server's pipes could not be opened",
        ));
    };
    let stderr = StderrTail::default();
    stderr
        .0
        .reading
        .store(true, std::sync::atomic::Ordering::SeqCst);
    tokio::spawn(read_stderr(err, stderr.clone()));
    Ok(Spawned {
        transport: StdioTransport::new(stdout, stdin, log),
        child,
        group,
        pgid,
        stderr,
    })
}

async fn read_stderr(mut err: impl AsyncRead + Unpin, tail: StderrTail) {
    let mut buf = vec![0u8; 8192];
    while let Ok(n) = err.read(&mut buf).await {
        if n == 0 {
            break;
        }
        tail.push(&buf[..n]);
    }
    tail.0.done.cancel();
}

/// Where the transport reports lines it skipped.
pub type LineLog = Arc<dyn Fn(&str) + Send + Sync>;

/// One line from the server (borrowed from the reader until its next line), or what is left
/// of one that was too long.
enum Line<'a> {
    Whole(&'a [u8]),
    TooLong {
        head: Vec<u8>,
        tail: VecDeque<u8>,
        len: usize,
    },
}

/// Reads lines of at most [`MAX_LINE`] bytes. The line being read lives in the struct, not
/// in `next`: the SDK polls `receive` in a `select!` and drops it whenever something else is
/// ready, and a long line arrives in many reads.
struct Lines<R> {
    reader: BufReader<R>,
    max: usize,
    /// The line being read; its buffer is kept from line to line (up to [`KEEP`]).
    line: Vec<u8>,
    /// `line` holds a whole line already handed out: cleared when the next read starts.
    handed: bool,
    tail: Option<VecDeque<u8>>,
    len: usize,
}

impl<R: AsyncRead + Unpin> Lines<R> {
    fn new(reader: BufReader<R>, max: usize) -> Self {
        Lines {
            reader,
            max,
            line: Vec::new(),
            handed: false,
            tail: None,
            len: 0,
        }
    }

    /// The next line; cancel-safe (a dropped call loses nothing of the line so far).
    async fn next(&mut self) -> Option<Line<'_>> {
        if std::mem::take(&mut self.handed) {
            reuse(&mut self.line);
        }
        loop {
            let chunk = match self.reader.fill_buf().await {
                Ok([]) => return None,
                Ok(c) => c,
                Err(_) => return None,
            };
            let (part, done, ends) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (&chunk[..i], i + 1, true),
                None => (chunk, chunk.len(), false),
            };
            self.len += part.len();
            match &mut self.tail {
                None if self.line.len() + part.len() <= self.max => {
                    self.line.extend_from_slice(part)
                }
                None => {
                    self.line.truncate(EDGE.min(self.line.len()));
                    let mut t = VecDeque::with_capacity(EDGE);
                    push_tail(&mut t, part);
                    self.tail = Some(t);
                }
                Some(t) => push_tail(t, part),
            }
            self.reader.consume(done);
            if ends {
                let len = std::mem::take(&mut self.len);
                return Some(match self.tail.take() {
                    None => {
                        self.handed = true;
                        Line::Whole(&self.line)
                    }
                    Some(tail) => Line::TooLong {
                        head: std::mem::take(&mut self.line),
                        tail,
                        len,
                    },
                });
            }
        }
    }
}

fn push_tail(t: &mut VecDeque<u8>, part: &[u8]) {
    let start = part.len().saturating_sub(EDGE);
    t.extend(&part[start..]);
    let extra = t.len().saturating_sub(EDGE);
    t.drain(..extra);
}

/// The id of a JSON-RPC answer, read from the first or last bytes of its line.
fn find_id(head: &[u8], tail: &[u8]) -> Option<String> {
    for part in [head, tail] {
        let text = String::from_utf8_lossy(part);
        if let Some(at) = text.find("\"id\"") {
            let rest = text[at + 4..].trim_start().strip_prefix(':')?.trim_start();
            let end = rest
                .find(|c: char| c == ',' || c == '}' || c.is_whitespace())
                .unwrap_or(rest.len());
            let id = &rest[..end];
            if !id.is_empty() && serde_json::from_str::<serde_json::Value>(id).is_ok() {
                return Some(id.to_string());
            }
        }
    }
    None
}

/// The server's stdin, written by each send in turn (no writer task: a hop between tasks
/// costs as much as the rest of a call); `None` once closed.
type Stdin = Arc<tokio::sync::Mutex<Option<Writer>>>;

/// The server's stdin and the buffer each message is written into (kept from message to
/// message, up to [`KEEP`]).
struct Writer {
    pipe: ChildStdin,
    buf: Vec<u8>,
}

/// The SDK's view of a stdio server.
pub struct StdioTransport {
    lines: Lines<ChildStdout>,
    stdin: Stdin,
    log: LineLog,
    decoder: super::decode::Decoder,
}

impl StdioTransport {
    /// Has each tool's `execution` read off the answers to `tools/list` into `tasks`.
    pub(super) fn read_tasks(&mut self, tasks: std::sync::Arc<super::tasks::TaskTools>) {
        self.decoder.tasks = Some(tasks);
    }

    fn new(stdout: ChildStdout, stdin: ChildStdin, log: LineLog) -> Self {
        StdioTransport {
            lines: Lines::new(BufReader::new(stdout), MAX_LINE),
            stdin: Arc::new(tokio::sync::Mutex::new(Some(Writer {
                pipe: stdin,
                buf: Vec::new(),
            }))),
            log,
            decoder: Default::default(),
        }
    }
}

/// Turns one line into a message; `None` to skip it (said in `log`).
fn message(
    line: Line,
    log: &LineLog,
    decoder: &mut super::decode::Decoder,
) -> Option<RxJsonRpcMessage<RoleClient>> {
    match line {
        Line::Whole(bytes) => {
            if bytes.iter().all(u8::is_ascii_whitespace) {
                return None;
            }
            match decoder.decode(bytes) {
                Ok(m) => Some(m),
                Err(e) => {
                    let shown =
                        String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned();
                    log(&format!(
                        "skipped a line that is not JSON-RPC ({e}): {shown}"
                    ));
                    None
                }
            }
        }
        Line::TooLong { head, tail, len } => {
            let size = crate::vocab::text::mib(len);
            let limit = crate::vocab::text::mib(MAX_LINE);
            let tail: Vec<u8> = tail.into_iter().collect();
            let Some(id) = find_id(&head, &tail) else {
                log(&format!("skipped a message of {size} (over {limit})"));
                return None;
            };
            let msg = format!(
                "the server's answer was {size}, more than mypi reads ({limit}); \
                 ask for less (a smaller page or range)"
            );
            let text = serde_json::json!({
                "jsonrpc": "2.0", "id": serde_json::from_str::<serde_json::Value>(&id).ok(),
                "error": {"code": -32603, "message": msg}
            });
            // Through the decoder, which lets the id go.
            decoder.decode(text.to_string().as_bytes()).ok()
        }
    }
}

/// Writes one message; a failed write closes stdin (the server is gone or not reading).
async fn write_stdin(stdin: Stdin, item: TxJsonRpcMessage<RoleClient>) -> std::io::Result<()> {
    let mut guard = stdin.lock().await;
    let Some(w) = guard.as_mut() else {
        return Err(std::io::Error::other("the transport is closed"));
    };
    reuse(&mut w.buf);
    serde_json::to_writer(&mut w.buf, &item).map_err(std::io::Error::other)?;
    w.buf.push(b'\n');
    if w.pipe.write_all(&w.buf).await.is_err() {
        *guard = None;
        return Err(std::io::Error::other("the server's stdin is closed"));
    }
    Ok(())
}

impl Transport<RoleClient> for StdioTransport {
    type Error = std::io::Error;

    fn name() -> Cow<'static, str> {
        "stdio".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.decoder.sent(&item);
        write_stdin(self.stdin.clone(), item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let line = self.lines.next().await?;
            if let Some(m) = message(line, &self.log, &mut self.decoder) {
                return Some(m);
            }
        }
    }

    /// Dropping stdin closes it: the server's signal to exit. (A write stuck on a server
    /// that reads nothing keeps it until the process group is killed.)
    async fn close(&mut self) -> Result<(), Self::Error> {
        let stdin = self.stdin.clone();
        if let Ok(mut guard) =
            tokio::time::timeout(std::time::Duration::from_secs(1), stdin.lock()).await
        {
            *guard = None;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines_of(input: &[u8], max: usize) -> Vec<String> {
        let mut l = Lines::new(BufReader::with_capacity(16, input), max);
        let mut out = Vec::new();
        while let Some(line) = l.next().await {
            out.push(match line {
                Line::Whole(b) => String::from_utf8(b.to_vec()).unwrap(),
                Line::TooLong { head, tail, len } => format!(
                    "long {len} {} {}",
                    String::from_utf8_lossy(&head),
                    String::from_utf8_lossy(&tail.into_iter().collect::<Vec<u8>>())
                ),
            });
        }
        out
    }

    #[tokio::test]
    async fn lines_split_and_long_ones_keep_their_edges() {
        let got = lines_of(b"a\nbb\n\nccc", 100).await;
        assert_eq!(got, ["a", "bb", ""]);
        let long = format!("{{\"id\":7,{}}}\nnext\n", "x".repeat(200));
        let got = lines_of(long.as_bytes(), 50).await;
        assert!(got[0].starts_with("long 209 {\"id\":7,xxx"), "{}", got[0]);
        assert_eq!(got[1], "next");
    }

    #[tokio::test]
    async fn a_read_dropped_mid_line_loses_nothing() {
        let (mut w, r) = tokio::io::duplex(64);
        let mut l = Lines::new(BufReader::with_capacity(8, r), 100);
        w.write_all(b"{\"id\":1,").await.unwrap();
        let cut = tokio::time::timeout(std::time::Duration::from_millis(50), l.next()).await;
        assert!(cut.is_err(), "no line yet");
        w.write_all(b"\"result\":{}}\n").await.unwrap();
        match l.next().await {
            Some(Line::Whole(b)) => assert_eq!(b, br#"{"id":1,"result":{}}"#),
            _ => panic!("the line was cut"),
        }
    }

    #[tokio::test]
    async fn a_big_lines_buffer_is_let_go_and_a_small_ones_kept() {
        let big = format!("{}\nsmall\nnext\n", "x".repeat(KEEP * 2));
        let mut l = Lines::new(BufReader::new(big.as_bytes()), MAX_LINE);
        assert!(matches!(l.next().await, Some(Line::Whole(b)) if b.len() == KEEP * 2));
        assert!(matches!(l.next().await, Some(Line::Whole(b"small"))));
        assert!(l.line.capacity() <= KEEP, "{}", l.line.capacity());
        let kept = l.line.as_ptr();
        assert!(matches!(l.next().await, Some(Line::Whole(b"next"))));
        assert_eq!(l.line.as_ptr(), kept, "a small line's buffer is reused");
    }

    #[test]
    fn ids_are_found_at_either_end() {
        assert_eq!(
            find_id(br#"{"jsonrpc":"2.0","id":12,"res"#, b""),
            Some("12".into())
        );
        assert_eq!(
            find_id(b"{\"result\":\"xx", br#"xx","id":"ab"}"#),
            Some("\"ab\"".into())
        );
        assert_eq!(find_id(b"garbage", b"garbage"), None);
    }
}
