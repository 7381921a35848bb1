//! Server-sent events read off an HTTP body with mypi's limits ([`Events`]): a line or an
//! event's data longer than the limit ends the stream with an error instead of growing a
//! buffer, and the event being read lives in the reader, so a read dropped half-way (the SDK
//! polls `receive` in a `select!`) loses nothing. Used by the legacy HTTP+SSE transport
//! (`legacy_sse.rs`) and by the `tools/list` reader of Streamable HTTP (`listing.rs`).

use bytes::Bytes;
use futures_util::{Stream, StreamExt};

/// The content type of `response`, in lower case (empty when it names none).
pub fn content_type(response: &reqwest::Response) -> String {
    let kind = response.headers().get(reqwest::header::CONTENT_TYPE);
    let kind = kind.and_then(|v| v.to_str().ok()).unwrap_or("");
    kind.to_ascii_lowercase()
}

/// One event: its type (`message` when the server names none), data lines joined by `\n`,
/// and its id.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Event {
    pub event: String,
    pub data: String,
    pub id: Option<String>,
}

/// Reads events from `body`, each line and each event's data at most `max` bytes.
pub struct Events<S> {
    body: S,
    /// What the last chunk had left after the lines taken from it.
    pending: Bytes,
    line: Vec<u8>,
    event: Option<String>,
    data: String,
    id: Option<String>,
    max: usize,
    ended: bool,
}

impl<S, E> Events<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    pub fn new(body: S, max: usize) -> Self {
        Events {
            body,
            pending: Bytes::new(),
            line: Vec::new(),
            event: None,
            data: String::new(),
            id: None,
            max,
            ended: false,
        }
    }

    /// The next event; `None` at the end of the body; an error (after which it ends) for a
    /// broken body or an over-long line or event.
    pub async fn next(&mut self) -> Option<Result<Event, String>> {
        loop {
            if self.ended {
                return None;
            }
            while let Some(at) = self.pending.iter().position(|&b| b == b'\n') {
                let part = self.pending.split_to(at + 1);
                if let Err(e) = self.grow(&part[..at]) {
                    return Some(Err(e));
                }
                let line = std::mem::take(&mut self.line);
                match self.field(&line) {
                    Ok(Some(event)) => return Some(Ok(event)),
                    Ok(None) => {}
                    Err(e) => return Some(Err(e)),
                }
            }
            let rest = std::mem::take(&mut self.pending);
            if let Err(e) = self.grow(&rest) {
                return Some(Err(e));
            }
            match self.body.next().await {
                Some(Ok(chunk)) => self.pending = chunk,
                Some(Err(e)) => {
                    self.ended = true;
                    return Some(Err(format!("the event stream broke: {e}")));
                }
                None => {
                    self.ended = true;
                    return None;
                }
            }
        }
    }

    /// Adds bytes to the line being read, within the limit.
    fn grow(&mut self, part: &[u8]) -> Result<(), String> {
        if self.line.len() + part.len() > self.max {
            self.ended = true;
            return Err(format!(
                "the server sent an event line over {}",
                crate::vocab::text::mib(self.max)
            ));
        }
        self.line.extend_from_slice(part);
        Ok(())
    }

    /// Takes one whole line: a field of the event being read, or the blank line that ends
    /// it (the event, when it has data).
    fn field(&mut self, line: &[u8]) -> Result<Option<Event>, String> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            let event = Event {
                event: self.event.take().unwrap_or_else(|| "message".into()),
                data: std::mem::take(&mut self.data),
                id: self.id.clone(),
            };
            return Ok((!event.data.is_empty()).then_some(event));
        }
        let text = String::from_utf8_lossy(line);
        let (name, value) = match text.split_once(':') {
            Some((n, v)) => (n, v.strip_prefix(' ').unwrap_or(v)),
            None => (text.as_ref(), ""),
        };
        match name {
            "" => {} // a comment (a keep-alive)
            "event" => self.event = Some(value.to_string()),
            "id" => self.id = Some(value.to_string()),
            "data" => {
                if self.data.len() + value.len() + 1 > self.max {
                    self.ended = true;
                    return Err(format!(
                        "the server sent an event over {}",
                        crate::vocab::text::mib(self.max)
                    ));
                }
                if !self.data.is_empty() {
                    self.data.push('\n');
                }
                self.data.push_str(value);
            }
            _ => {}
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events_of(chunks: &[&str], max: usize) -> Vec<Result<Event, String>> {
        let body = futures_util::stream::iter(
            chunks
                .iter()
                .map(|c| Ok::<_, String>(Bytes::from(c.to_string())))
                .collect::<Vec<_>>(),
        );
        let mut events = Events::new(body, max);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut out = Vec::new();
            while let Some(e) = events.next().await {
                out.push(e);
            }
            out
        })
    }

    #[test]
    fn events_split_across_chunks_and_lines_join() {
        let got = events_of(
            &[
                ": hello\r\nevent: endpoint\r\nda",
                "ta: /messages?s=1\r\n\r\n",
                "data: {\"a\":\ndata: 1}\nid: 7\n\n",
            ],
            1000,
        );
        assert_eq!(got.len(), 2, "{got:?}");
        let first = got[0].as_ref().unwrap();
        assert_eq!(
            (first.event.as_str(), first.data.as_str()),
            ("endpoint", "/messages?s=1")
        );
        let second = got[1].as_ref().unwrap();
        assert_eq!(second.event, "message");
        assert_eq!(second.data, "{\"a\":\n1}");
        assert_eq!(second.id.as_deref(), Some("7"));
    }

    #[test]
    fn an_over_long_line_ends_the_stream() {
        let long = format!("data: {}", "x".repeat(100));
        let got = events_of(&[&long, "more", "\n\n"], 50);
        assert_eq!(got.len(), 1);
        assert!(got[0].as_ref().unwrap_err().contains("over"), "{got:?}");
    }
}
