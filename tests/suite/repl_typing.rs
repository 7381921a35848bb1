//! Typing while the agent works, and multi-line prompts (issue 11, points 5 and 7), on a real
//! terminal: Enter during a run queues a steering message the model sees after the tool call
//! under way, Alt+Enter a follow-up that runs after; nothing typed is echoed into the reply;
//! a line begun when the run ends stays for the prompt; Esc cancels (arrow keys do not);
//! `\` + Enter, Alt+Enter and a bracketed paste make one multi-line prompt.

use std::time::Duration;

use serde_json::{json, Value};

use super::ext_util::faux;
use super::wire::{only_session, session_messages};
use crate::common::pty::{visible_lines, Pty};
use crate::common::TestDir;

const T: Duration = Duration::from_secs(20);

fn sleep_call(secs: &str) -> Value {
    json!({"tool_calls": [{"name": "bash", "arguments": {"command": format!("sleep {secs}")}}]})
}

/// A REPL on a terminal, with a session kept; the position after its first prompt.
fn start(dir: &TestDir, replies: &[Value]) -> (Pty, usize) {
    let m = faux(dir, replies).args(["--no-watch", "--no-builtin-extensions"]);
    let pty = Pty::spawn_sized(m.command(), 100);
    let at = pty.wait_for("> ", 0, T);
    (pty, at)
}

fn quit(mut pty: Pty) -> String {
    pty.type_keys("/quit\r");
    assert_eq!(pty.wait(T), 0, "{}", pty.screen());
    pty.screen()
}

/// The session's messages as `role: text` (tool calls and results as `call`/`result`).
fn transcript(dir: &TestDir) -> Vec<String> {
    session_messages(&only_session(dir))
        .iter()
        .map(|m| {
            let role = m["role"].as_str().unwrap_or("?");
            match (&m["content"], role) {
                (_, "tool") => "result".to_string(),
                (Value::String(s), _) if !s.is_empty() => format!("{role}: {s}"),
                _ => format!("{role}: call"),
            }
        })
        .collect()
}

#[test]
fn enter_during_a_tool_call_steers_the_model_and_is_never_echoed_into_the_reply() {
    let dir = TestDir::new();
    let (mut pty, at) = start(
        &dir,
        &[sleep_call("1.5"), json!({"text": "switching to python"})],
    );
    pty.type_keys("go\r");
    let at = pty.wait_for("→ bash sleep 1.5", at, T);
    pty.type_keys("use python");
    let at = pty.wait_for("> use python", at, T);
    pty.type_keys("\r");
    let at = pty.wait_for("» queued as steering: use python", at, T);
    let at = pty.wait_for("switching to python", at, T);
    pty.wait_for(" s\r\n", at, T);
    let screen = quit(pty);
    assert_eq!(
        transcript(&dir),
        [
            "user: go",
            "assistant: call",
            "result",
            "user: use python",
            "assistant: switching to python"
        ]
    );
    // What is on the terminal: the queued line, the user's line when the model gets it
    // (after the tool's result), and no echo of the typing anywhere else.
    let lines = visible_lines(&screen);
    let typed: Vec<&String> = lines.iter().filter(|l| l.contains("use python")).collect();
    assert_eq!(
        typed,
        ["» queued as steering: use python", "> use python"],
        "{lines:#?}"
    );
    let result = lines.iter().position(|l| l == "  ✓ exit 0");
    let delivered = lines.iter().position(|l| l == "> use python");
    assert!(result < delivered, "{lines:#?}");
}

#[test]
fn alt_enter_during_a_run_queues_a_follow_up_that_runs_after_it() {
    let dir = TestDir::new();
    let replies = [
        sleep_call("1.5"),
        json!({"text": "first answer"}),
        json!({"text": "second answer"}),
    ];
    let (mut pty, at) = start(&dir, &replies);
    pty.type_keys("go\r");
    let at = pty.wait_for("→ bash", at, T);
    pty.type_keys("and then this\x1b\r");
    let at = pty.wait_for("» queued as follow-up: and then this", at, T);
    let at = pty.wait_for("first answer", at, T);
    let at = pty.wait_for("second answer", at, T);
    pty.wait_for(" s\r\n", at, T);
    quit(pty);
    assert_eq!(
        transcript(&dir),
        [
            "user: go",
            "assistant: call",
            "result",
            "assistant: first answer",
            "user: and then this",
            "assistant: second answer"
        ]
    );
}

