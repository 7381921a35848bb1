//! The JSON shapes of the updates the editor gets, pinned.

use super::*;

fn shapes(mapper: &mut Mapper, event: AgentEvent) -> Vec<Value> {
    mapper
        .updates(&event)
        .iter()
        .map(|u| serde_json::to_value(u).unwrap())
        .collect()
}

fn tool_call(id: &str, name: &str, arguments: Value) -> AgentEvent {
    AgentEvent::ToolCall {
        id: id.into(),
        name: name.into(),
        arguments,
    }
}

fn tool_result(id: &str, name: &str, content: &str, is_error: bool) -> AgentEvent {
    AgentEvent::ToolResult {
        id: id.into(),
        name: name.into(),
        content: content.into(),
        is_error,
        details: None,
    }
}

#[test]
fn text_is_a_message_chunk_and_notices_are_marked_as_mypis() {
    let mut m = Mapper::new(PathBuf::from("/p"));
    let delta = AgentEvent::TextDelta { delta: "Hi".into() };
    assert_eq!(
        shapes(&mut m, delta),
        [
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hi"}})
        ]
    );
    let notice = AgentEvent::Notice {
        message: "reloaded".into(),
    };
    assert_eq!(
        shapes(&mut m, notice),
        [json!({
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "\n[mypi] reloaded\n"},
            "_meta": {"mypi": {"notice": true}}
        })]
    );
    let start = AgentEvent::TurnStart { turn: 1 };
    assert!(shapes(&mut m, start).is_empty());
}

#[test]
fn a_tool_call_has_its_kind_location_and_input_and_its_result_a_status() {
    let mut m = Mapper::new(PathBuf::from("/p"));
    let call = tool_call("c1", "read", json!({"path": "src/a.rs", "offset": 10}));
    assert_eq!(
        shapes(&mut m, call),
        [json!({
            "sessionUpdate": "tool_call",
            "toolCallId": "c1",
            "title": "read src/a.rs",
            "kind": "read",
            "status": "in_progress",
            "locations": [{"path": "/p/src/a.rs", "line": 10}],
            "rawInput": {"path": "src/a.rs", "offset": 10}
        })]
    );
    let result = tool_result("c1", "read", "no such file", true);
    assert_eq!(
        shapes(&mut m, result),
        [json!({
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "status": "failed",
            "content": [{"type": "content", "content": {"type": "text", "text": "no such file"}}]
        })]
    );
}

#[test]
fn output_so_far_is_shown_as_it_grows() {
    let mut m = Mapper::new(PathBuf::from("/p"));
    let call = tool_call("b", "bash", json!({"command": "make"}));
    let first = shapes(&mut m, call);
    assert_eq!(first[0]["kind"], "execute");
    assert_eq!(first[0]["title"], "bash: make");
    assert!(first[0].get("locations").is_none());
    for (chunk, all) in [("one\n", "one\n"), ("two\n", "one\ntwo\n")] {
        let update = AgentEvent::ToolUpdate {
            id: "b".into(),
            name: "bash".into(),
            kind: UpdateKind::Output,
            text: chunk.into(),
        };
        assert_eq!(
            shapes(&mut m, update),
            [json!({
                "sessionUpdate": "tool_call_update",
                "toolCallId": "b",
                "status": "in_progress",
                "content": [{"type": "content", "content": {"type": "text", "text": all}}]
            })]
        );
    }
}

#[test]
fn an_edit_shows_the_whole_files_diff() {
    let dir = crate::platform::testutil::TempDir::new("acp-diff");
    let file = dir.0.join("a.txt");
    std::fs::write(&file, "one\ntwo\n").unwrap();
    let mut m = Mapper::new(dir.0.clone());
    let call = tool_call(
        "e",
        "edit",
        json!({"path": "a.txt", "old_text": "two", "new_text": "2"}),
    );
    assert_eq!(shapes(&mut m, call)[0]["kind"], "edit");
    std::fs::write(&file, "one\n2\n").unwrap();
    let result = tool_result("e", "edit", "edited a.txt", false);
    let got = shapes(&mut m, result);
    assert_eq!(got[0]["status"], "completed");
    assert_eq!(
        got[0]["content"][1],
        json!({"type": "diff", "path": file.display().to_string(), "oldText": "one\ntwo\n", "newText": "one\n2\n"})
    );
    // A new file's diff has no old text.
    let call = tool_call("w", "write", json!({"path": "b.txt", "content": "new\n"}));
    shapes(&mut m, call);
    std::fs::write(dir.0.join("b.txt"), "new\n").unwrap();
    let result = tool_result("w", "write", "wrote b.txt", false);
    let got = shapes(&mut m, result);
    assert_eq!(got[0]["content"][1]["type"], "diff");
    assert_eq!(got[0]["content"][1]["newText"], "new\n");
    assert!(got[0]["content"][1]
        .get("oldText")
        .is_none_or(Value::is_null));
}

