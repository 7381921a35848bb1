//! Claude Code's command hooks, continued: what a runaway hook costs, Ctrl-C, the trust gate,
//! broken settings files, child agents, `Stop` making the agent go on, the session's start
//! and end, `/hooks`, and Codex's `hooks.json`.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::mcp::watch_peak_memory;
use crate::common::{FakeOpenAi, Mypi, Reply, TestDir};

use super::claude_hooks::{
    assert_gone, bash_then_done, command, hook_runs, of_event, project, seen, settings,
    tools_present, RECORD,
};
use super::wire::{tool_results, user_texts};

#[test]
fn a_hook_printing_100_mb_costs_bounded_memory_and_is_reported() {
    let Some(dir) =
        project(json!({"UserPromptSubmit": [{"hooks": [command("yes | head -c 100000000")]}]}))
    else {
        return;
    };
    let fake = FakeOpenAi::with_replies(vec![Reply::text("ok")]);
    let m = Mypi::new(&dir)
        .openai(&fake)
        .args(["--json", "-p", "hello"])
        .spawn();
    let peak = watch_peak_memory(m.pid());
    let out = m.wait();
    out.ok();
    let peak_mib = peak.load(std::sync::atomic::Ordering::Relaxed) / 1024;
    assert!(peak_mib < 80, "peak memory {peak_mib} MiB");
    assert!(
        out.stdout.contains("printed 100000000 bytes on stdout"),
        "{}",
        out.describe()
    );
    // The context the model gets is cut too.
    let sent = user_texts(&fake.requests()[0]).join("\n");
    assert!(sent.len() < 20_000, "{} bytes of context", sent.len());
    assert!(
        sent.contains("cut to 10000 characters"),
        "{}",
        &sent[sent.len() - 200..]
    );
    assert_eq!(hook_runs(&out)[0]["outcome"], "ok");
}

#[test]
fn ctrl_c_kills_the_hook_and_its_children() {
    let hook = "sleep 100 & echo $! > \"$CLAUDE_PROJECT_DIR/child.pid\"; echo $$ > \"$CLAUDE_PROJECT_DIR/hook.pid\"; wait";
    let Some(dir) = project(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [command(hook)]}]}))
    else {
        return;
    };
    let fake = bash_then_done("echo RAN > ran.txt");
    let mut m = Mypi::new(&dir).openai(&fake).arg("--no-watch").spawn();
    m.send_line("go");
    let start = std::time::Instant::now();
    while !dir.exists("hook.pid") && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(200));
    m.interrupt();
    m.wait_for_text("cancel", Duration::from_secs(5));
    for f in ["hook.pid", "child.pid"] {
        assert_gone(dir.read(f).trim().parse().unwrap());
    }
    m.send_line("/quit");
    let out = m.wait();
    out.ok();
    assert!(!dir.exists("ran.txt"), "{}", out.describe());
}

#[test]
fn an_untrusted_project_hooks_are_skipped_with_a_notice_the_users_act() {
    let touch = |name: &str| command(&format!("touch \"$CLAUDE_PROJECT_DIR/{name}\""));
    let Some(dir) = project(json!({"UserPromptSubmit": [{"hooks": [touch("project-ran")]}]}))
    else {
        return;
    };
    dir.untrust();
    settings(
        &dir,
        "home/.claude/settings.json",
        json!({"UserPromptSubmit": [{"hooks": [touch("home-ran")]}]}),
    );
    let fake = FakeOpenAi::with_replies(vec![Reply::text("ok")]);
    let out = Mypi::new(&dir).openai(&fake).args(["-p", "hello"]).run();
    out.ok();
    assert!(dir.exists("home-ran"), "{}", out.describe());
    assert!(
        !dir.exists("project-ran"),
        "an untrusted project's hook ran"
    );
    let line = format!(
        "mypi: settings hooks (.claude/settings.json) in {} not loaded: the folder is not trusted",
        dir.path().display()
    );
    assert!(out.stderr.contains(&line), "{}", out.describe());
    assert_eq!(
        out.stderr.matches("not loaded").count(),
        1,
        "{}",
        out.describe()
    );
    // Trusted, it acts.
    let fake = FakeOpenAi::with_replies(vec![Reply::text("ok")]);
    Mypi::new(&dir)
        .openai(&fake)
        .args(["--trust", "-p", "hello"])
        .run()
        .ok();
    assert!(dir.exists("project-ran"));
}