#[test]
fn esc_cancels_a_running_prompt_and_arrow_keys_do_not() {
    let dir = TestDir::new();
    let slow = json!({"text": "one two three four five six seven eight nine ten ".repeat(30), "delay_ms": 20});
    let (mut pty, at) = start(&dir, &[slow, json!({"text": "still here"})]);
    pty.type_keys("go\r");
    let at = pty.wait_for("four", at, T);
    pty.type_keys("\x1b[A\x1b[D");
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !pty.screen()[at..].contains("cancelling"),
        "an arrow key cancelled"
    );
    pty.type_keys("\x1b");
    let at = pty.wait_for("Esc: cancelling…", at, T);
    let at = pty.wait_for("> ", at, T);
    pty.type_keys("again\r");
    pty.wait_for("still here", at, T);
    quit(pty);
    let t = transcript(&dir);
    assert!(t[1].ends_with("[interrupted by the user]"), "{t:?}");
    assert_eq!(t[2..], ["user: again", "assistant: still here"]);
}

#[test]
fn a_line_begun_when_the_run_ends_is_kept_for_the_prompt() {
    let dir = TestDir::new();
    let replies = [
        sleep_call("1"),
        json!({"text": "done"}),
        json!({"text": "ok"}),
    ];
    let (mut pty, at) = start(&dir, &replies);
    pty.type_keys("go\r");
    let at = pty.wait_for("→ bash", at, T);
    pty.type_keys("half typed");
    let at = pty.wait_for("done", at, T);
    let at = pty.wait_for("> half typed", at, T);
    pty.type_keys(" and finished\r");
    pty.wait_for("ok", at, T);
    quit(pty);
    assert_eq!(transcript(&dir)[4], "user: half typed and finished");
}

#[test]
fn backslash_enter_alt_enter_and_a_paste_make_one_multi_line_prompt() {
    let dir = TestDir::new();
    let replies = [
        json!({"text": "got three lines"}),
        json!({"text": "got the paste"}),
        sleep_call("1"),
        json!({"text": "steered"}),
    ];
    let (mut pty, at) = start(&dir, &replies);
    pty.type_keys("line one\\\rline two\x1b\rline three\r");
    let at = pty.wait_for("got three lines", at, T);
    let at = pty.wait_for(" s\r\n", at, T);
    pty.type_keys("\x1b[200~pasted one\rpasted two\x1b[201~\r");
    let at = pty.wait_for("got the paste", at, T);
    let at = pty.wait_for(" s\r\n", at, T);
    // A paste during a run is one steering message too.
    pty.type_keys("go\r");
    let at = pty.wait_for("→ bash", at, T);
    pty.type_keys("\x1b[200~fix a\rfix b\x1b[201~\r");
    let at = pty.wait_for("» queued as steering: fix a ⏎ fix b", at, T);
    pty.wait_for("steered", at, T);
    quit(pty);
    let t = transcript(&dir);
    assert_eq!(t[0], "user: line one\nline two\nline three");
    assert_eq!(t[2], "user: pasted one\npasted two");
    assert_eq!(t[7], "user: fix a\nfix b", "{t:#?}");
}

#[test]
fn keys_typed_right_after_enter_are_not_echoed_before_the_run_reads_them() {
    let dir = TestDir::new();
    let (mut pty, at) = start(&dir, &[sleep_call("1"), json!({"text": "heard you"})]);
    // The prompt, and at once the start of the next line (before the run's key reader may
    // have started: those keys must wait unechoed for it).
    pty.type_keys("go\r");
    std::thread::sleep(Duration::from_millis(20));
    pty.type_keys("early words");
    let at = pty.wait_for("> early words", at, T);
    pty.type_keys("\r");
    let at = pty.wait_for("» queued as steering: early words", at, T);
    let at = pty.wait_for("heard you", at, T);
    pty.wait_for(" s\r\n", at, T);
    let screen = quit(pty);
    let lines = visible_lines(&screen);
    let typed: Vec<&String> = lines.iter().filter(|l| l.contains("early words")).collect();
    // Queued, then shown as the user's line when it reaches the model (issue 34).
    assert_eq!(
        typed,
        ["» queued as steering: early words", "> early words"],
        "{lines:#?}"
    );
    assert_eq!(transcript(&dir)[3], "user: early words");
}

/// Issue 32, point 5: lines typed (or pasted without bracketed paste) in one go behind a
/// slash command are not lost: each runs after the one before.
#[test]
fn lines_typed_behind_a_slash_command_all_run() {
    let dir = TestDir::new();
    let replies = [
        json!({"text": "answer two"}),
        json!({"text": "answer three"}),
    ];
    let (mut pty, at) = start(&dir, &replies);
    pty.type_keys("/tools\rline two\rline three\r");
    let at = pty.wait_for("Tools:", at, T);
    let at = pty.wait_for("answer two", at, T);
    let at = pty.wait_for("answer three", at, T);
    pty.wait_for(" s\r\n", at, T);
    quit(pty);
    assert_eq!(
        transcript(&dir),
        [
            "user: line two",
            "assistant: answer two",
            "user: line three",
            "assistant: answer three"
        ]
    );
}