#[test]
fn a_childs_calls_are_marked_as_the_childs() {
    let mut m = Mapper::new(PathBuf::from("/p"));
    let tag = ChildTag {
        name: "scout".into(),
        depth: 1,
        turn: 2,
    };
    let child = |event| AgentEvent::Child {
        call_id: Some("parent1".into()),
        child: tag.clone(),
        event: Box::new(event),
    };
    let call = child(tool_call("c1", "read", json!({"path": "x"})));
    let got = shapes(&mut m, call);
    assert_eq!(got[0]["toolCallId"], "parent1/scout.1/c1");
    assert_eq!(got[0]["title"], "[scout] read x");
    assert_eq!(
        got[0]["_meta"],
        json!({"mypi": {"child": {"name": "scout", "depth": 1, "turn": 2, "parentToolCallId": "parent1"}}})
    );
    let result = child(tool_result("c1", "read", "x", false));
    assert_eq!(
        shapes(&mut m, result)[0]["toolCallId"],
        "parent1/scout.1/c1"
    );
    // A child's streamed text is not the user's agent's answer.
    assert!(shapes(&mut m, child(AgentEvent::TextDelta { delta: "x".into() })).is_empty());
    let failed = shapes(
        &mut m,
        child(AgentEvent::Error {
            message: "boom".into(),
        }),
    );
    assert_eq!(
        failed[0]["content"]["text"],
        "\n[mypi · scout] failed: boom\n"
    );
}

#[test]
fn kinds_by_tool_name() {
    let kinds: Vec<_> = [
        "read",
        "edit",
        "write",
        "bash",
        "grep",
        "web_fetch",
        "mcp__x__thing",
        "subagent",
    ]
    .iter()
    .map(|n| serde_json::to_value(kind_of(n)).unwrap())
    .collect();
    assert_eq!(
        kinds,
        [
            json!("read"),
            json!("edit"),
            json!("edit"),
            json!("execute"),
            json!("search"),
            json!("fetch"),
            json!("other"),
            json!("think")
        ]
    );
}

#[test]
fn the_commands_are_offered_with_their_descriptions() {
    let table = crate::commands::CommandTable::with_builtins();
    let update = serde_json::to_value(commands(&table)).unwrap();
    assert_eq!(update["sessionUpdate"], "available_commands_update");
    let list = update["availableCommands"].as_array().unwrap();
    let help = list.iter().find(|c| c["name"] == "help").unwrap();
    assert!(
        help["description"].as_str().is_some_and(|d| !d.is_empty()),
        "{help}"
    );
    assert!(help.get("input").is_none_or(Value::is_null), "{help}");
    let names: Vec<&str> = list.iter().filter_map(|c| c["name"].as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
}

#[test]
fn a_turns_end_tells_how_full_the_context_is_and_a_runs_end_the_cost() {
    use crate::vocab::protocol::Usage;
    let mut m = Mapper::new(PathBuf::from("/p"));
    let turn = AgentEvent::TurnEnd {
        turn: 1,
        usage: Usage::tokens(1200, 300),
    };
    assert!(
        shapes(&mut m, turn.clone()).is_empty(),
        "no window, no update"
    );
    m.window = 200_000;
    assert_eq!(
        shapes(&mut m, turn),
        [json!({"sessionUpdate": "usage_update", "used": 1500, "size": 200000})]
    );
    let mut total = Usage::tokens(1200, 300);
    let fin = |total: Usage| AgentEvent::Final {
        text: String::new(),
        turns: 1,
        usage: total,
        usage_by: Vec::new(),
        session_usage: total,
    };
    assert!(shapes(&mut m, fin(total)).is_empty(), "no prices, no cost");
    total.cost_usd = Some(0.25);
    assert_eq!(
        shapes(&mut m, fin(total)),
        [
            json!({"sessionUpdate": "usage_update", "used": 1500, "size": 200000,
                "cost": {"amount": 0.25, "currency": "USD"}})
        ]
    );
}

#[test]
fn a_scripts_plan_is_the_sessions_plan_every_entry_each_time() {
    use crate::vocab::protocol::{PlanEntry, PlanPriority, PlanStatus};
    let mut m = Mapper::new(PathBuf::from("/p"));
    let entry = |content: &str, status, priority| PlanEntry {
        content: content.into(),
        status,
        priority,
    };
    let plan = AgentEvent::Plan {
        entries: vec![
            entry("read", PlanStatus::Completed, PlanPriority::Low),
            entry("fix", PlanStatus::InProgress, PlanPriority::High),
            entry("test", PlanStatus::Pending, PlanPriority::Medium),
        ],
    };
    assert_eq!(
        shapes(&mut m, plan),
        [json!({"sessionUpdate": "plan", "entries": [
            {"content": "read", "priority": "low", "status": "completed"},
            {"content": "fix", "priority": "high", "status": "in_progress"},
            {"content": "test", "priority": "medium", "status": "pending"}
        ]})]
    );
    let cleared = AgentEvent::Plan { entries: vec![] };
    assert_eq!(
        shapes(&mut m, cleared),
        [json!({"sessionUpdate": "plan", "entries": []})]
    );
}
