//! Code mode through the real binary: the faux model writes Lua scripts for the `code` tool.
//! A good script chains tools and filters their results in one call, its nested calls pass
//! the hooks with `parent_tool_call_id`, show in `--json` and stay in the session; a script
//! that loops, bombs memory, recurses without end, has a syntax error or calls a tool an
//! extension blocks ends that call with an error naming its line, and the agent goes on;
//! Ctrl-C stops a script and the tool call it waits on. MCP tools with `code` exposure are
//! offered to the model only through `code` (and the tool is offered by itself then).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::ext_util::{faux, install};
use super::wire::tool_names;
use crate::common::mcp::{config, stdio_entry};
use crate::common::{FakeOpenAi, Mypi, Reply, TestDir};

/// A faux reply calling `code` with `script`.
fn code(script: &str) -> Value {
    json!({"tool_calls": [{"name": "code", "arguments": {"script": script}}]})
}

/// The `--json` events of `stdout` of type `kind`.
fn events(stdout: &str, kind: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == kind)
        .collect()
}

/// Runs the faux model on `replies` with code mode on and small budgets.
fn run(dir: &TestDir, replies: &[Value]) -> crate::common::Output {
    faux(dir, replies)
        .env("MYPI_CODE_MODE", "1")
        .env("MYPI_CODE_BUDGET_MS", "300")
        .env("MYPI_CODE_MEMORY_MB", "16")
        .args(["--no-session", "--json", "-p", "go"])
        .run()
}

#[test]
fn a_script_chains_tools_filters_their_results_and_its_calls_pass_the_hooks() {
    let dir = TestDir::new();
    dir.write("notes.txt", "apple\nbanana\navocado\ncherry\n");
    // Marks every result of a nested call with the code call that made it.
    install(
        &dir,
        "mark.lua",
        r#"api.on("tool_result", function(e)
  if e.parent_tool_call_id then
    return {updated_result = e.result .. "|from " .. e.parent_tool_call_id}
  end
end)"#,
    );
    let script = r#"local text = tools.read{path = "notes.txt"}
local a = {}
for word in text:gmatch("%a+") do
  if word:sub(1, 1) == "a" then a[#a + 1] = word end
end
local out = tools.bash{command = "echo two"}
print("bash said", out)
return {count = #a, marked = text:match("|from (%S+)")}"#;
    let out = faux(&dir, &[code(script), json!({"text": "done"})])
        .env("MYPI_CODE_MODE", "1")
        .args(["--json", "-p", "go"])
        .run();
    out.ok();
    let results = events(&out.stdout, "tool_result");
    let content = results[0]["content"].as_str().unwrap_or("");
    assert_eq!(results[0]["is_error"], false, "{}", out.describe());
    assert!(content.contains("bash said\ttwo"), "{content}");
    assert!(content.contains("\"marked\":\"faux_1\""), "{content}");
    assert!(content.contains("\"count\":2"), "{content}");
    // The nested calls in --json, under the code call, each before its result.
    let calls = events(&out.stdout, "nested_tool_call");
    let done = events(&out.stdout, "nested_tool_result");
    assert_eq!(calls.len(), 2, "{}", out.describe());
    assert_eq!(calls[0]["parent_id"], "faux_1");
    assert_eq!(calls[0]["name"], "read");
    assert_eq!(calls[1]["arguments"], json!({"command": "echo two"}));
    assert_eq!(done[1]["parent_id"], "faux_1");
    assert!(done[1]["content"]
        .as_str()
        .unwrap_or("")
        .ends_with("|from faux_1"));
    // The session keeps them with the code call's result.
    assert_eq!(events(&out.stdout, "final")[0]["text"], "done");
    let session = std::fs::read_dir(dir.home().join(".agents/sessions"))
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .map(|f| std::fs::read_to_string(f.path()).unwrap_or_default())
        .collect::<String>();
    let line = session
        .lines()
        .find(|l| l.contains("\"tool_call_id\":\"faux_1\""))
        .unwrap_or_else(|| panic!("no code result in the session: {session}"));
    let v: Value = serde_json::from_str(line).unwrap();
    let nested = &v["message"]["details"]["calls"];
    assert_eq!(nested[0]["name"], "read", "{line}");
    assert_eq!(nested[1]["id"], "faux_1.2", "{line}");
}

#[test]
fn a_tool_an_extension_blocks_is_blocked_inside_a_script_too() {
    let dir = TestDir::new();
    install(
        &dir,
        "guard.lua",
        r#"api.on("tool_call", function(e)
  if e.name == "bash" then
    return {block = true, reason = "no shell (asked by " .. tostring(e.parent_tool_call_id) .. ")"}
  end
end)"#,
    );
    let script = "local ok = true\nlocal out = tools.bash{command = 'touch made'}\nreturn out";
    let caught = "local ok, e = pcall(tools.bash, {command = 'touch made'})\nreturn e";
    let out = run(
        &dir,
        &[code(script), code(caught), json!({"text": "went on"})],
    );
    out.ok();
    let results = events(&out.stdout, "tool_result");
    assert_eq!(results[0]["is_error"], true, "{}", out.describe());
    assert_eq!(
        results[0]["content"],
        "script:2: tools.bash: blocked: no shell (asked by faux_1)"
    );
    // Caught, the script goes on with the reason.
    assert_eq!(results[1]["is_error"], false, "{}", out.describe());
    assert!(results[1]["content"]
        .as_str()
        .unwrap_or("")
        .contains("blocked: no shell"));
    assert!(!dir.exists("made"), "the blocked command ran");
    assert_eq!(events(&out.stdout, "final")[0]["text"], "went on");
}

