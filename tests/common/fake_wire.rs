//! The two fake model APIs: [`FakeOpenAi`] (Chat Completions streaming) and
//! [`FakeAnthropic`] (Messages streaming), both built on [`FakeServer`].
//!
//! Each renders a scripted [`Reply`] into the event stream the real API sends: OpenAI as
//! `data: {chat.completion.chunk}` lines ending with a usage chunk and `data: [DONE]`;
//! Anthropic as `event: NAME` / `data: JSON` pairs from `message_start` to `message_stop`.
//! Both deref to [`FakeServer`] for `requests()`, `push()`, `wait_for_requests()`, ...

use std::ops::Deref;

use serde_json::{json, Value};

use super::fake_server::{FakeServer, Flavor, Recorded, Rendered, Reply, ReplyKind};

/// Splits `s` into at most `n` non-empty pieces of about equal length, on char boundaries.
pub fn split_pieces(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let n = n.clamp(1, chars.len());
    let size = chars.len().div_ceil(n);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

fn sse_data(v: &Value) -> String {
    format!("data: {v}\n\n")
}

fn sse_event(name: &str, v: &Value) -> String {
    format!("event: {name}\ndata: {v}\n\n")
}

fn request_model(req: &Recorded) -> String {
    req.body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("test-model")
        .to_string()
}

fn stream(body: String) -> Rendered {
    Rendered {
        status: 200,
        content_type: "text/event-stream".into(),
        body,
        streamed: true,
        truncate: false,
    }
}

fn plain(status: u16, body: String) -> Rendered {
    Rendered {
        status,
        content_type: "application/json".into(),
        body,
        streamed: false,
        truncate: false,
    }
}

fn raw(status: u16, content_type: &str, body: &str) -> Rendered {
    Rendered {
        status,
        content_type: content_type.to_string(),
        body: body.to_string(),
        streamed: status == 200,
        truncate: false,
    }
}

// ---------------------------------------------------------------------------------------------
// OpenAI

/// OpenAI-compatible Chat Completions wire format.
pub struct OpenAiWire;

impl OpenAiWire {
    fn stream_body(
        &self,
        text: Option<&str>,
        calls: &[(String, String, String)],
        usage: (u64, u64, u64),
        model: &str,
        seq: usize,
    ) -> String {
        let id = format!("chatcmpl-fake{seq}");
        let chunk = |delta: Value, finish: Value| {
            json!({
                "id": id, "object": "chat.completion.chunk", "created": 1_700_000_000u64,
                "model": model, "system_fingerprint": "fp_fake",
                "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]
            })
        };
        let mut out = String::new();
        let has_text = text.is_some_and(|t| !t.is_empty()) || calls.is_empty();
        if has_text {
            out += &sse_data(&chunk(
                json!({"role": "assistant", "content": "", "refusal": null}),
                Value::Null,
            ));
            for piece in split_pieces(text.unwrap_or(""), 3) {
                out += &sse_data(&chunk(json!({"content": piece}), Value::Null));
            }
        }
        for (i, (call_id, name, args)) in calls.iter().enumerate() {
            let head = json!([{"index": i, "id": call_id, "type": "function",
                               "function": {"name": name, "arguments": ""}}]);
            let delta = if i == 0 && !has_text {
                json!({"role": "assistant", "content": null, "tool_calls": head})
            } else {
                json!({"tool_calls": head})
            };
            out += &sse_data(&chunk(delta, Value::Null));
            for piece in split_pieces(args, 3) {
                let d = json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]});
                out += &sse_data(&chunk(d, Value::Null));
            }
        }
        let finish = if calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        out += &sse_data(&chunk(json!({}), json!(finish)));
        out += &sse_data(&json!({
            "id": id, "object": "chat.completion.chunk", "created": 1_700_000_000u64,
            "model": model, "choices": [],
            "usage": if usage.2 > 0 {
                json!({"prompt_tokens": usage.0, "completion_tokens": usage.1,
                       "total_tokens": usage.0 + usage.1,
                       "prompt_tokens_details": {"cached_tokens": usage.2}})
            } else {
                json!({"prompt_tokens": usage.0, "completion_tokens": usage.1,
                       "total_tokens": usage.0 + usage.1})
            }
        }));
        out += "data: [DONE]\n\n";
        out
    }
}

