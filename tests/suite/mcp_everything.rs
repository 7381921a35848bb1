//! MCP against the reference server `@modelcontextprotocol/server-everything` (npm), over
//! stdio, Streamable HTTP and the legacy HTTP+SSE: `mypi mcp list`, tool calls through `mypi -p` on the faux
//! model (echo, get-sum, the long-running operation, a resource read, a tool the server adds
//! after connecting), a prompt as a slash command, elicitation and progress on a REPL in a
//! real terminal, and code mode with its tools set to `code` exposure. The server comes from
//! `MYPI_TEST_EVERYTHING` (the path of its `dist/index.js`, set by `.ci/run` after installing
//! it). They are `#[ignore]`d with the
//! reason, so `cargo test` lists them as ignored; `.ci/run` runs them with `--ignored`.

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::ext_util::faux;
use crate::common::{Mypi, TestDir};

/// Where the tests look when `MYPI_TEST_EVERYTHING` is not set (the recon install).
const FALLBACK: &str =
    "/tmp/conf/everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js";

/// The server's `dist/index.js`. These tests are ignored unless asked for (`--ignored`):
/// asked for without the server, they fail saying how to install it.
fn everything() -> PathBuf {
    let path = std::env::var_os("MYPI_TEST_EVERYTHING")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(FALLBACK));
    let node = Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        path.is_file() && node,
        "server-everything is not installed at {} (set MYPI_TEST_EVERYTHING to its \
         dist/index.js; `.ci/mcp-conformance install` installs it and prints the path) or node \
         is missing",
        path.display()
    );
    path
}

/// Writes the project's `.mcp.json` with one server named `everything`.
fn config(dir: &TestDir, entry: Value) {
    let text = json!({"mcpServers": {"everything": entry}}).to_string();
    dir.write(".mcp.json", &text);
}

fn stdio_entry(index: &std::path::Path) -> Value {
    json!({"command": "node", "args": [index, "stdio"]})
}

/// server-everything on Streamable HTTP (or the legacy HTTP+SSE) on a free port; killed on
/// drop.
struct HttpServer {
    child: Child,
    port: u16,
    sse: bool,
}

impl HttpServer {
    fn start(index: &std::path::Path) -> HttpServer {
        Self::serving(index, "streamableHttp")
    }

    fn serving(index: &std::path::Path, transport: &str) -> HttpServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let child = Command::new("node")
            .arg(index)
            .arg(transport)
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start server-everything");
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "server-everything did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let sse = transport == "sse";
        HttpServer { child, port, sse }
    }

    fn entry(&self) -> Value {
        match self.sse {
            true => json!({"type": "sse", "url": format!("http://127.0.0.1:{}/sse", self.port)}),
            false => json!({"type": "http", "url": format!("http://127.0.0.1:{}/mcp", self.port)}),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `mypi mcp list` shows the server connected with its tools, resources and prompts.
fn lists_the_server(dir: &TestDir, transport: &str) {
    let out = Mypi::new(dir).args(["mcp", "list"]).run();
    out.ok();
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("everything: connected"))
        .unwrap_or_else(|| panic!("not connected: {}", out.describe()));
    assert!(
        line.contains(&format!("({transport}, protocol 2025-11-25, ")),
        "{line}"
    );
    let tools: usize = line
        .split(", ")
        .find_map(|p| p.split_once(" tools").map(|(n, _)| n))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(tools >= 13, "{line}");
    assert!(line.contains(" resources, 4 prompts)"), "{line}");
}

/// The results of a `mypi -p --json` run whose model calls each tool in turn.
fn call_tools(dir: &TestDir, calls: &[(&str, Value)]) -> Vec<Value> {
    let mut replies: Vec<Value> = calls
        .iter()
        .map(|(name, args)| json!({"tool_calls": [{"name": name, "arguments": args}]}))
        .collect();
    replies.push(json!({"text": "done"}));
    let out = faux(dir, &replies)
        .args(["-p", "use the tools", "--json"])
        .timeout(Duration::from_secs(60))
        .run();
    out.ok();
    let results: Vec<Value> = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), calls.len(), "{}", out.describe());
    results
}

/// The calls both transports run, and what each result must say.
fn calls_and_results(dir: &TestDir) {
    let calls = [
        ("mcp__everything__echo", json!({"message": "hi"})),
        ("mcp__everything__get_sum", json!({"a": 2, "b": 40})),
        (
            "mcp__everything__trigger_long_running_operation",
            json!({"duration": 2, "steps": 4}),
        ),
        (
            "read_mcp_resource",
            json!({"server": "everything", "uri": "demo://resource/static/document/features.md"}),
        ),
        // Registered by the server only after `initialized` (it then says tools/list_changed).
        ("mcp__everything__get_roots_list", json!({})),
    ];
    let results = call_tools(dir, &calls);
    let expect = [
        "Echo: hi".to_string(),
        "The sum of 2 and 40 is 42.".to_string(),
        "Long running operation completed. Duration: 2 seconds, Steps: 4.".to_string(),
        "# ".to_string(),
        format!("file://{}", dir.path().display()),
    ];
    for ((r, want), (tool, _)) in results.iter().zip(&expect).zip(&calls) {
        assert_eq!(r["is_error"], false, "{tool}: {r}");
        let text = r["content"].as_str().unwrap_or_default();
        assert!(text.contains(want.as_str()), "{tool}: {text}");
    }
}

