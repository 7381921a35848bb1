//! MCP status and configuration from the user's side, with the well-behaved test server
//! (tests/common/mcp_server.py): `/mcp` and `mypi mcp list` showing every server, `--no-mcp`
//! (for `/mcp` and for a script's `api.mcp.*`), the four lists asked for at once, and the trust
//! gate in front of a project's `.mcp.json`.

use serde_json::json;

use crate::common::mcp::{mcp_json, server_script};
use crate::common::{Mypi, TestDir};

#[test]
fn mcp_list_and_the_mcp_command_show_every_server() {
    let dir = TestDir::new();
    mcp_json(
        &dir,
        json!({"broken": {"command": "/no/such/program"}, "off": {"command": "x", "enabled": false},
               "old": {"type": "sse", "url": "http://127.0.0.1:1/sse"}}),
    );
    let out = Mypi::new(&dir).args(["mcp", "list"]).run();
    out.expect_code(1);
    let s = &out.stdout;
    assert!(
        s.contains("t: connected (stdio, protocol 2025-11-25, 8 tools, 1 resource, 1 prompt)"),
        "{}",
        out.describe()
    );
    assert!(
        s.contains("broken: failed: cannot start '/no/such/program'"),
        "{s}"
    );
    assert!(s.contains("off: disabled"), "{s}");
    // A legacy SSE server that is not there fails like any other.
    assert!(
        s.contains("old: failed: cannot open the event stream: ")
            && s.contains("Connection refused"),
        "{s}"
    );

    let out = Mypi::new(&dir).args(["--no-session", "-p", "/mcp"]).run();
    out.ok();
    assert!(out.stdout.contains("t: connected"), "{}", out.describe());
    assert!(out.stdout.contains("off: disabled"));

    let out = Mypi::new(&dir)
        .args(["--no-mcp", "--no-session", "-p", "/mcp"])
        .run();
    out.ok();
    assert!(
        out.stdout
            .contains("MCP is turned off by --no-mcp: no MCP server is started"),
        "{}",
        out.describe()
    );
}

/// A script's `api.mcp.*` says why there is no server: MCP turned off (and by what), or
/// none configured.
#[test]
fn api_mcp_says_mcp_is_off_or_unconfigured() {
    let dir = TestDir::new();
    dir.write(
        ".agents/extensions/ask.lua",
        "api.command('servers', function()\n\
           local ok, e = pcall(api.mcp.servers)\n\
           return 'said: ' .. tostring(e)\n\
         end)\n",
    );
    let run = |extra: &[&str]| {
        let out = Mypi::new(&dir)
            .args(extra)
            .args(["--no-session", "-p", "/servers"])
            .run();
        out.ok();
        out.stdout
    };
    let off = run(&["--no-mcp"]);
    assert!(
        off.contains(
            "said: api.mcp.servers: MCP is turned off by --no-mcp: no MCP server is started"
        ),
        "{off}"
    );
    let none = run(&[]);
    assert!(
        none.contains("said: api.mcp.servers: no MCP servers are configured"),
        "{none}"
    );
}

/// A start asks for the four lists at once: one round trip, not three. The server holds its
/// answers until it has seen all four kinds, so a client that waits for one list before it
/// asks for the next never connects (and fails at the entry's 5 s timeout).
#[test]
fn a_start_asks_for_all_four_lists_at_once() {
    let dir = TestDir::new();
    let servers = json!({"t": {"command": "python3", "args": [server_script()], "timeout": 5,
        "env": {"MCP_LISTS_AT_ONCE": "1"}}});
    dir.write(".mcp.json", &json!({"mcpServers": servers}).to_string());
    let out = Mypi::new(&dir).args(["mcp", "list"]).run();
    out.ok();
    assert!(
        out.stdout
            .contains("t: connected (stdio, protocol 2025-11-25, 8 tools, 1 resource, 1 prompt)"),
        "{}",
        out.describe()
    );
}

#[test]
fn an_untrusted_project_mcp_json_starts_nothing() {
    let dir = TestDir::new();
    mcp_json(&dir, json!({}));
    dir.untrust();
    let out = Mypi::new(&dir).args(["--no-session", "-p", "/mcp"]).run();
    out.ok();
    assert!(
        out.stderr.contains(".mcp.json (MCP servers) in"),
        "{}",
        out.describe()
    );
    assert!(out.stderr.contains("not loaded: the folder is not trusted"));
    assert!(out.stdout.contains("no MCP servers are configured"));
    assert!(!dir.exists("requests.jsonl"), "the server was started");
    // --trust, or the same file named with --mcp-config, is the user's own choice.
    let out = Mypi::new(&dir)
        .args(["--trust", "--no-session", "-p", "/mcp"])
        .run();
    assert!(out.stdout.contains("t: connected"), "{}", out.describe());
    let out = Mypi::new(&dir).args(["mcp", "list"]).run();
    assert!(
        out.stderr.contains("skipped: the folder is not trusted"),
        "{}",
        out.describe()
    );
}
