//! The Anthropic Messages provider: the request body built from a [`ModelRequest`] (system
//! prompt apart, tool results folded into user turns so roles alternate), and the decoder of
//! its streamed events.

use futures_util::future::BoxFuture;
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;

use super::interleaved::{takes_interleaving_beta, thinks_with_tools, INTERLEAVED_THINKING};
use super::lax;
use super::sse::{malformed_data, parse_data, post_json, stream_error};
use super::sse::{SseDecoder, SseEvent, SseEventStream};
use super::wire::AnthropicBody;
use super::{EventStream, ModelRequest, Payload, Provider, ProviderError, StreamEvent};
use crate::vocab::protocol::Usage;

/// Where requests go when no base URL is configured.
pub const DEFAULT_BASE_URL: &str = match crate::config::ProviderKind::Anthropic.official_base_url()
{
    Some(url) => url,
    None => "",
};

/// The API version header every request carries.
pub const API_VERSION: &str = "2023-06-01";

/// The reply length limit sent with each request.
pub const MAX_TOKENS: u64 = 8192;

const NAME: &str = "anthropic";

/// A Messages API endpoint.
#[derive(Debug, Clone)]
pub struct AnthropicProvider {
    model: String,
    base_url: String,
    api_key: Option<String>,
}

impl AnthropicProvider {
    /// `base_url` defaults to [`DEFAULT_BASE_URL`]; without an API key no `x-api-key` header
    /// is sent (for proxies that add it). Empty strings count as unset.
    pub fn new(
        model: impl Into<String>,
        base_url: Option<String>,
        api_key: Option<String>,
    ) -> Self {
        AnthropicProvider {
            model: model.into(),
            base_url: super::base_url_or(base_url, DEFAULT_BASE_URL),
            api_key: api_key.filter(|k| !k.is_empty()),
        }
    }

    /// The endpoint requests are POSTed to.
    pub fn url(&self) -> String {
        format!("{}/v1/messages", self.base_url)
    }
}

impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        NAME
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn payload(&self, request: &ModelRequest) -> Value {
        serde_json::to_value(AnthropicBody::new(request, MAX_TOKENS)).unwrap_or(Value::Null)
    }

    fn encode(&self, request: &ModelRequest) -> Option<Vec<u8>> {
        serde_json::to_vec(&AnthropicBody::new(request, MAX_TOKENS)).ok()
    }

    fn stream<'a>(
        &'a self,
        payload: &'a Payload,
    ) -> BoxFuture<'a, Result<Box<dyn EventStream>, ProviderError>> {
        Box::pin(async move {
            let url = self.url();
            let mut headers = vec![("anthropic-version", API_VERSION.to_string())];
            if let Some(key) = &self.api_key {
                headers.push(("x-api-key", key.clone()));
            }
            if takes_interleaving_beta(&self.model) && thinks_with_tools(payload) {
                headers.push(("anthropic-beta", INTERLEAVED_THINKING.to_string()));
            }
            let response = post_json(NAME, &url, &headers, payload).await?;
            let stream = SseEventStream::new(response, AnthropicDecoder::default(), NAME, &url);
            Ok(Box::new(stream) as Box<dyn EventStream>)
        })
    }
}

/// Decodes Messages API stream events.
#[derive(Debug, Default)]
pub(crate) struct AnthropicDecoder {
    stop_reason: Option<String>,
}

