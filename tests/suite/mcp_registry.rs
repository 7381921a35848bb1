//! What MCP servers add to the agent, through the real binary: the resource tools offered
//! with a server's cached tools, agent names that collide across servers, the bad-schema
//! notice said once, and a server speaking a protocol version mypi does not support.

use serde_json::{json, Value};

use super::ext_util::faux;
use super::wire::tool_names;
use crate::common::mcp::{config, settled_line, slow_test_server, stdio_entry};
use crate::common::{FakeOpenAi, Mypi, Reply, TestDir};

const WAIT: std::time::Duration = std::time::Duration::from_secs(30);

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
    slow_test_server(&dir);
    let listing = || {
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
        out
    };
    // Never seen: the prompt goes on without it, the resource tools are not offered yet,
    // and a call of one waits for the server; its lists are kept in ~/.agents/cache/mcp/.
    let first = listing();
    assert!(
        first.stdout.contains("not waiting for MCP server t")
            && first.stdout.contains("to call 'list_mcp_resources'"),
        "{}",
        first.describe()
    );
    // Seen before: the resource tools are offered from the cache; the listing waits for it.
    let second = listing();
    assert!(
        !second.stdout.contains("not waiting for")
            && !second.stdout.contains("to call 'list_mcp_resources'")
            && second
                .stdout
                .contains("waiting for MCP server t (still connecting"),
        "from the cache: {}",
        second.describe()
    );
}

/// `mypi mcp list` keeps what it listed: a prompt after it finds the slow server's tools in
/// the cache and does not go on without them.
#[test]
fn mcp_list_keeps_the_lists_for_the_next_prompt() {
    let dir = TestDir::new();
    slow_test_server(&dir);
    let list = Mypi::new(&dir).args(["--trust", "mcp", "list"]).run();
    list.ok();
    assert!(list.stdout.contains("t: connected"), "{}", list.describe());
    let out = faux(
        &dir,
        &[
            json!({"tool_calls": [{"name": "mcp__t__echo", "arguments": {"text": "hi"}}]}),
            json!({"text": "done"}),
        ],
    )
    .args(["--no-session", "--json", "-p", "x"])
    .run();
    out.ok();
    assert!(
        !out.stdout.contains("not waiting for"),
        "{}",
        out.describe()
    );
    assert_eq!(tool_results(&out.stdout)[0]["content"], "echo: hi");
}

