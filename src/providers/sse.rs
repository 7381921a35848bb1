//! Server-Sent Events and the HTTP plumbing the streaming providers share.
//!
//! [`SseParser`] is an incremental parser: bytes go in as they arrive (split anywhere, even
//! inside a UTF-8 character) and complete events come out. [`SseStream`] pulls a
//! `reqwest::Response` body chunk by chunk through it. On top of that, `post_json` sends a
//! request and maps failures to [`ProviderError`]s, and `SseEventStream` turns the events into
//! [`StreamEvent`]s with a provider-specific [`SseDecoder`].

use futures_util::future::BoxFuture;
use std::collections::VecDeque;

use serde_json::Value;

use crate::platform::quickack::QuickAck;

use super::not_stream;
use super::{
    error_message_from_body, http_client, EventStream, Payload, ProviderError, StreamEvent,
};

/// One dispatched event: its `event:` name, if any, and its `data:` lines joined by `\n`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

/// Incremental SSE parser (the WHATWG event-stream format, minus `id` and `retry`, which no
/// model API needs).
#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of the line being read.
    line: Vec<u8>,
    /// The last byte fed was `\r`: a `\n` right after it belongs to the same line ending.
    after_cr: bool,
    /// A first line has been seen (a byte-order mark is only skipped before it).
    started: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
}

impl SseParser {
    /// Feeds the next bytes of the stream and returns the events they complete.
    pub fn feed(&mut self, mut bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        while !bytes.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if bytes[0] == b'\n' {
                    bytes = &bytes[1..];
                    continue;
                }
            }
            match bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(end) => {
                    self.line.extend_from_slice(&bytes[..end]);
                    self.after_cr = bytes[end] == b'\r';
                    bytes = &bytes[end + 1..];
                    let line = std::mem::take(&mut self.line);
                    out.extend(self.process_line(&line));
                    self.line = line;
                    self.line.clear();
                }
                None => {
                    self.line.extend_from_slice(bytes);
                    break;
                }
            }
        }
        out
    }

    /// Ends the stream: returns the last event if the stream stopped without a blank line.
    pub fn finish(&mut self) -> Option<SseEvent> {
        self.after_cr = false;
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            // A non-empty line never dispatches by itself.
            let _ = self.process_line(&line);
        }
        self.dispatch()
    }

    fn process_line(&mut self, mut line: &[u8]) -> Option<SseEvent> {
        if !self.started {
            self.started = true;
            line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
        }
        if line.is_empty() {
            return self.dispatch();
        }
        if line[0] == b':' {
            return None;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match field {
            b"event" => self.event = Some(lossy(value).into_owned()),
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&lossy(value));
                self.has_data = true;
            }
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        if !std::mem::take(&mut self.has_data) {
            return None;
        }
        Some(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
        })
    }
}

/// `bytes` as text, each invalid sequence replaced (`String::from_utf8_lossy`, whose
/// character-by-character scan is slower than `from_utf8`'s on the valid text of nearly
/// every line).
fn lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.into(),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// The events of a response body, read chunk by chunk as they arrive, each read acknowledged
/// at once (see [`QuickAck`]).
pub struct SseStream {
    response: reqwest::Response,
    quick_ack: QuickAck,
    parser: SseParser,
    pending: VecDeque<SseEvent>,
    ended: bool,
}

impl SseStream {
    pub fn new(response: reqwest::Response) -> Self {
        SseStream {
            quick_ack: QuickAck::of(&response),
            response,
            parser: SseParser::default(),
            pending: VecDeque::new(),
            ended: false,
        }
    }

    /// The next event, or `None` at the end of the body.
    pub async fn next(&mut self) -> Result<Option<SseEvent>, reqwest::Error> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Ok(Some(event));
            }
            if self.ended {
                return Ok(None);
            }
            let chunk = self.response.chunk().await?;
            self.quick_ack.ack();
            match chunk {
                Some(bytes) => self.pending.extend(self.parser.feed(&bytes)),
                None => {
                    self.ended = true;
                    self.pending.extend(self.parser.finish());
                }
            }
        }
    }
}