/// Several lines arriving in one read during a run (a paste the terminal did not mark) are
/// each queued; none is dropped.
#[test]
fn lines_pasted_in_one_go_during_a_run_are_each_queued() {
    let dir = TestDir::new();
    let (mut pty, at) = start(&dir, &[sleep_call("1.5"), json!({"text": "ok"})]);
    pty.type_keys("go\r");
    let at = pty.wait_for("→ bash sleep 1.5", at, T);
    pty.type_keys("steer one\rsteer two\rsteer three\r");
    let at = pty.wait_for("» queued as steering: steer one", at, T);
    let at = pty.wait_for("» queued as steering: steer two", at, T);
    let at = pty.wait_for("» queued as steering: steer three", at, T);
    pty.wait_for("ok", at, T);
    quit(pty);
    let t = transcript(&dir);
    for line in ["user: steer one", "user: steer two", "user: steer three"] {
        assert!(t.iter().any(|l| l == line), "{line} missing: {t:?}");
    }
}

/// Issue 34, point 1: Esc at an idle prompt does nothing (it is not a Meta prefix for the
/// next key), while Alt+Enter (Esc and Enter sent together) still makes a new line.
#[test]
fn esc_at_an_idle_prompt_does_nothing() {
    let dir = TestDir::new();
    let replies = [json!({"text": "first"}), json!({"text": "second"})];
    let (mut pty, at) = start(&dir, &replies);
    pty.type_keys("\x1b");
    std::thread::sleep(Duration::from_millis(200));
    pty.type_keys("def\r");
    let at = pty.wait_for("first", at, T);
    let at = pty.wait_for("> ", at, T);
    pty.type_keys("\x1b");
    std::thread::sleep(Duration::from_millis(200));
    pty.type_keys("\r");
    std::thread::sleep(Duration::from_millis(200));
    pty.type_keys("x\x1b\ry\r");
    pty.wait_for("second", at, T);
    quit(pty);
    assert_eq!(
        transcript(&dir),
        [
            "user: def",
            "assistant: first",
            "user: x\ny",
            "assistant: second"
        ]
    );
}

/// Issue 34, point 1: cancelling a run stops the messages queued behind it too, and puts
/// their text back at the prompt (steering first, then follow-ups) instead of running them.
#[test]
fn a_cancel_puts_the_queued_messages_back_at_the_prompt() {
    let dir = TestDir::new();
    let (mut pty, at) = start(&dir, &[sleep_call("5"), json!({"text": "resent"})]);
    pty.type_keys("go\r");
    let at = pty.wait_for("→ bash sleep 5", at, T);
    pty.type_keys("later\x1b\r");
    let at = pty.wait_for("» queued as follow-up: later", at, T);
    pty.type_keys("steer one\r");
    let at = pty.wait_for("» queued as steering: steer one", at, T);
    pty.type_keys("\x1b");
    let at = pty.wait_for("» 2 queued messages put back at the prompt", at, T);
    let at = pty.wait_for("> ", at, T);
    // Nothing ran by itself: the text waits at the prompt, and Enter sends it as one prompt.
    std::thread::sleep(Duration::from_millis(300));
    assert!(!pty.screen()[at..].contains("resent"), "{}", pty.screen());
    pty.type_keys("\r");
    pty.wait_for("resent", at, T);
    quit(pty);
    let t = transcript(&dir);
    assert_eq!(
        t.last().map(String::as_str),
        Some("assistant: resent"),
        "{t:?}"
    );
    assert_eq!(t[t.len() - 2], "user: steer one\nlater", "{t:?}");
}

/// Issue 34, point 1: a line typed after a script's question timed out is the user's next
/// prompt; it is not dropped as a late answer.
#[test]
fn a_line_typed_after_a_question_timed_out_is_the_next_prompt() {
    let dir = TestDir::new();
    dir.write(
        ".agents/extensions/ask.lua",
        r#"api.command("ask", function(_, ctx)
  local yes = ctx.ui.confirm("Proceed?", { timeout_ms = 300 })
  return "answered " .. tostring(yes)
end)"#,
    );
    let (mut pty, at) = start(&dir, &[json!({"text": "the prompt ran"})]);
    pty.type_keys("/ask\r");
    let at = pty.wait_for("answered false", at, T);
    std::thread::sleep(Duration::from_millis(200));
    pty.type_keys("hello there\r");
    pty.wait_for("the prompt ran", at, T);
    quit(pty);
    assert_eq!(
        transcript(&dir),
        ["user: hello there", "assistant: the prompt ran"]
    );
}
