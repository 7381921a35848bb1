//! Model providers: the [`Provider`] trait every backend implements, the normalized
//! [`StreamEvent`]s they produce, the [`Accumulator`] that turns a stream into a message, and
//! the retry policy for failures before any output arrived.
//!
//! A provider builds its request body from a [`ModelRequest`] (so the
//! `before_provider_request` hook can rewrite it), then `stream`s the reply as events. The
//! agent pulls events one at a time, so cutting a stream is just dropping it.

pub mod anthropic;
mod complete;
pub mod faux;
mod faux_read;
mod interleaved;
mod lax;
mod not_stream;
pub mod openai;
pub mod sse;
mod wire;

#[cfg(test)]
mod odd_stream_tests;
#[cfg(test)]
mod thinking_tests;

/// A `read` tool's spec, lent to the providers' test requests for the whole test run.
#[cfg(test)]
fn read_spec() -> &'static ToolSpec {
    static SPEC: std::sync::LazyLock<ToolSpec> = std::sync::LazyLock::new(|| ToolSpec {
        name: "read".into(),
        description: "Read a file".into(),
        parameters: serde_json::json!({"type": "object"}),
    });
    &SPEC
}

pub use complete::complete;
pub use interleaved::{takes_interleaving_beta, INTERLEAVED_THINKING};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use crate::vocab::protocol::{Message, ThinkingBlock, ToolCall, ToolSpec, Usage};

/// Everything a provider needs for one request. The messages are usually the agent's own,
/// borrowed: a long conversation is not copied to build a request.
#[derive(Debug, Clone, Serialize)]
pub struct ModelRequest<'a> {
    pub model: String,
    pub system_prompt: String,
    pub messages: Cow<'a, [Message]>,
    /// The tools offered, lent by the registry: a turn copies no schema.
    pub tools: Vec<&'a ToolSpec>,
    /// The reply's length limit (default: the provider's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// What keeps one session's requests on one prompt cache (the session's id), for the
    /// APIs that take a key (OpenAI's `prompt_cache_key`).
    #[serde(skip)]
    pub cache_key: Option<String>,
    /// The thinking asked for (off for a model the configuration says cannot think).
    #[serde(skip)]
    pub thinking: ThinkingAsk,
}

/// A request's thinking: the level, and the model's known output limit, up to which the
/// Messages API's `max_tokens` may be raised to hold the thinking budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThinkingAsk {
    pub level: crate::vocab::thinking::Thinking,
    pub ceiling: Option<u64>,
}

/// A request body on its way to a provider.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// JSON: what `before_provider_request` handlers see and may rewrite.
    Json(Value),
    /// The body encoded straight from the request (when no handler needs the JSON), sent as
    /// it is by every attempt.
    Encoded(Bytes),
}

impl Payload {
    /// The bytes to send: a handle on them when already encoded.
    pub fn to_bytes(&self) -> Result<Bytes, ProviderError> {
        match self {
            Payload::Json(value) => serde_json::to_vec(value)
                .map(Bytes::from)
                .map_err(|e| ProviderError::Config(format!("could not encode the request: {e}"))),
            Payload::Encoded(bytes) => Ok(bytes.clone()),
        }
    }

    /// The body as JSON (decoded again when it was encoded; `null` if that fails).
    pub fn to_json(&self) -> Cow<'_, Value> {
        match self {
            Payload::Json(value) => Cow::Borrowed(value),
            Payload::Encoded(bytes) => {
                Cow::Owned(serde_json::from_slice(bytes).unwrap_or_default())
            }
        }
    }
}

/// One normalized piece of a streamed reply.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// Assistant text.
    TextDelta(String),
    /// The model's reasoning as it streams (Anthropic's `thinking_delta`, the
    /// `reasoning_content` of llama.cpp, vLLM and DeepSeek): shown, never part of the reply.
    ThinkingDelta(String),
    /// The signature that closes the thinking block streamed last (Anthropic's
    /// `signature_delta`): the block goes back, signed, in the next request of the turn.
    ThinkingSignature(String),
    /// A redacted thinking block's opaque data (Anthropic's `redacted_thinking`).
    RedactedThinking(String),
    /// A tool call begins at `index` (the provider's numbering within this reply).
    ToolCallStart {
        index: usize,
        id: String,
        name: String,
    },
    /// More argument text for the tool call at `index`.
    ToolCallDelta { index: usize, arguments: String },
    /// Token usage (may come more than once; later values replace earlier ones per field
    /// when non-zero).
    Usage(Usage),
    /// The reply is complete.
    Done { stop_reason: Option<String> },
}

/// Why a model request failed.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum ProviderError {
    /// The server answered with an error status.
    #[error("{provider} returned HTTP {status}: {message}")]
    Http {
        provider: String,
        status: u16,
        message: String,
    },
    /// The server could not be reached or the connection broke.
    #[error("could not reach {provider} at {url}: {message}")]
    Connect {
        provider: String,
        url: String,
        message: String,
    },
    /// The server sent something that is not a valid stream.
    #[error("{provider} sent a malformed stream: {message}")]
    Malformed { provider: String, message: String },
    /// The server answered with success but not with an event stream (a proxy's login page,
    /// say): its content type and the start of its body, made inert.
    #[error("{provider} at {url}: not an event stream: {content_type}{start}")]
    NotAStream {
        provider: String,
        url: String,
        content_type: String,
        start: String,
    },
    /// The provider cannot be used as configured.
    #[error("{0}")]
    Config(String),
}

