//! Every wait can be cancelled or times out (issue 8, family 4): a model stream that stalls
//! fails after the read timeout (retried when nothing was streamed yet), and Ctrl-C ends a
//! prompt within a second whatever it waits on.

use std::time::{Duration, Instant};

use crate::common::{FakeOpenAi, Mypi, Reply, TestDir};

use serde_json::json;

use super::ext_util::{faux, install};

#[test]
fn a_stalled_stream_before_any_output_is_retried() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![
        Reply::hang_then_text(Duration::from_secs(20), "too late"),
        Reply::text("second try"),
    ]);
    let started = Instant::now();
    let out = Mypi::new(&dir)
        .openai(&fake)
        .env("MYPI_READ_TIMEOUT_S", "1")
        .env("MYPI_RETRY_BASE_MS", "10")
        .args(["-p", "hi"])
        .run();
    out.ok();
    assert_eq!(out.stdout, "second try\n", "{}", out.describe());
    assert!(
        out.stderr.contains("the server sent nothing for 1 s"),
        "{}",
        out.describe()
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{}",
        out.describe()
    );
}

#[test]
fn a_stream_that_stalls_midway_fails_without_a_retry() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![
        Reply::text("a long answer that will stop in the middle ".repeat(40))
            .stall_midway(Duration::from_secs(20)),
        Reply::text("must not be asked for"),
    ]);
    let started = Instant::now();
    let out = Mypi::new(&dir)
        .openai(&fake)
        .env("MYPI_READ_TIMEOUT_S", "1")
        .args(["-p", "hi"])
        .run();
    out.expect_code(1);
    assert!(
        out.stderr.contains("the server sent nothing for 1 s"),
        "{}",
        out.describe()
    );
    assert_eq!(fake.request_count(), 1, "{}", out.describe());
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{}",
        out.describe()
    );
}

#[test]
fn ctrl_c_ends_a_script_tool_in_a_long_loop_within_a_second() {
    let dir = TestDir::new();
    install(
        &dir,
        "spin.lua",
        r#"api.tool{name = "spin", description = "spins", parameters = {type = "object"},
  timeout_ms = 60000,
  execute = function() local n = 0 while true do n = n + 1 end end}"#,
    );
    let call = json!({"tool_calls": [{"name": "spin", "arguments": {}}]});
    let mut m = faux(&dir, &[call, json!({"text": "after"})])
        // A budget far beyond the test: only Ctrl-C can end the call.
        .env("MYPI_EXT_BUDGET_MS", "60000")
        .arg("--no-watch")
        .spawn();
    m.send_line("go");
    m.wait_for_text("spin", Duration::from_secs(20));
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    m.interrupt();
    m.wait_for_text("cancel", Duration::from_secs(5));
    m.send_line("/quit");
    let out = m.wait();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}: {}",
        started.elapsed(),
        out.describe()
    );
    out.ok();
}

#[test]
fn ctrl_c_ends_a_prompt_whose_script_tool_is_stuck_reading_a_fifo() {
    let dir = TestDir::new();
    let fifo = dir.join("pipe");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    install(
        &dir,
        "fifo.lua",
        r#"api.tool{name = "wait_pipe", description = "reads a pipe", parameters = {type = "object"},
  timeout_ms = 60000,
  execute = function() local f = io.open("pipe", "r") return f:read("a") end}"#,
    );
    let call = json!({"tool_calls": [{"name": "wait_pipe", "arguments": {}}]});
    let mut m = faux(&dir, &[call, json!({"text": "after"})])
        // A budget far beyond the test: only Ctrl-C can end the call.
        .env("MYPI_EXT_BUDGET_MS", "60000")
        .arg("--no-watch")
        .spawn();
    m.send_line("go");
    m.wait_for_text("wait_pipe", Duration::from_secs(20));
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    m.interrupt();
    m.wait_for_text("cancel", Duration::from_secs(5));
    // The prompt ended: the next one gets the model's next reply.
    m.send_line("still here?");
    m.wait_for_line("after", Duration::from_secs(5));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    m.send_line("/quit");
    m.wait().ok();
}

#[test]
fn quit_typed_while_a_prompt_runs_leaves_at_once() {
    let dir = TestDir::new();
    let call = json!({"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 300"}}]});
    let mut m = faux(&dir, &[call, json!({"text": "never"})])
        .arg("--no-watch")
        .spawn();
    m.send_line("go");
    m.wait_for_text("sleep 300", Duration::from_secs(20));
    // A line typed meanwhile waits for the run; /quit does not.
    m.send_line("a later prompt");
    let started = Instant::now();
    m.send_line("/quit");
    let out = m.wait();
    out.ok();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}: {}",
        started.elapsed(),
        out.describe()
    );
    assert!(!out.stdout.contains("never"), "{}", out.describe());
}
