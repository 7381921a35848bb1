//! A stdio MCP server of the MCP bench's own, in Rust: it answers `initialize`, `tools/list`
//! (one `echo` tool) and `tools/call` of `echo` in microseconds, so that against it a call's
//! time is mostly the client's own (node's server-everything takes most of a call's time, and
//! its pace differs from one process to the next by as much as the clients differ). The bench
//! binary runs it when started with [`FLAG`].
// Test and benchmark code: system calls for fixtures and measures, and unwrap as a failed check.
#![allow(unsafe_code, clippy::unwrap_used)]

use std::io::{BufRead, Write};

use serde_json::{json, Value};

/// The argument that makes the bench binary this server.
pub const FLAG: &str = "--mcp-echo-server";

/// Serves stdin until it closes.
pub fn serve() {
    let stdin = std::io::stdin().lock();
    let mut out = std::io::stdout().lock();
    for line in stdin.lines() {
        let Ok(line) = line else { return };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(id) = message.get("id").cloned() else {
            continue; // a notification
        };
        let method = message["method"].as_str().unwrap_or_default();
        let reply = match method {
            "initialize" => json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "echo", "version": "0"},
            }}),
            "tools/list" => json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [{
                "name": "echo",
                "description": "Echoes back the input",
                "inputSchema": {"type": "object",
                    "properties": {"message": {"type": "string"}}, "required": ["message"]},
            }]}}),
            "tools/call" => {
                let said = message["params"]["arguments"]["message"]
                    .as_str()
                    .unwrap_or_default();
                json!({"jsonrpc": "2.0", "id": id, "result": {
                    "content": [{"type": "text", "text": format!("Echo: {said}")}],
                }})
            }
            "ping" => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
            _ => json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "method not found"}}),
        };
        let mut bytes = serde_json::to_vec(&reply).unwrap_or_default();
        bytes.push(b'\n');
        if out.write_all(&bytes).and_then(|()| out.flush()).is_err() {
            return;
        }
    }
}