impl ProviderError {
    /// Whether trying again may help: rate limits, server errors and broken connections.
    pub fn is_retryable(&self) -> bool {
        match self {
            ProviderError::Http { status, .. } => *status == 429 || *status >= 500,
            ProviderError::Connect { .. } => true,
            ProviderError::Malformed { .. }
            | ProviderError::NotAStream { .. }
            | ProviderError::Config(_) => false,
        }
    }
}

/// A reply being streamed. `next` yields events until `None` (end of stream).
pub trait EventStream: Send {
    fn next(&mut self) -> BoxFuture<'_, Option<Result<StreamEvent, ProviderError>>>;
}

/// A model backend.
pub trait Provider: Send + Sync {
    /// `openai`, `anthropic` or `faux`.
    fn name(&self) -> &str;

    /// The model id requests use.
    fn model(&self) -> &str;

    /// The JSON body for this request. The default is the request itself, which suits
    /// providers without a wire format (faux).
    fn payload(&self, request: &ModelRequest) -> Value {
        serde_json::to_value(request).unwrap_or(Value::Null)
    }

    /// The body encoded straight from the request, used when no handler needs the JSON: a
    /// long conversation is then not copied into a JSON value first. `None` (the default):
    /// [`Provider::payload`]'s JSON is sent.
    fn encode(&self, _request: &ModelRequest) -> Option<Vec<u8>> {
        None
    }

    /// Sends the (possibly rewritten) body and returns the reply as a stream. The body is
    /// borrowed, so a retry sends it again without a copy.
    fn stream<'a>(
        &'a self,
        payload: &'a Payload,
    ) -> BoxFuture<'a, Result<Box<dyn EventStream>, ProviderError>>;
}

/// Builds the assistant message from stream events.
#[derive(Debug, Default)]
pub struct Accumulator {
    pub text: String,
    calls: Vec<(usize, String, String, String)>,
    pub usage: Usage,
    pub stop_reason: Option<String>,
    pub done: bool,
    /// The thinking blocks as they streamed (see [`Accumulator::message`]).
    thinking: Vec<ThinkingBlock>,
}

impl Accumulator {
    pub fn push(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::TextDelta(t) => self.text.push_str(t),
            // Reasoning is shown as it streams and never kept as the reply's text; what
            // comes signed is kept to be sent back as it came.
            StreamEvent::ThinkingDelta(_)
            | StreamEvent::ThinkingSignature(_)
            | StreamEvent::RedactedThinking(_) => self.keep_thinking(event),
            StreamEvent::ToolCallStart { index, id, name } => {
                match self.calls.iter_mut().find(|c| c.0 == *index) {
                    Some(c) => {
                        if !id.is_empty() {
                            c.1 = id.clone();
                        }
                        c.2.push_str(name);
                    }
                    None => self
                        .calls
                        .push((*index, id.clone(), name.clone(), String::new())),
                }
            }
            StreamEvent::ToolCallDelta { index, arguments } => {
                match self.calls.iter_mut().find(|c| c.0 == *index) {
                    Some(c) => c.3.push_str(arguments),
                    None => {
                        self.calls
                            .push((*index, String::new(), String::new(), arguments.clone()))
                    }
                }
            }
            StreamEvent::Usage(u) => {
                if u.input_tokens > 0 {
                    self.usage.input_tokens = u.input_tokens;
                }
                if u.output_tokens > 0 {
                    self.usage.output_tokens = u.output_tokens;
                }
                if u.cached_tokens > 0 {
                    self.usage.cached_tokens = u.cached_tokens;
                }
                if u.cache_write_tokens > 0 {
                    self.usage.cache_write_tokens = u.cache_write_tokens;
                }
            }
            StreamEvent::Done { stop_reason } => {
                self.stop_reason = stop_reason.clone();
                self.done = true;
            }
        }
    }

    /// Adds a piece of thinking: reasoning to the open (unsigned) block, a signature closing
    /// it, a redacted block whole.
    fn keep_thinking(&mut self, event: &StreamEvent) {
        let open = match self.thinking.last_mut() {
            Some(ThinkingBlock::Thinking {
                thinking,
                signature,
            }) if signature.is_empty() => Some((thinking, signature)),
            _ => None,
        };
        let block = match (event, open) {
            (StreamEvent::ThinkingDelta(t), Some((thinking, _))) => return thinking.push_str(t),
            (StreamEvent::ThinkingSignature(sig), Some((_, signature))) => {
                return signature.push_str(sig)
            }
            (StreamEvent::ThinkingDelta(t), None) => ThinkingBlock::Thinking {
                thinking: t.clone(),
                signature: String::new(),
            },
            (StreamEvent::ThinkingSignature(sig), None) => ThinkingBlock::Thinking {
                thinking: String::new(),
                signature: sig.clone(),
            },
            (StreamEvent::RedactedThinking(data), _) => {
                ThinkingBlock::RedactedThinking { data: data.clone() }
            }
            _ => return,
        };
        self.thinking.push(block);
    }

    /// The tool calls in the order the model started them; calls without an id get one.
    pub fn tool_calls(&self) -> Vec<ToolCall> {
        self.calls
            .iter()
            .enumerate()
            .map(|(n, (_, id, name, args))| {
                let id = if id.is_empty() {
                    format!("call_{n}")
                } else {
                    id.clone()
                };
                ToolCall::from_raw(id, name.clone(), args)
            })
            .collect()
    }

    /// The finished assistant message, with the thinking blocks that came signed or
    /// redacted (unsigned reasoning, as Chat Completions servers stream it, is not kept).
    pub fn message(&self) -> Message {
        let signed = self.thinking.iter().filter(|b| match b {
            ThinkingBlock::Thinking { signature, .. } => !signature.is_empty(),
            ThinkingBlock::RedactedThinking { .. } => true,
        });
        Message {
            thinking: signed.cloned().collect(),
            ..Message::assistant(self.text.clone(), self.tool_calls())
        }
    }
}

