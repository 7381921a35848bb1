//! Many MCP servers through the real binary: twenty configured servers start in parallel,
//! and the first prompt waits only for what it may need. A server slow to start whose tools
//! are all deferred, or one the prompt does not name when it names others, does not hold the
//! prompt (nor is it named as passed over), and a failing one delays nobody: every fast
//! server's tools are in the first request. (The wall time to the first request, 20 servers
//! against 1: `benches/scripts/bench-mcp-many.py`.)

use serde_json::{json, Value};

use super::wire::tool_names;
use crate::common::mcp::{config, fake_py, stdio_entry};
use crate::common::{FakeOpenAi, Mypi, Reply, TestDir};

/// The fake over stdio, started `delay` seconds late.
fn late(dir: &TestDir, delay: u32) -> Value {
    let script = format!(
        "sleep {delay}; exec python3 '{}' normal '{}'",
        fake_py().display(),
        dir.join("log").display()
    );
    json!({"command": "sh", "args": ["-c", script], "timeout": 20})
}

/// Seventeen fast servers (`s01`…`s17`, direct), `slow` (4 s late, deferred) and
/// `broken` (exits at once): twenty with the `late` of a test.
fn twenty(dir: &TestDir, more: Value) -> std::path::PathBuf {
    let mut servers = serde_json::Map::new();
    for i in 1..=17 {
        let mut s = stdio_entry(dir, "normal", 20);
        s["exposure"] = json!("direct");
        servers.insert(format!("s{i:02}"), s);
    }
    let mut slow = late(dir, 4);
    slow["exposure"] = json!("deferred");
    servers.insert("slow".into(), slow);
    servers.insert("broken".into(), stdio_entry(dir, "exit_start", 20));
    if let Some(more) = more.as_object() {
        servers.extend(more.clone());
    }
    config(dir, Value::Object(servers))
}

fn run(dir: &TestDir, cfg: &std::path::Path, prompt: &str) -> (crate::common::Output, Vec<String>) {
    let fake = FakeOpenAi::with_replies(vec![Reply::text("done")]);
    let out = Mypi::new(dir)
        .openai(&fake)
        .arg("--mcp-config")
        .arg(cfg)
        .args(["--no-session", "-p", prompt])
        .run();
    out.ok();
    let names = tool_names(&fake.requests()[0]);
    (out, names)
}

#[test]
fn twenty_servers_start_together_and_a_slow_deferred_one_holds_no_prompt() {
    let dir = TestDir::new();
    let cfg = twenty(&dir, json!({"s18": stdio_entry(&dir, "normal", 20)}));
    let (out, names) = run(&dir, &cfg, "go");
    // `tool_search` is offered for the deferred server before it is ready, and the prompt
    // never waited for it (it would have named it as passed over: it starts 4 s late).
    assert!(names.contains(&"tool_search".to_string()), "{names:?}");
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(!said.contains("slow"), "{}", out.describe());
    // Each started on its own: the failing one failed, the slow one came, the rest are up.
    let list = Mypi::new(&dir)
        .args(["mcp", "list", "--mcp-config"])
        .arg(&cfg)
        .run();
    assert_eq!(list.code, 1, "{}", list.describe());
    let lines: Vec<&str> = list.stdout.lines().collect();
    let connected = lines
        .iter()
        .filter(|l| l.contains(": connected (stdio"))
        .count();
    assert_eq!(connected, 19, "{}", list.describe());
    assert!(
        lines.iter().any(|l| l.starts_with("broken: failed")),
        "{}",
        list.describe()
    );
}

#[test]
fn a_prompt_that_names_servers_waits_only_for_them() {
    let dir = TestDir::new();
    let mut t = stdio_entry(&dir, "normal", 20);
    t["exposure"] = json!("direct");
    let cfg = twenty(&dir, json!({"t": t, "late": late(&dir, 4)}));
    let (out, names) = run(&dir, &cfg, "ask t to echo hi");
    // `t` was waited for, however long the others took to start; `late` was not waited for
    // (the grace would have held the prompt for it), nor named: the prompt said what it
    // needs.
    assert!(
        names.contains(&"mcp__t__echo".to_string()),
        "{}",
        out.describe()
    );
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(!said.contains("not waiting for"), "{}", out.describe());
    assert!(!said.contains("late"), "{}", out.describe());
}
