//! How MCP tools reach the model, through the real binary: a big server's tools deferred by
//! the budget while a small one stays direct, `tool_search` finding a deferred tool that the
//! next request offers (at the end, the rest of the list unchanged) and the model calls,
//! hidden tools never offered but seen by scripts, an exact name's setting beating a
//! pattern's, and the one extra model turn a search costs.

use serde_json::{json, Value};

use super::ext_util::faux;
use super::wire::tool_names;
use crate::common::mcp::{config, stdio_entry};
use crate::common::{FakeOpenAi, Mypi, Reply, TestDir};

/// `big`: the fake with 400 more tools of ~640 bytes; `small`: the fake as it is (11 tools).
fn servers(dir: &TestDir, small: Value) -> std::path::PathBuf {
    let mut big = stdio_entry(dir, "normal", 20);
    big["env"] = json!({"FAKE_MANY": "400"});
    let mut s = stdio_entry(dir, "normal", 20);
    if let (Some(s), Some(extra)) = (s.as_object_mut(), small.as_object()) {
        s.extend(extra.clone());
    }
    let cfg = config(dir, json!({"big": big, "small": s}));
    // Listed once: the runs then start with the servers' tools from the cache.
    let out = Mypi::new(dir)
        .args(["mcp", "list", "--mcp-config"])
        .arg(&cfg)
        .run();
    out.ok();
    assert!(out.stdout.contains("big: connected"), "{}", out.describe());
    cfg
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
fn a_big_server_is_searched_and_a_found_tool_is_offered_next_turn_at_the_end() {
    let dir = TestDir::new();
    let cfg = servers(&dir, json!({}));
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([("c1", "tool_search", json!({"query": "answers its text"}))]),
        Reply::tool_calls([("c2", "mcp__big__echo", json!({"text": "found it"}))]),
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
    assert_eq!(reqs.len(), 3, "{}", out.describe());
    let first = tool_names(&reqs[0]);
    // The big server is deferred, the small one direct beside it.
    assert!(first.contains(&"tool_search".to_string()), "{first:?}");
    assert!(first.contains(&"mcp__small__echo".to_string()), "{first:?}");
    assert!(
        !first.iter().any(|n| n.starts_with("mcp__big__")),
        "{first:?}"
    );
    let bytes = reqs[0].body["tools"].to_string().len();
    assert!(
        bytes < 40 * 1024,
        "the first request's tools: {bytes} bytes"
    );
    let results = tool_results(&out.stdout);
    let found = results[0]["content"].as_str().unwrap_or("");
    assert!(found.contains("mcp__big__echo (server big)"), "{found}");
    // The next request: the same list, the found tool appended.
    let second = tool_names(&reqs[1]);
    assert_eq!(second[..first.len()], first[..], "the prefix stays");
    assert!(second[first.len()..].contains(&"mcp__big__echo".to_string()));
    assert_eq!(results[1]["content"], "found it", "{}", out.describe());
    assert_eq!(tool_names(&reqs[2]), second, "found stays found");
}

const PROBE: &str = r#"
api.tool{
  name = "probe", description = "what scripts see",
  execute = function()
    local out = {}
    for _, t in ipairs(api.tools()) do
      if t.name:find("^mcp__small__") then out[#out + 1] = t.name .. "=" .. t.exposure end
    end
    for _, t in ipairs(api.mcp.tools("small")) do
      if t.name == "add" then out[#out + 1] = "add:" .. t.exposure end
    end
    return table.concat(out, " ")
  end,
}
"#;

#[test]
fn hidden_tools_are_never_offered_but_scripts_see_them_and_an_exact_name_beats_a_pattern() {
    let dir = TestDir::new();
    let small = json!({"exposure": "deferred",
        "toolExposure": {"*": "hidden", "e*": "deferred", "echo": "direct"}});
    let cfg = servers(&dir, small);
    dir.write(".agents/extensions/probe.lua", PROBE);
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([("c1", "probe", json!({}))]),
        Reply::tool_calls([("c2", "mcp__small__add", json!({"a": 1, "b": 2}))]),
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
    let small: Vec<String> = tool_names(&reqs[0])
        .into_iter()
        .filter(|n| n.starts_with("mcp__small__"))
        .collect();
    assert_eq!(small, ["mcp__small__echo"], "{}", out.describe());
    let results = tool_results(&out.stdout);
    let seen = results[0]["content"].as_str().unwrap_or("");
    for want in [
        "mcp__small__echo=direct",
        "mcp__small__elicit=deferred",
        "mcp__small__add=hidden",
        "add:hidden",
    ] {
        assert!(seen.contains(want), "{want} in {seen}");
    }
    // A hidden tool cannot be called by the model, even by its exact name.
    assert_eq!(results[1]["is_error"], true, "{}", out.describe());
    assert!(
        results[1]["content"]
            .as_str()
            .unwrap_or("")
            .contains("unknown tool 'mcp__small__add'"),
        "{}",
        out.describe()
    );
}

/// The turns of a `--json` run that ends with "done".
fn turns(dir: &TestDir, cfg: &std::path::Path, replies: &[Value]) -> u64 {
    let out = faux(dir, replies)
        .arg("--mcp-config")
        .arg(cfg)
        .args(["--no-session", "--json", "-p", "go"])
        .run();
    out.ok();
    let results = tool_results(&out.stdout);
    let last = results.last().cloned().unwrap_or_default();
    assert_eq!(last["content"], "hi", "{}", out.describe());
    let end = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "final")
        .unwrap_or_default();
    end["turns"].as_u64().unwrap_or(0)
}

#[test]
fn searching_then_calling_costs_one_more_model_turn() {
    let dir = TestDir::new();
    let cfg = servers(&dir, json!({}));
    let call = |name: &str| json!({"tool_calls": [{"name": name, "arguments": {"text": "hi"}}]});
    let search = json!({"tool_calls": [{"name": "tool_search", "arguments": {"query": "echo"}}]});
    let done = json!({"text": "done"});
    let direct = turns(&dir, &cfg, &[call("mcp__small__echo"), done.clone()]);
    let searched = turns(&dir, &cfg, &[search, call("mcp__big__echo"), done]);
    assert_eq!((direct, searched), (2, 3));
}

const ADD: &str = r#"
api.tool{
  name = "addsrv", description = "adds a server",
  execute = function()
    local a = api.mcp.add_server{ name = "added", command = "python3", args = { FAKE, "normal" },
      exposure = "deferred" }
    local b = api.mcp.add_server{ name = "small", command = "nope" }
    local r = api.mcp.call("added", "echo", { text = "via script" })
    local x
    for _, t in ipairs(api.mcp.tools("added")) do
      if t.name == "echo" then x = t.exposure end
    end
    return tostring(a.added) .. " " .. tostring(b.added) .. " " .. r.text .. " " .. tostring(x)
  end,
}
"#;

#[test]
fn a_script_adds_a_server_for_the_session_and_a_configured_one_wins() {
    let dir = TestDir::new();
    let cfg = config(&dir, json!({"small": stdio_entry(&dir, "normal", 20)}));
    let fake = crate::common::mcp::fake_py().display().to_string();
    let script = ADD.replace("FAKE", &format!("{fake:?}"));
    dir.write(".agents/extensions/add.lua", &script);
    let replies = [
        json!({"tool_calls": [{"name": "addsrv", "arguments": {}}]}),
        json!({"tool_calls": [{"name": "mcp__added__echo", "arguments": {"text": "by model"}}]}),
        json!({"text": "done"}),
    ];
    let out = faux(&dir, &replies)
        .arg("--mcp-config")
        .arg(&cfg)
        .args(["--no-session", "--json", "-p", "go"])
        .run();
    out.ok();
    let results = tool_results(&out.stdout);
    assert_eq!(
        results[0]["content"],
        "true false via script deferred",
        "{}",
        out.describe()
    );
    // A deferred tool named exactly by the model runs.
    assert_eq!(results[1]["content"], "by model", "{}", out.describe());
    assert!(
        out.stdout
            .contains("is not used: the server is configured in"),
        "{}",
        out.describe()
    );
}

#[test]
fn a_search_waits_for_a_server_still_connecting() {
    let dir = TestDir::new();
    let fake = crate::common::mcp::fake_py().display().to_string();
    let slow = format!("sleep 2; exec python3 '{fake}' normal");
    let cfg = config(
        &dir,
        json!({"late": {"command": "sh", "args": ["-c", slow], "exposure": "deferred"}}),
    );
    let replies = [
        json!({"tool_calls": [{"name": "tool_search", "arguments": {"query": "answers its text"}}]}),
        json!({"text": "done"}),
    ];
    let out = faux(&dir, &replies)
        .arg("--mcp-config")
        .arg(&cfg)
        .args(["--no-session", "--json", "-p", "go"])
        .run();
    out.ok();
    // Configured deferred: the search is offered before the server is ready.
    let session: Value = serde_json::from_str(out.stdout.lines().next().unwrap_or("")).unwrap();
    assert!(
        session["tools"].to_string().contains("\"tool_search\""),
        "{}",
        out.describe()
    );
    let results = tool_results(&out.stdout);
    let found = results[0]["content"].as_str().unwrap_or("");
    assert!(
        found.contains("mcp__late__echo (server late)"),
        "{}",
        out.describe()
    );
}

#[test]
fn found_tools_stay_found_in_a_resumed_session() {
    let dir = TestDir::new();
    let cfg = servers(&dir, json!({}));
    let search = json!({"query": "answers its text", "limit": 1});
    let first = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([("c1", "tool_search", search)]),
        Reply::text("found"),
    ]);
    let run = |fake: &FakeOpenAi, extra: &[&str]| {
        let out = Mypi::new(&dir)
            .openai(fake)
            .arg("--mcp-config")
            .arg(&cfg)
            .args(extra)
            .args(["-p", "go"])
            .run();
        out.ok();
    };
    run(&first, &[]);
    let second = FakeOpenAi::with_replies(vec![Reply::text("again")]);
    run(&second, &["-c"]);
    let names = tool_names(&second.requests()[0]);
    assert_eq!(
        names.last().map(String::as_str),
        Some("mcp__big__echo"),
        "{names:?}"
    );
}