/// The provider-specific part of a stream: SSE events in, [`StreamEvent`]s out.
pub(crate) trait SseDecoder: Send {
    /// Handles one event, appending what it means to `out`.
    fn event(&mut self, event: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError>;

    /// The body ended: emit `Done` if the reply is complete, or say why it is not. Called
    /// only if no `Done` was emitted yet.
    fn end(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError>;
}

/// Runs a decoder and queues its output; everything after `Done` or an error is dropped.
pub(crate) struct Decoding<D> {
    decoder: D,
    pending: VecDeque<Result<StreamEvent, ProviderError>>,
    finished: bool,
    body_ended: bool,
}

impl<D: SseDecoder> Decoding<D> {
    pub(crate) fn new(decoder: D) -> Self {
        Decoding {
            decoder,
            pending: VecDeque::new(),
            finished: false,
            body_ended: false,
        }
    }

    /// Feeds the next SSE event, or `None` for the end of the body.
    pub(crate) fn push(&mut self, event: Option<&SseEvent>) {
        if self.finished || self.body_ended {
            return;
        }
        let mut out = Vec::new();
        let result = match event {
            Some(event) => self.decoder.event(event, &mut out),
            None => {
                self.body_ended = true;
                self.decoder.end(&mut out)
            }
        };
        self.pending.extend(out.into_iter().map(Ok));
        if let Err(e) = result {
            self.pending.push_back(Err(e));
        }
    }

    /// Records a transport failure.
    pub(crate) fn fail(&mut self, error: ProviderError) {
        self.pending.push_back(Err(error));
        self.body_ended = true;
    }

    /// The next queued item. `None` means "feed more" unless [`Decoding::is_over`].
    pub(crate) fn pop(&mut self) -> Option<Result<StreamEvent, ProviderError>> {
        if self.finished {
            return None;
        }
        let item = self.pending.pop_front()?;
        if matches!(item, Err(_) | Ok(StreamEvent::Done { .. })) {
            self.finished = true;
            self.pending.clear();
        }
        Some(item)
    }

    /// Nothing more will come out.
    pub(crate) fn is_over(&self) -> bool {
        self.finished || (self.body_ended && self.pending.is_empty())
    }
}

/// A streamed HTTP reply decoded by `D`.
pub(crate) struct SseEventStream<D> {
    sse: SseStream,
    state: Decoding<D>,
    provider: String,
    url: String,
}

impl<D: SseDecoder> SseEventStream<D> {
    pub(crate) fn new(response: reqwest::Response, decoder: D, provider: &str, url: &str) -> Self {
        SseEventStream {
            sse: SseStream::new(response),
            state: Decoding::new(decoder),
            provider: provider.to_string(),
            url: url.to_string(),
        }
    }
}

impl<D: SseDecoder> EventStream for SseEventStream<D> {
    fn next(&mut self) -> BoxFuture<'_, Option<Result<StreamEvent, ProviderError>>> {
        Box::pin(async move {
            loop {
                if let Some(item) = self.state.pop() {
                    return Some(item);
                }
                if self.state.is_over() {
                    return None;
                }
                match self.sse.next().await {
                    Ok(event) => self.state.push(event.as_ref()),
                    Err(e) => {
                        let error = connect_error(&self.provider, &self.url, &e);
                        self.state.fail(error);
                    }
                }
            }
        })
    }
}

/// POSTs `payload` as JSON and returns the response if its status is a success; an error
/// status becomes [`ProviderError::Http`] with the message from the body. An encoded payload
/// is sent as it is, without a copy.
pub(crate) async fn post_json(
    provider: &str,
    url: &str,
    headers: &[(&str, String)],
    payload: &Payload,
) -> Result<reqwest::Response, ProviderError> {
    let client = http_client()?;
    let body = payload.to_bytes()?;
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, value.as_str());
    }
    let response = request
        .body(body)
        .send()
        .await
        .map_err(|e| connect_error(provider, url, &e))?;
    let status = response.status();
    if status.is_success() {
        return match not_stream::content_type(&response) {
            None => Ok(response),
            Some(content_type) => {
                Err(not_stream::error(provider, url, content_type, response).await)
            }
        };
    }
    let text = response.text().await.unwrap_or_default();
    Err(ProviderError::Http {
        provider: provider.to_string(),
        status: status.as_u16(),
        message: error_message_from_body(&text),
    })
}