#[test]
fn a_broken_settings_file_is_one_line_with_file_and_line_and_the_agent_goes_on() {
    let dir = TestDir::new();
    dir.write(
        ".claude/settings.json",
        "{\n  \"hooks\": {\n    \"Stop\": [\n  }\n}\n",
    );
    let fake = FakeOpenAi::with_replies(vec![Reply::text("still here")]);
    let out = Mypi::new(&dir).openai(&fake).args(["-p", "hello"]).run();
    out.ok();
    assert_eq!(out.stdout, "still here\n");
    let file = dir.join(".claude/settings.json").display().to_string();
    let lines: Vec<&str> = out.stderr.lines().filter(|l| l.contains(&file)).collect();
    assert_eq!(lines.len(), 1, "{}", out.describe());
    assert!(
        lines[0].starts_with(&format!("mypi: {file}:4:3: "))
            && lines[0].ends_with("its hooks are not loaded"),
        "{}",
        lines[0]
    );
}

#[test]
fn a_child_agents_calls_fire_pre_tool_use_and_its_end_subagent_stop() {
    let Some(dir) = project(json!({
        "PreToolUse": [{"matcher": "Read", "hooks": [command("echo CHILD-READ-BLOCKED >&2; exit 2")]},
                       {"hooks": [command(RECORD)]}],
        "SubagentStop": [{"hooks": [command(RECORD)]}],
        "Stop": [{"hooks": [command(RECORD)]}]
    })) else {
        return;
    };
    dir.write(
        ".agents/agents/scout.md",
        "---\nname: scout\ndescription: the scout\ntools: read\n---\nYou scout.\n",
    );
    dir.write("notes.txt", "a note\n");
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls(vec![(
            "call_1",
            "subagent",
            json!({"agent": "scout", "task": "read the notes"}),
        )]),
        Reply::tool_calls(vec![("call_c1", "read", json!({"path": "notes.txt"}))]),
        Reply::text("child done"),
        Reply::text("all done"),
    ]);
    let out = Mypi::new(&dir).openai(&fake).args(["-p", "go"]).run();
    out.ok();
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 4, "{}", out.describe());
    // The child's read was blocked by the guard; the child's model read why.
    let child_result = &tool_results(&reqs[2])[0];
    assert!(
        child_result.content.contains("CHILD-READ-BLOCKED"),
        "{child_result:?}"
    );
    let seen = seen(&dir);
    let pre: Vec<&str> = of_event(&seen, "PreToolUse")
        .iter()
        .map(|v| v["tool_name"].as_str().unwrap())
        .collect();
    assert_eq!(pre, ["subagent"], "{seen:?}");
    let sub = of_event(&seen, "SubagentStop");
    assert_eq!(sub.len(), 1, "{seen:?}");
    assert_eq!(sub[0]["last_assistant_message"], "child done");
    let stop = of_event(&seen, "Stop");
    assert_eq!(stop.len(), 1);
    assert_eq!(stop[0]["last_assistant_message"], "all done");
}

