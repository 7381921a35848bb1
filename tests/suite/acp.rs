//! `mypi acp` driven as an editor drives it (issue 36): JSON-RPC lines on stdin and stdout
//! against a fake model server. Only protocol messages on stdout (every line is checked),
//! sessions that are the REPL's files, cancellation within a second, bad input answered
//! with an error while the connection goes on.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::acp_client::{agent_text, AcpClient};
use crate::common::{Mypi, Reply, TestDir};

#[test]
fn acp_initialize_says_what_mypi_offers() {
    let dir = TestDir::new();
    let (client, init) = AcpClient::start(Mypi::new(&dir).arg("--no-extensions"));
    let result = &init["result"];
    assert_eq!(result["protocolVersion"], 1, "{init}");
    assert_eq!(result["agentInfo"]["name"], "mypi");
    assert_eq!(result["agentInfo"]["version"], env!("CARGO_PKG_VERSION"));
    let caps = &result["agentCapabilities"];
    assert_eq!(caps["loadSession"], true, "{init}");
    assert_eq!(caps["promptCapabilities"]["embeddedContext"], true);
    assert_eq!(caps["promptCapabilities"]["image"], true);
    assert_eq!(caps["mcpCapabilities"]["http"], true);
    let out = client.finish();
    assert_eq!(out.code, 0, "{}", out.describe());
}

#[test]
fn acp_a_prompt_streams_the_answer_and_ends_the_turn() {
    let dir = TestDir::new();
    let replies = vec![Reply::text("Hello from the model")];
    let (mut client, fake, session) = AcpClient::with_session(&dir, replies);
    let (reason, updates) = client.run_prompt(&session, "hi there");
    assert_eq!(reason, "end_turn");
    assert_eq!(agent_text(&updates), "Hello from the model", "{updates:?}");
    let usage = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "usage_update")
        .unwrap_or_else(|| panic!("no usage_update in {updates:?}"));
    assert!(usage["used"].as_u64().unwrap_or(0) > 0, "{usage}");
    assert!(usage["size"].as_u64().unwrap_or(0) > 0, "{usage}");
    let sent = fake.requests();
    let body = sent[0].body.to_string();
    assert!(body.contains("hi there"), "{body}");
    client.finish().ok();
}

#[test]
fn acp_tool_calls_show_kind_location_and_the_files_diff() {
    let dir = TestDir::new();
    dir.write("notes.txt", "one\ntwo\n");
    let edit = json!({"path": "notes.txt", "old_text": "two", "new_text": "2"});
    let replies = vec![
        Reply::tool_calls([("call_1", "edit", edit)]),
        Reply::text("edited"),
    ];
    let (mut client, _fake, session) = AcpClient::with_session(&dir, replies);
    let (reason, updates) = client.run_prompt(&session, "edit it");
    assert_eq!(reason, "end_turn");
    let call = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call")
        .unwrap_or_else(|| panic!("no tool_call in {updates:?}"));
    let file = dir.path().join("notes.txt").display().to_string();
    assert_eq!(call["toolCallId"], "call_1");
    assert_eq!(call["kind"], "edit");
    assert_eq!(call["locations"][0]["path"], file.as_str());
    assert_eq!(call["rawInput"]["old_text"], "two");
    let done = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "completed")
        .unwrap_or_else(|| panic!("no completed call in {updates:?}"));
    let diff = done["content"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "diff"))
        .unwrap_or_else(|| panic!("no diff in {done}"));
    assert_eq!(
        diff,
        &json!({"type": "diff", "path": file, "oldText": "one\ntwo\n", "newText": "one\n2\n"})
    );
    assert_eq!(agent_text(&updates), "edited");
    client.finish().ok();
}

