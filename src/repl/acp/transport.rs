//! The lines of an ACP connection: JSON-RPC messages read from a private copy of stdin on a
//! thread of their own, and written to mypi's own stdout ([`crate::platform::stdio`]) by
//! another, one message a line. A line longer than [`MAX_LINE`] never reaches the protocol: it is read
//! through without being kept, and answered here with an error that carries the request's
//! id (found by [`IdScan`] as the bytes go by), so the editor learns what happened and the
//! connection goes on.

use std::io::{self, BufRead};

use futures_util::{Sink, Stream};

/// The longest message mypi reads (16 MiB): far more than any model's context holds as text;
/// a larger file is for a resource link, which mypi reads itself.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// Messages from the editor, read from `input` until it closes (then the stream ends).
pub fn incoming(input: std::fs::File) -> impl Stream<Item = io::Result<String>> + Send + 'static {
    let (tx, rx) = tokio::sync::mpsc::channel::<String>(16);
    let reader = std::thread::Builder::new()
        .name("acp-stdin".into())
        .spawn(move || {
            let input = io::BufReader::with_capacity(64 * 1024, input);
            read_lines(
                input,
                MAX_LINE,
                &mut |line| tx.blocking_send(line).is_ok(),
                &|e| crate::platform::stdio::out_line(&e),
            );
        });
    if let Err(e) = reader {
        super::say(&format!("cannot start the thread that reads stdin: {e}"));
    }
    futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|line| (Ok(line), rx))
    })
}

/// Messages to the editor: each is written whole, with its newline, to mypi's stdout by a
/// thread of its own, so an editor slow to read holds up the messages (up to 64 waiting),
/// never the async runtime's workers. The thread ends once the sink is dropped and what it
/// holds is written: [`Written::wait`] for it before exiting.
pub fn outgoing() -> (
    impl Sink<String, Error = io::Error> + Send + 'static,
    Written,
) {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<String>(64);
    let writer = std::thread::Builder::new()
        .name("acp-stdout".into())
        .spawn(move || {
            while let Some(line) = rx.blocking_recv() {
                crate::platform::stdio::out_line(&line);
            }
        });
    let writer = match writer {
        Ok(w) => Some(w),
        Err(e) => {
            super::say(&format!("cannot start the thread that writes stdout: {e}"));
            None
        }
    };
    let sink = futures_util::sink::unfold(tx, |tx, line: String| async move {
        tx.send(line)
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "stdout's writer stopped"))?;
        Ok::<_, io::Error>(tx)
    });
    (sink, Written(writer))
}

/// The thread that writes stdout.
pub struct Written(Option<std::thread::JoinHandle<()>>);

impl Written {
    /// Waits (a few seconds at most) until every message handed to the sink is written.
    pub async fn wait(self) {
        if let Some(writer) = self.0 {
            let joined = tokio::task::spawn_blocking(move || writer.join());
            let _ = tokio::time::timeout(std::time::Duration::from_secs(3), joined).await;
        }
    }
}

/// Reads `input` line by line until it ends or `deliver` refuses a line; a line over `max`
/// bytes is not delivered: `reject` gets the error response to write instead.
fn read_lines(
    mut input: impl BufRead,
    max: usize,
    deliver: &mut dyn FnMut(String) -> bool,
    reject: &dyn Fn(String),
) {
    loop {
        let mut line = Vec::new();
        let mut scan: Option<IdScan> = None;
        let mut total = 0usize;
        let ended = loop {
            let buf = match input.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break true,
            };
            if buf.is_empty() {
                break true;
            }
            let (chunk, used, done) = match buf.iter().position(|b| *b == b'\n') {
                Some(i) => (&buf[..i], i + 1, true),
                None => (buf, buf.len(), false),
            };
            total += chunk.len();
            if scan.is_none() && total > max {
                let mut s = IdScan::default();
                s.feed(&line);
                line = Vec::new();
                scan = Some(s);
            }
            match scan.as_mut() {
                Some(s) => s.feed(chunk),
                None => line.extend_from_slice(chunk),
            }
            input.consume(used);
            if done {
                break false;
            }
        };
        match scan {
            Some(s) => reject(too_long(s.id(), total, max)),
            None => {
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                let text = String::from_utf8(line)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
                if !text.trim().is_empty() && !deliver(text) {
                    return;
                }
            }
        }
        if ended {
            return;
        }
    }
}

/// The error response to a message of `total` bytes, over the `max` mypi reads.
fn too_long(id: serde_json::Value, total: usize, max: usize) -> String {
    let mib = |n: usize| n as f64 / (1024.0 * 1024.0);
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {
            "code": -32600,
            "message": format!(
                "the message is {:.1} MiB, over the {:.0} MiB mypi reads; it was not read (attach large files as resource links, which mypi reads itself)",
                mib(total), mib(max)
            ),
        },
    })
    .to_string()
}

