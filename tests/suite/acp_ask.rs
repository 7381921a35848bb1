//! What mypi asks the editor, driven from the binary the way an editor would: a script's
//! `ctx.ui.confirm` and `ctx.ui.select` as `session/request_permission` (answers, "always"
//! answers kept, a question nobody answers cancelled with the prompt), `ctx.ui.input` with no
//! request to make, and `ctx.ui.set_plan` as a `plan` update.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::acp_client::{agent_text, AcpClient};
use super::ext_util::{faux, install};
use crate::common::TestDir;

const ASKING: &str = r#"
api.tool{name = "deploy", description = "deploy", execute = function(args, ctx)
  return ctx.ui.confirm("deploy now?") and "allowed" or "refused"
end}
api.tool{name = "pick", description = "pick", execute = function(args, ctx)
  return "picked " .. tostring(ctx.ui.select("which colour?", {"red", "green"}))
end}
api.on("tool_call", function(e, ctx)
  if e.name == "bash" and not ctx.ui.confirm("run " .. e.args.command .. "?") then
    return {block = true, reason = "not now"}
  end
end)
api.command("hold", function(args, ctx) return "held: " .. tostring(ctx.ui.confirm("proceed?")) end)
api.command("name", function(args, ctx)
  return "name: " .. tostring(ctx.ui.input("Name?", {default = "anon"}))
end)
api.command("plan", function(args, ctx)
  ctx.ui.set_plan({
    {content = "read the code", status = "completed"},
    {content = "write the tests", status = "in_progress", priority = "high"},
  })
  return "planned"
end)
"#;

fn call(id: &str, name: &str) -> Value {
    json!({"tool_calls": [{"id": id, "name": name, "arguments": {}}]})
}

/// A session of `mypi acp` on the faux model with `replies`, the asking extension installed.
fn session(dir: &TestDir, replies: &[Value]) -> (AcpClient, String) {
    install(dir, "ask.lua", ASKING);
    let mut client = AcpClient::start_offering(faux(dir, replies), json!({}));
    let session = client.new_session(dir.path());
    (client, session)
}

