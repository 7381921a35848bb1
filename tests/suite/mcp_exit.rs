//! Nothing outlives mypi (issue 9, point 9): a stdio MCP server started through `sh -c`,
//! which starts a grandchild (`sleep 1000`) before it runs the fake server, leaves no process
//! behind whichever way mypi ends: `/quit`, Ctrl-D (the end of a piped stdin), SIGTERM,
//! SIGHUP, the end of `-p`, and mypi exiting right after start. Where mypi ends normally the
//! server first sees its stdin close (it logs `<stdin closed>`), then, if it is still running,
//! SIGTERM (it logs `<terminated>`), then its group is killed.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::mcp::{
    assert_none_survive, config, grandchild_entry, marked, received, settled_line, stdio_entry,
    wait_pid_file, wait_received,
};
use crate::common::{Mypi, Running, TestDir};

use super::ext_util::faux;

const WAIT: Duration = Duration::from_secs(20);

fn stdin_closed(got: &[Value]) -> bool {
    got.iter().any(|m| m == "<stdin closed>")
}

/// A REPL (piped stdin) with the grandchild server in `mode`, once the server is connected.
fn repl_connected(dir: &TestDir, mode: &str) -> Running {
    let cfg = config(dir, json!({"srv": grandchild_entry(dir, mode, 30)}));
    let mut m = faux(dir, &[json!({"text": "hello"})])
        .timeout(Duration::from_secs(60))
        .arg("--mcp-config")
        .arg(cfg)
        .arg("--no-watch")
        .spawn();
    wait_pid_file(dir, "grandchild", WAIT);
    let line = settled_line(&mut m, "srv", WAIT);
    assert!(line.contains("srv: connected"), "never connected: {line}");
    m
}

#[test]
fn quit_and_ctrl_d_close_stdin_then_kill_the_servers_group() {
    for how in ["/quit", "ctrl-d"] {
        let dir = TestDir::new();
        let mut m = repl_connected(&dir, "normal");
        assert!(!marked(&dir).is_empty(), "the server runs");
        if how == "/quit" {
            m.send_line("/quit");
        }
        let started = Instant::now();
        m.wait().ok();
        assert!(started.elapsed() < Duration::from_secs(5), "{how}");
        let got = wait_received(&dir, Duration::from_secs(2), stdin_closed);
        assert!(
            stdin_closed(&got),
            "{how}: stdin was not closed first: {got:?}"
        );
        assert_none_survive(&dir, how);
    }
}

#[test]
fn a_server_ignoring_the_end_of_stdin_gets_sigterm_then_its_group_is_killed() {
    // `stubborn` exits on SIGTERM (and logs it); `deaf` ignores it and must be killed.
    for mode in ["stubborn", "deaf"] {
        let dir = TestDir::new();
        let mut m = repl_connected(&dir, mode);
        m.send_line("/quit");
        let started = Instant::now();
        m.wait().ok();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{mode}: {:?}",
            started.elapsed()
        );
        let terminated = |got: &[Value]| got.iter().any(|m| m == "<terminated>");
        let got = wait_received(&dir, Duration::from_secs(2), terminated);
        let closed_at = got.iter().position(|m| m == "<stdin closed>");
        let term_at = got.iter().position(|m| m == "<terminated>");
        assert!(closed_at.is_some(), "{mode}: stdin was not closed: {got:?}");
        if mode == "stubborn" {
            assert!(
                term_at > closed_at,
                "{mode}: no SIGTERM after stdin: {got:?}"
            );
        } else {
            assert_eq!(term_at, None, "{mode}: {got:?}");
        }
        assert_none_survive(&dir, mode);
    }
}

/// How long the server had between the end of its stdin and SIGTERM (`None`: SIGTERM came
/// first, or it exited on the end of its stdin).
fn eof_to_term_ms(got: &[Value]) -> Option<f64> {
    got.iter().find_map(|m| m["eof_to_term_ms"].as_f64())
}

/// Runs `-p` in `dir` (a fresh server log) with the fake in `mode` as `srv`; the model calls
/// its `echo`. Then waits for `done` to hold of what the server logged, and returns that.
fn print_echo(dir: &TestDir, mode: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let _ = std::fs::remove_file(dir.join("log"));
    let cfg = config(dir, json!({"srv": stdio_entry(dir, mode, 30)}));
    let echo = json!({"tool_calls": [{"name": "mcp__srv__echo", "arguments": {"text": "hi"}}]});
    faux(dir, &[echo, json!({"text": "done"})])
        .arg("--mcp-config")
        .arg(&cfg)
        .args(["-p", "go"])
        .run()
        .ok();
    wait_received(dir, Duration::from_secs(5), done)
}

/// The files remembering how a server ended (`.exit`) in the test home's MCP cache.
fn exit_files(dir: &TestDir) -> Vec<std::path::PathBuf> {
    let Ok(files) = std::fs::read_dir(dir.join("home/.agents/cache/mcp")) else {
        return Vec::new();
    };
    files
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension() == Some("exit".as_ref()))
        .collect()
}

