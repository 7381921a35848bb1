//! `--json`: every stdout line is one JSON event, in the order the agent produced them.

use serde_json::{json, Value};

use crate::common::{Output, Reply, TestDir};

use super::wire::{no_panic, run_api, Api, BOTH};

/// Parses every stdout line as JSON (panics on a line that is not).
pub fn events(out: &Output) -> Vec<Value> {
    out.stdout
        .lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| {
                panic!("stdout line is not JSON ({e}): {l:?}\n{}", out.describe())
            })
        })
        .collect()
}

fn types(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            e["type"]
                .as_str()
                .expect("every event has a type")
                .to_string()
        })
        .collect()
}

/// Collapses runs of `text_delta` into one entry, so orders can be compared exactly.
fn collapsed(types: &[String]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for t in types {
        if t == "text_delta" && out.last() == Some(&"text_delta") {
            continue;
        }
        out.push(t);
    }
    out
}

#[test]
fn tool_round_trip_events_in_order() {
    for api in BOTH {
        let dir = TestDir::new();
        dir.write("hello.txt", "hello file\n");
        let replies = vec![
            Reply::tool_calls(vec![("call_1", "read", json!({"path": "hello.txt"}))])
                .with_text("Let me read it."),
            Reply::text("The file says hello."),
        ];
        let (out, reqs) = run_api(
            api,
            &dir,
            replies,
            &["-p", "what is in hello.txt", "--json"],
        );
        out.ok();
        no_panic(&out.stderr);
        assert_eq!(reqs.len(), 2);
        let ev = events(&out);
        let t = types(&ev);
        assert_eq!(
            collapsed(&t),
            vec![
                "session",
                "agent_start",
                "turn_start",
                "text_delta",
                "message_end",
                "tool_call",
                "tool_result",
                "turn_end",
                "turn_start",
                "text_delta",
                "message_end",
                "turn_end",
                "final"
            ],
            "{api:?}: {t:?}"
        );
        assert!(
            t.iter().filter(|t| *t == "text_delta").count() >= 4,
            "text streams in several deltas: {t:?}"
        );
        // The first event says what the session runs with.
        let session = &ev[0];
        assert_eq!(session["type"], "session");
        assert_eq!(session["model"], "test-model");
        assert_eq!(session["cwd"], dir.path().display().to_string());
        assert!(!session["session_id"].as_str().unwrap().is_empty());
        let tools: Vec<&str> = session["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        assert_eq!(tools, ["bash", "edit", "read", "write"], "{session}");
        assert_eq!(session["extensions"], json!(["subagent"]));
        assert_eq!(session["mcp_servers"], json!([]));
        assert_eq!(
            ev[1],
            json!({"type": "agent_start", "prompt": "what is in hello.txt"})
        );
        assert_eq!(ev[2], json!({"type": "turn_start", "turn": 1}));

        let first_text: String = ev
            .iter()
            .take_while(|e| e["type"] != "message_end")
            .filter_map(|e| e["delta"].as_str())
            .collect();
        assert_eq!(first_text, "Let me read it.");

        let end1 = ev.iter().find(|e| e["type"] == "message_end").unwrap();
        assert_eq!(end1["message"]["role"], "assistant");
        assert_eq!(end1["message"]["content"], "Let me read it.");
        assert_eq!(end1["message"]["tool_calls"][0]["id"], "call_1");
        assert_eq!(
            end1["message"]["tool_calls"][0]["arguments"],
            json!({"path": "hello.txt"})
        );

        let call = ev.iter().find(|e| e["type"] == "tool_call").unwrap();
        assert_eq!(
            call,
            &json!({"type": "tool_call", "id": "call_1", "name": "read",
                    "arguments": {"path": "hello.txt"}})
        );
        let result = ev.iter().find(|e| e["type"] == "tool_result").unwrap();
        assert_eq!(result["id"], "call_1");
        assert_eq!(result["name"], "read");
        assert_eq!(result["is_error"], false);
        assert!(result["content"].as_str().unwrap().contains("hello file"));
        // Each turn_end carries that turn's usage.
        let usage = json!({"input_tokens": 10, "output_tokens": 5});
        assert!(ev.contains(&json!({"type": "turn_end", "turn": 1, "usage": usage})));
        assert!(ev.contains(&json!({"type": "turn_end", "turn": 2, "usage": usage})));
        assert!(ev.contains(&json!({"type": "turn_start", "turn": 2})));

        let last = ev.last().unwrap();
        assert_eq!(last["type"], "final");
        assert_eq!(last["text"], "The file says hello.", "{api:?}");
        assert_eq!(last["turns"], 2);
        assert_eq!(
            last["usage"],
            json!({"input_tokens": 20, "output_tokens": 10}),
            "{api:?}: usage of both replies"
        );
    }
}

#[test]
fn plain_answer_events() {
    let dir = TestDir::new();
    let replies = vec![Reply::text("Just text.").usage(7, 3)];
    let (out, _) = run_api(Api::OpenAi, &dir, replies, &["-p", "hi", "--json"]);
    out.ok();
    let ev = events(&out);
    assert_eq!(
        collapsed(&types(&ev)),
        vec![
            "session",
            "agent_start",
            "turn_start",
            "text_delta",
            "message_end",
            "turn_end",
            "final"
        ]
    );
    let deltas: String = ev.iter().filter_map(|e| e["delta"].as_str()).collect();
    assert_eq!(deltas, "Just text.");
    assert_eq!(
        ev.last().unwrap(),
        &json!({"type": "final", "text": "Just text.", "turns": 1,
                "usage": {"input_tokens": 7, "output_tokens": 3},
                "session_usage": {"input_tokens": 7, "output_tokens": 3}})
    );
}

#[test]
fn a_retry_is_a_json_event() {
    let dir = TestDir::new();
    let replies = vec![Reply::error(502, "bad gateway"), Reply::text("ok")];
    let (out, reqs) = run_api(Api::Anthropic, &dir, replies, &["-p", "hi", "--json"]);
    out.ok();
    assert_eq!(reqs.len(), 2);
    let ev = events(&out);
    let retry = ev
        .iter()
        .find(|e| e["type"] == "retry")
        .unwrap_or_else(|| panic!("no retry event: {}", out.describe()));
    assert_eq!(retry["attempt"], 1);
    assert_eq!(retry["max_retries"], 3);
    assert!(retry["delay_ms"].as_u64().is_some(), "{retry}");
    let msg = retry["error"].as_str().unwrap();
    assert!(msg.contains("502"), "{msg}");
    assert_eq!(ev.last().unwrap()["text"], "ok");
    assert!(out.stderr.is_empty(), "{}", out.describe());
}

#[test]
fn command_in_json_mode_is_a_command_event() {
    let dir = TestDir::new();
    let out = crate::common::Mypi::new(&dir)
        .args(["-p", "/help", "--json"])
        .run();
    out.ok();
    let ev = events(&out);
    assert_eq!(ev.len(), 2, "{}", out.describe());
    assert_eq!(ev[0]["type"], "session");
    assert_eq!(ev[1]["type"], "command");
    assert_eq!(ev[1]["name"], "help");
    assert!(ev[1]["output"].as_str().unwrap().contains("/quit"));
}

#[test]
fn error_in_json_mode_is_an_error_event_and_exit_1() {
    let dir = TestDir::new();
    let replies = vec![Reply::error(401, "invalid x-api-key")];
    let (out, _) = run_api(Api::Anthropic, &dir, replies, &["-p", "hi", "--json"]);
    out.expect_code(1);
    let ev = events(&out);
    let last = ev.last().unwrap();
    assert_eq!(last["type"], "error", "{}", out.describe());
    assert!(last["message"]
        .as_str()
        .unwrap()
        .contains("invalid x-api-key"));
}

/// The model's reasoning streams as `thinking` events, before the answer's `text_delta`s,
/// and is not the final text (faux thinking; the providers' own fields are unit-tested).
#[test]
fn thinking_streams_as_its_own_events_and_is_not_the_answer() {
    let dir = TestDir::new();
    let out = super::ext_util::faux(
        &dir,
        &[json!({"thinking": "First, the question.", "text": "Forty-two."})],
    )
    .args(["--no-session", "-p", "why", "--json"])
    .run();
    out.ok();
    let ev = events(&out);
    let all = types(&ev);
    let order = collapsed(&all);
    let (think, text) = (
        order.iter().position(|t| *t == "thinking"),
        order.iter().position(|t| *t == "text_delta"),
    );
    assert!(think.is_some() && think < text, "{order:?}");
    let thought: String = ev
        .iter()
        .filter(|e| e["type"] == "thinking")
        .filter_map(|e| e["delta"].as_str())
        .collect();
    assert_eq!(thought, "First, the question.");
    assert_eq!(ev.last().unwrap()["text"], "Forty-two.");
}