/// A server seen before that fails at start (its program is gone from `PATH`) has its
/// cached tools withdrawn: the model is not offered tools of a server that is not there.
#[test]
fn the_cached_tools_of_a_server_that_fails_at_start_are_withdrawn() {
    let dir = TestDir::new();
    let fake = crate::common::mcp::fake_py().display().to_string();
    let program = dir.write(
        "bin/myserver",
        &format!("#!/bin/sh\nexec python3 '{fake}' normal\n"),
    );
    std::fs::set_permissions(
        &program,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let cfg = config(&dir, json!({"srv": {"command": "myserver"}}));
    let path = std::env::var("PATH").unwrap_or_default();
    let list = Mypi::new(&dir)
        .env("PATH", format!("{}:{path}", dir.join("bin").display()))
        .arg("--mcp-config")
        .arg(&cfg)
        .args(["mcp", "list"])
        .run();
    list.ok();
    assert!(
        list.stdout.contains("srv: connected"),
        "{}",
        list.describe()
    );
    for round in 0..3 {
        let openai = FakeOpenAi::with_replies(vec![Reply::text("hello")]);
        let mut m = Mypi::new(&dir)
            .openai(&openai)
            .arg("--mcp-config")
            .arg(&cfg)
            .args(["--no-session", "--no-watch"])
            .spawn();
        let line = settled_line(&mut m, "srv", WAIT);
        assert!(
            line.contains("srv: failed: cannot start"),
            "round {round}: {line}"
        );
        m.send_line("hi");
        m.wait_for_line("hello", WAIT);
        m.send_line("/quit");
        m.wait();
        let offered: Vec<String> = tool_names(&openai.requests()[0])
            .into_iter()
            .filter(|t| t.starts_with("mcp__srv__"))
            .collect();
        assert!(offered.is_empty(), "round {round}: {offered:?}");
    }
}

#[test]
fn a_schema_that_cannot_be_compiled_is_said_once() {
    let dir = TestDir::new();
    let bad = json!([{"name": "odd", "description": "A bad schema.",
        "inputSchema": {"type": "object", "properties": {"x": {"pattern": "(unclosed"}}}}]);
    let mut srv = stdio_entry(&dir, "normal", 20);
    srv["env"] = json!({"FAKE_TOOLS": bad.to_string()});
    let cfg = config(&dir, json!({"srv": srv}));
    let echo = json!({"tool_calls": [{"name": "mcp__srv__echo", "arguments": {"text": "up"}}]});
    let run = || {
        let out = faux(&dir, &[echo.clone(), json!({"text": "done"})])
            .arg("--mcp-config")
            .arg(&cfg)
            .args(["--no-session", "--json", "-p", "x"])
            .run();
        out.ok();
        assert_eq!(
            tool_results(&out.stdout)[0]["content"],
            "up",
            "{}",
            out.describe()
        );
        out
    };
    let notice = "[mcp srv] the schema of tool 'odd' cannot be compiled here";
    // The first run connects; the second offers the cached tools, then connects.
    for out in [run(), run()] {
        // With --json, notices are events on stdout.
        let all = format!("{}{}", out.stdout, out.stderr);
        assert_eq!(
            all.matches(notice).count(),
            1,
            "one notice: {}",
            out.describe()
        );
    }
}

#[test]
fn a_protocol_version_mypi_does_not_speak_fails_the_connection() {
    let dir = TestDir::new();
    let versions = [
        "1999-01-01",
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
    ];
    let mut servers = serde_json::Map::new();
    for v in versions {
        let mut srv = stdio_entry(&dir, "normal", 20);
        srv["env"] = json!({"FAKE_VERSION": v});
        servers.insert(format!("v{}", v.replace('-', "")), srv);
    }
    let cfg = config(&dir, Value::Object(servers));
    let out = Mypi::new(&dir)
        .args(["mcp", "list", "--mcp-config"])
        .arg(&cfg)
        .run();
    out.expect_code(1);
    let s = &out.stdout;
    assert!(
        s.contains(
            "v19990101: failed: the server answered with MCP protocol version 1999-01-01, \
             which mypi does not support (it supports 2024-11-05, 2025-03-26, 2025-06-18, \
             2025-11-25, 2026-07-28)"
        ),
        "{}",
        out.describe()
    );
    for v in &versions[1..] {
        let line = format!("v{}: connected (stdio, protocol {v},", v.replace('-', ""));
        assert!(s.contains(&line), "{line}: {}", out.describe());
    }
}

/// The agent name a colliding tool gets: `mcp__<server>__<tool>` sanitised, `_`, and the
/// FNV-1a (32 bits) of the server's and the tool's names, joined by 0xff.
fn hashed(server: &str, tool: &str) -> String {
    let mut h: u32 = 0x811c_9dc5;
    let mut eat = |b: u8| {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    };
    server.bytes().for_each(&mut eat);
    eat(0xff);
    tool.bytes().for_each(&mut eat);
    let clean = |t: &str| t.replace(|c: char| !c.is_ascii_alphanumeric() && c != '_', "_");
    format!("mcp__{}__{}_{h:08x}", clean(server), clean(tool))
}

/// The `tools/call` requests a fake server logged to `log`, as (tool, arguments), sorted
/// (calls of one turn run together).
fn calls(log: &std::path::Path) -> Vec<(String, Value)> {
    let mut calls: Vec<(String, Value)> = std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["method"] == "tools/call")
        .map(|m| {
            let p = &m["params"];
            (
                p["name"].as_str().unwrap_or("").to_string(),
                p["arguments"].clone(),
            )
        })
        .collect();
    calls.sort_by_key(|c| c.0.clone());
    calls
}

