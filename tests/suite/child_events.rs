//! What a child agent does reaches the front ends as typed `child` events (issue 33, point
//! 6): in `--json`, under the tool call that started the child and before its result; a child
//! started outside a tool call (a command's `api.run_agent`) through the front end's outlet;
//! in print mode and the REPL as the child's status line.

use serde_json::{json, Value};

use super::ext_util::install;
use super::json_events::events;
use crate::common::{FakeOpenAi, Mypi, Reply, TestDir};

/// A tool `delegate{task}` whose child may read files.
const DELEGATE: &str = r#"
api.tool{
  name = "delegate",
  description = "run a child agent",
  parameters = { type = "object", properties = { task = { type = "string" } }, required = { "task" } },
  execute = function(args, ctx)
    return api.run_agent{ task = args.task, name = "scout", tools = { "read" } }.text
  end,
}
"#;

/// The index of the first event `pick` accepts.
fn position(events: &[Value], pick: impl Fn(&Value) -> bool) -> usize {
    events
        .iter()
        .position(pick)
        .unwrap_or_else(|| panic!("no such event in {events:#?}"))
}

#[test]
fn a_childs_tool_calls_come_as_child_events_under_the_call_that_started_it() {
    let dir = TestDir::new();
    dir.write("notes.txt", "hello");
    install(&dir, "delegate.lua", DELEGATE);
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([("call_1", "delegate", json!({"task": "look"}))]),
        Reply::tool_calls([("c1", "read", json!({"path": "notes.txt"}))]),
        Reply::text("it says hello"),
        Reply::text("parent done"),
    ]);
    let out = Mypi::new(&dir)
        .openai(&fake)
        .args(["-p", "--json", "go"])
        .run();
    out.ok();
    let events = events(&out);
    let call = position(&events, |e| {
        e["type"] == "child" && e["event"]["type"] == "tool_call"
    });
    assert_eq!(events[call]["call_id"], "call_1");
    assert_eq!(
        events[call]["child"],
        json!({"name": "scout", "depth": 1, "turn": 1})
    );
    assert_eq!(events[call]["event"]["name"], "read");
    assert_eq!(
        events[call]["event"]["arguments"],
        json!({"path": "notes.txt"})
    );
    let result = position(&events, |e| {
        e["type"] == "child" && e["event"]["type"] == "tool_result"
    });
    assert_eq!(events[result]["event"]["content"], "hello");
    assert_eq!(events[result]["event"]["is_error"], false);
    // Both before the result of the parent's call, and never as display text.
    let parent_result = position(&events, |e| {
        e["type"] == "tool_result" && e["id"] == "call_1"
    });
    assert!(call < result && result < parent_result, "{events:#?}");
    assert!(
        !events.iter().any(|e| e["type"] == "notice"),
        "child activity is not a notice: {events:#?}"
    );
    // The child's streamed text is not passed on: stdout's text is the parent's.
    assert!(!events
        .iter()
        .any(|e| e["type"] == "child" && e["event"]["type"] == "text_delta"));
    // Print mode shows the same as the child's status line on stderr.
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([("call_1", "delegate", json!({"task": "look"}))]),
        Reply::tool_calls([("c1", "read", json!({"path": "notes.txt"}))]),
        Reply::text("it says hello"),
        Reply::text("parent done"),
    ]);
    let out = Mypi::new(&dir).openai(&fake).args(["-p", "go"]).run();
    out.ok();
    assert!(
        out.stderr
            .contains(r#"[scout · depth 1 · turn 1] read {"path":"notes.txt"}"#),
        "{}",
        out.describe()
    );
    assert_eq!(out.stdout.trim(), "parent done");
}

#[test]
fn a_child_started_by_a_command_reaches_the_outlet_without_a_call() {
    let dir = TestDir::new();
    dir.write("notes.txt", "hello");
    install(
        &dir,
        "ask.lua",
        r#"api.command("ask", function()
  return api.run_agent{ task = "look around", tools = { "read" } }.text
end)"#,
    );
    let replies = || {
        vec![
            Reply::tool_calls([("c1", "read", json!({"path": "missing.txt"}))]),
            Reply::text("nothing there"),
        ]
    };
    let fake = FakeOpenAi::with_replies(replies());
    let out = Mypi::new(&dir)
        .openai(&fake)
        .args(["-p", "--json", "/ask"])
        .run();
    out.ok();
    let events = events(&out);
    let call = position(&events, |e| {
        e["type"] == "child" && e["event"]["type"] == "tool_call"
    });
    assert!(events[call].get("call_id").is_none(), "{events:#?}");
    // A child without a name is named by its task.
    assert_eq!(events[call]["child"]["name"], "look around");
    let result = position(&events, |e| {
        e["type"] == "child" && e["event"]["type"] == "tool_result"
    });
    assert_eq!(events[result]["event"]["is_error"], true);
    let fake = FakeOpenAi::with_replies(replies());
    let out = Mypi::new(&dir).openai(&fake).args(["-p", "/ask"]).run();
    out.ok();
    assert!(
        out.stderr
            .contains(r#"[look around · depth 1 · turn 1] read {"path":"missing.txt"}"#),
        "{}",
        out.describe()
    );
}
