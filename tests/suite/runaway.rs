//! Runaway loops end (issue 8, family 9): queued follow-ups chain only so far, steers obey
//! `--max-turns`, the queues are bounded, and a handler failing on every streamed delta is
//! reported once with a count.

use std::time::{Duration, Instant};

use crate::common::{Mypi, TestDir};

use super::ext_util::install;

fn faux(dir: &TestDir) -> Mypi {
    Mypi::new(dir)
        .args(["--provider", "faux", "--no-session"])
        .timeout(Duration::from_secs(60))
}

#[test]
fn a_follow_up_from_every_agent_end_stops_after_the_chain_limit() {
    let dir = TestDir::new();
    install(
        &dir,
        "loop.lua",
        r#"api.on("agent_end", function() api.send_message("again", {deliver_as = "follow_up"}) end)"#,
    );
    install(
        &dir,
        "rloop.rhai",
        r#"api.on("agent_end", |e, ctx| { api.send_message("rhai again", #{deliver_as: "follow_up"}); });"#,
    );
    let started = Instant::now();
    let out = faux(&dir).args(["-p", "hello"]).run();
    out.ok();
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{}",
        out.describe()
    );
    assert!(
        out.stderr
            .contains("stopped after 10 prompts queued by extensions in a row"),
        "{}",
        out.describe()
    );
    // A lower limit, set by the user.
    let out = faux(&dir)
        .env("MYPI_MAX_FOLLOW_UPS", "3")
        .args(["-p", "hello", "--json"])
        .run();
    out.ok();
    let inputs = out.stdout.matches("\"type\":\"final\"").count();
    assert_eq!(inputs, 4, "the prompt and 3 follow-ups: {}", out.describe());
    assert!(
        out.stdout.contains("stopped after 3 prompts"),
        "{}",
        out.describe()
    );
}

#[test]
fn a_steer_from_every_turn_end_stops_after_the_chain_limit() {
    let dir = TestDir::new();
    install(
        &dir,
        "steer.lua",
        r#"api.on("turn_end", function() api.send_message("more", {deliver_as = "steer"}) end)"#,
    );
    let out = faux(&dir).args(["-p", "hello"]).run();
    out.ok();
    assert!(
        out.stderr.contains("stopped after 10 prompts"),
        "{}",
        out.describe()
    );
}

#[test]
fn max_turns_ends_a_model_that_keeps_calling_tools() {
    let dir = TestDir::new();
    let call = r#"{"tool_calls":[{"name":"read","arguments":{"path":"replies.jsonl"}}]}"#;
    dir.write("replies.jsonl", &format!("{call}\n").repeat(20));
    let run = |extra: &[&str], env: Option<&str>| {
        let mut m = faux(&dir).args(["--faux-script", "replies.jsonl", "-p", "go"]);
        m = m.args(extra);
        if let Some(n) = env {
            m = m.env("MYPI_MAX_TURNS", n);
        }
        m.run()
    };
    let out = run(&["--max-turns", "4"], None);
    out.expect_code(1);
    assert!(
        out.stderr.contains("stopped after 4 turns"),
        "{}",
        out.describe()
    );
    let env = run(&[], Some("3"));
    env.expect_code(1);
    assert!(
        env.stderr.contains("stopped after 3 turns"),
        "{}",
        env.describe()
    );
    let bad = run(&["--max-turns", "0"], None);
    bad.expect_code(2);
    assert!(bad.stderr.contains("--max-turns"), "{}", bad.describe());
    let bad_env = run(&[], Some("many"));
    bad_env.expect_code(2);
    assert!(
        bad_env.stderr.contains("MYPI_MAX_TURNS"),
        "{}",
        bad_env.describe()
    );
}

#[test]
fn the_queues_are_bounded() {
    let dir = TestDir::new();
    install(
        &dir,
        "flood.lua",
        r#"api.command("flood", function()
  local ok, refused, last = 0, 0, nil
  for i = 1, 200000 do
    local fine, err = pcall(api.send_message, "steer " .. i, {deliver_as = "steer"})
    if fine then ok = ok + 1 else refused = refused + 1; last = err end
    if refused > 1000 then break end
  end
  return ok .. " queued, " .. refused .. " refused: " .. tostring(last)
end)"#,
    );
    let out = faux(&dir)
        .env("MYPI_MAX_FOLLOW_UPS", "1")
        .args(["-p", "/flood"])
        .run();
    out.ok();
    assert!(
        out.stdout.starts_with("100 queued, 1001 refused: ")
            && out.stdout.contains("the steer queue is full (100 messages"),
        "{}",
        out.describe()
    );
    assert!(out.stderr.contains("99 more dropped"), "{}", out.describe());
}

#[test]
fn a_handler_failing_on_every_delta_is_reported_once_with_a_count() {
    let dir = TestDir::new();
    install(
        &dir,
        "bad_stream.lua",
        r#"api.on("message_update", function(e) error("no deltas today") end)"#,
    );
    // Pieces 10 ms apart reach the handler one by one (closer ones come together).
    let long = "word ".repeat(40);
    dir.write(
        "replies.jsonl",
        &format!("{{\"text\": \"{long}\", \"delay_ms\": 10}}\n"),
    );
    let out = faux(&dir)
        .args(["--faux-script", "replies.jsonl", "-p", "go"])
        .run();
    out.ok();
    let failures = out.stderr.matches("no deltas today").count();
    assert_eq!(failures, 2, "the first and the count: {}", out.describe());
    assert!(out.stderr.contains("… "), "{}", out.describe());
    assert!(out.stderr.contains(" more: "), "{}", out.describe());
}

/// A flood of notices of one kind is a few lines and a count, whatever its source: a hook
/// result with 5,000 unknown fields, 3,000 `api.notify` calls, in print mode and in the REPL.
#[test]
fn a_flood_of_notices_of_one_kind_is_a_few_lines_and_a_count() {
    let dir = TestDir::new();
    install(
        &dir,
        "many.lua",
        r#"
api.on("input", function() local t = {} for i = 1, 5000 do t["x" .. i] = true end return t end)
api.command("spam", function() for i = 1, 3000 do api.notify("note " .. i) end return "spammed" end)
"#,
    );
    for (prompt, count) in [
        ("go", "… 4,996 more like: many (input): result field 'x"),
        // Notices differing in numbers alone (a script counting) show 50 more before the count.
        ("/spam", "… 2,949 more like: [many] note "),
    ] {
        let out = faux(&dir).args(["-p", prompt]).run();
        out.ok();
        let lines = out.stderr.lines().count();
        assert!(lines < 100, "{prompt}: {lines} lines of notices");
        assert!(out.stderr.contains(count), "{prompt}: {}", out.describe());
    }
    let mut m = super::ext_util::repl(&dir);
    m.send_line("/spam");
    m.wait_for_line("… 2,949 more like: [many] note ", Duration::from_secs(20));
    let out = m.wait();
    let notices = out.stdout.lines().filter(|l| l.contains("note ")).count();
    assert_eq!(notices, 52, "{}", out.describe());
}