#[test]
#[ignore = "needs @modelcontextprotocol/server-everything and node: .ci/run installs them and runs these (cargo test -- --ignored with MYPI_TEST_EVERYTHING set)"]
fn everything_over_stdio_lists_and_calls_tools() {
    let index = everything();
    let dir = TestDir::new();
    config(&dir, stdio_entry(&index));
    lists_the_server(&dir, "stdio");
    calls_and_results(&dir);
}

#[test]
#[ignore = "needs @modelcontextprotocol/server-everything and node: .ci/run installs them and runs these (cargo test -- --ignored with MYPI_TEST_EVERYTHING set)"]
fn everything_over_streamable_http_lists_and_calls_tools() {
    let index = everything();
    let server = HttpServer::start(&index);
    let dir = TestDir::new();
    config(&dir, server.entry());
    lists_the_server(&dir, "http");
    calls_and_results(&dir);
}

#[test]
#[ignore = "needs @modelcontextprotocol/server-everything and node: .ci/run installs them and runs these (cargo test -- --ignored with MYPI_TEST_EVERYTHING set)"]
fn everything_over_legacy_sse_lists_and_calls_tools() {
    let index = everything();
    let server = HttpServer::serving(&index, "sse");
    let dir = TestDir::new();
    config(&dir, server.entry());
    lists_the_server(&dir, "sse");
    calls_and_results(&dir);
}

/// `/mcp__everything__simple_prompt` sends the prompt's text to the model as the user's
/// message (the faux model without a script echoes it).
#[test]
#[ignore = "needs @modelcontextprotocol/server-everything and node: .ci/run installs them and runs these (cargo test -- --ignored with MYPI_TEST_EVERYTHING set)"]
fn a_server_prompt_is_a_slash_command() {
    let index = everything();
    let dir = TestDir::new();
    config(&dir, stdio_entry(&index));
    let out = Mypi::new(&dir)
        .args([
            "--provider",
            "faux",
            "-p",
            "/mcp__everything__simple_prompt",
        ])
        .run();
    out.ok();
    assert!(
        out.stdout
            .contains("This is a simple prompt without arguments."),
        "{}",
        out.describe()
    );
}

/// On a REPL in a real terminal: progress of a long call shows above the status line, and the
/// server's elicitation is asked field by field in its order (Enter keeps a default, choices
/// by number or name) and answered.
#[test]
#[ignore = "needs @modelcontextprotocol/server-everything and node: .ci/run installs them and runs these (cargo test -- --ignored with MYPI_TEST_EVERYTHING set)"]
fn elicitation_and_progress_on_a_terminal() {
    let index = everything();
    let dir = TestDir::new();
    config(&dir, stdio_entry(&index));
    let long = json!({"tool_calls": [{"name": "mcp__everything__trigger_long_running_operation",
                                      "arguments": {"duration": 4, "steps": 4}}]});
    let ask = json!({"tool_calls": [{"name": "mcp__everything__trigger_elicitation_request",
                                     "arguments": {}}]});
    let replies = [long, json!({"text": "ran"}), ask, json!({"text": "asked"})];
    let m = faux(&dir, &replies).args(["--no-watch"]);
    let mut pty = crate::common::pty::Pty::spawn(m.command());
    let wait = Duration::from_secs(30);
    let at = pty.wait_for("/help for commands", 0, wait);
    pty.type_keys("go\r");
    // The call has run over two seconds: its latest progress shows above the status line.
    let at = pty.wait_for("  ⋯ progress 3/4", at, wait);
    let at = pty.wait_for("ran", at, wait);
    pty.type_keys("ask me\r");
    let mut at = pty.wait_for("answer it?", at, wait);
    pty.type_keys("y\r");
    // The schema's fields, in the server's order; the choices are shown numbered.
    let fields = [
        ("name (required)", "Ann"),
        ("check", "y"),
        ("firstLine", ""),
        ("email", ""),
        ("homepage", ""),
        ("birthdate", ""),
        ("integer", "7"),
        ("number", ""),
        ("untitledSingleSelectEnum", "2"),
        ("untitledMultipleSelectEnum", "piano, 3"),
        ("titledSingleSelectEnum", "Wonder Woman"),
        ("titledMultipleSelectEnum", "1,2"),
        ("legacyTitledEnum", "Dogs"),
    ];
    for (field, answer) in fields {
        at = pty.wait_for(&format!("  {field}"), at, wait);
        pty.type_keys(&format!("{answer}\r"));
    }
    let at = pty.wait_for("asked", at, wait);
    pty.type_keys("/quit\r");
    assert_eq!(pty.wait(wait), 0, "{}", &pty.screen()[at..]);
    let session = find_text(dir.path(), "Name: Ann").unwrap_or_else(|| {
        panic!("the answer is in no session file:\n{}", pty.screen());
    });
    let text = std::fs::read_to_string(&session).unwrap_or_default();
    // The raw result, as JSON text inside the session's JSON.
    for want in [
        "Agreed to terms: true",
        "Favorite Integer: 7",
        "Favorite Number: 3.14",
        r#"\"untitledSingleSelectEnum\": \"Rachel\""#,
        r#"\"titledSingleSelectEnum\": \"hero-3\""#,
        r#"\"legacyTitledEnum\": \"pet-2\""#,
        r#"\"Piano\",\n      \"Violin\""#,
        r#"\"fish-1\",\n      \"fish-2\""#,
    ] {
        assert!(text.contains(want), "{want} in {}", session.display());
    }
}