impl Flavor for OpenAiWire {
    fn matches(&self, path: &str) -> bool {
        path.ends_with("/chat/completions")
    }

    fn render(&self, reply: &Reply, req: &Recorded, seq: usize) -> Rendered {
        let model = request_model(req);
        match &reply.kind {
            ReplyKind::Text(t) => stream(self.stream_body(
                Some(t),
                &[],
                (reply.usage.0, reply.usage.1, reply.cached),
                &model,
                seq,
            )),
            ReplyKind::ToolCalls { text, calls } => stream(self.stream_body(
                text.as_deref(),
                calls,
                (reply.usage.0, reply.usage.1, reply.cached),
                &model,
                seq,
            )),
            ReplyKind::Error { status, message } => {
                plain(*status, self.error_body(*status, message))
            }
            ReplyKind::MalformedStream => {
                let full = self.stream_body(
                    Some("partial"),
                    &[],
                    (reply.usage.0, reply.usage.1, reply.cached),
                    &model,
                    seq,
                );
                let first = full.split("\n\n").next().unwrap_or("").to_string();
                stream(format!(
                    "{first}\n\ndata: this is not json {{\"choices\n\ndata: [DONE]\n\n"
                ))
            }
            ReplyKind::Truncated(t) => {
                let mut r = stream(self.stream_body(
                    Some(t),
                    &[],
                    (reply.usage.0, reply.usage.1, reply.cached),
                    &model,
                    seq,
                ));
                r.truncate = true;
                r
            }
            ReplyKind::Raw {
                status,
                content_type,
                body,
            } => raw(*status, content_type, body),
        }
    }

    fn error_body(&self, status: u16, message: &str) -> String {
        let (kind, code) = match status {
            400 => ("invalid_request_error", Value::Null),
            401 => ("invalid_request_error", json!("invalid_api_key")),
            403 => (
                "invalid_request_error",
                json!("unsupported_country_region_territory"),
            ),
            404 => ("invalid_request_error", json!("model_not_found")),
            429 => ("requests", json!("rate_limit_exceeded")),
            _ => ("server_error", Value::Null),
        };
        json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
            .to_string()
    }
}

/// Fake OpenAI Chat Completions server. `url()` is the base URL to pass as `--base-url`.
pub struct FakeOpenAi(FakeServer);

impl FakeOpenAi {
    /// Starts with an empty reply queue (use `push`).
    pub fn start() -> FakeOpenAi {
        FakeOpenAi::with_replies(Vec::new())
    }

