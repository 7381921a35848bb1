//! Ctrl-C and Ctrl-D in the REPL (issue 11, point 7): a reply cancelled while it streams is
//! kept (marked interrupted) so the next prompt's model sees where it stopped; Ctrl-C at an
//! empty prompt says how to quit and a second one quits; leaving says how to resume.

use std::time::Duration;

use super::ext_util::{faux, WAIT};
use super::wire::{only_session, session_messages};
use serde_json::json;

use crate::common::TestDir;

#[test]
fn a_reply_cancelled_while_it_streams_is_kept_as_interrupted() {
    let dir = TestDir::new();
    let slow = json!({"text": format!("The first line of a long answer.\n{}", "more words ".repeat(200)),
                      "delay_ms": 20});
    let mut m = faux(&dir, &[slow, json!({"text": "picking up"})])
        .arg("--no-watch")
        .spawn();
    m.send_line("explain");
    m.wait_for_text("The first line", WAIT);
    m.interrupt();
    m.wait_for_text("cancel", WAIT);
    m.send_line("go on");
    m.wait_for_line("picking up", WAIT);
    m.send_line("/quit");
    let out = m.wait();
    out.ok();
    // The session keeps what was shown, marked, before the next prompt: the next request is
    // built from it.
    let session = session_messages(&only_session(&dir));
    let roles: Vec<&str> = session
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["user", "assistant", "user", "assistant"],
        "{session:?}"
    );
    let kept = session[1]["content"].as_str().unwrap();
    assert!(
        kept.starts_with("The first line") && kept.ends_with("\n\n[interrupted by the user]"),
        "{kept}"
    );
    assert!(kept.len() < 1500, "the whole reply was not kept: {kept}");
    assert_eq!(session[2]["content"], "go on");
    // The cancel is an entry of its own, right after what the cancelled run left.
    let kinds: Vec<String> = std::fs::read_to_string(only_session(&dir))
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        &kinds[..4],
        ["session", "message", "message", "cancel"],
        "{kinds:?}"
    );
    // Leaving says how to come back.
    assert!(
        out.stdout
            .contains("saved; resume it here with: mypi --continue"),
        "{}",
        out.stdout
    );
}

#[test]
fn ctrl_c_at_an_empty_prompt_says_how_to_quit_and_twice_quits() {
    let dir = TestDir::new();
    let m = faux(&dir, &[]).args(["--no-session", "--no-watch"]);
    let mut pty = crate::common::pty::Pty::spawn(m.command());
    let at = pty.wait_for("/help for commands", 0, Duration::from_secs(20));
    let at = pty.wait_for("> ", at, Duration::from_secs(20));
    pty.type_keys("\x03");
    let at = pty.wait_for(
        "(press Ctrl-C again or Ctrl-D to quit)",
        at,
        Duration::from_secs(20),
    );
    // Anything typed in between resets it.
    pty.type_keys("/tools\r");
    let at = pty.wait_for("Tools:", at, Duration::from_secs(20));
    let at = pty.wait_for("> ", at, Duration::from_secs(20));
    pty.type_keys("\x03");
    let at = pty.wait_for("(press Ctrl-C again", at, Duration::from_secs(20));
    // The key must reach the line editor, not the terminal's SIGINT: wait for the prompt.
    pty.wait_for("> ", at, Duration::from_secs(20));
    pty.type_keys("\x03");
    assert_eq!(pty.wait(Duration::from_secs(20)), 0, "{}", pty.screen());
    // No session was written: nothing to resume.
    assert!(!pty.screen().contains("resume it here"), "{}", pty.screen());
}

#[test]
fn tab_completes_mentions_and_command_arguments_on_a_terminal() {
    let dir = TestDir::new();
    dir.write("src/main.rs", "fn main() {}\n");
    let m = faux(&dir, &[json!({"text": "seen"})]).args(["--no-session", "--no-watch"]);
    let mut pty = crate::common::pty::Pty::spawn(m.command());
    let at = pty.wait_for("/help for commands", 0, Duration::from_secs(20));
    let at = pty.wait_for("> ", at, Duration::from_secs(20));
    pty.type_keys("/reload sub\t");
    let at = pty.wait_for("/reload subagent", at, Duration::from_secs(20));
    pty.type_keys("\r");
    let at = pty.wait_for("reloaded", at, Duration::from_secs(20));
    let at = pty.wait_for("> ", at, Duration::from_secs(20));
    pty.type_keys("look at @sr\t");
    let at = pty.wait_for("@src/", at, Duration::from_secs(20));
    pty.type_keys("ma\t");
    let at = pty.wait_for("@src/main.rs", at, Duration::from_secs(20));
    pty.type_keys("\r");
    pty.wait_for("seen", at, Duration::from_secs(20));
    pty.type_keys("/quit\r");
    assert_eq!(pty.wait(Duration::from_secs(20)), 0, "{}", pty.screen());
}

#[test]
fn tab_completes_the_models_used_after_model() {
    let dir = TestDir::new();
    let m = crate::common::Mypi::new(&dir)
        .env("OPENAI_API_KEY", "sk-test")
        .args([
            "--provider",
            "openai",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ])
        .args(["--model", "gpt-first-model", "--no-session", "--no-watch"]);
    let mut pty = crate::common::pty::Pty::spawn(m.command());
    let t = Duration::from_secs(20);
    let at = pty.wait_for("> ", 0, t);
    pty.type_keys("/model gpt-second\r");
    let at = pty.wait_for("Model set to gpt-second", at, t);
    let at = pty.wait_for("> ", at, t);
    pty.type_keys("/model gpt-f\t");
    let at = pty.wait_for("/model gpt-first-model", at, t);
    pty.type_keys("\r");
    pty.wait_for("Model set to gpt-first-model", at, t);
    pty.type_keys("/quit\r");
    assert_eq!(pty.wait(t), 0, "{}", pty.screen());
}