impl SseDecoder for AnthropicDecoder {
    fn event(&mut self, event: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if event.data.trim().is_empty() {
            return Ok(());
        }
        let data = &event.data;
        let names = [
            "type",
            "index",
            "message",
            "content_block",
            "delta",
            "usage",
        ];
        let Some([kind, index, message, block, delta, usage]) =
            lax::event(data, names).map_err(|e| malformed_data(NAME, data, &e))?
        else {
            return Ok(());
        };
        let kind = lax::text(kind);
        let kind = kind.as_deref().or(event.event.as_deref()).unwrap_or("");
        let index = lax::count(index).unwrap_or(0) as usize;
        match kind {
            "message_start" => {
                let [usage] = lax::fields(message, ["usage"]).unwrap_or_default();
                if let Some(usage) = lax::fields(usage, USAGE) {
                    out.push(StreamEvent::Usage(usage_from(usage)));
                }
            }
            "content_block_start" => {
                let block = block.and_then(lax::value).unwrap_or(Value::Null);
                block_start(index, &block, out);
            }
            "content_block_delta" => block_delta(index, delta, out),
            "message_delta" => {
                let [reason] = lax::fields(delta, ["stop_reason"]).unwrap_or_default();
                if let Some(reason) = lax::text(reason) {
                    self.stop_reason = Some(reason.into_owned());
                }
                if let Some(usage) = lax::fields(usage, USAGE) {
                    out.push(StreamEvent::Usage(usage_from(usage)));
                }
            }
            "message_stop" => out.push(StreamEvent::Done {
                stop_reason: self.stop_reason.take(),
            }),
            "error" => return Err(stream_error(NAME, &parse_data(NAME, data)?)),
            // ping, content_block_stop and event types added later carry nothing we need.
            _ => {}
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        match self.stop_reason.take() {
            Some(reason) => {
                out.push(StreamEvent::Done {
                    stop_reason: Some(reason),
                });
                Ok(())
            }
            None => Err(ProviderError::Malformed {
                provider: NAME.to_string(),
                message: "stream ended early (no message_stop)".to_string(),
            }),
        }
    }
}

/// The fields of a `usage` that count.
const USAGE: [&str; 4] = [
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
];

/// Input tokens include cached ones, so the count reflects the whole prompt.
fn usage_from([input, output, read, written]: lax::Fields<4>) -> Usage {
    let read = lax::count(read).unwrap_or(0);
    let written = lax::count(written).unwrap_or(0);
    Usage {
        input_tokens: lax::count(input).unwrap_or(0) + read + written,
        output_tokens: lax::count(output).unwrap_or(0),
        cached_tokens: read,
        cache_write_tokens: written,
        cost_usd: None,
    }
}

fn block_start(index: usize, block: &Value, out: &mut Vec<StreamEvent>) {
    match block.get("type").and_then(Value::as_str) {
        Some("text") => {
            if let Some(text) = block.get("text").and_then(Value::as_str) {
                if !text.is_empty() {
                    out.push(StreamEvent::TextDelta(text.to_string()));
                }
            }
        }
        Some("tool_use") => {
            let field = |k: &str| {
                block
                    .get(k)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            out.push(StreamEvent::ToolCallStart {
                index,
                id: field("id"),
                name: field("name"),
            });
            // The input normally streams as deltas; a non-empty one given up front counts.
            if let Some(input) = block.get("input").and_then(Value::as_object) {
                if !input.is_empty() {
                    out.push(StreamEvent::ToolCallDelta {
                        index,
                        arguments: Value::Object(input.clone()).to_string(),
                    });
                }
            }
        }
        Some("thinking") => {
            let text = |k: &str| block.get(k).and_then(Value::as_str).unwrap_or("");
            if !text("thinking").is_empty() {
                out.push(StreamEvent::ThinkingDelta(text("thinking").to_string()));
            }
            if !text("signature").is_empty() {
                out.push(StreamEvent::ThinkingSignature(
                    text("signature").to_string(),
                ));
            }
        }
        Some("redacted_thinking") => {
            let data = block.get("data").and_then(Value::as_str).unwrap_or("");
            out.push(StreamEvent::RedactedThinking(data.to_string()));
        }
        // Other block types (added later) are not shown.
        _ => {}
    }
}

fn block_delta(index: usize, delta: Option<&RawValue>, out: &mut Vec<StreamEvent>) {
    let names = ["type", "text", "thinking", "signature", "partial_json"];
    let Some([kind, text, thinking, signature, partial_json]) = lax::fields(delta, names) else {
        return;
    };
    // An empty piece is no event.
    let read = |raw| {
        lax::text(raw)
            .filter(|t| !t.is_empty())
            .map(Cow::into_owned)
    };
    out.extend(match lax::text(kind).as_deref() {
        Some("text_delta") => read(text).map(StreamEvent::TextDelta),
        Some("thinking_delta") => read(thinking).map(StreamEvent::ThinkingDelta),
        Some("signature_delta") => read(signature).map(StreamEvent::ThinkingSignature),
        Some("input_json_delta") => {
            read(partial_json).map(|arguments| StreamEvent::ToolCallDelta { index, arguments })
        }
        _ => None,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::sse::{decode_chunks, serve_once};
    use crate::providers::Accumulator;
    use crate::vocab::protocol::{Message, ToolCall, ToolOutput};
    use serde_json::json;

    #[test]
    fn thinking_levels_send_a_budget_that_fits_under_max_tokens() {
        use crate::vocab::thinking::{Thinking, LEVELS};
        let p = AnthropicProvider::new("claude-sonnet-4-5", None, Some("k".into()));
        // (max_tokens, budget) per level: a model known to write 64000 tokens, asked for 8192.
        let want = [
            None,
            Some((8192, 1024)),
            Some((8192, 4000)),
            Some((14_096, 10_000)),
            Some((36_096, 32_000)),
        ];
        for (name, want) in LEVELS.into_iter().zip(want) {
            let request = ModelRequest {
                model: "claude-sonnet-4-5".into(),
                system_prompt: String::new(),
                messages: vec![Message::user("hi")].into(),
                tools: Vec::new(),
                max_tokens: Some(8192),
                cache_key: None,
                thinking: crate::providers::ThinkingAsk {
                    level: Thinking::parse(name).unwrap(),
                    ceiling: Some(64_000),
                },
            };
            let body = p.payload(&request);
            assert!(body.get("temperature").is_none() && body.get("reasoning_effort").is_none());
            match want {
                None => {
                    assert!(body.get("thinking").is_none(), "{body}");
                    assert_eq!(body["max_tokens"], 8192);
                }
                Some((max, budget)) => {
                    assert_eq!(body["max_tokens"], max, "{name}");
                    assert_eq!(
                        body["thinking"],
                        json!({"type": "enabled", "budget_tokens": budget}),
                        "{name}"
                    );
                }
            }
            let bytes: Value = serde_json::from_slice(&p.encode(&request).unwrap()).unwrap();
            assert_eq!(bytes, body);
        }
    }

    #[test]
    fn payload_shape_merges_tool_results_and_following_user_text() {
        let a = ToolCall::from_raw("t1".into(), "read".into(), r#"{"path":"a"}"#);
        let b = ToolCall::from_raw("t2".into(), "bash".into(), "{\"command\": ");
        let request = ModelRequest {
            model: "claude-x".into(),
            system_prompt: "be brief".into(),
            messages: vec![
                Message::user("hi"),
                Message::assistant("Looking.", vec![a.clone(), b.clone()]),
                Message::tool_result(&a, &ToolOutput::ok("A")),
                Message::tool_result(&b, &ToolOutput::error("bad args")),
                Message::user("also this"),
                Message::assistant("ok", vec![]),
            ]
            .into(),
            tools: vec![crate::providers::read_spec()],
            max_tokens: None,
            cache_key: None,
            thinking: Default::default(),
        };
        let p = AnthropicProvider::new("claude-x", None, Some("k".into()));
        // Cache breakpoints: the tools, the system prompt, the newest turn and the user turn
        // before the newest user turn.
        let cached = json!({"type": "ephemeral"});
        assert_eq!(
            p.payload(&request),
            json!({
                "model": "claude-x", "max_tokens": 8192, "stream": true,
                "system": [{"type": "text", "text": "be brief", "cache_control": cached}],
                "messages": [
                    {"role": "user", "content": [
                        {"type": "text", "text": "hi", "cache_control": cached}]},
                    {"role": "assistant", "content": [
                        {"type": "text", "text": "Looking."},
                        {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "a"}},
                        {"type": "tool_use", "id": "t2", "name": "bash", "input": {}}]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "t1", "content": "A",
                         "is_error": false},
                        {"type": "tool_result", "tool_use_id": "t2", "content": "bad args",
                         "is_error": true},
                        {"type": "text", "text": "also this"}]},
                    {"role": "assistant", "content": [
                        {"type": "text", "text": "ok", "cache_control": cached}]},
                ],
                "tools": [{"name": "read", "description": "Read a file",
                           "input_schema": {"type": "object"}, "cache_control": cached}],
            })
        );
        let decoded: Value = serde_json::from_slice(&p.encode(&request).unwrap()).unwrap();
        assert_eq!(
            decoded,
            p.payload(&request),
            "the bytes say what the JSON says"
        );
        assert_eq!(p.url(), "https://api.anthropic.com/v1/messages");
    }

    #[test]
    fn user_images_are_image_blocks_before_the_text() {
        let image = |mime: &str, data: &str| crate::vocab::protocol::Image {
            mime_type: mime.into(),
            data: data.into(),
        };
        let request = ModelRequest {
            model: "m".into(),
            system_prompt: String::new(),
            messages: vec![
                Message {
                    images: vec![image("image/png", "aGVsbG8="), image("image/jpeg", "/9j/")],
                    ..Message::user("what is this?")
                },
                Message::assistant("a cat", vec![]),
                Message {
                    images: vec![image("image/gif", "R0lG")],
                    ..Message::user("")
                },
            ]
            .into(),
            tools: vec![],
            max_tokens: None,
            cache_key: None,
            thinking: Default::default(),
        };
        let p = AnthropicProvider::new("m", None, None);
        let body = p.payload(&request);
        let block = |mime: &str, data: &str| json!({"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}});
        let cached = json!({"type": "ephemeral"});
        let mut gif = block("image/gif", "R0lG");
        gif["cache_control"] = cached.clone();
        assert_eq!(
            body["messages"],
            json!([
                {"role": "user", "content": [
                    block("image/png", "aGVsbG8="),
                    block("image/jpeg", "/9j/"),
                    {"type": "text", "text": "what is this?", "cache_control": cached}]},
                {"role": "assistant", "content": [{"type": "text", "text": "a cat"}]},
                {"role": "user", "content": [gif]},
            ])
        );
        let decoded: Value = serde_json::from_slice(&p.encode(&request).unwrap()).unwrap();
        assert_eq!(decoded, body, "the bytes say what the JSON says");
    }

    #[test]
    fn tool_results_with_images_carry_image_blocks() {
        let a = ToolCall::from_raw("t1".into(), "mcp__s__shot".into(), "{}");
        let mut out = ToolOutput::ok("[image image/png, 5 bytes, saved to /tmp/x.png]");
        out.images.push(crate::vocab::protocol::Image {
            mime_type: "image/png".into(),
            data: "aGVsbG8=".into(),
        });
        let request = ModelRequest {
            model: "m".into(),
            system_prompt: String::new(),
            messages: vec![
                Message::user("look"),
                Message::assistant("", vec![a.clone()]),
                Message::tool_result(&a, &out),
            ]
            .into(),
            tools: vec![],
            max_tokens: None,
            cache_key: None,
            thinking: Default::default(),
        };
        let body = AnthropicProvider::new("m", None, None).payload(&request);
        assert_eq!(
            body["messages"][2]["content"][0]["content"],
            json!([
                {"type": "text", "text": "[image image/png, 5 bytes, saved to /tmp/x.png]"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                             "data": "aGVsbG8="}}
            ])
        );
    }

    #[test]
    fn empty_system_and_tools_are_omitted() {
        let request = ModelRequest {
            model: "m".into(),
            system_prompt: String::new(),
            messages: vec![Message::user("q")].into(),
            tools: vec![],
            max_tokens: None,
            cache_key: None,
            thinking: Default::default(),
        };
        let body = AnthropicProvider::new("m", None, None).payload(&request);
        assert!(body.get("system").is_none() && body.get("tools").is_none());
    }

    const STREAM: &str = concat!(
        "event: message_start\n",
        "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":",
        "{\"input_tokens\":25,\"output_tokens\":1}}}\n\n",
        "event: content_block_start\n",
        "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":",
        "{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: ping\ndata: {\"type\": \"ping\"}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":",
        "{\"type\":\"thinking_delta\",\"thinking\":\"Which file?\"}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":",
        "{\"type\":\"text_delta\",\"text\":\"Let me löök\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: content_block_start\n",
        "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":",
        "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"read\",\"input\":{}}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":",
        "{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\": \"}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":",
        "{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"a.txt\\\"}\"}}\n\n",
        "event: message_delta\n",
        "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},",
        "\"usage\":{\"output_tokens\":40}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );

    fn check_reply(items: &[Result<StreamEvent, ProviderError>]) {
        let mut acc = Accumulator::default();
        for item in items {
            acc.push(item.as_ref().unwrap());
        }
        assert!(acc.done);
        assert_eq!(
            acc.text, "Let me löök",
            "the thinking is not the reply's text"
        );
        assert!(items.contains(&Ok(StreamEvent::ThinkingDelta("Which file?".into()))));
        assert_eq!(acc.stop_reason.as_deref(), Some("tool_use"));
        assert_eq!((acc.usage.input_tokens, acc.usage.output_tokens), (25, 40));
        let calls = acc.tool_calls();
        assert_eq!(calls.len(), 1);
        assert_eq!(
            (calls[0].id.as_str(), calls[0].name.as_str()),
            ("toolu_1", "read")
        );
        assert_eq!(calls[0].arguments, json!({"path": "a.txt"}));
    }

    #[test]
    fn stream_decodes_and_splits_anywhere() {
        let bytes = STREAM.as_bytes();
        let whole = decode_chunks(AnthropicDecoder::default(), &[bytes]);
        check_reply(&whole);
        for i in (0..bytes.len()).step_by(5) {
            let split = decode_chunks(AnthropicDecoder::default(), &[&bytes[..i], &bytes[i..]]);
            assert_eq!(split, whole, "split at {i}");
        }
    }

    #[test]
    fn stream_failures() {
        let run = |s: &str| decode_chunks(AnthropicDecoder::default(), &[s.as_bytes()]);
        let err = run(concat!(
            "event: error\ndata: {\"type\":\"error\",\"error\":",
            "{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
        ));
        assert_eq!(
            err,
            vec![Err(ProviderError::Http {
                provider: "anthropic".into(),
                status: 529,
                message: "Overloaded".into()
            })]
        );
        let err =
            run("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n");
        assert!(
            matches!(&err[0], Err(ProviderError::Malformed { message, .. })
            if message.contains("ended early"))
        );
        let err = run("event: ping\ndata: {not json\n\n");
        assert!(
            matches!(&err[0], Err(ProviderError::Malformed { message, .. })
            if message.contains("{not json"))
        );
    }

    #[tokio::test]
    async fn http_stream_sends_the_headers() {
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n{STREAM}"
        );
        let (url, server) = serve_once(response).await;
        let p = AnthropicProvider::new("m", Some(url), Some("sk-ant".into()));
        let mut stream = p
            .stream(&Payload::Json(json!({"model": "m"})))
            .await
            .unwrap();
        let mut items = Vec::new();
        while let Some(item) = stream.next().await {
            items.push(item);
        }
        check_reply(&items);
        let request = server.await.unwrap().to_ascii_lowercase();
        assert!(request.starts_with("post /v1/messages "), "{request}");
        assert!(request.contains("x-api-key: sk-ant"), "{request}");
        assert!(
            request.contains("anthropic-version: 2023-06-01"),
            "{request}"
        );
        assert!(
            request.contains("content-type: application/json"),
            "{request}"
        );
    }
}
