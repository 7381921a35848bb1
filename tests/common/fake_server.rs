//! A tiny scripted HTTP/1.1 server on `127.0.0.1` that stands in for a model API.
//!
//! The core ([`FakeServer`]) accepts connections on a background thread, serves each
//! connection on its own thread (keep-alive: several requests per connection), records every
//! request ([`Recorded`]) and answers from a FIFO queue of scripted [`Reply`]s. The two
//! flavors in `fake_wire.rs` ([`FakeOpenAi`](super::fake_wire::FakeOpenAi),
//! [`FakeAnthropic`](super::fake_wire::FakeAnthropic)) turn a `Reply` into the exact bytes the
//! real API would stream. Streamed bodies are sent with `Transfer-Encoding: chunked` in 7-byte
//! pieces, each flushed separately (with `TCP_NODELAY` and a 1 ms pause now and then), so a
//! client sees JSON cut in the middle.
//!
//! When the queue is empty the server answers 500 with a JSON error whose message is
//! `fake server: no scripted reply left`, so a test that makes more requests than it scripted
//! notices. Dropping the server stops it and closes every open connection.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Message of the 500 answer given when no scripted reply is left.
pub const EXHAUSTED_MESSAGE: &str = "fake server: no scripted reply left";

/// Size of each piece a streamed body is cut into.
pub const PIECE: usize = 7;

/// One request as the server received it.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    /// Path including any query string, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Header names lower-cased, values trimmed, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON, or `Value::Null` when it is not JSON.
    pub body: Value,
    pub raw_body: String,
}

impl Recorded {
    /// The first header of that name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

pub use super::fake_reply::{Reply, ReplyKind};

/// A reply rendered to HTTP by a flavor.
#[derive(Clone, Debug)]
pub struct Rendered {
    pub status: u16,
    pub content_type: String,
    pub body: String,
    /// Send chunked in small pieces (event streams) rather than with Content-Length.
    pub streamed: bool,
    /// Close the connection halfway through the body.
    pub truncate: bool,
}

/// Wire format of one API: which paths it serves and how replies look on the wire.
pub trait Flavor: Send + Sync + 'static {
    /// Whether this path (query string removed) is the model endpoint.
    fn matches(&self, path: &str) -> bool;
    /// Turns a scripted reply into HTTP; `request` is the recorded request it answers.
    fn render(&self, reply: &Reply, request: &Recorded, seq: usize) -> Rendered;
    /// An error answer in this API's error shape.
    fn error_body(&self, status: u16, message: &str) -> String;
}

#[derive(Default)]
struct State {
    replies: VecDeque<Reply>,
    requests: Vec<Recorded>,
    served: usize,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    stop: AtomicBool,
    conns: Mutex<Vec<TcpStream>>,
    flavor: Box<dyn Flavor>,
}

/// The flavor-independent server core; the flavors deref to it.
pub struct FakeServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl FakeServer {
    /// Binds `127.0.0.1:0` and starts serving with `flavor`.
    pub fn start(flavor: impl Flavor, replies: Vec<Reply>) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind fake server");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                replies: replies.into(),
                ..State::default()
            }),
            changed: Condvar::new(),
            stop: AtomicBool::new(false),
            conns: Mutex::new(Vec::new()),
            flavor: Box::new(flavor),
        });
        let sh = shared.clone();
        let accept = thread::Builder::new()
            .name("fake-accept".into())
            .spawn(move || accept_loop(listener, sh))
            .expect("spawn accept thread");
        FakeServer {
            addr,
            shared,
            accept: Some(accept),
        }
    }

    /// `http://127.0.0.1:PORT` with no path.
    pub fn root_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Appends a scripted reply to the queue.
    pub fn push(&self, reply: Reply) {
        self.shared.state.lock().unwrap().replies.push_back(reply);
    }

    /// Every request received so far, in order (including ones answered 404 or 500).
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.state.lock().unwrap().requests.clone()
    }

    /// Number of requests received so far.
    pub fn request_count(&self) -> usize {
        self.shared.state.lock().unwrap().requests.len()
    }

    /// Scripted replies not yet used.
    pub fn replies_left(&self) -> usize {
        self.shared.state.lock().unwrap().replies.len()
    }

    /// Blocks until at least `n` requests arrived; panics after `timeout`.
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> Vec<Recorded> {
        let deadline = Instant::now() + timeout;
        let mut st = self.shared.state.lock().unwrap();
        while st.requests.len() < n {
            let now = Instant::now();
            if now >= deadline {
                panic!(
                    "fake server: waited {timeout:?} for {n} requests, got {}",
                    st.requests.len()
                );
            }
            st = self
                .shared
                .changed
                .wait_timeout(st, deadline - now)
                .unwrap()
                .0;
        }
        st.requests.clone()
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(500));
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
        for c in self.shared.conns.lock().unwrap().drain(..) {
            let _ = c.shutdown(Shutdown::Both);
        }
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let _ = stream.set_nodelay(true);
        if let Ok(c) = stream.try_clone() {
            shared.conns.lock().unwrap().push(c);
        }
        let sh = shared.clone();
        let _ = thread::Builder::new()
            .name("fake-conn".into())
            .spawn(move || serve_connection(stream, sh));
    }
}

fn serve_connection(stream: TcpStream, shared: Arc<Shared>) {
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut writer = stream;
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let req = match read_request(&mut reader, &mut writer) {
            Ok(Some(r)) => r,
            _ => return,
        };
        let wants_close = req
            .header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"));
        let keep = respond(&shared, req, &mut writer).unwrap_or(false);
        if !keep || wants_close {
            let _ = writer.flush();
            let _ = writer.shutdown(Shutdown::Both);
            return;
        }
    }
}

