//! The OpenAI-compatible Chat Completions provider (OpenAI, Ollama, llama.cpp, vLLM, ...):
//! the request body built from a [`ModelRequest`], and the decoder of its streamed chunks.

use futures_util::future::BoxFuture;
use serde_json::value::RawValue;
use serde_json::Value;

use super::lax;
use super::sse::{malformed_data, parse_data, post_json, stream_error};
use super::sse::{SseDecoder, SseEvent, SseEventStream};
use super::wire::OpenAiBody;
use super::{EventStream, ModelRequest, Payload, Provider, ProviderError, StreamEvent};
use crate::vocab::protocol::Usage;

/// Where requests go when no base URL is configured.
pub const DEFAULT_BASE_URL: &str = match crate::config::ProviderKind::OpenAi.official_base_url() {
    Some(url) => url,
    None => "",
};

const NAME: &str = "openai";

/// A Chat Completions endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiProvider {
    model: String,
    base_url: String,
    api_key: Option<String>,
}

impl OpenAiProvider {
    /// `base_url` defaults to [`DEFAULT_BASE_URL`]; without an API key no `Authorization`
    /// header is sent (local servers need none). Empty strings count as unset.
    pub fn new(
        model: impl Into<String>,
        base_url: Option<String>,
        api_key: Option<String>,
    ) -> Self {
        OpenAiProvider {
            model: model.into(),
            base_url: super::base_url_or(base_url, DEFAULT_BASE_URL),
            api_key: api_key.filter(|k| !k.is_empty()),
        }
    }

    /// The endpoint requests are POSTed to.
    /// Whether requests carry `prompt_cache_key`: only to OpenAI's own API.
    fn keyed(&self) -> bool {
        self.base_url == DEFAULT_BASE_URL
    }

    pub fn url(&self) -> String {
        format!("{}/chat/completions", self.base_url)
    }
}

impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        NAME
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn payload(&self, request: &ModelRequest) -> Value {
        serde_json::to_value(OpenAiBody::new(request, self.keyed())).unwrap_or(Value::Null)
    }

    fn encode(&self, request: &ModelRequest) -> Option<Vec<u8>> {
        serde_json::to_vec(&OpenAiBody::new(request, self.keyed())).ok()
    }

    fn stream<'a>(
        &'a self,
        payload: &'a Payload,
    ) -> BoxFuture<'a, Result<Box<dyn EventStream>, ProviderError>> {
        Box::pin(async move {
            let url = self.url();
            let mut headers = Vec::new();
            if let Some(key) = &self.api_key {
                headers.push(("authorization", format!("Bearer {key}")));
            }
            let response = post_json(NAME, &url, &headers, payload).await?;
            let stream = SseEventStream::new(response, OpenAiDecoder::default(), NAME, &url);
            Ok(Box::new(stream) as Box<dyn EventStream>)
        })
    }
}

/// Decodes `chat.completion.chunk` data lines.
#[derive(Debug, Default)]
pub(crate) struct OpenAiDecoder {
    finish_reason: Option<String>,
}

impl SseDecoder for OpenAiDecoder {
    fn event(&mut self, event: &SseEvent, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            out.push(StreamEvent::Done {
                stop_reason: self.finish_reason.take(),
            });
            return Ok(());
        }
        let chunk = lax::event(data, ["error", "usage", "choices"]);
        let Some([error, usage, choices]) = chunk.map_err(|e| malformed_data(NAME, data, &e))?
        else {
            return Ok(());
        };
        if error.is_some() {
            return Err(stream_error(NAME, &parse_data(NAME, data)?));
        }
        if let Some(usage) = lax::fields(usage, USAGE) {
            out.push(StreamEvent::Usage(usage_from(usage)));
        }
        let Some(choice) = lax::first(choices) else {
            return Ok(());
        };
        let [finish_reason, delta] =
            lax::fields(Some(choice), ["finish_reason", "delta"]).unwrap_or_default();
        if let Some(reason) = lax::text(finish_reason) {
            self.finish_reason = Some(reason.into_owned());
        }
        let names = ["reasoning_content", "reasoning", "content", "tool_calls"];
        let Some([reasoning_content, reasoning, content, calls]) = lax::fields(delta, names) else {
            return Ok(());
        };
        // The reasoning of thinking models: `reasoning_content` (llama.cpp, vLLM, DeepSeek)
        // or `reasoning` (OpenRouter, Ollama).
        if let Some(text) = lax::text(reasoning_content.or(reasoning)).filter(|t| !t.is_empty()) {
            out.push(StreamEvent::ThinkingDelta(text.into_owned()));
        }
        if let Some(text) = lax::text(content).filter(|t| !t.is_empty()) {
            out.push(StreamEvent::TextDelta(text.into_owned()));
        }
        for (position, call) in lax::items(calls)
            .unwrap_or_default()
            .into_iter()
            .enumerate()
        {
            tool_call_events(position, call, out);
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        match self.finish_reason.take() {
            Some(reason) => {
                out.push(StreamEvent::Done {
                    stop_reason: Some(reason),
                });
                Ok(())
            }
            None => Err(ProviderError::Malformed {
                provider: NAME.to_string(),
                message: "stream ended early (no [DONE] and no finish_reason)".to_string(),
            }),
        }
    }
}

