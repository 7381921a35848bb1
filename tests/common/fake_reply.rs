//! The scripted replies a fake model server gives ([`Reply`]), before a flavor
//! (`fake_wire.rs`) turns them into the bytes of its API.

use std::time::Duration;

use serde_json::Value;

/// What a scripted reply says, before a flavor turns it into wire bytes.
#[derive(Clone, Debug)]
pub enum ReplyKind {
    /// Assistant text, streamed as 2-3 deltas.
    Text(String),
    /// Optional leading text, then tool calls `(id, name, raw arguments text)`.
    ToolCalls {
        text: Option<String>,
        calls: Vec<(String, String, String)>,
    },
    /// Non-2xx answer with the API's error JSON.
    Error { status: u16, message: String },
    /// 200 event stream containing a data line that is not JSON.
    MalformedStream,
    /// Starts streaming the text, then closes the connection mid-body.
    Truncated(String),
    /// Exactly this status, content type and body (streamed chunked when status is 200).
    Raw {
        status: u16,
        content_type: String,
        body: String,
    },
}

/// A scripted answer to one request.
#[derive(Clone, Debug)]
pub struct Reply {
    pub kind: ReplyKind,
    /// Wait this long before sending anything.
    pub delay: Duration,
    /// A pause in the middle of a streamed body (a stalled stream).
    pub stall: Duration,
    /// Extra response headers (e.g. `retry-after`).
    pub headers: Vec<(String, String)>,
    /// `(input_tokens, output_tokens)` reported in the stream.
    pub usage: (u64, u64),
    /// Of the input, tokens read from the prompt cache (OpenAI's `cached_tokens`; 0: not said).
    pub cached: u64,
    /// A thinking block streamed first: `(reasoning, signature)` (Anthropic).
    pub thought: Option<(String, String)>,
}

impl Reply {
    fn of(kind: ReplyKind) -> Reply {
        Reply {
            kind,
            delay: Duration::ZERO,
            stall: Duration::ZERO,
            headers: Vec::new(),
            usage: (10, 5),
            cached: 0,
            thought: None,
        }
    }

    /// This reply with a thinking block, signed with `signature`, streamed before the rest.
    pub fn thinking(self, reasoning: &str, signature: &str) -> Reply {
        let thought = Some((reasoning.to_string(), signature.to_string()));
        Reply { thought, ..self }
    }

    /// Assistant text, streamed in several deltas; finish reason `stop` / `end_turn`.
    pub fn text(text: impl Into<String>) -> Reply {
        Reply::of(ReplyKind::Text(text.into()))
    }

    /// Tool calls `(id, name, arguments)`; the arguments JSON is split across several deltas.
    pub fn tool_calls<I, A, B>(calls: I) -> Reply
    where
        I: IntoIterator<Item = (A, B, Value)>,
        A: Into<String>,
        B: Into<String>,
    {
        let calls = calls
            .into_iter()
            .map(|(id, name, args)| (id.into(), name.into(), args.to_string()))
            .collect();
        Reply::of(ReplyKind::ToolCalls { text: None, calls })
    }

    /// One tool call whose arguments are exactly `args` (may be malformed JSON).
    pub fn raw_tool_args(id: &str, name: &str, args: &str) -> Reply {
        let calls = vec![(id.to_string(), name.to_string(), args.to_string())];
        Reply::of(ReplyKind::ToolCalls { text: None, calls })
    }

    /// Non-2xx status with the flavor's error body carrying `message`.
    pub fn error(status: u16, message: impl Into<String>) -> Reply {
        Reply::of(ReplyKind::Error {
            status,
            message: message.into(),
        })
    }

    /// 200 event stream with a `data:` line that is not JSON.
    pub fn malformed_stream() -> Reply {
        Reply::of(ReplyKind::MalformedStream)
    }

    /// Sleeps `delay` before streaming `text` (for cancel / timeout tests).
    pub fn hang_then_text(delay: Duration, text: impl Into<String>) -> Reply {
        Reply::text(text).after(delay)
    }

    /// Streams the first part of `text`, then drops the connection without finishing the body.
    pub fn truncated(text: impl Into<String>) -> Reply {
        Reply::of(ReplyKind::Truncated(text.into()))
    }

    /// Sends exactly this status, content type and body.
    pub fn raw(status: u16, content_type: &str, body: impl Into<String>) -> Reply {
        Reply::of(ReplyKind::Raw {
            status,
            content_type: content_type.to_string(),
            body: body.into(),
        })
    }

    /// Adds leading assistant text to a tool-call reply (panics on other kinds).
    pub fn with_text(mut self, leading: impl Into<String>) -> Reply {
        match &mut self.kind {
            ReplyKind::ToolCalls { text, .. } => *text = Some(leading.into()),
            other => panic!("with_text only applies to tool-call replies, not {other:?}"),
        }
        self
    }

    /// Waits `delay` before answering.
    pub fn after(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    /// Stops streaming for `d` halfway through the body, then goes on.
    pub fn stall_midway(mut self, d: Duration) -> Reply {
        self.stall = d;
        self
    }

    /// Adds a response header.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Token usage reported in the stream (defaults to 10 in, 5 out).
    pub fn usage(mut self, input: u64, output: u64) -> Reply {
        self.usage = (input, output);
        self
    }

    /// Says that `n` of the input tokens came from the prompt cache.
    pub fn cached(mut self, n: u64) -> Reply {
        self.cached = n;
        self
    }
}
