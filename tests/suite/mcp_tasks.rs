//! Tools that need MCP tasks (`"execution": {"taskSupport": "required"}`), which mypi does
//! not support yet, through the real binary, over stdio and Streamable HTTP (answers as JSON
//! and as an event stream): not offered to the model, a script's call refused with the
//! reason, `mypi mcp list` saying so; tools whose tasks are optional stay as they were.

use serde_json::{json, Value};

use super::wire::tool_names;
use crate::common::mcp::{config, stdio_entry, HttpFake};
use crate::common::{FakeOpenAi, Mypi, Reply, TestDir};

const PROBE: &str = r#"
api.command("probe", function(args, ctx)
  local ok, err = pcall(api.mcp.call, "s", "job", {})
  -- `maybe` reaches the server, which answers any tool it adds with an error.
  local _, maybe = pcall(api.mcp.call, "s", "maybe", {})
  local shown = {}
  for _, t in ipairs(api.mcp.tools("s")) do
    if t.name == "job" or t.name == "maybe" then shown[#shown + 1] = t.name .. "=" .. t.exposure end
  end
  return tostring(ok) .. " | " .. tostring(err) .. " | " .. tostring(maybe) .. " | " .. table.concat(shown, " ")
end)
"#;

/// The fake over stdio with `job` (tasks required) and `maybe` (tasks optional).
fn stdio_server(dir: &TestDir) -> Value {
    let mut s = stdio_entry(dir, "normal", 20);
    let tools = json!([
        {"name": "job", "description": "Runs as a task.", "inputSchema": {"type": "object"},
         "execution": {"taskSupport": "required"}},
        {"name": "maybe", "description": "May run as a task.", "inputSchema": {"type": "object"},
         "execution": {"taskSupport": "optional"}}
    ]);
    s["env"] = json!({"FAKE_TOOLS": tools.to_string()});
    s
}

/// `mypi mcp list` names the tool not offered; a run offers `maybe` and not `job`.
fn check(dir: &TestDir, server: Value) {
    let cfg = config(dir, json!({ "s": server }));
    let out = Mypi::new(dir)
        .args(["mcp", "list", "--mcp-config"])
        .arg(&cfg)
        .run();
    out.ok();
    assert!(
        out.stdout
            .contains("(1 not offered: MCP tasks needed and not supported yet)"),
        "{}",
        out.describe()
    );
    let fake = FakeOpenAi::with_replies(vec![Reply::text("done")]);
    let out = Mypi::new(dir)
        .openai(&fake)
        .arg("--mcp-config")
        .arg(&cfg)
        .args(["--no-session", "-p", "go"])
        .run();
    out.ok();
    let names = tool_names(&fake.requests()[0]);
    assert!(names.contains(&"mcp__s__maybe".to_string()), "{names:?}");
    assert!(names.contains(&"mcp__s__echo".to_string()), "{names:?}");
    assert!(!names.iter().any(|n| n.contains("job")), "{names:?}");
}

#[test]
fn a_tool_that_needs_tasks_is_not_offered_and_a_script_is_told_why() {
    let dir = TestDir::new();
    check(&dir, stdio_server(&dir));
    dir.write(".agents/extensions/probe.lua", PROBE);
    let cfg = dir.join("mcp.json");
    let out = Mypi::new(&dir)
        .arg("--mcp-config")
        .arg(&cfg)
        .args(["--no-session", "-p", "/probe"])
        .run();
    out.ok();
    let said = out.stdout.trim();
    assert!(
        said.starts_with("false | ")
            && said.contains("tool job needs MCP tasks, which mypi does not support yet")
            && said.contains("no tool maybe")
            && said.ends_with("job=hidden maybe=direct"),
        "{}",
        out.describe()
    );
    // The refused call never reached the server.
    let log = std::fs::read_to_string(dir.join("log")).unwrap_or_default();
    assert!(!log.contains("\"job\""), "{log}");
}

#[test]
fn over_http_the_tools_list_is_read_for_tasks_as_json_and_as_an_event_stream() {
    for mode in ["tasks", "tasks_sse"] {
        let dir = TestDir::new();
        let http = HttpFake::start(&dir, mode);
        check(
            &dir,
            json!({"type": "http", "url": http.url(), "timeout": 20}),
        );
        assert!(
            http.count("tools/list") >= 1,
            "{mode}: {:?}",
            http.requests()
        );
    }
}
