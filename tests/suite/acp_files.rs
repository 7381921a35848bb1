//! The editor's files, driven from the binary the way an editor would: a client that offers
//! `fs.readTextFile` and `fs.writeTextFile` gets the built-in `read`, `write` and `edit`
//! as `fs/read_text_file` and `fs/write_text_file` (the model reads the buffer, not the
//! disk; writes land in the buffer and the disk is untouched); one that offers only reading
//! gets writes on disk.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::acp_client::AcpClient;
use super::ext_util::faux;
use crate::common::TestDir;

/// An editor's buffers: answers mypi's `fs/*` requests and keeps what it wrote.
fn editor(buffers: &mut HashMap<String, String>, request: &Value) -> Option<Value> {
    let path = request["params"]["path"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    match request["method"].as_str() {
        Some("fs/read_text_file") => {
            let text = buffers.get(&path).cloned().unwrap_or_default();
            Some(json!({"content": text}))
        }
        Some("fs/write_text_file") => {
            let content = request["params"]["content"].as_str().unwrap_or_default();
            buffers.insert(path, content.to_string());
            Some(json!({}))
        }
        _ => None,
    }
}

fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"tool_calls": [{"id": id, "name": name, "arguments": arguments}]})
}

fn result_text<'a>(updates: &'a [Value], id: &str) -> &'a str {
    updates
        .iter()
        .find(|u| u["toolCallId"] == id && (u["status"] == "completed" || u["status"] == "failed"))
        .and_then(|u| u["content"][0]["content"]["text"].as_str())
        .unwrap_or_else(|| panic!("no result of {id} in {updates:?}"))
}

#[test]
fn acp_read_write_and_edit_go_through_the_editors_buffers_when_it_offers_them() {
    let dir = TestDir::new();
    dir.write("a.txt", "on disk\n");
    let replies = [
        call("r1", "read", json!({"path": "a.txt"})),
        call(
            "e1",
            "edit",
            json!({"path": "a.txt", "old_text": "buffer", "new_text": "BUFFER"}),
        ),
        call(
            "w1",
            "write",
            json!({"path": "b.txt", "content": "new file\n"}),
        ),
        json!({"text": "done"}),
    ];
    let fs = json!({"fs": {"readTextFile": true, "writeTextFile": true}});
    let mut client = AcpClient::start_offering(faux(&dir, &replies).arg("--no-extensions"), fs);
    let session = client.new_session(dir.path());
    let a = dir.path().join("a.txt").display().to_string();
    let b = dir.path().join("b.txt").display().to_string();
    let mut buffers = HashMap::from([(a.clone(), "from the buffer\n".to_string())]);
    let id = client.prompt(&session, "go");
    let mut asked = Vec::new();
    let answer =
        client.response_answering(&json!(id), &mut asked, &mut |r| editor(&mut buffers, r));
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let updates = client.take_updates();
    assert_eq!(result_text(&updates, "r1"), "from the buffer\n");
    assert!(
        result_text(&updates, "e1").starts_with("edited a.txt"),
        "{updates:?}"
    );
    assert_eq!(buffers[&a], "from the BUFFER\n");
    assert_eq!(buffers[&b], "new file\n");
    assert!(asked
        .iter()
        .all(|r| r["params"]["sessionId"] == session.as_str()));
    // The disk is the editor's business: untouched.
    assert_eq!(dir.read("a.txt"), "on disk\n");
    assert!(!dir.path().join("b.txt").exists());
    // The editor is shown the diff of what was written in its buffer.
    let diff = updates
        .iter()
        .filter(|u| u["toolCallId"] == "e1")
        .filter_map(|u| u["content"].as_array())
        .flatten()
        .find(|c| c["type"] == "diff")
        .unwrap_or_else(|| panic!("no diff in {updates:?}"));
    assert_eq!(diff["oldText"], "from the buffer\n");
    assert_eq!(diff["newText"], "from the BUFFER\n");
    client.finish();
}

#[test]
fn acp_an_editor_that_only_reads_gets_writes_on_disk() {
    let dir = TestDir::new();
    dir.write("a.txt", "on disk\n");
    let replies = [
        call("r1", "read", json!({"path": "a.txt"})),
        call(
            "w1",
            "write",
            json!({"path": "b.txt", "content": "on disk too\n"}),
        ),
        json!({"text": "done"}),
    ];
    let fs = json!({"fs": {"readTextFile": true}});
    let mut client = AcpClient::start_offering(faux(&dir, &replies).arg("--no-extensions"), fs);
    let session = client.new_session(dir.path());
    let a = dir.path().join("a.txt").display().to_string();
    let mut buffers = HashMap::from([(a, "unsaved\n".to_string())]);
    let id = client.prompt(&session, "go");
    let mut asked = Vec::new();
    client.response_answering(&json!(id), &mut asked, &mut |r| editor(&mut buffers, r));
    let updates = client.take_updates();
    assert_eq!(result_text(&updates, "r1"), "unsaved\n");
    assert_eq!(dir.read("b.txt"), "on disk too\n");
    assert!(
        asked.iter().all(|r| r["method"] == "fs/read_text_file"),
        "{asked:?}"
    );
    client.finish();
}
