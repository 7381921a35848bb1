//! Legacy HTTP+SSE servers (`"type": "sse"`) through the real binary, against a small fake
//! on 127.0.0.1 (`mcp_legacy_sse.py`): `mypi mcp list` shows the server connected (with its
//! tool that needs tasks not offered), the model calls its tool, the entry's headers (one
//! from a command) reach every request, and an endpoint on another origin is refused before
//! anything is posted there. (server-everything's `sse` mode: `mcp_everything.rs`.)

use serde_json::json;

use crate::common::mcp::{config, HttpFake};
use crate::common::{FakeOpenAi, Mypi, Reply, TestDir};

#[test]
fn a_legacy_sse_server_connects_and_its_tool_is_called_with_the_entrys_headers() {
    let dir = TestDir::new();
    let http = HttpFake::legacy(&dir, "normal");
    let cfg = config(
        &dir,
        json!({"old": {"type": "sse", "url": http.sse_url(), "timeout": 20,
                       "headers": {"X-Key": "!printf k-from-a-command"}}}),
    );
    let out = Mypi::new(&dir)
        .args(["mcp", "list", "--mcp-config"])
        .arg(&cfg)
        .run();
    out.ok();
    assert!(
        out.stdout.contains(
            "old: connected (sse, protocol 2024-11-05, 2 tools (1 not offered: MCP tasks needed and not supported yet)"
        ),
        "{}",
        out.describe()
    );
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([("c1", "mcp__old__echo", json!({"text": "hi"}))]),
        Reply::text("done"),
    ]);
    let out = Mypi::new(&dir)
        .openai(&fake)
        .arg("--mcp-config")
        .arg(&cfg)
        .args(["--no-session", "--json", "-p", "go"])
        .run();
    out.ok();
    let results = crate::common::mcp::tool_results(&out.stdout);
    assert_eq!(
        results,
        [("legacy: hi".to_string(), false)],
        "{}",
        out.describe()
    );
    let log = http.log();
    assert!(
        log.contains("POST /messages tools/call k-from-a-command"),
        "{log}"
    );
    assert!(
        log.lines().all(|l| l.ends_with(" k-from-a-command")),
        "every request carries the header: {log}"
    );
}

#[test]
fn an_endpoint_on_another_origin_is_refused() {
    let dir = TestDir::new();
    let http = HttpFake::legacy(&dir, "foreign");
    let cfg = config(
        &dir,
        json!({"old": {"type": "sse", "url": http.sse_url(), "timeout": 20}}),
    );
    let out = Mypi::new(&dir)
        .args(["mcp", "list", "--mcp-config"])
        .arg(&cfg)
        .run();
    assert_eq!(out.code, 1, "{}", out.describe());
    assert!(
        out.stdout
            .contains("old: failed: the server named http://localhost:")
            && out
                .stdout
                .contains("another origin than its url's; refused"),
        "{}",
        out.describe()
    );
    let log = http.log();
    assert!(!log.contains("POST"), "{log}");
}
