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
    let Some(dir) = project(json!({
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [command("python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guard.py")]},
            {"matcher": "*", "hooks": [command(RECORD)]}
        ],
        "PostToolUse": [{"matcher": "Write|Edit", "hooks": [command(RECORD)]}],
        "UserPromptSubmit": [{"hooks": [command("echo CONTEXT-FROM-HOOK; jq -c . >> \"$CLAUDE_PROJECT_DIR/seen.jsonl\"")]}],
        "Stop": [{"hooks": [command(RECORD)]}],
        "SessionStart": [{"hooks": [command("echo SESSION-CONTEXT-FROM-HOOK")]}]
    })) else {
        return;
    };
    dir.write(".claude/hooks/guard.py", GUARD);
    dir.write("build/keep", "k");
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
    // Before its first line the session file is where it will be.
    let id = prompt[0]["session_id"].as_str().unwrap();
    let transcript = prompt[0]["transcript_path"].as_str().unwrap();
    assert!(
        transcript.ends_with(&format!("/{id}.jsonl")),
        "{transcript}"
    );
    assert_eq!(transcript, pre[0]["transcript_path"].as_str().unwrap());
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
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PreToolUse",
            "PostToolUse",
            "Stop"
        ],
        "{runs:?}"
    );
    // The session's start ran before the line: its event comes right after `session`.
    let all = events(&out);
    assert_eq!(all[0]["type"], "session");
    assert_eq!(all[1]["event"], "SessionStart", "{}", all[1]);
}

#[test]
fn json_answers_deny_rewrite_and_add_context() {
    let deny = r#"jq -n '{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "DENIED-BY-JQ"}}'"#;
    let rewrite = r#"jq -c '{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: {new_string: (.tool_input.new_string + " (checked)")}}}'"#;
    let context = r#"jq -n '{systemMessage: "POST-SYSTEM-MESSAGE", hookSpecificOutput: {hookEventName: "PostToolUse", additionalContext: "POST-CONTEXT-FOR-MODEL"}}'"#;
    let Some(dir) = project(json!({
        "PreToolUse": [
            {"matcher": "^Bash$", "hooks": [command(deny)]},
            {"matcher": "Edit", "hooks": [command(rewrite)]}
        ],
        "PostToolUse": [{"matcher": "", "hooks": [command(context)]}]
    })) else {
        return;
    };
    dir.write("notes.txt", "old line\n");
    // jq one-liners as Claude Code's docs write them.
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls(vec![
            ("call_1", "bash", json!({"command": "echo RAN > ran.txt"})),
            (
                "call_2",
                "edit",
                json!({"path": "notes.txt", "old_text": "old line", "new_text": "new line"}),
            ),
        ]),
        Reply::text("done"),
    ]);
    let out = Mypi::new(&dir)
        .openai(&fake)
        .args(["--json", "-p", "go"])
        .run();
    out.ok();
    assert!(!dir.exists("ran.txt"), "a denied call ran");
    // updatedInput came back with mypi's argument names.
    assert_eq!(dir.read("notes.txt"), "new line (checked)\n");
    let reqs = fake.requests();
    let results = tool_results(&reqs[1]);
    assert!(results[0].content.contains("DENIED-BY-JQ"), "{results:?}");
    // additionalContext reached the model with the result; the systemMessage the user.
    assert!(
        results[1].content.contains("POST-CONTEXT-FOR-MODEL"),
        "{results:?}"
    );
    let notices: Vec<Value> = events(&out)
        .into_iter()
        .filter(|e| e["type"] == "notice")
        .collect();
    assert!(
        notices
            .iter()
            .any(|n| n["message"] == "POST-SYSTEM-MESSAGE"),
        "{notices:?}"
    );
}

#[test]
fn continue_false_and_exit_two_stop_a_prompt_before_the_model() {
    if !tools_present() {
        return;
    }
    for (hook, shown) in [
        (
            r#"echo '{"continue": false, "stopReason": "STOPPED-BY-HOOK"}'"#,
            "STOPPED-BY-HOOK",
        ),
        ("echo PROMPT-REFUSED >&2; exit 2", "PROMPT-REFUSED"),
    ] {
        let dir = TestDir::new();
        settings(
            &dir,
            ".claude/settings.json",
            json!({"UserPromptSubmit": [{"hooks": [command(hook)]}]}),
        );
        let fake = FakeOpenAi::with_replies(vec![Reply::text("must not be asked")]);
        let out = Mypi::new(&dir).openai(&fake).args(["-p", "hello"]).run();
        assert_eq!(fake.request_count(), 0, "{}", out.describe());
        assert!(out.stdout.contains(shown), "{}", out.describe());
    }
}

