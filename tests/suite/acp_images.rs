//! Images in an editor's prompt (issue 36): an `image` block and an embedded resource whose
//! blob is an image reach the model as images (OpenAI's `image_url` parts here, Anthropic's
//! image blocks after `--resume`), stay in the session file, and come back on
//! `session/load` as `image` user message chunks (and counted in a resumed session's recap).

use serde_json::{json, Value};

use super::acp_client::{agent_text, AcpClient};
use crate::common::{FakeAnthropic, Mypi, Reply, TestDir};

/// A 1x1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==";

/// The last user message of a recorded request body.
fn last_user(body: &Value) -> Value {
    body["messages"]
        .as_array()
        .and_then(|ms| ms.iter().rev().find(|m| m["role"] == "user"))
        .cloned()
        .unwrap_or_else(|| panic!("no user message in {body}"))
}

#[test]
fn acp_images_reach_the_model_and_survive_load_and_resume() {
    let dir = TestDir::new();
    let replies = vec![Reply::text("a red dot"), Reply::text("still a dot")];
    let (mut client, fake, session) = AcpClient::with_session(&dir, replies);
    let shot = format!("file://{}/shot.png", dir.path().display());
    let id = client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [
            {"type": "text", "text": "what is in this and "},
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": shot, "blob": PNG, "mimeType": "image/png"}},
        ]}),
    );
    let answer = client.response(&json!(id));
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(agent_text(&client.take_updates()), "a red dot");
    let url = format!("data:image/png;base64,{PNG}");
    let part = json!({"type": "image_url", "image_url": {"url": url}});
    assert_eq!(
        last_user(&fake.requests()[0].body)["content"],
        json!([{"type": "text", "text": "what is in this and `shot.png`"}, part, part])
    );
    let out = client.finish();
    assert_eq!(out.code, 0, "{}", out.describe());

    // session/load tells the images again, after the text.
    let (mut client, _) = AcpClient::start(Mypi::new(&dir).openai(&fake).arg("--no-extensions"));
    let loaded = client.call(
        "session/load",
        json!({"sessionId": session, "cwd": dir.path().display().to_string(), "mcpServers": []}),
    );
    assert!(loaded.get("result").is_some(), "{loaded}");
    let replay = client.take_updates();
    let user: Vec<&Value> = replay
        .iter()
        .filter(|u| u["sessionUpdate"] == "user_message_chunk")
        .map(|u| &u["content"])
        .collect();
    let image = json!({"type": "image", "data": PNG, "mimeType": "image/png"});
    assert_eq!(
        user,
        [
            &json!({"type": "text", "text": "what is in this and `shot.png`"}),
            &image,
            &image
        ],
        "{replay:?}"
    );
    client.finish().ok();

    // --resume (print mode, on Anthropic's API this time) sends them again.
    let anthropic = FakeAnthropic::with_replies(vec![Reply::text("yes")]);
    Mypi::new(&dir)
        .anthropic(&anthropic)
        .args(["--no-extensions", "--resume", &session, "-p", "and now?"])
        .run()
        .ok();
    let block = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}});
    let mut first = anthropic.requests()[0].body["messages"][0].clone();
    // The turn carries a prompt-cache breakpoint: not what this test is about.
    for block in first["content"].as_array_mut().unwrap() {
        block.as_object_mut().unwrap().remove("cache_control");
    }
    assert_eq!(
        first["content"],
        json!([block, block, {"type": "text", "text": "what is in this and `shot.png`"}]),
        "{first}"
    );
    // The REPL's recap of a resumed session counts them.
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "--no-extensions", "--no-session"])
        .args(["-p", &format!("/resume {session}")])
        .run();
    out.ok();
    assert!(
        out.stdout
            .contains("  > what is in this and `shot.png` [+2 images]"),
        "{}",
        out.describe()
    );
}

#[test]
fn acp_the_faux_model_echoes_the_images_it_got() {
    let dir = TestDir::new();
    let (mut client, _) =
        AcpClient::start(Mypi::new(&dir).args(["--provider", "faux", "--no-extensions"]));
    let session = client.new_session(dir.path());
    let id = client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [
            {"type": "image", "data": PNG, "mimeType": "image/png"},
        ]}),
    );
    let answer = client.response(&json!(id));
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(
        agent_text(&client.take_updates()),
        "[image image/png, 70 bytes]"
    );
    client.finish().ok();
}