/// Maps a transport failure to an error naming its innermost cause ("Connection refused").
pub(crate) fn connect_error(provider: &str, url: &str, error: &reqwest::Error) -> ProviderError {
    let mut cause: &dyn std::error::Error = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    let mut message = cause.to_string();
    if error.is_builder() {
        return ProviderError::Config(format!(
            "cannot send a request to {provider} at {url}: {message}"
        ));
    }
    if error.is_timeout() && !error.is_connect() {
        message = format!(
            "timed out: the server sent nothing for {} s (MYPI_READ_TIMEOUT_S)",
            crate::platform::http::read_timeout().as_secs_f64()
        );
    } else if error.is_timeout() && !message.contains("timed out") {
        message = format!("timed out ({message})");
    }
    ProviderError::Connect {
        provider: provider.to_string(),
        url: url.to_string(),
        message,
    }
}

/// An error object a server sent inside an otherwise successful stream, as an HTTP error
/// with the status it stands for (from a numeric `code`, else from the error `type`; unknown
/// errors count as server errors, 500, so they are retried).
pub(crate) fn stream_error(provider: &str, body: &Value) -> ProviderError {
    let error = body.get("error").unwrap_or(body);
    let code = error
        .get("code")
        .and_then(|c| c.as_u64().or_else(|| c.as_str()?.parse().ok()))
        .filter(|c| (400..600).contains(c));
    let kind = error.get("type").and_then(Value::as_str).unwrap_or("");
    let status = code.unwrap_or(match kind {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" | "rate_limit_exceeded" => 429,
        "overloaded_error" => 529,
        _ => 500,
    });
    ProviderError::Http {
        provider: provider.to_string(),
        status: status as u16,
        message: error_message_from_body(&body.to_string()),
    }
}

/// Parses a data line as JSON, or says it is not.
pub(crate) fn parse_data(provider: &str, data: &str) -> Result<Value, ProviderError> {
    serde_json::from_str(data).map_err(|e| malformed_data(provider, data, &e))
}

/// The error for a data line that is not JSON.
pub(crate) fn malformed_data(
    provider: &str,
    data: &str,
    error: &serde_json::Error,
) -> ProviderError {
    ProviderError::Malformed {
        provider: provider.to_string(),
        message: format!(
            "invalid JSON in the stream ({error}): {}",
            crate::vocab::text::truncate_middle(data.trim(), 200)
        ),
    }
}

/// Test support: runs raw byte chunks through the parser and `decoder`, collecting every
/// item a stream would yield.
#[cfg(test)]
pub(crate) fn decode_chunks<D: SseDecoder>(
    decoder: D,
    chunks: &[&[u8]],
) -> Vec<Result<StreamEvent, ProviderError>> {
    let mut parser = SseParser::default();
    let mut state = Decoding::new(decoder);
    let mut out = Vec::new();
    let mut events: Vec<Option<SseEvent>> = Vec::new();
    for chunk in chunks {
        events.extend(parser.feed(chunk).into_iter().map(Some));
    }
    events.extend(parser.finish().map(Some));
    events.push(None);
    for event in events {
        state.push(event.as_ref());
        while let Some(item) = state.pop() {
            out.push(item);
        }
    }
    out
}

