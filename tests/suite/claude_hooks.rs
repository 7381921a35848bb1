//! Claude Code's command hooks, unchanged (issue 35, point 3): `.claude/settings.json` and
//! friends written as Claude Code's docs write them (a Python script reading the JSON on
//! stdin, `jq` one-liners), run by the real binary against the fake model servers, which
//! record what each request carried.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{FakeAnthropic, FakeOpenAi, Mypi, Output, Reply, TestDir};

use super::json_events::events;
use super::wire::{system_prompt, tool_results, user_texts};

/// The guard of Claude Code's docs: blocks `rm -rf` with exit 2 and a reason on stderr, and
/// keeps what it read.
const GUARD: &str = r#"#!/usr/bin/env python3
import json, os, sys
data = json.load(sys.stdin)
with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "guard.jsonl"), "a") as f:
    f.write(json.dumps(data) + "\n")
command = data.get("tool_input", {}).get("command", "")
if "rm -rf" in command:
    print("GUARD-BLOCKED rm -rf is not allowed here", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
"#;

/// A hook that appends its stdin JSON, one line, to `seen.jsonl` in the project.
pub const RECORD: &str = r#"jq -c . >> "$CLAUDE_PROJECT_DIR/seen.jsonl""#;

/// Skips a test (with a line saying so) when `jq` or `python3` is missing.
pub fn tools_present() -> bool {
    for tool in ["jq", "python3"] {
        let found = std::process::Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            eprintln!("skipped: {tool} is not installed (.ci/run installs it)");
            return false;
        }
    }
    true
}

pub fn command(cmd: &str) -> Value {
    json!({"type": "command", "command": cmd})
}

/// Writes `{"hooks": hooks}` to `rel` in `dir`.
pub fn settings(dir: &TestDir, rel: &str, hooks: Value) {
    dir.write(
        rel,
        &serde_json::to_string_pretty(&json!({"hooks": hooks})).unwrap(),
    );
}

/// The hook inputs `seen.jsonl` recorded, in order.
pub fn seen(dir: &TestDir) -> Vec<Value> {
    if !dir.exists("seen.jsonl") {
        return Vec::new();
    }
    dir.read("seen.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn of_event<'a>(seen: &'a [Value], name: &str) -> Vec<&'a Value> {
    seen.iter()
        .filter(|v| v["hook_event_name"] == name)
        .collect()
}

pub fn hook_runs(out: &Output) -> Vec<Value> {
    events(out)
        .into_iter()
        .filter(|e| e["type"] == "hook_run")
        .collect()
}

#[test]
fn a_python_guard_blocks_rm_rf_and_the_model_reads_why() {
    if !tools_present() {
        return;
    }
    let dir = TestDir::new();
    dir.write(".claude/hooks/guard.py", GUARD);
    dir.write("build/keep", "k");
    settings(
        &dir,
        ".claude/settings.json",
        json!({
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [command("python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guard.py")]},
                {"matcher": "*", "hooks": [command(RECORD)]}
            ],
            "PostToolUse": [{"matcher": "Write|Edit", "hooks": [command(RECORD)]}],
            "UserPromptSubmit": [{"hooks": [command("echo CONTEXT-FROM-HOOK; jq -c . >> \"$CLAUDE_PROJECT_DIR/seen.jsonl\"")]}],
            "Stop": [{"hooks": [command(RECORD)]}],
            "SessionStart": [{"hooks": [command("echo SESSION-CONTEXT-FROM-HOOK")]}]
        }),
    );
    let fake = FakeAnthropic::with_replies(vec![
        Reply::tool_calls(vec![(
            "toolu_1",
            "bash",
            json!({"command": "rm -rf build"}),
        )]),
        Reply::tool_calls(vec![(
            "toolu_2",
            "write",
            json!({"path": "a.txt", "content": "x"}),
        )]),
        Reply::text("done"),
    ]);
    let out = Mypi::new(&dir)
        .anthropic(&fake)
        .args(["--json", "-p", "clean up"])
        .run();
    out.ok();
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 3, "{}", out.describe());
    // UserPromptSubmit's stdout is context with the prompt; SessionStart's is in the system
    // prompt.
    let first = user_texts(&reqs[0]).join("\n");
    assert!(
        first.contains("clean up") && first.contains("CONTEXT-FROM-HOOK"),
        "{first}"
    );
    assert!(
        system_prompt(&reqs[0]).contains("SESSION-CONTEXT-FROM-HOOK"),
        "{}",
        system_prompt(&reqs[0])
    );
    // The guard blocked the call: the tool did not run, the model got an error result.
    assert!(dir.exists("build/keep"), "rm -rf ran");
    let blocked = &tool_results(&reqs[1])[0];
    assert!(blocked.is_error, "{blocked:?}");
    assert!(
        blocked.content.contains("PreToolUse hook error: [python3")
            && blocked
                .content
                .contains("GUARD-BLOCKED rm -rf is not allowed here"),
        "{}",
        blocked.content
    );
    assert_eq!(dir.read("a.txt"), "x");
    // What the hooks read: Claude Code's names and fields.
    let seen = seen(&dir);
    let pre = of_event(&seen, "PreToolUse");
    assert_eq!(pre.len(), 1, "the blocked call stops the chain: {seen:?}");
    assert_eq!(pre[0]["tool_name"], "Write");
    let abs = dir.join("a.txt").display().to_string();
    assert_eq!(
        pre[0]["tool_input"],
        json!({"file_path": abs, "content": "x"})
    );
    assert_eq!(pre[0]["tool_use_id"], "toolu_2");
    assert_eq!(pre[0]["permission_mode"], "default");
    assert_eq!(pre[0]["cwd"], dir.path().display().to_string());
    assert!(!pre[0]["session_id"].as_str().unwrap().is_empty());
    assert!(
        pre[0]["transcript_path"]
            .as_str()
            .unwrap()
            .ends_with(".jsonl"),
        "{}",
        pre[0]
    );
    let guard: Value =
        serde_json::from_str(dir.read("guard.jsonl").lines().next().unwrap()).unwrap();
    assert_eq!(guard["tool_name"], "Bash");
    assert_eq!(guard["tool_input"], json!({"command": "rm -rf build"}));
    let post = of_event(&seen, "PostToolUse");
    assert_eq!(post.len(), 1);
    assert_eq!(post[0]["tool_response"]["filePath"], abs);
    let prompt = of_event(&seen, "UserPromptSubmit");
    assert_eq!(prompt[0]["prompt"], "clean up");
    let stop = of_event(&seen, "Stop");
    assert_eq!(stop.len(), 1);
    assert_eq!(stop[0]["stop_hook_active"], false);
    assert_eq!(stop[0]["last_assistant_message"], "done");
    // A `hook_run` event for each run.
    let runs = hook_runs(&out);
    let blocked_run = runs
        .iter()
        .find(|r| r["outcome"] == "blocked")
        .expect("the guard's run");
    assert_eq!(blocked_run["event"], "PreToolUse");
    assert_eq!(blocked_run["tool"], "Bash");
    assert_eq!(blocked_run["exit_code"], 2);
    assert!(blocked_run["duration_ms"].is_u64());
    assert!(blocked_run["source"]
        .as_str()
        .unwrap()
        .ends_with(".claude/settings.json"));
    let names: Vec<&str> = runs.iter().map(|r| r["event"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "UserPromptSubmit",
            "PreToolUse",
            "PreToolUse",
            "PostToolUse",
            "Stop"
        ],
        "{runs:?}"
    );
}