/// Runs a prompt, answering each permission request with option `choice` (none: the
/// request is left unanswered); the stop reason, the updates and the requests.
fn prompt_answering(
    client: &mut AcpClient,
    session: &str,
    text: &str,
    choice: Option<&str>,
) -> (String, Vec<Value>, Vec<Value>) {
    let id = client.prompt(session, text);
    let mut asked = Vec::new();
    let mut answer =
        |_: &Value| choice.map(|c| json!({"outcome": {"outcome": "selected", "optionId": c}}));
    let answer = client.response_answering(&json!(id), &mut asked, &mut answer);
    let reason = answer["result"]["stopReason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (reason, client.take_updates(), asked)
}

/// The text of the result of tool call `id` among `updates`.
fn result_of(updates: &[Value], id: &str) -> String {
    let done = updates
        .iter()
        .find(|u| u["toolCallId"] == id && u["status"] == "completed")
        .unwrap_or_else(|| panic!("no result of {id} in {updates:?}"));
    done["content"][0]["content"]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn acp_confirm_asks_for_permission_and_always_answers_are_kept_for_the_session() {
    let dir = TestDir::new();
    let replies = [
        call("d1", "deploy"),
        json!({"text": "one"}),
        call("d2", "deploy"),
        json!({"text": "two"}),
        call("d3", "deploy"),
        json!({"text": "three"}),
        call("d4", "deploy"),
        json!({"text": "four"}),
    ];
    let (mut client, session) = session(&dir, &replies);

    let (reason, updates, asked) =
        prompt_answering(&mut client, &session, "go", Some("allow_once"));
    assert_eq!(reason, "end_turn");
    assert_eq!(asked.len(), 1, "{asked:?}");
    let params = &asked[0]["params"];
    assert_eq!(asked[0]["method"], "session/request_permission");
    assert_eq!(params["sessionId"], session.as_str());
    // The question is about the running call, which the editor knows.
    assert_eq!(params["toolCall"]["toolCallId"], "d1", "{params}");
    let options: Vec<(&str, &str)> = params["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["optionId"].as_str().unwrap(), o["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        options,
        [
            ("allow_once", "allow_once"),
            ("allow_always", "allow_always"),
            ("reject_once", "reject_once"),
            ("reject_always", "reject_always")
        ]
    );
    assert_eq!(result_of(&updates, "d1"), "allowed");

    let (_, updates, asked) = prompt_answering(&mut client, &session, "go", Some("reject_once"));
    assert_eq!(asked.len(), 1);
    assert_eq!(result_of(&updates, "d2"), "refused");

    let (_, updates, asked) = prompt_answering(&mut client, &session, "go", Some("allow_always"));
    assert_eq!(asked.len(), 1);
    assert_eq!(result_of(&updates, "d3"), "allowed");

    // Always allowed: the same question is not asked again.
    let (_, updates, asked) = prompt_answering(&mut client, &session, "go", Some("reject_once"));
    assert!(asked.is_empty(), "{asked:?}");
    assert_eq!(result_of(&updates, "d4"), "allowed");
    client.finish();
}

#[test]
fn acp_select_offers_the_choices_and_outside_a_call_the_question_is_a_call_of_its_own() {
    let dir = TestDir::new();
    let bash =
        json!({"tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": "echo hi"}}]});
    let replies = [
        call("p1", "pick"),
        json!({"text": "done"}),
        bash,
        json!({"text": "ok"}),
    ];
    let (mut client, session) = session(&dir, &replies);
    let (_, updates, asked) = prompt_answering(&mut client, &session, "pick", Some("1"));
    let params = &asked[0]["params"];
    assert_eq!(params["toolCall"]["toolCallId"], "p1");
    let options: Vec<(&str, &str)> = params["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["name"].as_str().unwrap(), o["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(options, [("red", "allow_once"), ("green", "allow_once")]);
    assert_eq!(result_of(&updates, "p1"), "picked green");

    // A `tool_call` handler's question is about the call it decides on, which the editor
    // has not heard of yet: its id, and the question as its title.
    let (_, updates, asked) = prompt_answering(&mut client, &session, "run", Some("reject_once"));
    let call = &asked[0]["params"]["toolCall"];
    assert_eq!(call["toolCallId"], "b1", "{call}");
    assert_eq!(call["title"], "[ask] run echo hi?");
    let failed = updates
        .iter()
        .find(|u| u["toolCallId"] == "b1" && u["status"] == "failed")
        .unwrap_or_else(|| panic!("no failed b1 in {updates:?}"));
    assert_eq!(failed["content"][0]["content"]["text"], "blocked: not now");

    // A command asks outside any tool call: a call of its own, titled with the question.
    let (reason, updates, asked) =
        prompt_answering(&mut client, &session, "/hold", Some("reject_once"));
    assert_eq!(reason, "end_turn");
    let call = &asked[0]["params"]["toolCall"];
    assert_eq!(call["toolCallId"], "ask-1", "{call}");
    assert_eq!(call["title"], "[ask] proceed?");
    assert_eq!(call["kind"], "other");
    assert!(agent_text(&updates).contains("held: false"), "{updates:?}");
    assert!(
        updates
            .iter()
            .any(|u| u["toolCallId"] == "ask-1" && u["status"] == "completed"),
        "{updates:?}"
    );
    client.finish();
}

#[test]
fn acp_a_question_nobody_answers_is_cancelled_with_the_prompt_within_a_second() {
    let dir = TestDir::new();
    let replies = [
        call("d1", "deploy"),
        json!({"text": "never"}),
        json!({"text": "next"}),
    ];
    let (mut client, session) = session(&dir, &replies);
    let id = client.prompt(&session, "go");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let m = client.next_message(deadline);
        if m["method"] == "session/request_permission" {
            break;
        }
    }
    let asked = Instant::now();
    client.notify("session/cancel", json!({"sessionId": session}));
    let answer = client.response(&json!(id));
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "{:?}",
        asked.elapsed()
    );
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    // The script got no, and the session goes on.
    let updates = client.take_updates();
    if let Some(done) = updates
        .iter()
        .find(|u| u["toolCallId"] == "d1" && u["status"] == "completed")
    {
        assert_eq!(done["content"][0]["content"]["text"], "refused");
    }
    let (reason, _) = client.run_prompt(&session, "again");
    assert_eq!(reason, "end_turn");
    client.finish();
}