#[test]
fn runaway_and_broken_scripts_end_their_call_with_the_line_and_the_agent_goes_on() {
    let dir = TestDir::new();
    let replies = [
        code("local n = 0\nwhile true do n = n + 1 end"),
        code("local t = {}\nfor i = 1, 1e9 do t[i] = string.rep('x', 1000) .. i end"),
        code("local function f(n) return 1 + f(n + 1) end\nreturn f(1)"),
        code("print('a')\nlocal x = = 2"),
        code("while true do pcall(function() while true do end end) end"),
        code("local t = nil\nreturn t.field"),
        code(
            "return {io = io == nil, exec = os.execute == nil, req = require == nil, \
              dump = string.dump == nil, bytecode = load('\\27Lua') == nil}",
        ),
        json!({"text": "still here"}),
    ];
    let started = Instant::now();
    let out = run(&dir, &replies);
    out.ok();
    let results = events(&out.stdout, "tool_result");
    let text = |i: usize| results[i]["content"].as_str().unwrap_or("").to_string();
    assert!(
        text(0).starts_with("script:2: stopped after 0.3 s"),
        "{}",
        text(0)
    );
    assert!(
        text(1).starts_with("script:2: stopped: the script used more than its 16 MiB"),
        "{}",
        text(1)
    );
    // Runaway recursion: stopped deep down, or at the memory cap, at its line either way.
    let deep = text(2).contains("stack overflow") || text(2).contains("16 MiB of memory");
    assert!(text(2).starts_with("script:1:") && deep, "{}", text(2));
    assert!(
        text(3).starts_with("syntax error: script:2:"),
        "{}",
        text(3)
    );
    assert!(
        text(4).starts_with("script:1: stopped after 0.3 s"),
        "{}",
        text(4)
    );
    assert!(
        text(5).starts_with("script:2: attempt to index"),
        "{}",
        text(5)
    );
    for (i, r) in results.iter().take(6).enumerate() {
        assert_eq!(r["is_error"], true, "{}", text(i));
    }
    assert_eq!(
        serde_json::from_str::<Value>(&text(6)).unwrap(),
        json!({"io": true, "exec": true, "req": true, "dump": true, "bytecode": true})
    );
    assert_eq!(events(&out.stdout, "final")[0]["text"], "still here");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn ctrl_c_stops_a_script_and_the_tool_call_it_waits_on() {
    let dir = TestDir::new();
    let script = "tools.bash{command = 'sleep 30; touch late'}\nreturn 'finished'";
    let mut m = faux(&dir, &[code(script), json!({"text": "after"})])
        .env("MYPI_CODE_MODE", "1")
        .arg("--no-watch")
        .spawn();
    m.send_line("go");
    m.wait_for_text("↳ bash", Duration::from_secs(20));
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    m.interrupt();
    m.wait_for_text("cancel", Duration::from_secs(5));
    let waited = started.elapsed();
    m.send_line("/quit");
    let out = m.wait();
    out.ok();
    assert!(
        waited < Duration::from_secs(3),
        "took {waited:?}: {}",
        out.describe()
    );
    assert!(
        out.stdout.contains("✗ stopped: the call was cancelled"),
        "{}",
        out.describe()
    );
}

/// The fake MCP server, its tools set to `exposure`.
/// Listed once: the runs then start with the server's tools from the cache.
fn server(dir: &TestDir, exposure: &str) -> std::path::PathBuf {
    let mut entry = stdio_entry(dir, "normal", 20);
    entry["exposure"] = json!(exposure);
    let cfg = config(dir, json!({"fake": entry}));
    let out = Mypi::new(dir)
        .args(["mcp", "list", "--mcp-config"])
        .arg(&cfg)
        .run();
    assert!(out.stdout.contains("fake: connected"), "{}", out.describe());
    cfg
}

#[test]
fn code_exposure_tools_are_reached_only_through_code_which_is_offered_for_them() {
    let dir = TestDir::new();
    let cfg = server(&dir, "code");
    let script = r#"local found = search_tools("adds two numbers")
local sum = mcp.fake.add{a = 2, b = 3}
local echoed = tools.mcp__fake__echo{text = "hi"}
return found[1].name .. " " .. sum .. " " .. echoed"#;
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([("c1", "mcp__fake__add", json!({"a": 1, "b": 1}))]),
        Reply::tool_calls([("c2", "code", json!({"script": script}))]),
        Reply::text("done"),
    ]);
    let out = Mypi::new(&dir)
        .openai(&fake)
        .arg("--mcp-config")
        .arg(&cfg)
        .args(["--no-session", "--json", "-p", "go"])
        .run();
    out.ok();
    let reqs = fake.requests();
    let names = tool_names(&reqs[0]);
    assert!(names.contains(&"code".to_string()), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("mcp__")), "{names:?}");
    assert!(!names.contains(&"tool_search".to_string()), "{names:?}");
    let results = events(&out.stdout, "tool_result");
    // The model cannot call it directly...
    assert_eq!(results[0]["is_error"], true, "{}", out.describe());
    assert!(results[0]["content"]
        .as_str()
        .unwrap_or("")
        .contains("unknown tool"));
    // ...a script can.
    assert_eq!(
        results[1]["content"],
        "mcp__fake__add 5 hi",
        "{}",
        out.describe()
    );
}

#[test]
fn without_indirect_tools_code_is_not_offered_unless_asked_for() {
    let dir = TestDir::new();
    let cfg = server(&dir, "direct");
    let fake = FakeOpenAi::with_replies(vec![Reply::text("a"), Reply::text("b")]);
    let base = || {
        Mypi::new(&dir)
            .openai(&fake)
            .arg("--mcp-config")
            .arg(&cfg)
            .args(["--no-session", "-p", "go"])
    };
    base().run().ok();
    base().env("MYPI_CODE_MODE", "true").run().ok();
    let reqs = fake.requests();
    assert!(!tool_names(&reqs[0]).contains(&"code".to_string()));
    assert!(tool_names(&reqs[1]).contains(&"code".to_string()));
}
