//! The JSON shapes of messages and agent events, pinned.

use super::*;
use serde_json::json;

#[test]
fn message_json_shape_is_pinned() {
    let call = ToolCall::from_raw("c1".into(), "read".into(), r#"{"path":"a"}"#);
    let m = Message::assistant("hi", vec![call.clone()]);
    assert_eq!(
        serde_json::to_value(&m).unwrap(),
        json!({"role":"assistant","content":"hi","tool_calls":[
            {"id":"c1","name":"read","arguments":{"path":"a"}}]})
    );
    let r = Message::tool_result(&call, &ToolOutput::error("nope"));
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({"role":"tool","content":"nope","tool_call_id":"c1","name":"read","is_error":true})
    );
    assert_eq!(
        serde_json::to_value(Message::user("q")).unwrap(),
        json!({"role":"user","content":"q"})
    );
}

#[test]
fn malformed_arguments_are_kept_raw() {
    let c = ToolCall::from_raw("c".into(), "bash".into(), "{\"command\": ");
    assert_eq!(c.invalid_arguments.as_deref(), Some("{\"command\": "));
    assert_eq!(c.arguments_text(), "{\"command\": ");
    let empty = ToolCall::from_raw("c".into(), "x".into(), "");
    assert_eq!(empty.arguments, json!({}));
}