#[test]
fn a_server_seen_to_ignore_the_end_of_stdin_gets_sigterm_at_once_next_time() {
    let dir = TestDir::new();
    let terminated = |got: &[Value]| got.iter().any(|m| m == "<terminated>");
    // First time: the end of stdin, the whole grace (1 s), SIGTERM; and that is remembered.
    let first = print_echo(&dir, "stubborn", terminated);
    assert!(terminated(&first), "no SIGTERM: {first:?}");
    let gap = eof_to_term_ms(&first);
    assert!(gap.is_some_and(|ms| ms >= 900.0), "{first:?}");
    assert_eq!(exit_files(&dir).len(), 1, "nothing remembered");
    // Next time: SIGTERM with the end of stdin, no grace.
    let second = print_echo(&dir, "stubborn", terminated);
    assert!(terminated(&second), "no SIGTERM: {second:?}");
    let gap = eof_to_term_ms(&second);
    assert!(gap.is_none_or(|ms| ms < 12.0), "{second:?}");
}

/// A server that exits on the end of its stdin is never taken for one that does not, even
/// when its exit is slow (`slow_exit` takes 200 ms, as any server may on a busy machine): it
/// exits on its own, without SIGTERM, every time.
#[test]
fn a_server_exiting_on_the_end_of_stdin_keeps_its_grace() {
    for mode in ["normal", "slow_exit"] {
        let dir = TestDir::new();
        for round in 0..2 {
            let exited = |got: &[Value]| got.iter().any(|m| m == "<exiting>");
            let got = print_echo(&dir, mode, |got| stdin_closed(got) && exited(got));
            assert!(stdin_closed(&got), "{mode}, round {round}: {got:?}");
            assert!(exited(&got), "{mode}, round {round}: {got:?}");
            assert!(!got.iter().any(|m| m == "<terminated>"), "{mode}: {got:?}");
            assert!(exit_files(&dir).is_empty(), "{mode}, round {round}");
        }
    }
}

#[test]
fn sigterm_and_sighup_kill_the_servers_group() {
    for sig in [libc::SIGTERM, libc::SIGHUP] {
        let dir = TestDir::new();
        let m = repl_connected(&dir, "stubborn");
        m.signal(sig);
        let out = m.wait();
        assert_eq!(out.code, 128 + sig, "{}", out.describe());
        assert_none_survive(&dir, &format!("repl, signal {sig}"));
    }
    // In print mode, in the middle of a call that never ends.
    for sig in [libc::SIGTERM, libc::SIGHUP] {
        let dir = TestDir::new();
        let cfg = config(&dir, json!({"srv": grandchild_entry(&dir, "normal", 60)}));
        let hang = json!({"tool_calls": [{"name": "mcp__srv__hang", "arguments": {}}]});
        let m = faux(&dir, &[hang, json!({"text": "done"})])
            .arg("--mcp-config")
            .arg(cfg)
            .args(["-p", "go"])
            .spawn();
        wait_received(&dir, WAIT, |got| {
            got.iter().any(|v| v["params"]["name"] == "hang")
        });
        m.signal(sig);
        let out = m.wait();
        assert_eq!(out.code, 128 + sig, "{}", out.describe());
        assert_none_survive(&dir, &format!("print mode, signal {sig}"));
    }
}

#[test]
fn the_end_of_print_mode_closes_stdin_then_kills_the_servers_group() {
    let dir = TestDir::new();
    let cfg = config(&dir, json!({"srv": grandchild_entry(&dir, "normal", 30)}));
    let echo = json!({"tool_calls": [{"name": "mcp__srv__echo", "arguments": {"text": "hi"}}]});
    let out = faux(&dir, &[echo, json!({"text": "done"})])
        .arg("--mcp-config")
        .arg(cfg)
        .args(["--json", "-p", "go"])
        .run();
    out.ok();
    assert!(
        out.stdout.contains("\"content\":\"hi\""),
        "{}",
        out.describe()
    );
    wait_pid_file(&dir, "grandchild", WAIT);
    assert!(stdin_closed(&received(&dir)), "{:?}", received(&dir));
    assert_none_survive(&dir, "end of -p");
}

#[test]
fn mypi_exiting_right_after_start_leaves_nothing() {
    for round in 0..3 {
        let dir = TestDir::new();
        let cfg = config(&dir, json!({"srv": grandchild_entry(&dir, "normal", 30)}));
        Mypi::new(&dir)
            .args(["--provider", "faux", "--mcp-config"])
            .arg(&cfg)
            .args(["-p", "/help"])
            .run()
            .ok();
        // The shell may have had no time to start the grandchild; give a late one the
        // chance to appear before checking.
        std::thread::sleep(Duration::from_millis(300));
        assert_none_survive(&dir, &format!("-p /help, round {round}"));

        let out = Mypi::new(&dir)
            .args(["--mcp-config"])
            .arg(&cfg)
            .args(["mcp", "list"])
            .run();
        out.ok();
        std::thread::sleep(Duration::from_millis(300));
        assert_none_survive(&dir, &format!("mcp list, round {round}"));
    }
}
