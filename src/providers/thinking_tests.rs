//! Signed thinking (Anthropic): the blocks a reply streams (reasoning closed by a
//! `signature_delta`, redacted blocks) are kept on the assistant message and go back first,
//! as they came, in its turn of the next request when it asks for thinking; never to Chat
//! Completions, never as text.

use serde_json::{json, Value};

use super::anthropic::{AnthropicDecoder, AnthropicProvider};
use super::openai::OpenAiProvider;
use super::sse::decode_chunks;
use super::{Accumulator, ModelRequest, Provider};
use crate::vocab::protocol::{Message, ThinkingBlock, ToolOutput};
use crate::vocab::thinking::Thinking;

const STREAM: &str = concat!(
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\n",
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,",
    "\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,",
    "\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Read it \"}}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,",
    "\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"first.\"}}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,",
    "\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQBsig==\"}}\n\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,",
    "\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"opaque\"}}\n\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2,",
    "\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"read\",\"input\":{\"path\":\"a\"}}}\n\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}\n\n",
    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\n",
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
);

/// The assistant message the stream above makes.
fn streamed() -> Message {
    let mut acc = Accumulator::default();
    for item in decode_chunks(AnthropicDecoder::default(), &[STREAM.as_bytes()]) {
        acc.push(&item.unwrap());
    }
    assert!(acc.done);
    acc.message()
}

#[test]
fn signed_and_redacted_blocks_are_kept_and_are_not_the_text() {
    let m = streamed();
    assert_eq!(m.content, "");
    assert_eq!(
        m.thinking,
        vec![
            ThinkingBlock::Thinking {
                thinking: "Read it first.".into(),
                signature: "EqQBsig==".into(),
            },
            ThinkingBlock::RedactedThinking {
                data: "opaque".into()
            },
        ]
    );
    // Unsigned reasoning (a Chat Completions server's) is shown, not kept.
    let mut acc = Accumulator::default();
    acc.push(&super::StreamEvent::ThinkingDelta("hmm".into()));
    acc.push(&super::StreamEvent::TextDelta("hi".into()));
    assert!(acc.message().thinking.is_empty());
}

/// A request asking for `level` of thinking.
fn request(messages: Vec<Message>, level: Thinking) -> ModelRequest<'static> {
    ModelRequest {
        model: "claude-x".into(),
        system_prompt: String::new(),
        messages: messages.into(),
        tools: Vec::new(),
        max_tokens: None,
        cache_key: None,
        thinking: super::ThinkingAsk {
            level,
            ceiling: None,
        },
    }
}

#[test]
fn the_blocks_go_back_first_and_only_to_anthropic() {
    let reply = streamed();
    let call = reply.tool_calls[0].clone();
    let messages = vec![
        Message::user("read a"),
        reply,
        Message::tool_result(&call, &ToolOutput::ok("A")),
    ];
    let asked = request(messages.clone(), Thinking::Low);
    let anthropic = AnthropicProvider::new("claude-x", None, Some("k".into()));
    let body = anthropic.payload(&asked);
    assert_eq!(
        body["messages"][1]["content"],
        json!([
            {"type": "thinking", "thinking": "Read it first.", "signature": "EqQBsig=="},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a"}},
        ])
    );
    let bytes: Value = serde_json::from_slice(&anthropic.encode(&asked).unwrap()).unwrap();
    assert_eq!(bytes, body);
    let openai = OpenAiProvider::new("gpt-x", None, None);
    let text = openai.payload(&asked).to_string();
    assert!(!text.contains("EqQBsig") && !text.contains("opaque") && !text.contains("Read it"));
    // Thinking off: the blocks stay in the session but are not sent.
    let off = anthropic.payload(&request(messages, Thinking::Off));
    assert_eq!(
        off["messages"][1]["content"][0]["type"], "tool_use",
        "{off}"
    );
}

#[test]
fn a_session_file_without_thinking_reads_as_before() {
    let m: Message = serde_json::from_value(json!({"role": "assistant", "content": "x"})).unwrap();
    assert!(m.thinking.is_empty());
    let back = serde_json::to_value(&m).unwrap();
    assert!(back.get("thinking").is_none(), "{back}");
}