/// Records the request, picks the answer and writes it. Ok(true) = connection reusable.
fn respond(shared: &Shared, req: Recorded, w: &mut TcpStream) -> std::io::Result<bool> {
    let path_only = req.path.split('?').next().unwrap_or("").to_string();
    let matched = req.method.eq_ignore_ascii_case("POST") && shared.flavor.matches(&path_only);
    let (reply, seq) = {
        let mut st = shared.state.lock().unwrap();
        st.requests.push(req.clone());
        let reply = if matched {
            st.replies.pop_front()
        } else {
            None
        };
        st.served += 1;
        let seq = st.served;
        shared.changed.notify_all();
        (reply, seq)
    };
    let reply = match (matched, reply) {
        (false, _) => {
            let msg = format!("fake server: no route for {} {}", req.method, req.path);
            let body = shared.flavor.error_body(404, &msg);
            return write_plain(w, 404, "application/json", &[], &body);
        }
        (true, None) => {
            let body = shared.flavor.error_body(500, EXHAUSTED_MESSAGE);
            return write_plain(w, 500, "application/json", &[], &body);
        }
        (true, Some(r)) => r,
    };
    if !reply.delay.is_zero() && !sleep_unless_stopped(shared, reply.delay) {
        return Ok(false);
    }
    let out = shared.flavor.render(&reply, &req, seq);
    if !out.streamed {
        return write_plain(w, out.status, &out.content_type, &reply.headers, &out.body);
    }
    write_streamed(w, &out, &reply.headers, || {
        reply.stall.is_zero() || sleep_unless_stopped(shared, reply.stall)
    })
}

fn sleep_unless_stopped(shared: &Shared, d: Duration) -> bool {
    let deadline = Instant::now() + d;
    while Instant::now() < deadline {
        if shared.stop.load(Ordering::SeqCst) {
            return false;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        thread::sleep(left.min(Duration::from_millis(10)));
    }
    true
}

fn status_text(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Status",
    }
}

fn head(status: u16, content_type: &str, extra: &[(String, String)]) -> String {
    let mut h = format!(
        "HTTP/1.1 {status} {}\r\ncontent-type: {content_type}\r\n",
        status_text(status)
    );
    for (k, v) in extra {
        h.push_str(&format!("{k}: {v}\r\n"));
    }
    h
}

fn write_plain(
    w: &mut TcpStream,
    status: u16,
    content_type: &str,
    extra: &[(String, String)],
    body: &str,
) -> std::io::Result<bool> {
    let mut out = head(status, content_type, extra);
    out.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    out.push_str(body);
    w.write_all(out.as_bytes())?;
    w.flush()?;
    Ok(true)
}

/// Streams `out` chunked; `midway` runs halfway through (false: stop there).
fn write_streamed(
    w: &mut TcpStream,
    out: &Rendered,
    extra: &[(String, String)],
    midway: impl Fn() -> bool,
) -> std::io::Result<bool> {
    let mut h = head(out.status, &out.content_type, extra);
    h.push_str("cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n");
    w.write_all(h.as_bytes())?;
    w.flush()?;
    let bytes = out.body.as_bytes();
    let pieces: Vec<&[u8]> = bytes.chunks(PIECE).collect();
    let limit = if out.truncate {
        pieces.len() / 2
    } else {
        pieces.len()
    };
    for (i, piece) in pieces.iter().take(limit).enumerate() {
        if i == pieces.len() / 2 && !midway() {
            return Ok(false);
        }
        let mut frame = format!("{:x}\r\n", piece.len()).into_bytes();
        frame.extend_from_slice(piece);
        frame.extend_from_slice(b"\r\n");
        w.write_all(&frame)?;
        w.flush()?;
        if i % 4 == 3 {
            thread::sleep(Duration::from_millis(1));
        }
    }
    if out.truncate {
        let _ = w.shutdown(Shutdown::Both);
        return Ok(false);
    }
    w.write_all(b"0\r\n\r\n")?;
    w.flush()?;
    Ok(true)
}

/// Reads one request; Ok(None) on a clean end of the connection.
fn read_request(
    r: &mut BufReader<TcpStream>,
    w: &mut TcpStream,
) -> std::io::Result<Option<Recorded>> {
    let mut line = String::new();
    // Skip stray empty lines between requests.
    loop {
        line.clear();
        if r.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        if !line.trim().is_empty() {
            break;
        }
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        line.clear();
        if r.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let l = line.trim_end_matches(['\r', '\n']);
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    if get("expect").is_some_and(|v| v.eq_ignore_ascii_case("100-continue")) {
        w.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        w.flush()?;
    }
    let chunked =
        get("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    let body = if chunked {
        read_chunked(r)?
    } else if let Some(len) = get("content-length").and_then(|v| v.parse::<usize>().ok()) {
        let mut buf = vec![0; len];
        r.read_exact(&mut buf)?;
        buf
    } else {
        Vec::new()
    };
    let raw_body = String::from_utf8_lossy(&body).into_owned();
    let body = serde_json::from_str(&raw_body).unwrap_or(Value::Null);
    Ok(Some(Recorded {
        method,
        path,
        headers,
        body,
        raw_body,
    }))
}

/// Decodes a chunked body (shared with the test client in `http.rs`).
pub fn read_chunked(r: &mut impl BufRead) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        if r.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let size_text = line.trim().split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| std::io::Error::other(format!("bad chunk size {size_text:?}")))?;
        if size == 0 {
            // Trailers, up to the empty line.
            loop {
                line.clear();
                if r.read_line(&mut line)? == 0 || line.trim().is_empty() {
                    return Ok(body);
                }
            }
        }
        let start = body.len();
        body.resize(start + size, 0);
        r.read_exact(&mut body[start..])?;
        let mut crlf = [0u8; 2];
        r.read_exact(&mut crlf)?;
    }
}
