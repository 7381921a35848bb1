//! What MCP servers add to the agent, through the real binary: the resource tools offered
//! with a server's cached tools, agent names that collide across servers, the bad-schema
//! notice said once, and a server speaking a protocol version mypi does not support.

use serde_json::{json, Value};

use super::ext_util::faux;
use crate::common::TestDir;

/// The well-behaved test server's script (it has tools, resources and prompts).
fn server_script() -> String {
    format!("{}/tests/common/mcp_server.py", env!("CARGO_MANIFEST_DIR"))
}

/// The tool results of a `--json` run, in order.
fn tool_results(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "tool_result")
        .collect()
}

#[test]
fn resource_tools_come_with_the_cached_tools_of_a_server_still_starting() {
    let dir = TestDir::new();
    // Slow to start: the second run's first turn comes while it still connects.
    let slow = format!("sleep 2; exec python3 {}", server_script());
    dir.write(
        ".mcp.json",
        &json!({"mcpServers": {"t": {"command": "sh", "args": ["-c", slow]}}}).to_string(),
    );
    // The first run waits for it and keeps its lists in ~/.agents/cache/mcp/.
    faux(&dir, &[json!({"text": "hi"})])
        .args(["--no-session", "-p", "x"])
        .run()
        .ok();
    let out = faux(
        &dir,
        &[
            json!({"tool_calls": [{"name": "list_mcp_resources", "arguments": {}}]}),
            json!({"text": "done"}),
        ],
    )
    .args(["--no-session", "--json", "-p", "x"])
    .run();
    out.ok();
    assert!(
        !out.stdout.contains("waiting for MCP"),
        "from the cache: {}",
        out.describe()
    );
    let r = tool_results(&out.stdout);
    assert_eq!(r[0]["is_error"], false, "{}", out.describe());
    assert!(
        r[0]["content"]
            .as_str()
            .unwrap_or("")
            .contains("\"uri\": \"mem://note\""),
        "the listing waited for the server: {}",
        out.describe()
    );
}
