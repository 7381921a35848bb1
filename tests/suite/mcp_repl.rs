//! MCP on a REPL reading from a pipe, against the fake server (`tests/common/mcp_fake.py`):
//! elicitation asked field by field as the server's schema says, the time spent answering
//! not counted against the call's timeout, and progress that comes just before a call's
//! answer not printed after it.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::mcp::{config, received, stdio_entry};
use crate::common::{Running, TestDir};

use super::ext_util::faux;

const WAIT: Duration = Duration::from_secs(30);

/// A call of tool `tool` of server `srv` as one faux-model turn.
fn call(tool: &str, args: Value) -> Value {
    json!({"tool_calls": [{"name": format!("mcp__srv__{tool}"), "arguments": args}]})
}

/// A REPL (piped stdin) on the faux model playing `replies`, with the fake server `srv`
/// (`timeout` seconds), once the server is connected.
fn repl(dir: &TestDir, timeout: u64, replies: &[Value]) -> Running {
    let cfg = config(dir, json!({"srv": stdio_entry(dir, "normal", timeout)}));
    let mut m = faux(dir, replies)
        .timeout(Duration::from_secs(90))
        .arg("--mcp-config")
        .arg(cfg)
        .args(["--no-watch", "--no-session"])
        .spawn();
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        m.send_line("/mcp");
        if m.wait_for_line("srv: ", WAIT).contains("srv: connected") {
            return m;
        }
        assert!(std::time::Instant::now() < deadline, "never connected");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Progress sent just before a call's answer belongs to that call: it is never printed
/// after the answer as a notice of its own.
#[test]
fn progress_just_before_the_answer_is_not_a_notice_after_it() {
    let dir = TestDir::new();
    let mut replies: Vec<Value> = (0..8).map(|_| call("rush", json!({"steps": 5}))).collect();
    replies.push(json!({"text": "all done"}));
    let mut m = repl(&dir, 30, &replies);
    m.send_line("go");
    m.wait_for_line("all done", WAIT);
    m.send_line("/quit");
    let out = m.wait();
    let all = format!("{}\n{}", out.stdout, out.stderr);
    assert!(!all.contains("[mcp srv] progress"), "{}", out.describe());
    let calls = received(&dir)
        .iter()
        .filter(|r| r["method"] == "tools/call")
        .count();
    assert_eq!(calls, 8, "{}", out.describe());
}

/// A one-field elicitation schema.
fn city_schema() -> Value {
    json!({"type": "object", "properties": {"city": {"type": "string"}}})
}

/// The user's time answering an elicitation does not count against the call's timeout:
/// answered after 3 s with a timeout of 2 s, the call still gets its answer.
#[test]
fn time_answering_an_elicitation_is_not_the_calls_timeout() {
    let dir = TestDir::new();
    let ask = call(
        "elicit",
        json!({"message": "Where to?", "schema": city_schema()}),
    );
    let mut m = repl(&dir, 2, &[ask, json!({"text": "asked"})]);
    m.send_line("go");
    m.wait_for_line("Where to? — answer it?", WAIT);
    std::thread::sleep(Duration::from_secs(3));
    m.send_line("y");
    m.wait_for_line("  city", WAIT);
    m.send_line("Paris");
    m.wait_for_line("asked", WAIT);
    m.send_line("/quit");
    let out = m.wait();
    let answer = received(&dir)
        .into_iter()
        .find(|r| r["id"] == "ask-1")
        .unwrap_or_else(|| panic!("no answer: {}", out.describe()));
    assert_eq!(
        answer["result"],
        json!({"action": "accept", "content": {"city": "Paris"}}),
        "{}",
        out.describe()
    );
    assert!(
        out.stdout
            .contains(r#"✓ {"action": "accept", "content": {"city": "Paris"}}"#)
            && !out.stdout.contains("no answer within"),
        "{}",
        out.describe()
    );
}