    pub fn with_replies(replies: Vec<Reply>) -> FakeOpenAi {
        FakeOpenAi(FakeServer::start(OpenAiWire, replies))
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn url(&self) -> String {
        format!("{}/v1", self.0.root_url())
    }
}

impl Deref for FakeOpenAi {
    type Target = FakeServer;
    fn deref(&self) -> &FakeServer {
        &self.0
    }
}

// ---------------------------------------------------------------------------------------------
// Anthropic

/// Anthropic Messages wire format; with a [`PromptCache`], the input usage is what that
/// cache serves for each request (else the reply's, none cached).
pub struct AnthropicWire {
    cache: Option<std::sync::Mutex<super::prompt_cache::PromptCache>>,
    /// The request being answered's `(uncached input, cache read, cache write)`.
    served: std::sync::Mutex<Option<super::prompt_cache::Served>>,
    /// The signatures of the thinking blocks this server streamed.
    issued: std::sync::Mutex<Vec<String>>,
}

/// What the real API says of a request with thinking on whose tool loop's assistant turn does
/// not start with a thinking block this server signed, as it was sent.
fn unsigned_tool_turn(body: &Value, issued: &[String]) -> Option<String> {
    body.get("thinking")?;
    let messages = body["messages"].as_array()?;
    let last = messages.last()?;
    let in_loop = last["content"]
        .as_array()
        .is_some_and(|c| c.iter().any(|b| b["type"] == "tool_result"));
    let assistant = messages.iter().rev().find(|m| m["role"] == "assistant")?;
    let first = &assistant["content"][0];
    let signed =
        first["type"] == "thinking" && issued.iter().any(|s| first["signature"] == s.as_str());
    (in_loop && !signed).then(|| {
        "When `thinking` is enabled, a final `assistant` message must start with a thinking \
         block (preceeding the lastmost set of `tool_use` and `tool_result` blocks)"
            .to_string()
    })
}

impl AnthropicWire {
    fn message_start(&self, usage: (u64, u64), model: &str, seq: usize) -> String {
        let served = self.served.lock().unwrap().take();
        let (input, read, write) = served.unwrap_or((usage.0, 0, 0));
        sse_event(
            "message_start",
            &json!({"type": "message_start", "message": {
                "id": format!("msg_fake{seq}"), "type": "message", "role": "assistant",
                "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": input, "cache_creation_input_tokens": write,
                          "cache_read_input_tokens": read, "output_tokens": 1}
            }}),
        )
    }

    /// A thinking block at `index`: its reasoning, then its signature.
    fn thought_block(&self, thought: &(String, String), index: usize) -> String {
        self.issued.lock().unwrap().push(thought.1.clone());
        let delta = |d: Value| {
            sse_event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": d}),
            )
        };
        let mut out = sse_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        );
        out += &delta(json!({"type": "thinking_delta", "thinking": thought.0}));
        out += &delta(json!({"type": "signature_delta", "signature": thought.1}));
        out += &sse_event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        );
        out
    }

    fn stream_body(
        &self,
        thought: Option<&(String, String)>,
        text: Option<&str>,
        calls: &[(String, String, String)],
        usage: (u64, u64),
        model: &str,
        seq: usize,
    ) -> String {
        let mut out = self.message_start(usage, model, seq);
        let mut index = 0;
        if let Some(thought) = thought {
            out += &self.thought_block(thought, 0);
            index = 1;
        }
        let has_text = text.is_some_and(|t| !t.is_empty()) || calls.is_empty();
        let ping = sse_event("ping", &json!({"type": "ping"}));
        if has_text {
            out += &sse_event(
                "content_block_start",
                &json!({"type": "content_block_start", "index": index,
                        "content_block": {"type": "text", "text": ""}}),
            );
            out += &ping;
            for piece in split_pieces(text.unwrap_or(""), 3) {
                out += &sse_event(
                    "content_block_delta",
                    &json!({"type": "content_block_delta", "index": index,
                            "delta": {"type": "text_delta", "text": piece}}),
                );
            }
            out += &sse_event(
                "content_block_stop",
                &json!({"type": "content_block_stop", "index": index}),
            );
            index += 1;
        }
        for (call_id, name, args) in calls {
            out += &sse_event(
                "content_block_start",
                &json!({"type": "content_block_start", "index": index,
                        "content_block": {"type": "tool_use", "id": call_id, "name": name,
                                          "input": {}}}),
            );
            if index == 0 {
                out += &ping;
            }
            let mut pieces = vec![String::new()];
            pieces.extend(split_pieces(args, 3));
            for piece in pieces {
                out += &sse_event(
                    "content_block_delta",
                    &json!({"type": "content_block_delta", "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": piece}}),
                );
            }
            out += &sse_event(
                "content_block_stop",
                &json!({"type": "content_block_stop", "index": index}),
            );
            index += 1;
        }
        let stop = if calls.is_empty() {
            "end_turn"
        } else {
            "tool_use"
        };
        out += &sse_event(
            "message_delta",
            &json!({"type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": null},
                    "usage": {"output_tokens": usage.1}}),
        );
        out += &sse_event("message_stop", &json!({"type": "message_stop"}));
        out
    }
}