#[test]
fn acp_bad_input_is_answered_and_the_connection_goes_on() {
    let dir = TestDir::new();
    let (mut client, fake, session) =
        AcpClient::with_session(&dir, vec![Reply::text("still here")]);
    client.send_raw("{this is not json");
    let parse = client.response(&Value::Null);
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    let unknown = client.call("session/fly", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let nowhere = client.call(
        "session/prompt",
        json!({"sessionId": "nope", "prompt": [{"type": "text", "text": "x"}]}),
    );
    assert_eq!(nowhere["error"]["code"], -32002, "{nowhere}");
    let message = nowhere["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("no session nope"), "{nowhere}");
    // 50 MB of prompt: refused by size, with the request's id, unread.
    let big = json!({"jsonrpc": "2.0", "id": 99, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "x".repeat(50_000_000)}]}});
    client.send_raw(&big.to_string());
    let refused = client.response(&json!(99));
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("over the 16 MiB"), "{message}");
    // An 11 MiB image: under the line's limit, over the image's.
    let data = "A".repeat(11 * 1024 * 1024 / 3 * 4);
    let image = client.call(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "image", "data": data, "mimeType": "image/png"}]}),
    );
    assert_eq!(image["error"]["code"], -32602, "{image}");
    let message = image["error"]["message"].as_str().unwrap_or_default();
    assert_eq!(
        message, "an image: the image is 11.0 MiB, over the 10 MiB mypi takes",
        "{image}"
    );
    let (reason, updates) = client.run_prompt(&session, "are you there?");
    assert_eq!(reason, "end_turn");
    assert_eq!(agent_text(&updates), "still here");
    // The commands were offered once the session was open; a /command runs without a model.
    let offered = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "available_commands_update")
        .unwrap_or_else(|| panic!("no commands in {updates:?}"));
    let names = offered["availableCommands"].to_string();
    assert!(names.contains(r#""name":"help""#), "{offered}");
    let (reason, updates) = client.run_prompt(&session, "/help");
    assert_eq!(reason, "end_turn");
    assert!(agent_text(&updates).contains("/help"), "{updates:?}");
    assert_eq!(fake.request_count(), 1);
    client.finish().ok();
}

#[test]
fn acp_cancel_answers_cancelled_within_a_second_and_a_second_prompt_waits_its_turn() {
    let dir = TestDir::new();
    // The sleep carries a mark in its environment, to be found among the processes.
    let command = format!("MCP_MARK={} sleep 300", dir.path().display());
    let replies = vec![
        Reply::tool_calls([("call_1", "bash", json!({ "command": command }))]),
        Reply::text("after the cancel"),
    ];
    let (mut client, _fake, session) = AcpClient::with_session(&dir, replies);
    let first = client.prompt(&session, "run it");
    // Wait for the tool to start.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let m = client.next_message(deadline);
        if m["params"]["update"]["sessionUpdate"] == "tool_call" {
            break;
        }
    }
    let busy = client.call(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "me too"}]}),
    );
    assert_eq!(busy["error"]["code"], -32600, "{busy}");
    assert!(busy["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .contains("session/cancel"));
    while crate::common::mcp::marked(&dir).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the tool's process never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let asked = Instant::now();
    client.notify("session/cancel", json!({"sessionId": session}));
    let answer = client.response(&json!(first));
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "{:?}",
        asked.elapsed()
    );
    crate::common::mcp::assert_none_survive(&dir, "the cancelled tool's process");
    // The session takes the next prompt.
    let (reason, updates) = client.run_prompt(&session, "and now?");
    assert_eq!(reason, "end_turn");
    assert!(agent_text(&updates).ends_with("after the cancel"));
    let out = client.finish();
    assert_eq!(out.code, 0, "{}", out.describe());
}