#[test]
fn other_exit_codes_are_a_notice_and_the_call_goes_on() {
    let Some(dir) = project(json!({
        "PreToolUse": [{"hooks": [command("echo HOOK-BROKE >&2; exit 3")]}],
        "PostToolUse": [{"hooks": [command("echo POST-FEEDBACK >&2; exit 2")]}]
    })) else {
        return;
    };
    let fake = bash_then_done("echo RAN > ran.txt");
    let out = Mypi::new(&dir).openai(&fake).args(["-p", "go"]).run();
    out.ok();
    assert!(dir.exists("ran.txt"), "{}", out.describe());
    assert!(
        out.stderr.contains(
            "PreToolUse hook [echo HOOK-BROKE >&2; exit 3] failed with exit code 3: HOOK-BROKE"
        ),
        "{}",
        out.describe()
    );
    // A PostToolUse exit 2: the tool ran; its stderr joins the result the model reads.
    let result = &tool_results(&fake.requests()[1])[0];
    assert!(
        result
            .content
            .contains("PostToolUse hook error: [echo POST-FEEDBACK >&2; exit 2]: POST-FEEDBACK"),
        "{result:?}"
    );
}

#[test]
fn a_hook_past_its_timeout_is_killed_and_mypi_goes_on() {
    let hook = json!({"type": "command", "command": "echo $$ > \"$CLAUDE_PROJECT_DIR/hook.pid\"; sleep 100", "timeout": 1});
    let Some(dir) = project(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]})) else {
        return;
    };
    let fake = bash_then_done("echo RAN > ran.txt");
    let started = Instant::now();
    let out = Mypi::new(&dir)
        .openai(&fake)
        .args(["--json", "-p", "go"])
        .run();
    out.ok();
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    assert!(dir.exists("ran.txt"), "a timed-out hook does not block");
    let runs = hook_runs(&out);
    assert_eq!(runs[0]["outcome"], "timed_out", "{runs:?}");
    assert!(
        out.stdout.contains("timed out after 1 s"),
        "{}",
        out.describe()
    );
    let pid: i32 = dir.read("hook.pid").trim().parse().unwrap();
    assert_gone(pid);
}

/// Waits a few seconds for process `pid` to be gone.
pub fn assert_gone(pid: i32) {
    let start = Instant::now();
    let alive = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            !s.rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
        })
    };
    while alive() && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!alive(), "the hook's process {pid} outlived it");
}

/// A trusted project whose `.claude/settings.json` holds `hooks`; `None` (the test skips)
/// without `jq` or `python3`.
pub fn project(hooks: Value) -> Option<TestDir> {
    if !tools_present() {
        return None;
    }
    let dir = TestDir::new();
    settings(&dir, ".claude/settings.json", hooks);
    Some(dir)
}

/// A fake model that calls `bash` with `cmd`, then answers "done".
pub fn bash_then_done(cmd: &str) -> FakeOpenAi {
    FakeOpenAi::with_replies(vec![
        Reply::tool_calls(vec![("call_1", "bash", json!({"command": cmd}))]),
        Reply::text("done"),
    ])
}

#[test]
fn settings_hooks_run_after_scripts_and_see_what_they_rewrote() {
    let Some(dir) =
        project(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [command(RECORD)]}]}))
    else {
        return;
    };
    super::ext_util::install(
        &dir,
        "rewrite.lua",
        r#"api.on("tool_call", function(e)
  if e.name == "bash" then return { updated_args = { command = "echo SCRIPT > s.txt" } } end
end)"#,
    );
    let fake = bash_then_done("echo MODEL > m.txt");
    let out = Mypi::new(&dir).openai(&fake).args(["-p", "go"]).run();
    out.ok();
    assert!(
        dir.exists("s.txt") && !dir.exists("m.txt"),
        "{}",
        out.describe()
    );
    let seen = seen(&dir);
    assert_eq!(
        of_event(&seen, "PreToolUse")[0]["tool_input"],
        json!({"command": "echo SCRIPT > s.txt"})
    );
}