#[test]
fn names_that_two_servers_could_give_get_a_suffix_and_reach_their_own_server() {
    let dir = TestDir::new();
    let entry = |log: &str, tools: Value| {
        let mut e = stdio_entry(&dir, "normal", 20);
        e["args"][2] = json!(dir.join(log).display().to_string());
        e["env"] = json!({"FAKE_TOOLS": tools.to_string()});
        e
    };
    let extra = |name: &str| json!([{"name": name, "inputSchema": {"type": "object"}}]);
    let cfg = config(
        &dir,
        json!({
            "p.q": entry("dot.log", json!([])),
            "p_q": entry("under.log", json!([])),
            "a": entry("a.log", extra("b__c")),
            "a__b": entry("ab.log", extra("c")),
        }),
    );
    let call = |name: String, text: &str| json!({"name": name, "arguments": {"text": text}});
    let turns = [
        json!({"tool_calls": [
            call(hashed("p.q", "echo"), "dot"),
            call(hashed("p_q", "echo"), "under"),
            call(hashed("a", "b__c"), "a"),
            call(hashed("a__b", "c"), "ab"),
            call("mcp__a__echo".into(), "plain"),
        ]}),
        json!({"tool_calls": [call("mcp__p_q__echo".into(), "either")]}),
        json!({"text": "done"}),
    ];
    let out = faux(&dir, &turns)
        .arg("--mcp-config")
        .arg(&cfg)
        .args(["--no-session", "--json", "-p", "x"])
        .run();
    out.ok();
    let r = tool_results(&out.stdout);
    assert_eq!(r.len(), 6, "{}", out.describe());
    let unknown = r.iter().find(|r| r["name"] == "mcp__p_q__echo").unwrap();
    assert!(
        unknown["content"]
            .as_str()
            .unwrap_or("")
            .starts_with("unknown tool 'mcp__p_q__echo'"),
        "no server has the plain name: {}",
        out.describe()
    );
    let text = |t: &str| json!({"text": t});
    assert_eq!(calls(&dir.join("dot.log")), [("echo".into(), text("dot"))]);
    assert_eq!(
        calls(&dir.join("under.log")),
        [("echo".into(), text("under"))]
    );
    assert_eq!(
        calls(&dir.join("a.log")),
        [("b__c".into(), text("a")), ("echo".into(), text("plain"))],
        "a's other names stay plain"
    );
    assert_eq!(calls(&dir.join("ab.log")), [("c".into(), text("ab"))]);
}

/// Issue 34, point 5: a call by the server's own name of a tool (`mcp__my-srv__echo` where
/// mypi offers `mcp__my_srv__echo`, or plain `echo`) runs that tool; a name near one gets a
/// one-line "did you mean".
#[test]
fn a_tool_called_by_the_servers_own_name_runs() {
    let dir = TestDir::new();
    let cfg = config(&dir, json!({"my-srv": stdio_entry(&dir, "normal", 10)}));
    let replies = [
        json!({"tool_calls": [{"name": "mcp__my-srv__echo", "arguments": {"text": "one"}}]}),
        json!({"tool_calls": [{"name": "echo", "arguments": {"text": "two"}}]}),
        json!({"tool_calls": [{"name": "mcp__my_srv__ecko", "arguments": {"text": "three"}}]}),
        json!({"text": "done"}),
    ];
    let out = faux(&dir, &replies)
        .args(["--no-session", "--mcp-config"])
        .arg(&cfg)
        .args(["-p", "--json", "go"])
        .run();
    let results = crate::common::mcp::tool_results(&out.ok().stdout);
    assert_eq!(results[0], ("one".to_string(), false), "{results:?}");
    assert_eq!(results[1], ("two".to_string(), false), "{results:?}");
    assert!(results[2].1, "{results:?}");
    assert!(
        results[2]
            .0
            .starts_with("unknown tool 'mcp__my_srv__ecko'; did you mean 'mcp__my_srv__echo'?"),
        "{results:?}"
    );
}
