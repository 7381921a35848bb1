//! Streams with odd fields, as small servers send them: each field of another shape than the
//! API's reads as absent (a number where text belongs, an object where an array does), a
//! field sent twice counts the last time, and the rest of the event still counts.

use super::anthropic::AnthropicDecoder;
use super::openai::OpenAiDecoder;
use super::sse::decode_chunks;
use super::StreamEvent::{self, *};
use crate::vocab::protocol::Usage;

/// What a stream of `data:` lines decodes to (all of it well-formed but odd).
fn openai(lines: &[&str]) -> Vec<StreamEvent> {
    let body: String = lines.iter().map(|l| format!("data: {l}\n\n")).collect();
    let items = decode_chunks(OpenAiDecoder::default(), &[body.as_bytes()]);
    items.into_iter().map(|i| i.unwrap()).collect()
}

#[test]
fn openai_chunks_of_odd_shapes_give_what_they_can() {
    let events = openai(&[
        "[1, 2]",
        r#"{"choices": {"delta": {"content": "not in an array"}}}"#,
        r#"{"choices": [null]}"#,
        r#"{"choices": [{"delta": {"content": 5, "reasoning": "r"}, "finish_reason": 7}]}"#,
        concat!(
            r#"{"choices": [{"delta": {"tool_calls": [3, {"id": "c1", "#,
            r#""function": {"name": "read", "arguments": {"path": "a"}}}]}}]}"#
        ),
        r#"{"choices": [{"delta": {"tool_calls": [{"index": 1, "function": {"arguments": 2}}]}}]}"#,
        r#"{"usage": "lots"}"#,
        r#"{"usage": {"prompt_tokens": 2.5, "completion_tokens": 3, "prompt_tokens_details": []}}"#,
        r#"{"choices": [{"delta": {"content": "a", "content": "b"}}], "error": null}"#,
        r#"{"choices": [{"delta": {"content": "\u00e9\n"}, "finish_reason": "stop"}, 1]}"#,
        "[DONE]",
    ]);
    let want = vec![
        ThinkingDelta("r".into()),
        ToolCallStart {
            index: 1,
            id: "c1".into(),
            name: "read".into(),
        },
        ToolCallDelta {
            index: 1,
            arguments: r#"{"path":"a"}"#.into(),
        },
        Usage(Usage::tokens(0, 3)),
        TextDelta("b".into()),
        TextDelta("é\n".into()),
        Done {
            stop_reason: Some("stop".into()),
        },
    ];
    assert_eq!(events, want);
}

#[test]
fn anthropic_events_of_odd_shapes_give_what_they_can() {
    let body = concat!(
        "event: message_start\n",
        "data: {\"type\": \"message_start\", \"message\": {\"usage\": {\"input_tokens\": 5, ",
        "\"cache_read_input_tokens\": 2, \"output_tokens\": \"many\"}}}\n\n",
        "data: [1]\n\n",
        "data: {\"type\": \"content_block_delta\", \"delta\": {\"type\": \"text_delta\", \"text\": 4}}\n\n",
        "data: {\"type\": \"content_block_delta\", \"delta\": [\"text_delta\"]}\n\n",
        // No `type` in the data: the SSE event's name says what it is.
        "event: content_block_delta\n",
        "data: {\"delta\": {\"type\": \"text_delta\", \"text\": \"hi\", \"text\": \"hi!\"}}\n\n",
        "data: {\"type\": \"content_block_delta\", \"index\": \"2\", \"delta\": ",
        "{\"type\": \"input_json_delta\", \"partial_json\": \"{\\\"a\\\"\"}}\n\n",
        "data: {\"type\": \"content_block_delta\", \"index\": 3, \"delta\": ",
        "{\"type\": \"thinking_delta\", \"thinking\": \"\"}}\n\n",
        "data: {\"type\": \"message_delta\", \"delta\": {\"stop_reason\": \"end_turn\"}, ",
        "\"usage\": {\"output_tokens\": 9}}\n\n",
        "data: {\"type\": \"message_stop\"}\n\n",
    );
    let items = decode_chunks(AnthropicDecoder::default(), &[body.as_bytes()]);
    let events: Vec<StreamEvent> = items.into_iter().map(|i| i.unwrap()).collect();
    let mut started = Usage::tokens(7, 0);
    started.cached_tokens = 2;
    let want = vec![
        Usage(started),
        TextDelta("hi!".into()),
        ToolCallDelta {
            index: 0,
            arguments: "{\"a\"".into(),
        },
        Usage(Usage::tokens(0, 9)),
        Done {
            stop_reason: Some("end_turn".into()),
        },
    ];
    assert_eq!(events, want);
}