/// The first file under `root` whose text contains `needle`.
fn find_text(root: &std::path::Path, needle: &str) -> Option<PathBuf> {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).ok()?.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if std::fs::read_to_string(&path).is_ok_and(|t| t.contains(needle)) {
                return Some(path);
            }
        }
    }
    None
}

/// `--json`: the server's progress notifications during a call are `tool_update` events of
/// that call, before its result.
#[test]
#[ignore = "needs @modelcontextprotocol/server-everything and node: .ci/run installs them and runs these (cargo test -- --ignored with MYPI_TEST_EVERYTHING set)"]
fn progress_of_an_mcp_call_is_a_tool_update_event() {
    let index = everything();
    let dir = TestDir::new();
    config(&dir, stdio_entry(&index));
    let long = json!({"tool_calls": [{"name": "mcp__everything__trigger_long_running_operation",
                                      "arguments": {"duration": 1, "steps": 2}}]});
    let out = faux(&dir, &[long, json!({"text": "ran"})])
        .args(["--no-session", "-p", "go", "--json"])
        .run();
    out.ok();
    let ev: Vec<Value> = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let result = ev
        .iter()
        .position(|e| e["type"] == "tool_result")
        .expect("a result");
    let ups: Vec<&Value> = ev[..result]
        .iter()
        .filter(|e| e["type"] == "tool_update")
        .collect();
    assert!(!ups.is_empty(), "{}", out.describe());
    assert_eq!(ups[0]["kind"], "progress");
    assert_eq!(
        ups[0]["name"],
        "mcp__everything__trigger_long_running_operation"
    );
    assert!(
        ups[0]["text"].as_str().unwrap().starts_with("progress 1/2"),
        "{ups:?}"
    );
    assert!(!ev[result..].iter().any(|e| e["type"] == "tool_update"));
}

/// Code mode against the real server, its tools set to `code` exposure: the model is offered
/// `code` and none of them, and one script finds a tool with `search_tools` and calls two by
/// both names (`mcp.everything.get_sum`, `tools.mcp__everything__echo`).
#[test]
#[ignore = "needs @modelcontextprotocol/server-everything and node: .ci/run installs them and runs these (cargo test -- --ignored with MYPI_TEST_EVERYTHING set)"]
fn everything_in_code_mode() {
    let index = everything();
    let dir = TestDir::new();
    let mut entry = stdio_entry(&index);
    entry["exposure"] = json!("code");
    config(&dir, entry);
    let out = Mypi::new(&dir).args(["mcp", "list"]).run();
    assert!(out.stdout.contains(" for code only)"), "{}", out.describe());
    let script = r#"local found = search_tools("sum of two numbers", 3)
local sum = mcp.everything.get_sum{a = 2, b = 40}
local echoed = tools.mcp__everything__echo{message = "hi"}
return found[1].name .. "|" .. sum .. "|" .. echoed"#;
    let replies = [
        json!({"tool_calls": [{"name": "code", "arguments": {"script": script}}]}),
        json!({"text": "done"}),
    ];
    let out = faux(&dir, &replies)
        .args(["-p", "add", "--json"])
        .timeout(Duration::from_secs(60))
        .run();
    out.ok();
    let events: Vec<Value> = (out.stdout.lines())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect();
    let offered = &events[0]["tools"];
    assert!(
        offered
            .as_array()
            .is_some_and(|t| t.contains(&json!("code"))),
        "{offered}"
    );
    assert!(
        !offered.to_string().contains("mcp__everything__"),
        "{offered}"
    );
    let result = events.iter().find(|e| e["type"] == "tool_result").unwrap();
    assert_eq!(result["is_error"], false, "{result}");
    let text = result["content"].as_str().unwrap_or_default();
    assert!(text.starts_with("mcp__everything__get_sum|"), "{text}");
    assert!(text.contains("The sum of 2 and 40 is 42."), "{text}");
    assert!(text.contains("Echo: hi"), "{text}");
    let nested = events
        .iter()
        .filter(|e| e["type"] == "nested_tool_result")
        .count();
    assert_eq!(nested, 2, "{}", out.describe());
}
