//! The legacy HTTP+SSE transport (`"type": "sse"`, the MCP of 2024-11-05), which Claude Code
//! still allows: a GET of the entry's url opens an event stream whose `endpoint` event names
//! where messages are posted, which must be on the url's origin (the entry's headers go with
//! every request: another origin is refused); the server's messages arrive as `message` events
//! on that stream. Lines and events are bounded (`sse.rs`, [`MAX_LINE`] as for stdio), a
//! message that is not JSON-RPC is logged and skipped, and closing drops the stream, which
//! ends the server's side of the session.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::stream::BoxStream;
use futures_util::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use super::decode::Decoder;
use super::failure::{readable, StartError};
use super::sse::Events;
use super::stdio::{LineLog, MAX_LINE};

type Body = BoxStream<'static, Result<Bytes, reqwest::Error>>;

/// The event that names the address for messages.
const ENDPOINT_EVENT: &str = "endpoint";

/// The SDK's view of a legacy SSE server.
pub struct LegacySse {
    events: Events<Body>,
    poster: Arc<Poster>,
    decoder: Decoder,
    log: LineLog,
}

/// Where and how messages are posted.
struct Poster {
    http: reqwest::Client,
    endpoint: reqwest::Url,
    headers: HeaderMap,
}

/// Opens the event stream of the server at `url` and reads the address it posts to.
pub(super) async fn connect(
    url: &str,
    headers: &BTreeMap<String, String>,
    http: reqwest::Client,
    log: LineLog,
) -> Result<LegacySse, StartError> {
    let headers = header_map(headers)?;
    let base = reqwest::Url::parse(url).map_err(|e| failed(format!("the url {url:?}: {e}")))?;
    let response = http
        .get(base.clone())
        .headers(headers.clone())
        .header(ACCEPT, "text/event-stream")
        .send()
        .await
        .map_err(|e| {
            let transient = e.is_connect() || e.is_timeout();
            StartError {
                // Without the url: its query may hold a key.
                message: format!(
                    "cannot open the event stream: {}",
                    readable(&e.without_url())
                ),
                stderr: String::new(),
                transient,
            }
        })?;
    let status = response.status();
    if !status.is_success() {
        return Err(StartError {
            message: format!("the event stream's GET was answered with HTTP {status}"),
            stderr: String::new(),
            transient: status.is_server_error(),
        });
    }
    let kind = super::sse::content_type(&response);
    if !kind.starts_with("text/event-stream") {
        return Err(failed(format!(
            "the url answered with {kind:?}, not an event stream: is it a Streamable HTTP \
             server? then give its entry \"type\": \"http\""
        )));
    }
    let mut events = Events::new(response.bytes_stream().boxed(), MAX_LINE);
    let endpoint = loop {
        match events.next().await {
            Some(Ok(e)) if e.event == ENDPOINT_EVENT => break e.data,
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(failed(e)),
            None => {
                return Err(failed(
                    "the event stream ended before it named the address for messages (its \
                     `endpoint` event)"
                        .into(),
                ))
            }
        }
    };
    let endpoint = same_origin(&base, endpoint.trim())?;
    Ok(LegacySse {
        events,
        poster: Arc::new(Poster {
            http,
            endpoint,
            headers,
        }),
        decoder: Decoder::default(),
        log,
    })
}

/// The address of the `endpoint` event, resolved against the url: on the url's origin only.
fn same_origin(base: &reqwest::Url, endpoint: &str) -> Result<reqwest::Url, StartError> {
    let url = base
        .join(endpoint)
        .map_err(|e| failed(format!("the server's endpoint {endpoint:?}: {e}")))?;
    if url.origin() != base.origin() {
        return Err(failed(format!(
            "the server named {} for its messages, another origin than its url's; refused \
             (the entry's headers go only to its url's origin)",
            url.origin().ascii_serialization()
        )));
    }
    Ok(url)
}

fn header_map(headers: &BTreeMap<String, String>) -> Result<HeaderMap, StartError> {
    let mut map = HeaderMap::new();
    for (k, v) in headers {
        let name = HeaderName::from_bytes(k.as_bytes())
            .map_err(|e| failed(format!("header {k:?}: {e}")))?;
        // The value is a secret, possibly: never in the message.
        let value = HeaderValue::from_str(v)
            .map_err(|_| failed(format!("header {k:?}: its value is not a valid header")))?;
        map.insert(name, value);
    }
    Ok(map)
}

fn failed(message: String) -> StartError {
    StartError {
        message,
        stderr: String::new(),
        transient: false,
    }
}

impl LegacySse {
    /// Has each tool's `execution` read off the answers to `tools/list` into `tasks`.
    pub(super) fn read_tasks(&mut self, tasks: Arc<super::tasks::TaskTools>) {
        self.decoder.tasks = Some(tasks);
    }
}

impl Poster {
    /// Posts one message; the answer comes on the event stream (the POST's body is a bare
    /// acknowledgement, not read).
    async fn post(&self, item: TxJsonRpcMessage<RoleClient>) -> std::io::Result<()> {
        let body = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
        let response = self
            .http
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| std::io::Error::other(readable(&e.without_url())))?;
        let status = response.status();
        if !status.is_success() {
            return Err(std::io::Error::other(format!(
                "the server answered a message with HTTP {status}"
            )));
        }
        Ok(())
    }
}

impl Transport<RoleClient> for LegacySse {
    type Error = std::io::Error;

    fn name() -> Cow<'static, str> {
        "sse".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.decoder.sent(&item);
        let poster = self.poster.clone();
        async move { poster.post(item).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            match self.events.next().await? {
                Ok(e) if e.event == "message" => match self.decoder.decode(e.data.as_bytes()) {
                    Ok(m) => return Some(m),
                    Err(err) => {
                        let shown = crate::vocab::text::truncate_middle(&e.data, 200);
                        (self.log)(&format!(
                            "skipped an event that is not JSON-RPC ({err}): {shown}"
                        ));
                    }
                },
                Ok(_) => {}
                Err(e) => {
                    (self.log)(&e);
                    return None;
                }
            }
        }
    }

    /// Drops the event stream: the server sees the session end.
    async fn close(&mut self) -> Result<(), Self::Error> {
        self.events = Events::new(futures_util::stream::empty().boxed(), 0);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_must_be_on_the_urls_origin() {
        let base = reqwest::Url::parse("http://127.0.0.1:8000/sse").unwrap();
        let ok = same_origin(&base, "/messages?sessionId=1").ok().unwrap();
        assert_eq!(ok.as_str(), "http://127.0.0.1:8000/messages?sessionId=1");
        for other in [
            "http://localhost:8000/messages",
            "https://127.0.0.1:8000/m",
            "//evil.test/m",
        ] {
            let e = same_origin(&base, other).err().unwrap();
            assert!(
                e.message.contains("another origin"),
                "{other}: {}",
                e.message
            );
        }
    }
}
