//! The examples of the rest of the script API (issue 13), each through the binary the way a
//! user would run it: `status_line.lua` (status, title, timer, context usage, events from
//! `todo.lua`), `session_notes.rhai` (custom entries, names, dialogs), `safe_exit.lua`
//! (cancellable events, `user_shell`), `readonly_mode.lua` (flags, active tools, the wrapped
//! built-in) and `count_lines.rhai` (`ctx.update`, details, a renderer).

use serde_json::json;

use super::ext_util::{faux, install_example, quit, repl, WAIT};
use crate::common::{Mypi, TestDir};

#[test]
fn status_line_shows_context_and_the_todo_count_from_the_todo_example() {
    let dir = TestDir::new();
    install_example(&dir, "status_line.lua");
    install_example(&dir, "todo.lua");
    let replies = [
        json!({"tool_calls": [{"name": "todo_add", "arguments": {"text": "write the docs"}}]}),
        json!({"text": "added it"}),
    ];
    let mut m = faux(&dir, &replies).arg("--no-watch").spawn();
    // Before any answer the estimate counts the system prompt and the tools' definitions.
    m.wait_for_line("status: ctx 1% of 128k", WAIT);
    m.send_line("remember to write the docs");
    m.wait_for_line("1 todos", WAIT);
    m.send_line("/status off");
    m.wait_for_line("status cleared", WAIT);
    m.wait_for_line("status line off", WAIT);
    quit(m);
}

#[test]
fn session_notes_are_kept_listed_and_the_session_named() {
    let dir = TestDir::new();
    install_example(&dir, "session_notes.rhai");
    let run = |line: &str| {
        let out = Mypi::new(&dir)
            .args(["--provider", "faux", "--continue", "-p", line])
            .run();
        out.stdout.trim().to_string()
    };
    // A prompt first, so there is a session to continue.
    Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "hello"])
        .run()
        .ok();
    assert_eq!(run("/note check the flaky test"), "noted");
    assert_eq!(run("/note then release"), "noted");
    assert_eq!(run("/notes"), "1. check the flaky test\n2. then release");
    assert_eq!(run("/name release prep"), "session named release prep");
    // print mode cannot ask: the dialog gives its default (here none), so nothing is named
    assert_eq!(run("/notes-to"), "kept");
    let out = Mypi::new(&dir).args(["sessions"]).run();
    assert!(
        out.ok().stdout.contains("[release prep] hello"),
        "{}",
        out.describe()
    );
    // In the REPL the dialog asks.
    let mut m = Mypi::new(&dir)
        .args(["--provider", "faux", "--continue", "--no-watch"])
        .spawn();
    m.send_line("/notes-to");
    m.send_line("1");
    m.wait_for_line("sent", WAIT);
    m.wait_for_line("My notes so far:", WAIT);
    quit(m);
}

#[test]
fn safe_exit_keeps_a_dirty_repository_open_and_refuses_deleting_home() {
    let dir = TestDir::new();
    install_example(&dir, "safe_exit.lua");
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    git(&["init", "-q"]);
    dir.write("changed.txt", "x");
    let mut m = repl(&dir);
    m.send_line("/new");
    m.send_line("n");
    m.wait_for_line("no new session was started: uncommitted changes", WAIT);
    m.send_line("!rm -rf ~/x");
    m.wait_for_line("safe_exit refuses to delete / or ~", WAIT);
    m.send_line("/quit");
    m.send_line("y");
    let out = m.wait();
    assert_eq!(out.code, 0, "{}", out.describe());
}

#[test]
fn readonly_mode_offers_only_reading_tools_and_wraps_bash() {
    let dir = TestDir::new();
    install_example(&dir, "readonly_mode.lua");
    let replies = [
        json!({"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi > out.txt"}}]}),
        json!({"tool_calls": [{"name": "write", "arguments": {"path": "w.txt", "content": "x"}}]}),
        json!({"text": "done"}),
    ];
    let out = faux(&dir, &replies)
        .args(["--readonly", "--json", "-p", "try to write"])
        .run();
    out.ok();
    let results = crate::common::mcp::tool_results(&out.stdout);
    assert_eq!(
        results[0],
        (
            "read-only mode: this command could change files".into(),
            true
        )
    );
    assert!(results[1].1, "write is not offered: {results:?}");
    assert!(!dir.exists("out.txt") && !dir.exists("w.txt"));
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "/readonly off"])
        .run();
    assert_eq!(
        out.ok().stdout.trim(),
        "all tools: bash, code, edit, read, write"
    );
}

#[test]
fn count_lines_reports_details_and_renders_them_on_the_repl() {
    let dir = TestDir::new();
    install_example(&dir, "count_lines.rhai");
    dir.write("src/a.rs", "1\n2\n3");
    dir.write("src/sub/b.rs", "1\n2");
    dir.write("src/c.txt", "skip");
    let replies = [
        json!({"tool_calls": [{"name": "count_lines", "arguments": {"dir": "src", "suffix": ".rs"}}]}),
        json!({"text": "counted"}),
    ];
    let out = faux(&dir, &replies).args(["--json", "-p", "count"]).run();
    out.ok();
    let result = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|e| e["type"] == "tool_result")
        .unwrap();
    assert_eq!(result["content"], "5 lines in 2 files");
    assert_eq!(result["details"], json!({"files": 2, "lines": 5}));
    let mut m = faux(&dir, &replies).arg("--no-watch").spawn();
    m.send_line("count");
    m.wait_for_line("counting *.rs under src", WAIT);
    m.wait_for_line("  5 lines, 2 files", WAIT);
    quit(m);
}

#[test]
fn every_port_of_pis_examples_loads() {
    let dir = TestDir::new();
    let ports = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/extensions/pi");
    // file-trigger's file does not exist (a check runs no write to create it): still loads.
    let trigger = dir.path().join("trigger.txt");
    let out = Mypi::new(&dir)
        .env("MYPI_TRIGGER_FILE", &trigger)
        .args(["ext", "check"])
        .arg(&ports)
        .run();
    assert_eq!(out.code, 0, "{}", out.describe());
    assert!(!trigger.exists(), "a check wrote a file");
    let loaded = out.stdout.lines().filter(|l| l.starts_with("ok ")).count();
    assert!(loaded >= 40, "{}", out.stdout);
}

#[test]
fn ext_check_lists_options_and_background_registrations() {
    let dir = TestDir::new();
    let examples = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/extensions");
    let out = Mypi::new(&dir)
        .args(["ext", "check"])
        .arg(examples.join("readonly_mode.lua"))
        .arg(examples.join("status_line.lua"))
        .run();
    let text = &out.ok().stdout;
    assert!(
        text.contains("— options --readonly, --cheap-model"),
        "{text}"
    );
    assert!(
        text.contains("— 2 timers, watches or event handlers"),
        "{text}"
    );
}