#[test]
fn agent_event_json_shape_is_pinned() {
    let cases = [
        (
            AgentEvent::TurnStart { turn: 1 },
            json!({"type":"turn_start","turn":1}),
        ),
        (
            AgentEvent::TextDelta { delta: "x".into() },
            json!({"type":"text_delta","delta":"x"}),
        ),
        (
            AgentEvent::Thinking { delta: "hm".into() },
            json!({"type":"thinking","delta":"hm"}),
        ),
        (
            AgentEvent::ToolCall {
                id: "a".into(),
                name: "bash".into(),
                arguments: json!({"command":"ls"}),
            },
            json!({"type":"tool_call","id":"a","name":"bash","arguments":{"command":"ls"}}),
        ),
        (
            AgentEvent::ToolUpdate {
                id: "a".into(),
                name: "bash".into(),
                kind: UpdateKind::Output,
                text: "line\n".into(),
            },
            json!({"type":"tool_update","id":"a","name":"bash","kind":"output","text":"line\n"}),
        ),
        (
            AgentEvent::ToolResult {
                id: "a".into(),
                name: "bash".into(),
                content: "ok".into(),
                is_error: false,
                details: None,
            },
            json!({"type":"tool_result","id":"a","name":"bash","content":"ok","is_error":false}),
        ),
        (
            AgentEvent::NestedToolCall {
                parent_id: "c1".into(),
                id: "c1.1".into(),
                name: "read".into(),
                arguments: json!({"path":"a"}),
            },
            json!({"type":"nested_tool_call","parent_id":"c1","id":"c1.1","name":"read",
                   "arguments":{"path":"a"}}),
        ),
        (
            AgentEvent::NestedToolResult {
                parent_id: "c1".into(),
                id: "c1.1".into(),
                name: "read".into(),
                content: "text".into(),
                is_error: false,
            },
            json!({"type":"nested_tool_result","parent_id":"c1","id":"c1.1","name":"read",
                   "content":"text","is_error":false}),
        ),
        (
            AgentEvent::TurnEnd {
                turn: 2,
                usage: Usage::tokens(5, 1),
            },
            json!({"type":"turn_end","turn":2,"usage":{"input_tokens":5,"output_tokens":1}}),
        ),
        (
            AgentEvent::Retry {
                attempt: 1,
                max_retries: 3,
                delay_ms: 500,
                error: "HTTP 503".into(),
            },
            json!({"type":"retry","attempt":1,"max_retries":3,"delay_ms":500,"error":"HTTP 503"}),
        ),
        (
            AgentEvent::Session {
                session_id: "s1".into(),
                cwd: "/w".into(),
                provider: "openai".into(),
                model: "m".into(),
                tools: vec!["read".into()],
                extensions: vec!["subagent".into()],
                mcp_servers: vec![],
            },
            json!({"type":"session","session_id":"s1","cwd":"/w","provider":"openai",
                   "model":"m","tools":["read"],"extensions":["subagent"],"mcp_servers":[]}),
        ),
        (
            AgentEvent::Final {
                text: "done".into(),
                turns: 2,
                usage_by: vec![],
                usage: Usage {
                    cached_tokens: 2,
                    cost_usd: Some(0.25),
                    ..Usage::tokens(3, 4)
                },
                session_usage: Usage::tokens(30, 40),
            },
            json!({"type":"final","text":"done","turns":2,
                   "usage":{"input_tokens":3,"output_tokens":4,"cached_tokens":2,"cost_usd":0.25},
                   "session_usage":{"input_tokens":30,"output_tokens":40}}),
        ),
        (
            AgentEvent::AgentStart {
                prompt: "hi".into(),
            },
            json!({"type":"agent_start","prompt":"hi"}),
        ),
        (
            AgentEvent::QueuedMessage {
                text: "and this".into(),
                delivery: Delivery::Steer,
            },
            json!({"type":"queued_message","text":"and this","delivery":"steer"}),
        ),
        (
            AgentEvent::MessageEnd {
                message: Message::assistant("a", vec![]),
            },
            json!({"type":"message_end","message":{"role":"assistant","content":"a"}}),
        ),
        (
            AgentEvent::Notice {
                message: "n".into(),
            },
            json!({"type":"notice","message":"n"}),
        ),
        (
            AgentEvent::Child {
                call_id: Some("p1".into()),
                child: ChildTag {
                    name: "scout".into(),
                    depth: 1,
                    turn: 2,
                },
                event: Box::new(AgentEvent::Error {
                    message: "e".into(),
                }),
            },
            json!({"type":"child","call_id":"p1",
                   "child":{"name":"scout","depth":1,"turn":2},
                   "event":{"type":"error","message":"e"}}),
        ),
        (
            AgentEvent::Error {
                message: "e".into(),
            },
            json!({"type":"error","message":"e"}),
        ),
        (
            AgentEvent::Command {
                name: "help".into(),
                output: "o".into(),
            },
            json!({"type":"command","name":"help","output":"o"}),
        ),
        (
            AgentEvent::HookRun(hook_run::tests::sample()),
            hook_run::tests::shape(),
        ),
        (
            AgentEvent::Plan {
                entries: vec![PlanEntry {
                    content: "write the tests".into(),
                    status: PlanStatus::InProgress,
                    priority: PlanPriority::High,
                }],
            },
            json!({"type":"plan","entries":[
                {"content":"write the tests","status":"in_progress","priority":"high"}]}),
        ),
    ];
    let mut covered = std::collections::BTreeSet::new();
    for (event, shape) in cases {
        assert_eq!(serde_json::to_value(&event).unwrap(), shape);
        covered.insert(shape["type"].as_str().unwrap().to_string());
    }
    // Every variant: a new one fails to compile here until it is pinned above.
    let name = |e: &AgentEvent| match e {
        AgentEvent::AgentStart { .. } => "agent_start",
        AgentEvent::QueuedMessage { .. } => "queued_message",
        AgentEvent::TurnStart { .. } => "turn_start",
        AgentEvent::TextDelta { .. } => "text_delta",
        AgentEvent::Thinking { .. } => "thinking",
        AgentEvent::MessageEnd { .. } => "message_end",
        AgentEvent::ToolCall { .. } => "tool_call",
        AgentEvent::ToolResult { .. } => "tool_result",
        AgentEvent::ToolUpdate { .. } => "tool_update",
        AgentEvent::NestedToolCall { .. } => "nested_tool_call",
        AgentEvent::NestedToolResult { .. } => "nested_tool_result",
        AgentEvent::TurnEnd { .. } => "turn_end",
        AgentEvent::Notice { .. } => "notice",
        AgentEvent::Child { .. } => "child",
        AgentEvent::Retry { .. } => "retry",
        AgentEvent::Session { .. } => "session",
        AgentEvent::Final { .. } => "final",
        AgentEvent::Error { .. } => "error",
        AgentEvent::Command { .. } => "command",
        AgentEvent::HookRun(_) => "hook_run",
        AgentEvent::Plan { .. } => "plan",
    };
    assert_eq!(name(&AgentEvent::TurnStart { turn: 0 }), "turn_start");
    assert_eq!(covered.len(), 21, "{covered:?}");
}

#[test]
fn cached_input_costs_a_tenth_and_written_input_a_quarter_more() {
    let usage = Usage {
        input_tokens: 1_000_000,
        output_tokens: 0,
        cached_tokens: 600_000,
        cache_write_tokens: 200_000,
        cost_usd: None,
    };
    let cost = usage.priced(Some(Prices::new(10.0, 0.0))).cost_usd.unwrap();
    // 200k plain at $10/M, 600k read at $1/M, 200k written at $12.5/M.
    assert!((cost - (2.0 + 0.6 + 2.5)).abs() < 1e-9, "{cost}");
    // Prices of the cache's own: 600k read at $5/M, 200k written at $10/M.
    let own = Prices::new(10.0, 0.0).cached_at(Some(5.0), Some(10.0));
    let cost = usage.priced(Some(own)).cost_usd.unwrap();
    assert!((cost - (2.0 + 3.0 + 2.0)).abs() < 1e-9, "{cost}");
    assert_eq!(openai_read_rate("gpt-4o-mini"), 0.5);
    assert_eq!(openai_read_rate("gpt-4.1-mini"), 0.25);
    assert_eq!(openai_read_rate("gpt-5-codex"), 0.1);
}