#[test]
fn acp_input_gets_its_default_with_a_notice_and_a_plan_is_an_update() {
    let dir = TestDir::new();
    let (mut client, session) = session(&dir, &[]);
    let (_, updates, asked) = prompt_answering(&mut client, &session, "/name", None);
    assert!(asked.is_empty(), "{asked:?}");
    let said = agent_text(&updates);
    assert!(said.contains("name: anon"), "{said}");
    assert!(said.contains("cannot be asked for text"), "{said}");

    let (_, updates, _) = prompt_answering(&mut client, &session, "/plan", None);
    let plan = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "plan")
        .unwrap_or_else(|| panic!("no plan in {updates:?}"));
    assert_eq!(
        plan["entries"],
        json!([
            {"content": "read the code", "status": "completed", "priority": "medium"},
            {"content": "write the tests", "status": "in_progress", "priority": "high"}
        ])
    );
    client.finish();
}

#[test]
fn acp_an_mcp_servers_elicitation_is_declined_and_the_editor_told() {
    use crate::common::mcp::{config, received, stdio_entry};
    let dir = TestDir::new();
    let schema = json!({"type": "object", "properties": {"city": {"type": "string"}}});
    let ask = json!({"tool_calls": [{"id": "m1", "name": "mcp__srv__elicit",
        "arguments": {"message": "Where to?", "schema": schema}}]});
    let cfg = config(&dir, json!({"srv": stdio_entry(&dir, "normal", 30)}));
    let mypi = faux(&dir, &[ask, json!({"text": "asked"})])
        .arg("--no-extensions")
        .arg("--mcp-config")
        .arg(cfg);
    let mut client = AcpClient::start_offering(mypi, json!({}));
    let session = client.new_session(dir.path());
    let (reason, updates, asked) = prompt_answering(&mut client, &session, "go", None);
    assert_eq!(reason, "end_turn");
    assert!(asked.is_empty(), "{asked:?}");
    let said = agent_text(&updates);
    assert!(
        said.contains("the MCP server srv asked for input (Where to?)"),
        "{said}"
    );
    assert!(said.contains("declined"), "{said}");
    let answer = received(&dir)
        .into_iter()
        .find(|r| r["id"] == "ask-1")
        .unwrap_or_else(|| panic!("no answer to the elicitation: {updates:?}"));
    assert_eq!(answer["result"]["action"], "decline", "{answer}");
    client.finish();
}

#[test]
fn acp_a_settings_hooks_ask_is_the_editors_permission_request() {
    use super::claude_hooks::{command, project};
    let hook = r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "ASK-REASON"}}'"#;
    let Some(dir) = project(json!({
        "PreToolUse": [{"matcher": "Bash", "hooks": [command(hook)]}]
    })) else {
        return;
    };
    let bash = |id: &str, file: &str| {
        json!({"tool_calls": [{"id": id, "name": "bash",
            "arguments": {"command": format!("echo RAN > {file}")}}]})
    };
    let replies = [
        bash("b1", "one.txt"),
        json!({"text": "a"}),
        bash("b2", "two.txt"),
        json!({"text": "b"}),
    ];
    let mut client =
        AcpClient::start_offering(faux(&dir, &replies).arg("--no-extensions"), json!({}));
    let session = client.new_session(dir.path());
    let (_, _, asked) = prompt_answering(&mut client, &session, "go", Some("allow_once"));
    let call = &asked[0]["params"]["toolCall"];
    assert_eq!(call["toolCallId"], "b1", "{asked:?}");
    assert_eq!(
        call["title"],
        "A hook asks before this Bash call (ASK-REASON). Run it?"
    );
    assert!(dir.exists("one.txt"));
    let (_, _, asked) = prompt_answering(&mut client, &session, "go", Some("reject_once"));
    assert_eq!(asked.len(), 1);
    assert!(!dir.exists("two.txt"));
    client.finish();
}