#[test]
fn acp_sessions_are_the_repls_files_and_load_replays_them() {
    let dir = TestDir::new();
    let replies = ["first answer", "second answer", "third answer"].map(Reply::text);
    let (mut client, fake, session) = AcpClient::with_session(&dir, replies.to_vec());
    client.run_prompt(&session, "first question");
    // stdin closed: mypi exits.
    let out = client.finish();
    assert_eq!(out.code, 0, "{}", out.describe());

    let (mut client, _) = AcpClient::start(Mypi::new(&dir).openai(&fake).arg("--no-extensions"));
    client.take_updates();
    let loaded = client.call(
        "session/load",
        json!({"sessionId": session, "cwd": dir.path().display().to_string(), "mcpServers": []}),
    );
    assert!(loaded.get("result").is_some(), "{loaded}");
    let replay = client.take_updates();
    let kinds: Vec<&str> = replay
        .iter()
        .filter_map(|u| u["sessionUpdate"].as_str())
        .collect();
    assert_eq!(
        kinds,
        ["user_message_chunk", "agent_message_chunk"],
        "{replay:?}"
    );
    assert_eq!(replay[0]["content"]["text"], "first question");
    assert_eq!(agent_text(&replay), "first answer");
    client.run_prompt(&session, "second question");
    let history = fake.requests()[1].body.to_string();
    assert!(
        history.contains("first question") && history.contains("first answer"),
        "{history}"
    );
    client.finish().ok();

    // The REPL's --resume opens the editor's session.
    let out = Mypi::new(&dir)
        .openai(&fake)
        .args([
            "--no-extensions",
            "--resume",
            &session,
            "-p",
            "third question",
        ])
        .run();
    out.ok();
    let history = fake.requests()[2].body.to_string();
    assert!(history.contains("second answer"), "{history}");
}

#[test]
fn acp_stdout_is_the_protocols_even_when_a_tool_writes_to_it() {
    let dir = TestDir::new();
    let command = "echo to-stdout; echo to-dev-stdout > /dev/stdout; echo to-stderr >&2";
    let replies = vec![
        Reply::tool_calls([("call_1", "bash", json!({ "command": command }))]),
        Reply::text("done"),
    ];
    let (mut client, _fake, session) = AcpClient::with_session(&dir, replies);
    assert_eq!(client.run_prompt(&session, "go").0, "end_turn");
    let out = client.finish();
    for line in out.stdout.lines() {
        let message: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_eq!(message["jsonrpc"], "2.0");
    }
    // The tool's output reaches the editor inside the protocol.
    assert!(out.stdout.contains("to-stdout"), "{}", out.describe());
}

#[test]
fn acp_extensions_run_in_acp_mode_and_an_untrusted_projects_are_skipped_with_a_notice() {
    let dir = TestDir::new();
    super::ext_util::install(
        &dir,
        "gate.lua",
        r#"api.on("input", function(e, ctx)
             api.notify("mode " .. ctx.mode)
             if e.text == "forbidden" then return {block = true, reason = "not that"} end
           end)"#,
    );
    let fake = crate::common::FakeOpenAi::with_replies(vec![Reply::text("fine")]);
    let (mut client, _) = AcpClient::start(Mypi::new(&dir).openai(&fake));
    let session = client.new_session(dir.path());
    let (reason, updates) = client.run_prompt(&session, "forbidden");
    assert_eq!(reason, "refusal", "{updates:?}");
    let said = agent_text(&updates);
    assert!(said.contains("\n[mypi] [gate] mode acp\n"), "{updates:?}");
    assert!(said.contains("refused the prompt: not that"), "{updates:?}");
    let (reason, updates) = client.run_prompt(&session, "allowed");
    assert_eq!(reason, "end_turn");
    assert!(agent_text(&updates).ends_with("fine"), "{updates:?}");
    client.finish().ok();

    // Untrusted, the project's extension is skipped, and the editor is told after it has
    // the session's id.
    dir.untrust();
    let (mut client, _) = AcpClient::start(Mypi::new(&dir).arg("--provider").arg("faux"));
    let id = client.request(
        "session/new",
        json!({"cwd": dir.path().display().to_string(), "mcpServers": []}),
    );
    let answer = client.response(&json!(id));
    let session = answer["result"]["sessionId"].as_str().unwrap().to_string();
    let deadline = Instant::now() + Duration::from_secs(20);
    let notice = loop {
        let m = client.next_message(deadline);
        let text = m["params"]["update"]["content"]["text"]
            .as_str()
            .unwrap_or_default();
        if text.contains("not trusted") {
            break m;
        }
    };
    assert_eq!(notice["params"]["sessionId"], session.as_str(), "{notice}");
    let (_, updates) = client.run_prompt(&session, "forbidden");
    assert!(!agent_text(&updates).contains("mode acp"), "{updates:?}");
    client.finish().ok();
}

