//! A minimal blocking HTTP/1.1 client over `std::net::TcpStream`, plus an SSE parser, for
//! testing the fake servers without the `mypi` binary (no blocking reqwest is available).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use super::fake_server::read_chunked;

/// A response read in full.
#[derive(Debug, Clone)]
pub struct HttpResponse {
    pub status: u16,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body with any chunked framing removed.
    pub body: String,
}

impl HttpResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (panics when it is not).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {}", self.body))
    }
}

/// Splits `http://host:port/path` into (`host:port`, `/path`).
fn split_url(url: &str) -> (String, String) {
    let rest = url.strip_prefix("http://").expect("http:// URL");
    match rest.find('/') {
        Some(i) => (rest[..i].to_string(), rest[i..].to_string()),
        None => (rest.to_string(), "/".to_string()),
    }
}

/// A keep-alive connection that can send several requests in a row.
pub struct HttpConn {
    host: String,
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl HttpConn {
    /// Connects to the host of `url` (the path is ignored).
    pub fn connect(url: &str) -> HttpConn {
        let (host, _) = split_url(url);
        let stream = TcpStream::connect(&host).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        HttpConn {
            host,
            reader: BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
        }
    }

    /// Sends `method path` with `body` (Content-Length or, with `chunked`, chunked framing)
    /// and reads the full response.
    pub fn request(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
        chunked: bool,
    ) -> std::io::Result<HttpResponse> {
        let mut req = format!("{method} {path} HTTP/1.1\r\nhost: {}\r\n", self.host);
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        if chunked {
            req.push_str("transfer-encoding: chunked\r\n\r\n");
            for piece in body.as_bytes().chunks(5) {
                req.push_str(&format!("{:x}\r\n", piece.len()));
                req.push_str(std::str::from_utf8(piece).unwrap_or("?"));
                req.push_str("\r\n");
            }
            req.push_str("0\r\n\r\n");
        } else {
            req.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
        }
        self.writer.write_all(req.as_bytes())?;
        self.writer.flush()?;
        read_response(&mut self.reader)
    }

    /// POSTs JSON to `path` on this connection.
    pub fn post_json(&mut self, path: &str, body: &serde_json::Value) -> HttpResponse {
        let headers = [("content-type", "application/json")];
        self.request("POST", path, &headers, &body.to_string(), false)
            .expect("POST")
    }
}

/// POSTs JSON to a full URL on a fresh connection.
pub fn post_json(url: &str, body: &serde_json::Value) -> HttpResponse {
    let (_, path) = split_url(url);
    HttpConn::connect(url).post_json(&path, body)
}

fn read_response(r: &mut BufReader<TcpStream>) -> std::io::Result<HttpResponse> {
    let mut line = String::new();
    if r.read_line(&mut line)? == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line {line:?}")))?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        if r.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let get = |n: &str| headers.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    let body = if get("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        read_chunked(r)?
    } else if let Some(len) = get("content-length").and_then(|v| v.parse::<usize>().ok()) {
        let mut b = vec![0; len];
        r.read_exact(&mut b)?;
        b
    } else {
        let mut b = Vec::new();
        r.read_to_end(&mut b)?;
        b
    };
    Ok(HttpResponse {
        status,
        headers,
        body: String::from_utf8(body).map_err(std::io::Error::other)?,
    })
}

/// One server-sent event: its `event:` name (if any) and its joined `data:` lines.
#[derive(Debug, Clone, PartialEq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

/// Parses an event-stream body into events (blank-line separated).
pub fn parse_sse(body: &str) -> Vec<SseEvent> {
    let mut out = Vec::new();
    for block in body.replace("\r\n", "\n").split("\n\n") {
        let mut event = None;
        let mut data: Vec<&str> = Vec::new();
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("event:") {
                event = Some(v.trim().to_string());
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push(v.strip_prefix(' ').unwrap_or(v));
            }
        }
        if event.is_some() || !data.is_empty() {
            out.push(SseEvent {
                event,
                data: data.join("\n"),
            });
        }
    }
    out
}
