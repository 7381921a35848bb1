//! Code mode (`cargo bench --bench code_mode`; `-- five` or `-- thousand` runs only that
//! part):
//!
//! - a task that needs five MCP calls and a filter, run by the real binary on the faux model
//!   against the test MCP server (`tests/common/mcp_fake.py`, its tools cached as a user's
//!   would be): one tool call per model turn (six model requests: five calls, then the
//!   answer) against one `code` call (two requests: the script, then the answer). Printed:
//!   model requests, input tokens sent in all (the faux model's count of what it was sent)
//!   and the run's wall time, median of 5 runs each;
//! - the host's cost of a script's tool calls, in-process: a `code` call whose script makes
//!   1,000 `tools.inc{}` calls to a Lua extension's tool, minus the same script's loop
//!   without the calls, median of 20 (the calls' `nested_tool_*` events drained as the agent
//!   drains them).
// Benchmark code: the shared util's system call (process CPU), and unwrap as a failed check.
#![allow(unsafe_code, clippy::unwrap_used)]

#[path = "util/mod.rs"]
mod util;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mypi::config::CodeMode;
use mypi::extensions::code::CodeTool;
use mypi::extensions::discovery;
use mypi::extensions::host::ExtensionHost;
use mypi::extensions::services::HostContext;
use mypi::tools::Tool;
use mypi::vocab::owner::Owner;
use mypi::vocab::run::RunContext;
use serde_json::{json, Value};

const RUNS: usize = 5;

fn main() {
    let dir = std::env::temp_dir().join(format!("mypi-bench-code-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("home")).unwrap();
    let only = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let runs = |part: &str| only.as_deref().is_none_or(|o| part.contains(o));
    if runs("five") {
        five_calls(&dir);
    }
    if runs("thousand") {
        thousand_calls(&dir);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The five calls the task needs, and the filter: the answers that contain an "a".
const WORDS: [&str; 5] = ["apple", "cherry", "banana", "plum", "grape"];

fn five_calls(dir: &Path) {
    let fake = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/common/mcp_fake.py");
    let cfg = dir.join("mcp.json");
    let entry = json!({"command": "python3", "args": [fake], "timeout": 20});
    std::fs::write(&cfg, json!({"mcpServers": {"fake": entry}}).to_string()).unwrap();
    // Listed once, as a user's earlier session would: the runs start with its tools cached.
    let listed = mypi(dir, &cfg, None)
        .args(["mcp", "list"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).contains("fake: connected"));
    let mut direct: Vec<Value> = WORDS
        .iter()
        .map(|w| json!({"tool_calls": [{"name": "mcp__fake__echo", "arguments": {"text": w}}]}))
        .collect();
    direct.push(json!({"text": "apple, banana, grape"}));
    let script = format!(
        "local out = {{}}\nfor _, w in ipairs({}) do\n  local t = mcp.fake.echo{{text = w}}\n  \
         if t:find('a') then out[#out + 1] = t end\nend\nreturn table.concat(out, ', ')",
        lua_list(&WORDS)
    );
    let coded = vec![
        json!({"tool_calls": [{"name": "code", "arguments": {"script": script}}]}),
        json!({"text": "apple, banana, grape"}),
    ];
    for (label, replies, code) in [
        ("one call per turn", direct, false),
        ("code mode", coded, true),
    ] {
        let script = dir.join(format!("{}.jsonl", if code { "code" } else { "direct" }));
        let text: String = replies.iter().map(|r| format!("{r}\n")).collect();
        std::fs::write(&script, text).unwrap();
        let mut walls = Vec::new();
        let mut last = Value::Null;
        for _ in 0..RUNS {
            let start = Instant::now();
            let out = mypi(dir, &cfg, Some(&script))
                .env("MYPI_CODE_MODE", if code { "1" } else { "0" })
                .args(["--no-session", "--json", "-p", "list the fruit with an a"])
                .output()
                .unwrap();
            walls.push(start.elapsed());
            let stdout = String::from_utf8_lossy(&out.stdout).to_string();
            last = stdout
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .find(|e| e["type"] == "final")
                .unwrap_or_else(|| panic!("no final event: {stdout}"));
        }
        assert_eq!(last["text"], "apple, banana, grape");
        println!(
            "five MCP calls and a filter, {label}: {} model requests, {} input tokens sent, \
             wall median {:.0} ms",
            last["turns"],
            last["usage"]["input_tokens"],
            util::median(walls).as_secs_f64() * 1e3
        );
    }
}

fn lua_list(words: &[&str]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("{w:?}")).collect();
    format!("{{{}}}", quoted.join(", "))
}

/// The binary with a home of its own, the MCP file and (when given) a faux script.
fn mypi(dir: &Path, cfg: &Path, script: Option<&Path>) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mypi"));
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir.join("home"))
        .arg("--mcp-config")
        .arg(cfg)
        .args(["--no-extensions", "--provider", "faux"]);
    if let Some(script) = script {
        cmd.arg("--faux-script").arg(script);
    }
    cmd
}

const INC: &str = r#"local n = 0
api.tool{name = "inc", description = "counts", parameters = {type = "object"},
  execute = function() n = n + 1 return tostring(n) end}"#;

fn thousand_calls(dir: &Path) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let root = dir.join("ext");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("inc.lua"), INC).unwrap();
    let ctx = Arc::new(HostContext::standalone(dir.to_path_buf(), Arc::new(|_| {})));
    let host = ExtensionHost::new(ctx.clone());
    let loaded = rt.block_on(host.load_all(discovery::discover(&[root])));
    assert!(loaded.iter().all(|s| s.error.is_none()), "{loaded:?}");
    let code = Arc::new(CodeTool::new(
        Arc::downgrade(&ctx.tools),
        ctx.hooks.clone(),
        CodeMode::default(),
    ));
    ctx.tools.register(Owner::core(), code.clone());
    let calls = "local last\nfor i = 1, 1000 do last = tools.inc{} end\nreturn last";
    let bare = "local last\nfor i = 1, 1000 do last = tostring(i) end\nreturn last";
    let time = |script: &str| -> Duration {
        let mut samples = Vec::new();
        for _ in 0..20 {
            samples.push(rt.block_on(one_call(&code, script, dir)));
        }
        util::median(samples)
    };
    let (with, without) = (time(calls), time(bare));
    let host_time = with.saturating_sub(without);
    println!(
        "a code call making 1,000 tools.* calls to a script tool: {:.1} ms ({:.1} ms without \
         the calls): host time {:.1} ms, {:.1} µs a call",
        with.as_secs_f64() * 1e3,
        without.as_secs_f64() * 1e3,
        host_time.as_secs_f64() * 1e3,
        host_time.as_secs_f64() * 1e6 / 1000.0
    );
    host.unload_all();
}

/// One `code` call from a task on the runtime, its reports drained meanwhile.
async fn one_call(code: &Arc<CodeTool>, script: &str, dir: &Path) -> Duration {
    let (tx, mut rx) = tokio::sync::mpsc::channel(mypi::vocab::run::PROGRESS_QUEUE);
    let drain = tokio::spawn(async move {
        let mut n = 0usize;
        while rx.recv().await.is_some() {
            n += 1;
        }
        n
    });
    let ctx = Arc::new(RunContext::detached(dir.to_path_buf()).for_call("c1", Some(tx)));
    let args = json!({"script": script});
    let (code, started) = (code.clone(), Instant::now());
    let out = tokio::spawn(async move { code.call(args, ctx).await })
        .await
        .unwrap();
    let took = started.elapsed();
    assert!(!out.is_error, "{}", out.content);
    drain.await.unwrap();
    took
}