#[test]
fn acp_the_editors_mcp_servers_start_with_the_session() {
    let dir = TestDir::new();
    let replies = vec![
        Reply::tool_calls([(
            "call_1",
            "mcp__ed__echo",
            json!({"text": "from the editor"}),
        )]),
        Reply::text("done"),
    ];
    let fake = crate::common::FakeOpenAi::with_replies(replies);
    let (mut client, _) = AcpClient::start(Mypi::new(&dir).openai(&fake).arg("--no-extensions"));
    let server = json!({"name": "ed", "command": "python3",
        "args": [crate::common::mcp::server_script()], "env": []});
    let opened = client.call(
        "session/new",
        json!({"cwd": dir.path().display().to_string(), "mcpServers": [server]}),
    );
    let session = opened["result"]["sessionId"].as_str().unwrap().to_string();
    let (reason, updates) = client.run_prompt(&session, "echo something");
    assert_eq!(reason, "end_turn");
    let result = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == "call_1")
        .unwrap_or_else(|| panic!("no result in {updates:?}"));
    assert_eq!(result["status"], "completed", "{result}");
    assert_eq!(
        result["content"][0]["content"]["text"],
        "echo: from the editor"
    );
    let offered = fake.requests()[0].body.to_string();
    assert!(offered.contains("mcp__ed__echo"), "{offered}");
    client.finish().ok();
}

#[test]
fn acp_extensions_reload_on_save() {
    let dir = TestDir::new();
    let source =
        |word: &str| format!(r#"api.on("input", function(e) api.notify("version {word}") end)"#);
    super::ext_util::install(&dir, "v.lua", &source("one"));
    let fake =
        crate::common::FakeOpenAi::with_replies(vec![Reply::text("first"), Reply::text("second")]);
    let (mut client, _) = AcpClient::start(Mypi::new(&dir).openai(&fake));
    let session = client.new_session(dir.path());
    let (_, updates) = client.run_prompt(&session, "a");
    assert!(agent_text(&updates).contains("version one"), "{updates:?}");
    super::ext_util::install(&dir, "v.lua", &source("two"));
    // The reload's own notice reaches the editor once the watcher has seen the save.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let m = client.next_message(deadline);
        let text = m["params"]["update"]["content"]["text"]
            .as_str()
            .unwrap_or_default();
        if text.contains("reloaded") || text.contains("v.lua") {
            break;
        }
    }
    let (_, updates) = client.run_prompt(&session, "b");
    let said = agent_text(&updates);
    assert!(said.contains("version two"), "{updates:?}");
    assert!(!said.contains("version one"), "{updates:?}");
    client.finish().ok();
}

/// The model's streamed reasoning (`reasoning_content`) reaches the editor as
/// `agent_thought_chunk`s, apart from the answer's text.
#[test]
fn acp_the_models_reasoning_is_a_thought_chunk() {
    let dir = TestDir::new();
    let sse = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"Pondering.\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Answer.\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        "data: [DONE]\n\n"
    );
    let replies = vec![Reply::raw(200, "text/event-stream", sse)];
    let (mut client, _fake, session) = AcpClient::with_session(&dir, replies);
    let (reason, updates) = client.run_prompt(&session, "think");
    assert_eq!(reason, "end_turn");
    let thought: String = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_thought_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(thought, "Pondering.", "{updates:?}");
    assert_eq!(agent_text(&updates), "Answer.");
    client.finish().ok();
}