/// Test support: a one-shot HTTP server on 127.0.0.1 that answers with `response` (raw
/// HTTP/1.1 text) and hands back the request it received.
#[cfg(test)]
pub(crate) async fn serve_once(response: String) -> (String, tokio::task::JoinHandle<String>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = socket.read(&mut buf).await.unwrap();
            request.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&request).to_string();
            if let Some(head_end) = text.find("\r\n\r\n") {
                let length = text[..head_end]
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse::<usize>().unwrap())
                    })
                    .unwrap_or(0);
                if request.len() >= head_end + 4 + length || n == 0 {
                    break;
                }
            }
            if n == 0 {
                break;
            }
        }
        socket.write_all(response.as_bytes()).await.unwrap();
        socket.shutdown().await.unwrap();
        String::from_utf8_lossy(&request).to_string()
    });
    (url, task)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = ": keep-alive comment\r\n\
        event: message_start\r\n\
        data: {\"a\":1}\r\n\
        \r\n\
        data:no space\n\
        data:  two spaces\n\
        \n\
        event:ping\rdata: héllo → wörld\r\rdata\n\ndata: last without blank line";

    fn expected() -> Vec<SseEvent> {
        let ev = |event: Option<&str>, data: &str| SseEvent {
            event: event.map(str::to_string),
            data: data.to_string(),
        };
        vec![
            ev(Some("message_start"), "{\"a\":1}"),
            ev(None, "no space\n two spaces"),
            ev(Some("ping"), "héllo → wörld"),
            ev(None, ""),
            ev(None, "last without blank line"),
        ]
    }

    fn parse_chunks(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut parser = SseParser::default();
        let mut events = Vec::new();
        for c in chunks {
            events.extend(parser.feed(c));
        }
        events.extend(parser.finish());
        events
    }

    #[test]
    fn whole_stream_parses() {
        assert_eq!(parse_chunks(&[SAMPLE.as_bytes()]), expected());
    }

    #[test]
    fn every_split_point_gives_the_same_events() {
        let bytes = SAMPLE.as_bytes();
        for i in 0..=bytes.len() {
            assert_eq!(
                parse_chunks(&[&bytes[..i], &bytes[i..]]),
                expected(),
                "split at {i}"
            );
        }
    }

    #[test]
    fn byte_by_byte_gives_the_same_events() {
        let chunks: Vec<&[u8]> = SAMPLE.as_bytes().chunks(1).collect();
        assert_eq!(parse_chunks(&chunks), expected());
    }

    #[test]
    fn crlf_split_between_cr_and_lf_is_one_line_ending() {
        let events = parse_chunks(&[b"data: a\r", b"\n", b"\r", b"\ndata: b\r\n\r\n"]);
        let data: Vec<_> = events.iter().map(|e| e.data.as_str()).collect();
        assert_eq!(data, ["a", "b"]);
    }

    #[test]
    fn invalid_utf8_is_replaced_and_the_rest_of_the_line_kept() {
        let events = parse_chunks(&[
            b"event: a\xffb\n",
            b"data: \xc3(\xe2\x82\n",
            b"data: \xc3\xa9\n\n",
        ]);
        assert_eq!(
            events,
            vec![SseEvent {
                event: Some("a\u{fffd}b".into()),
                data: "\u{fffd}(\u{fffd}\n\u{e9}".into()
            }]
        );
    }

    #[test]
    fn event_without_data_is_not_dispatched_and_bom_is_skipped() {
        let events = parse_chunks(&[b"\xef\xbb\xbfevent: x\n\n", b"data: y\n\n"]);
        assert_eq!(
            events,
            vec![SseEvent {
                event: None,
                data: "y".into()
            }]
        );
    }

    #[test]
    fn stream_errors_map_to_statuses() {
        let status = |v: Value| match stream_error("p", &v) {
            ProviderError::Http {
                status, message, ..
            } => (status, message),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            status(
                serde_json::json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})
            ),
            (529, "Overloaded".to_string())
        );
        assert_eq!(
            status(serde_json::json!({"error":{"code":"502","message":"upstream"}})),
            (502, "upstream".to_string())
        );
        assert_eq!(status(serde_json::json!({"error":"boom"})).0, 500);
    }
}