/// Finds the `id` member of a JSON object as its bytes go by, keeping nothing else: enough
/// state to know strings, nesting and which key a value belongs to.
#[derive(Default)]
struct IdScan {
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// At the top level, the next string is a key.
    expect_key: bool,
    reading_key: bool,
    key: Vec<u8>,
    /// The last key read was `id`; its value comes after the colon.
    key_is_id: bool,
    capturing: bool,
    value: Vec<u8>,
    found: Option<Vec<u8>>,
}

impl IdScan {
    /// Bytes of an id longer than this are not an id mypi answers to.
    const MAX_ID: usize = 256;

    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.in_string {
                self.in_string_byte(b);
                continue;
            }
            match b {
                b'"' => {
                    self.in_string = true;
                    if self.depth == 1 && self.expect_key {
                        self.expect_key = false;
                        self.reading_key = true;
                        self.key.clear();
                    } else {
                        self.take(b);
                    }
                }
                b'{' | b'[' => {
                    self.take(b);
                    self.depth += 1;
                    self.expect_key = self.depth == 1 && b == b'{';
                }
                b'}' | b']' => {
                    if self.depth == 1 {
                        self.finish();
                    } else {
                        self.take(b);
                    }
                    self.depth = self.depth.saturating_sub(1);
                }
                b',' if self.depth == 1 => {
                    self.finish();
                    self.expect_key = true;
                }
                b':' if self.depth == 1 => {
                    self.capturing = self.key_is_id && self.found.is_none();
                    self.key_is_id = false;
                    self.value.clear();
                }
                b' ' | b'\t' | b'\r' | b'\n' => {}
                _ => self.take(b),
            }
        }
    }

    fn in_string_byte(&mut self, b: u8) {
        if self.escaped {
            self.escaped = false;
        } else if b == b'\\' {
            self.escaped = true;
        } else if b == b'"' {
            self.in_string = false;
            if self.reading_key {
                self.reading_key = false;
                self.key_is_id = self.key == b"id";
                return;
            }
        }
        if self.reading_key {
            if self.key.len() < 3 {
                self.key.push(b);
            }
        } else {
            self.take(b);
        }
    }

    fn take(&mut self, b: u8) {
        if self.capturing && self.value.len() <= Self::MAX_ID {
            self.value.push(b);
        }
    }

    fn finish(&mut self) {
        if self.capturing {
            self.capturing = false;
            self.found = Some(std::mem::take(&mut self.value));
        }
    }

    /// The id found: a number or a string, else null (JSON-RPC's id for "could not tell").
    fn id(&self) -> serde_json::Value {
        let parsed = self
            .found
            .as_deref()
            .and_then(|v| serde_json::from_slice::<serde_json::Value>(v).ok());
        match parsed {
            Some(v @ (serde_json::Value::Number(_) | serde_json::Value::String(_))) => v,
            _ => serde_json::Value::Null,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> serde_json::Value {
        let mut s = IdScan::default();
        // In pieces, as a pipe delivers them.
        for piece in text.as_bytes().chunks(3) {
            s.feed(piece);
        }
        s.id()
    }

    #[test]
    fn the_id_is_found_wherever_it_is_and_nested_ids_are_not_it() {
        assert_eq!(scan(r#"{"jsonrpc":"2.0","id":7,"method":"x"}"#), 7);
        assert_eq!(
            scan(r#"{"method":"x","params":{"id":1,"t":"\"id\":2"},"id":"a\"b"}"#),
            "a\"b"
        );
        assert_eq!(scan(r#"{ "params" : [ {"id": 3} ], "id" : 42 }"#), 42);
        assert_eq!(scan(r#"{"params":{"text":"xxxx"#), serde_json::Value::Null);
        assert_eq!(scan(r#"{"id":{"a":1}}"#), serde_json::Value::Null);
        assert_eq!(scan(r#"{"idx":5,"id":null}"#), serde_json::Value::Null);
    }

    fn read(input: &str, max: usize) -> (Vec<String>, Vec<serde_json::Value>) {
        let mut lines = Vec::new();
        let rejected = std::cell::RefCell::new(Vec::new());
        read_lines(
            io::BufReader::with_capacity(8, input.as_bytes()),
            max,
            &mut |l| {
                lines.push(l);
                true
            },
            &|e| {
                rejected
                    .borrow_mut()
                    .push(serde_json::from_str(&e).unwrap())
            },
        );
        (lines, rejected.into_inner())
    }

    #[test]
    fn lines_over_the_limit_are_answered_and_the_next_ones_still_read() {
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{{"t":"{}"}}}}"#,
            "x".repeat(200)
        );
        let input = format!("{{\"a\":1}}\r\n\n{long}\n{{\"b\":2}}");
        let (lines, rejected) = read(&input, 100);
        assert_eq!(lines, [r#"{"a":1}"#, r#"{"b":2}"#]);
        assert_eq!(rejected.len(), 1);
        assert_eq!(rejected[0]["id"], 5);
        assert_eq!(rejected[0]["error"]["code"], -32600);
        let message = rejected[0]["error"]["message"].as_str().unwrap();
        assert!(message.contains("resource links"), "{message}");
    }
}