pub use crate::config::RetryPolicy;

/// The shared HTTP client ([`crate::platform::http::client`]), failures as provider errors.
pub(crate) fn http_client() -> Result<reqwest::Client, ProviderError> {
    crate::platform::http::client().map_err(ProviderError::Config)
}

/// The endpoint to use: `base_url` unless it is unset or blank, else `default`; without a
/// trailing slash.
pub(crate) fn base_url_or(base_url: Option<String>, default: &str) -> String {
    let url = base_url
        .filter(|u| !u.trim().is_empty())
        .unwrap_or_else(|| default.to_string());
    url.trim().trim_end_matches('/').to_string()
}

/// Extracts a readable message from an error body (`{"error":{"message":..}}` and the like),
/// falling back to the body text itself, shortened.
pub(crate) fn error_message_from_body(body: &str) -> String {
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        let candidates = [
            v.pointer("/error/message"),
            v.pointer("/message"),
            v.pointer("/error"),
            v.pointer("/detail"),
        ];
        for c in candidates.into_iter().flatten() {
            if let Some(s) = c.as_str() {
                return one_line(s, 500);
            }
        }
    }
    let text = body.trim();
    if text.is_empty() {
        return "(empty response body)".to_string();
    }
    one_line(text, 500)
}

/// `text` with every run of whitespace (newlines included) as one space, cut to about `max`
/// bytes with an ellipsis: the error is printed as one line (an HTML error page is not).
fn one_line(text: &str, max: usize) -> String {
    let mut out = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if out.len() > max {
        let mut end = max;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accumulator_joins_split_tool_calls_in_order() {
        let mut acc = Accumulator::default();
        for e in [
            StreamEvent::TextDelta("Hel".into()),
            StreamEvent::TextDelta("lo".into()),
            StreamEvent::ToolCallStart {
                index: 0,
                id: "a".into(),
                name: "read".into(),
            },
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: "{\"pa".into(),
            },
            StreamEvent::ToolCallStart {
                index: 1,
                id: "b".into(),
                name: "bash".into(),
            },
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: "th\":\"x\"}".into(),
            },
            StreamEvent::ToolCallDelta {
                index: 1,
                arguments: "{\"command\":".into(),
            },
            StreamEvent::Done { stop_reason: None },
        ] {
            acc.push(&e);
        }
        let m = acc.message();
        assert_eq!(m.content, "Hello");
        assert_eq!(m.tool_calls.len(), 2);
        assert_eq!(m.tool_calls[0].arguments, json!({"path":"x"}));
        assert_eq!(
            m.tool_calls[1].invalid_arguments.as_deref(),
            Some("{\"command\":")
        );
    }

    #[test]
    fn retryable_statuses() {
        let http = |status| ProviderError::Http {
            provider: "p".into(),
            status,
            message: String::new(),
        };
        assert!(http(429).is_retryable());
        assert!(http(503).is_retryable());
        assert!(!http(401).is_retryable());
        assert!(!http(400).is_retryable());
    }

    #[test]
    fn error_body_messages() {
        assert_eq!(
            error_message_from_body(r#"{"error":{"message":"bad key","type":"x"}}"#),
            "bad key"
        );
        assert_eq!(
            error_message_from_body(r#"{"type":"error","error":{"type":"x","message":"over"}}"#),
            "over"
        );
        assert_eq!(error_message_from_body("plain"), "plain");
        let html = "<html>\n<body>\n  <h1>502 Bad Gateway</h1>\n</body>\n</html>\n";
        assert_eq!(
            error_message_from_body(html),
            "<html> <body> <h1>502 Bad Gateway</h1> </body> </html>"
        );
        let long = error_message_from_body(&"é\n".repeat(1000));
        assert!(!long.contains('\n') && long.ends_with('…') && long.len() <= 504);
    }
}
