//! `mypi acp` driven by a client nobody here wrote: the official ACP TypeScript SDK
//! (`@agentclientprotocol/sdk`, which checks every message against the protocol's schema) runs
//! `tests/fixtures/acp_sdk_client.mjs`: a prompt with a tool call, a cancelled prompt, the
//! session loaded on a second connection, and on a third that offers the editor's files a
//! prompt that reads an unsaved buffer and writes into one; a project extension asks before
//! every `write` (`session/request_permission`, which the client allows once). The SDK's folder comes from
//! `MYPI_TEST_ACP_SDK` and node from `MYPI_TEST_NODE` (else `node`), both set by `.ci/run`,
//! which installs them; the test is `#[ignore]`d with the reason, and `.ci/run` runs it with
//! `--ignored`.

use std::process::Command;

use serde_json::{json, Value};

use super::ext_util::faux_script;
use crate::common::{mypi_bin, Running, TestDir};

#[test]
#[ignore = "needs node and @agentclientprotocol/sdk: .ci/run installs them and runs this (cargo test -- --ignored with MYPI_TEST_ACP_SDK set)"]
fn acp_sdk_the_typescript_client_runs_a_session_cancels_loads_it_and_lends_its_files() {
    let sdk = std::env::var("MYPI_TEST_ACP_SDK")
        .expect("MYPI_TEST_ACP_SDK names the folder @agentclientprotocol/sdk is installed in");
    let node = std::env::var("MYPI_TEST_NODE").unwrap_or_else(|_| "node".into());
    let dir = TestDir::new();
    let script = faux_script(
        &dir,
        &[
            json!({"tool_calls": [{"name": "write", "arguments": {"path": "out.txt", "content": "hello\n"}}]}),
            json!({"text": "wrote it"}),
            json!({"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 300"}}]}),
            json!({"text": "never asked for"}),
        ],
    );
    super::ext_util::install(
        &dir,
        "ask.lua",
        r#"api.on("tool_call", function(e, ctx)
             if e.name == "write" and not ctx.ui.confirm("write " .. e.args.path .. "?") then
               return {block = true, reason = "not allowed"}
             end
           end)"#,
    );
    let fs_script = dir.write(
        "faux-fs.jsonl",
        &[
            json!({"tool_calls": [{"id": "r1", "name": "read", "arguments": {"path": "notes.txt"}}]}),
            json!({"tool_calls": [{"id": "w1", "name": "write", "arguments": {"path": "notes.txt", "content": "edited notes
"}}]}),
            json!({"text": "done"}),
        ]
        .iter()
        .map(|r| format!("{r}
"))
        .collect::<String>(),
    );
    dir.write(
        "notes.txt",
        "saved notes
",
    );
    let client = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/acp_sdk_client.mjs"
    );
    let mut cmd = Command::new(node);
    cmd.arg(client)
        .arg(&sdk)
        .arg(mypi_bin())
        .arg(dir.path())
        .args(["--provider", "faux", "--faux-script"])
        .arg(script)
        .env("FS_FAUX_SCRIPT", &fs_script)
        .env("HOME", dir.home())
        .stdin(std::process::Stdio::null());
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("MYPI_") {
            cmd.env_remove(k);
        }
    }
    std::fs::create_dir_all(dir.home()).unwrap();
    let out = Running::start(cmd, std::time::Duration::from_secs(60)).wait();
    assert_eq!(out.code, 0, "{}", out.describe());
    let seen: Value = serde_json::from_str(out.stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {}", out.describe()));
    let first = &seen["first"];
    assert_eq!(first["initialized"]["agentInfo"]["name"], "mypi", "{seen}");
    assert_eq!(first["stops"], json!(["end_turn", "cancelled"]), "{seen}");
    assert!(
        first["cancelMs"].as_u64().unwrap_or(u64::MAX) < 1000,
        "{seen}"
    );
    let updates = seen["firstUpdates"].as_array().unwrap();
    let diff = updates
        .iter()
        .filter_map(|u| u["content"].as_array())
        .flatten()
        .find(|c| c["type"] == "diff")
        .unwrap_or_else(|| panic!("no diff in {seen}"));
    assert_eq!(diff["newText"], "hello\n");
    assert_eq!(dir.read("out.txt"), "hello\n");
    let replayed = seen["replayed"].as_array().unwrap();
    assert_eq!(replayed[0]["sessionUpdate"], "user_message_chunk", "{seen}");
    assert_eq!(replayed[0]["content"]["text"], "write the file");
    assert_eq!(seen["firstExit"], 0);
    assert_eq!(seen["secondExit"], 0);

    // The third connection lent its files: the model read the unsaved buffer, and its write
    // (allowed by the client) landed in the buffer, not on disk.
    assert_eq!(seen["third"]["stop"], "end_turn", "{seen}");
    let third = seen["thirdUpdates"].as_array().unwrap();
    let read = third
        .iter()
        .find(|u| u["toolCallId"] == "r1" && u["status"] == "completed")
        .unwrap_or_else(|| panic!("no read result in {seen}"));
    assert_eq!(
        read["content"][0]["content"]["text"],
        "unsaved notes
"
    );
    let notes = dir.path().join("notes.txt").display().to_string();
    assert_eq!(
        seen["buffers"][&notes],
        "edited notes
",
        "{seen}"
    );
    assert_eq!(
        dir.read("notes.txt"),
        "saved notes
"
    );
    assert_eq!(seen["thirdExit"], 0);
    let permissions: Vec<&Value> = seen["asked"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["method"] == "permission")
        .collect();
    // One for each write: the first connection's and the third's.
    assert_eq!(permissions.len(), 2, "{seen}");
    let asked = &permissions[1]["params"];
    assert_eq!(asked["toolCall"]["toolCallId"], "w1", "{seen}");
    assert_eq!(
        asked["toolCall"]["title"], "[ask] write notes.txt?",
        "{seen}"
    );
}