/// What the real API says of the interleaved-thinking beta sent for a model that does not
/// take it (Claude 3.7, and the models from 4.6 on, which interleave without it).
fn unknown_beta(req: &Recorded, model: &str) -> Option<String> {
    let beta = req.header("anthropic-beta")?;
    let refused = [
        "claude-3-",
        "claude-sonnet-4-6",
        "claude-opus-4-6",
        "claude-opus-4-7",
    ];
    (beta.contains("interleaved-thinking") && refused.iter().any(|m| model.starts_with(m)))
        .then(|| format!("Unexpected value(s) `{beta}` for the `anthropic-beta` header"))
}

impl Flavor for AnthropicWire {
    fn matches(&self, path: &str) -> bool {
        path.ends_with("/messages")
    }

    fn render(&self, reply: &Reply, req: &Recorded, seq: usize) -> Rendered {
        let model = request_model(req);
        if let Some(cache) = &self.cache {
            *self.served.lock().unwrap() = Some(cache.lock().unwrap().serve(&req.body));
        }
        if let Some(message) = unsigned_tool_turn(&req.body, &self.issued.lock().unwrap()) {
            return plain(400, self.error_body(400, &message));
        }
        if let Some(message) = unknown_beta(req, &model) {
            return plain(400, self.error_body(400, &message));
        }
        let thought = reply.thought.as_ref();
        match &reply.kind {
            ReplyKind::Text(t) => {
                stream(self.stream_body(thought, Some(t), &[], reply.usage, &model, seq))
            }
            ReplyKind::ToolCalls { text, calls } => {
                stream(self.stream_body(thought, text.as_deref(), calls, reply.usage, &model, seq))
            }
            ReplyKind::Error { status, message } => {
                plain(*status, self.error_body(*status, message))
            }
            ReplyKind::MalformedStream => {
                let mut body = self.message_start(reply.usage, &model, seq);
                body += "event: content_block_delta\ndata: this is not json {\"type\n\n";
                body += &sse_event("message_stop", &json!({"type": "message_stop"}));
                stream(body)
            }
            ReplyKind::Truncated(t) => {
                let mut r =
                    stream(self.stream_body(thought, Some(t), &[], reply.usage, &model, seq));
                r.truncate = true;
                r
            }
            ReplyKind::Raw {
                status,
                content_type,
                body,
            } => raw(*status, content_type, body),
        }
    }

    fn error_body(&self, status: u16, message: &str) -> String {
        let kind = match status {
            400 => "invalid_request_error",
            401 => "authentication_error",
            403 => "permission_error",
            404 => "not_found_error",
            413 => "request_too_large",
            429 => "rate_limit_error",
            529 => "overloaded_error",
            _ => "api_error",
        };
        json!({"type": "error", "error": {"type": kind, "message": message}}).to_string()
    }
}

/// Fake Anthropic Messages server. `url()` is the base URL without `/v1`.
pub struct FakeAnthropic(FakeServer);

impl FakeAnthropic {
    /// Starts with an empty reply queue (use `push`).
    pub fn start() -> FakeAnthropic {
        FakeAnthropic::with_replies(Vec::new())
    }

    pub fn with_replies(replies: Vec<Reply>) -> FakeAnthropic {
        let wire = AnthropicWire {
            cache: None,
            served: Default::default(),
            issued: Default::default(),
        };
        FakeAnthropic(FakeServer::start(wire, replies))
    }

    /// With a prompt cache that serves like Anthropic's (see `prompt_cache.rs`).
    pub fn caching(replies: Vec<Reply>) -> FakeAnthropic {
        let wire = AnthropicWire {
            cache: Some(Default::default()),
            served: Default::default(),
            issued: Default::default(),
        };
        FakeAnthropic(FakeServer::start(wire, replies))
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        self.0.root_url()
    }
}

impl Deref for FakeAnthropic {
    type Target = FakeServer;
    fn deref(&self) -> &FakeServer {
        &self.0
    }
}