#[test]
fn a_stop_hook_blocking_makes_the_agent_go_on_once() {
    // Claude Code's docs' loop guard: stop_hook_active says the agent already went on.
    let guard = "jq -e .stop_hook_active >/dev/null && exit 0; ";
    for answer in [
        "echo 'KEEP-GOING: run the tests' >&2; exit 2",
        r#"echo '{"decision": "block", "reason": "KEEP-GOING: run the tests"}'"#,
    ] {
        // A matcher on Stop is not read (Claude Code reads none there).
        let hook = command(&format!("{guard}{answer}"));
        let Some(dir) = project(json!({"Stop": [{"matcher": "Bash", "hooks": [hook]}]})) else {
            return;
        };
        let fake = FakeOpenAi::with_replies(vec![
            Reply::text("first answer"),
            Reply::text("second answer"),
        ]);
        let out = Mypi::new(&dir).openai(&fake).args(["-p", "go"]).run();
        out.ok();
        assert_eq!(out.stdout.trim(), "second answer", "{}", out.describe());
        let reqs = fake.requests();
        assert_eq!(reqs.len(), 2);
        let last = user_texts(&reqs[1]).pop().unwrap();
        assert!(
            last.starts_with("Stop hook feedback:") && last.contains("KEEP-GOING: run the tests"),
            "{last}"
        );
    }
}

#[test]
fn session_hooks_see_start_and_end_and_slash_hooks_lists_them() {
    let Some(dir) = project(
        json!({"SessionStart": [{"matcher": "startup", "hooks": [command(RECORD)]}],
               "SessionEnd": [{"hooks": [command(RECORD)]}]}),
    ) else {
        return;
    };
    settings(
        &dir,
        "home/.codex/hooks.json",
        json!({"PreToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "exit 0", "timeout": 5}]}]}),
    );
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "/hooks"])
        .run();
    out.ok();
    let codex = dir.join("home/.codex/hooks.json").display().to_string();
    let project = dir.join(".claude/settings.json").display().to_string();
    for line in [
        "PreToolUse".to_string(),
        format!("  Write|Edit   exit 0  ({codex}, timeout 5 s)"),
        "SessionStart".to_string(),
        format!("  startup      {RECORD}  ({project}, timeout 60 s)"),
        "SessionEnd".to_string(),
    ] {
        assert!(
            out.stdout.lines().any(|l| l == line),
            "{line:?} missing:\n{}",
            out.stdout
        );
    }
    let seen = seen(&dir);
    let names: Vec<(&str, &str)> = seen
        .iter()
        .map(|v| {
            let what = v["source"].as_str().or(v["reason"].as_str()).unwrap();
            (v["hook_event_name"].as_str().unwrap(), what)
        })
        .collect();
    assert_eq!(
        names,
        [
            ("SessionStart", "startup"),
            ("SessionEnd", "prompt_input_exit")
        ]
    );
    assert!(seen[0].get("permission_mode").is_none(), "{}", seen[0]);
}

#[test]
fn codex_hooks_json_blocks_like_claude_codes() {
    if !tools_present() {
        return;
    }
    let dir = TestDir::new();
    let hooks: Value = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [command(
        r#"jq -r .tool_input.command | grep -q push && { echo 'CODEX-NO-PUSH' >&2; exit 2; }; exit 0"#
    )]}]});
    settings(&dir, ".codex/hooks.json", hooks);
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls(vec![
            (
                "call_1",
                "bash",
                json!({"command": "git push > pushed.txt"}),
            ),
            ("call_2", "bash", json!({"command": "echo ok > fine.txt"})),
        ]),
        Reply::text("done"),
    ]);
    let out = Mypi::new(&dir).openai(&fake).args(["-p", "go"]).run();
    out.ok();
    assert!(!dir.exists("pushed.txt") && dir.exists("fine.txt"));
    let results = tool_results(&fake.requests()[1]);
    assert!(results[0].content.contains("CODEX-NO-PUSH"), "{results:?}");
}