/// The fields of a chunk's `usage` that count.
const USAGE: [&str; 3] = [
    "prompt_tokens",
    "completion_tokens",
    "prompt_tokens_details",
];

fn usage_from([prompt, completion, details]: lax::Fields<3>) -> Usage {
    let [cached] = lax::fields(details, ["cached_tokens"]).unwrap_or_default();
    Usage {
        input_tokens: lax::count(prompt).unwrap_or(0),
        output_tokens: lax::count(completion).unwrap_or(0),
        cached_tokens: lax::count(cached).unwrap_or(0),
        ..Usage::default()
    }
}

/// One entry of `delta.tool_calls`: a start when it carries an id or name, then its
/// argument text.
fn tool_call_events(position: usize, call: &RawValue, out: &mut Vec<StreamEvent>) {
    let [index, id, function] =
        lax::fields(Some(call), ["index", "id", "function"]).unwrap_or_default();
    let index = lax::count(index).map_or(position, |i| i as usize);
    let id = lax::text(id).unwrap_or_default();
    let [name, arguments] = lax::fields(function, ["name", "arguments"]).unwrap_or_default();
    let name = lax::text(name).unwrap_or_default();
    if !id.is_empty() || !name.is_empty() {
        out.push(StreamEvent::ToolCallStart {
            index,
            id: id.into_owned(),
            name: name.into_owned(),
        });
    }
    let arguments = match arguments {
        // Some servers send the arguments as an object instead of JSON text.
        Some(a) if a.get().starts_with('{') => lax::value(a).map(|v| v.to_string()),
        text => lax::text(text).map(String::from),
    };
    let arguments = arguments.unwrap_or_default();
    if !arguments.is_empty() {
        out.push(StreamEvent::ToolCallDelta { index, arguments });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::sse::{decode_chunks, serve_once};
    use crate::providers::Accumulator;
    use crate::vocab::protocol::{Message, ToolCall, ToolOutput};
    use serde_json::json;

    fn request() -> ModelRequest<'static> {
        let good = ToolCall::from_raw("c1".into(), "read".into(), r#"{"path":"a"}"#);
        let bad = ToolCall::from_raw("c2".into(), "bash".into(), "{\"command\": ");
        ModelRequest {
            model: "gpt-x".into(),
            system_prompt: "be brief".into(),
            messages: vec![
                Message::user("hi"),
                Message::assistant("", vec![good.clone(), bad]),
                Message::tool_result(&good, &ToolOutput::ok("text")),
                Message::assistant("done", vec![]),
            ]
            .into(),
            tools: vec![crate::providers::read_spec()],
            max_tokens: None,
            cache_key: None,
            thinking: Default::default(),
        }
    }

    #[test]
    fn the_session_keys_the_prompt_cache_on_openais_own_api_only() {
        let keyed = ModelRequest {
            cache_key: Some("20261204-1".into()),
            ..request()
        };
        let official = OpenAiProvider::new("gpt-x", None, None);
        assert_eq!(official.payload(&keyed)["prompt_cache_key"], "20261204-1");
        let local = OpenAiProvider::new("m", Some("http://localhost:8080/v1".into()), None);
        assert!(local.payload(&keyed).get("prompt_cache_key").is_none());
        let bytes = official.encode(&keyed).unwrap();
        let decoded: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(decoded, official.payload(&keyed));
    }

    #[test]
    fn the_thinking_level_is_sent_as_reasoning_effort() {
        use crate::vocab::thinking::{Thinking, LEVELS};
        let p = OpenAiProvider::new("m", Some("http://localhost:8080/v1".into()), None);
        for name in LEVELS {
            let level = Thinking::parse(name).unwrap();
            let asked = ModelRequest {
                thinking: crate::providers::ThinkingAsk {
                    level,
                    ceiling: Some(64_000),
                },
                ..request()
            };
            let body = p.payload(&asked);
            match level {
                Thinking::Off => assert!(body.get("reasoning_effort").is_none(), "{body}"),
                _ => assert_eq!(body["reasoning_effort"], name),
            }
            assert!(body.get("thinking").is_none() && body.get("temperature").is_none());
            let bytes: Value = serde_json::from_slice(&p.encode(&asked).unwrap()).unwrap();
            assert_eq!(bytes, body);
        }
    }

    #[test]
    fn payload_shape_is_pinned() {
        let p = OpenAiProvider::new("gpt-x", None, None);
        assert_eq!(
            p.payload(&request()),
            json!({
                "model": "gpt-x", "stream": true, "stream_options": {"include_usage": true},
                "messages": [
                    {"role": "system", "content": "be brief"},
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "c1", "type": "function",
                         "function": {"name": "read", "arguments": "{\"path\":\"a\"}"}},
                        {"id": "c2", "type": "function",
                         "function": {"name": "bash", "arguments": "{\"command\": "}}]},
                    {"role": "tool", "tool_call_id": "c1", "content": "text"},
                    {"role": "assistant", "content": "done"},
                ],
                "tools": [{"type": "function", "function": {
                    "name": "read", "description": "Read a file",
                    "parameters": {"type": "object"}}}],
            })
        );
        let encoded = p.encode(&request()).unwrap();
        let decoded: Value = serde_json::from_slice(&encoded).unwrap();
        assert_eq!(
            decoded,
            p.payload(&request()),
            "the bytes say what the JSON says"
        );
        let mut bare = request();
        bare.tools.clear();
        bare.system_prompt.clear();
        let body = p.payload(&bare);
        assert!(body.get("tools").is_none());
        assert_eq!(body["messages"][0]["role"], "user");
    }

    #[test]
    fn user_images_are_image_url_parts_with_data_urls() {
        let image = |mime: &str, data: &str| crate::vocab::protocol::Image {
            mime_type: mime.into(),
            data: data.into(),
        };
        let mut request = request();
        request.system_prompt.clear();
        request.tools.clear();
        request.messages = vec![
            Message {
                images: vec![image("image/png", "aGVsbG8="), image("image/webp", "UklG")],
                ..Message::user("what is this?")
            },
            Message::assistant("a cat", vec![]),
            Message {
                images: vec![image("image/gif", "R0lG")],
                ..Message::user("")
            },
        ]
        .into();
        let p = OpenAiProvider::new("gpt-x", None, None);
        let body = p.payload(&request);
        let part = |url: &str| json!({"type": "image_url", "image_url": {"url": url}});
        assert_eq!(
            body["messages"],
            json!([
                {"role": "user", "content": [
                    {"type": "text", "text": "what is this?"},
                    part("data:image/png;base64,aGVsbG8="),
                    part("data:image/webp;base64,UklG")]},
                {"role": "assistant", "content": "a cat"},
                {"role": "user", "content": [part("data:image/gif;base64,R0lG")]},
            ])
        );
        let decoded: Value = serde_json::from_slice(&p.encode(&request).unwrap()).unwrap();
        assert_eq!(decoded, body, "the bytes say what the JSON says");
    }

    #[test]
    fn base_url_default_and_trailing_slash() {
        let p = OpenAiProvider::new("m", None, None);
        assert_eq!(p.url(), "https://api.openai.com/v1/chat/completions");
        let p = OpenAiProvider::new("m", Some("http://localhost:11434/v1/".into()), None);
        assert_eq!(p.url(), "http://localhost:11434/v1/chat/completions");
    }

    const STREAM: &str = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hmm\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Héllo\"}}]}\n\n",
        ": comment\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",",
        "\"type\":\"function\",\"function\":{\"name\":\"read\",\"arguments\":\"\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,",
        "\"function\":{\"arguments\":\"{\\\"path\\\":\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,",
        "\"function\":{\"arguments\":\"\\\"a.txt\\\"}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":7}}\n\n",
        "data: [DONE]\n\n",
        "data: {\"ignored\": \"after done\"}\n\n",
    );

    fn accumulate(items: &[Result<StreamEvent, ProviderError>]) -> Accumulator {
        let mut acc = Accumulator::default();
        for item in items {
            acc.push(item.as_ref().unwrap());
        }
        acc
    }

    #[test]
    fn stream_decodes_text_tools_usage_and_done() {
        let items = decode_chunks(OpenAiDecoder::default(), &[STREAM.as_bytes()]);
        let acc = accumulate(&items);
        assert_eq!(acc.text, "Héllo", "the reasoning is not the reply's text");
        assert!(items.contains(&Ok(StreamEvent::ThinkingDelta("hmm".into()))));
        assert_eq!(acc.usage.input_tokens, 12);
        assert_eq!(acc.usage.output_tokens, 7);
        assert_eq!(acc.stop_reason.as_deref(), Some("tool_calls"));
        let calls = acc.tool_calls();
        assert_eq!(calls.len(), 1);
        assert_eq!(
            (calls[0].id.as_str(), calls[0].name.as_str()),
            ("call_1", "read")
        );
        assert_eq!(calls[0].arguments, json!({"path": "a.txt"}));
        assert!(matches!(items.last(), Some(Ok(StreamEvent::Done { .. }))));
    }

    #[test]
    fn stream_split_anywhere_gives_the_same_events() {
        let bytes = STREAM.as_bytes();
        let whole = decode_chunks(OpenAiDecoder::default(), &[bytes]);
        for i in (0..bytes.len()).step_by(7) {
            let split = decode_chunks(OpenAiDecoder::default(), &[&bytes[..i], &bytes[i..]]);
            assert_eq!(split, whole, "split at {i}");
        }
    }

    #[test]
    fn stream_failures() {
        let run = |s: &str| decode_chunks(OpenAiDecoder::default(), &[s.as_bytes()]);
        let err = run("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n");
        assert_eq!(err[0], Ok(StreamEvent::TextDelta("a".into())));
        assert!(
            matches!(&err[1], Err(ProviderError::Malformed { message, .. })
            if message.contains("ended early"))
        );
        let err = run("data: {\"choices\": [\n\n");
        assert!(
            matches!(&err[0], Err(ProviderError::Malformed { message, .. })
            if message.contains("{\"choices\": ["))
        );
        let err =
            run("data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}\n\n");
        assert!(
            matches!(&err[0], Err(ProviderError::Http { status: 500, message, .. })
            if message == "overloaded")
        );
        // A finish_reason without [DONE] still completes the reply.
        let ok = run("data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}");
        assert_eq!(
            ok,
            vec![Ok(StreamEvent::Done {
                stop_reason: Some("stop".into())
            })]
        );
    }

    #[tokio::test]
    async fn http_error_status_reads_the_body() {
        let body =
            r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#;
        let response = format!(
            "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let (url, server) = serve_once(response).await;
        let p = OpenAiProvider::new("m", Some(url), Some("sk-test".into()));
        let err = p
            .stream(&Payload::Json(json!({"model": "m"})))
            .await
            .err()
            .unwrap();
        assert_eq!(
            err,
            ProviderError::Http {
                provider: "openai".into(),
                status: 401,
                message: "Incorrect API key provided".into()
            }
        );
        let request = server.await.unwrap().to_ascii_lowercase();
        assert!(request.starts_with("post /chat/completions "), "{request}");
        assert!(
            request.contains("authorization: bearer sk-test"),
            "{request}"
        );
    }

    #[tokio::test]
    async fn http_stream_is_decoded_and_no_key_means_no_header() {
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n{STREAM}"
        );
        let (url, server) = serve_once(response).await;
        let p = OpenAiProvider::new("m", Some(format!("{url}/")), None);
        let mut stream = p
            .stream(&Payload::Json(json!({"model": "m"})))
            .await
            .unwrap();
        let mut acc = Accumulator::default();
        while let Some(item) = stream.next().await {
            acc.push(&item.unwrap());
        }
        assert!(acc.done);
        assert_eq!(acc.text, "Héllo");
        let request = server.await.unwrap().to_ascii_lowercase();
        assert!(!request.contains("authorization"), "{request}");
    }

    #[tokio::test]
    async fn body_cut_mid_stream_is_a_connection_error_after_the_text() {
        let body = "data: {\"choices\":[{\"delta\":{\"content\":\"par\"}}]}\n\n";
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 500\r\n\r\n{body}"
        );
        let (url, _server) = serve_once(response).await;
        let p = OpenAiProvider::new("m", Some(url), None);
        let mut stream = p.stream(&Payload::Json(json!({}))).await.unwrap();
        let first = stream.next().await.unwrap();
        assert_eq!(first, Ok(StreamEvent::TextDelta("par".into())));
        let second = stream.next().await.unwrap();
        assert!(
            matches!(&second, Err(ProviderError::Connect { .. })),
            "{second:?}"
        );
        assert!(stream.next().await.is_none());
    }

    #[tokio::test]
    async fn refused_connection_names_the_cause() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        drop(listener);
        let p = OpenAiProvider::new("m", Some(url.clone()), None);
        match p.stream(&Payload::Json(json!({}))).await.err().unwrap() {
            ProviderError::Connect {
                provider,
                url: u,
                message,
            } => {
                assert_eq!(provider, "openai");
                assert_eq!(u, format!("{url}/chat/completions"));
                assert!(message.to_lowercase().contains("refused"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }
}