#[test]
fn notification_hooks_hear_notices_and_permission_questions() {
    let Some(dir) = project(json!({
        "Notification": [{"hooks": [command(RECORD)]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [command(
            r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "ASK-REASON"}}'"#
        )]}],
        "PermissionRequest": [{"hooks": [command("true")]}]
    })) else {
        return;
    };
    // In print mode nobody can answer: the call does not run, and the user is told.
    let fake = bash_then_done("echo RAN > ran.txt");
    let out = Mypi::new(&dir).openai(&fake).args(["-p", "go"]).run();
    out.ok();
    assert!(!dir.exists("ran.txt"), "{}", out.describe());
    assert!(
        out.stderr
            .contains("a PreToolUse hook asks to confirm this Bash call (ASK-REASON); nobody can answer in print mode, so it is not run"),
        "{}",
        out.describe()
    );
    let kinds = |seen: &[Value]| -> Vec<String> {
        of_event(seen, "Notification")
            .iter()
            .map(|v| format!("{} {}", v["notification_type"], v["message"]))
            .collect()
    };
    assert!(
        kinds(&seen(&dir))
            .iter()
            .any(|k| k == "\"permission_prompt\" \"mypi needs your permission to use Bash\""),
        "{:?}",
        kinds(&seen(&dir))
    );
    // A notice (here: an event mypi does not run) reaches the Notification hooks.
    let mut m = Mypi::new(&dir)
        .args(["--provider", "faux", "--no-watch"])
        .spawn();
    let start = std::time::Instant::now();
    while !kinds(&seen(&dir))
        .iter()
        .any(|k| k.contains("PermissionRequest"))
        && start.elapsed() < Duration::from_secs(20)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    m.send_line("/quit");
    m.wait().ok();
    let notices = kinds(&seen(&dir));
    assert!(
        notices.iter().any(|k| k.starts_with("\"notice\"")
            && k.contains("hooks for PermissionRequest are not run by mypi")),
        "{notices:?}"
    );
}

#[test]
fn a_pre_compact_hook_sees_the_trigger_and_exit_2_cancels_the_compaction() {
    let hook = "jq -c . >> \"$CLAUDE_PROJECT_DIR/seen.jsonl\"; echo KEEP-THE-DETAILS >&2; exit 2";
    let Some(dir) =
        project(json!({"PreCompact": [{"matcher": "manual", "hooks": [command(hook)]}]}))
    else {
        return;
    };
    let fake = FakeOpenAi::with_replies(vec![Reply::text("a"), Reply::text("b")]);
    for (i, prompt) in ["one", "two"].into_iter().enumerate() {
        let mut m = Mypi::new(&dir).openai(&fake);
        if i > 0 {
            m = m.arg("--continue");
        }
        m.args(["-p", prompt]).run().ok();
    }
    let out = Mypi::new(&dir)
        .openai(&fake)
        .args(["--continue", "-p", "/compact keep names"])
        .run();
    out.ok();
    assert!(
        out.stdout
            .contains("Compaction cancelled: PreCompact hook [")
            && out.stdout.contains("KEEP-THE-DETAILS"),
        "{}",
        out.describe()
    );
    assert_eq!(fake.request_count(), 2, "no summary was asked for");
    let seen = seen(&dir);
    let pre = of_event(&seen, "PreCompact");
    assert_eq!(pre.len(), 1, "{seen:?}");
    assert_eq!(pre[0]["trigger"], "manual");
    assert_eq!(pre[0]["custom_instructions"], "keep names");
}

#[test]
fn an_ask_answer_asks_the_user_in_the_repl() {
    let ask = r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "touches the disk"}}'"#;
    let Some(dir) = project(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [command(ask)]}]}))
    else {
        return;
    };
    for (answer, runs) in [("y", true), ("n", false)] {
        let _ = std::fs::remove_file(dir.join("ran.txt"));
        let fake = bash_then_done("echo RAN > ran.txt");
        let mut m = Mypi::new(&dir).openai(&fake).arg("--no-watch").spawn();
        m.send_line("go");
        m.wait_for_text(
            "A hook asks before this Bash call (touches the disk). Run it? [y/N]",
            Duration::from_secs(20),
        );
        m.send_line(answer);
        m.wait_for_text("done", Duration::from_secs(20));
        m.send_line("/quit");
        m.wait().ok();
        assert_eq!(dir.exists("ran.txt"), runs, "{answer}");
        let result = &tool_results(&fake.requests()[1])[0];
        assert_eq!(
            result
                .content
                .contains("the user did not allow this Bash call"),
            !runs,
            "{result:?}"
        );
    }
}
