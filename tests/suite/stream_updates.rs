//! What `message_update` handlers see of a streamed reply, driven through the binary with the
//! faux model: every piece of text, in order, before the user sees it; pieces that come
//! close together (a fast server) reach the handler together in one `delta`, pieces that come
//! apart one by one; and a `block` still cuts the reply where the handler saw the text.

use serde_json::json;

use super::ext_util::{faux, install};
use crate::common::TestDir;

/// Counts the calls of a Lua and a Rhai `message_update` handler, checks each `text` is the
/// previous one plus `delta`, and reports both at `agent_end`.
fn install_counters(dir: &TestDir) {
    install(
        dir,
        "count.lua",
        r#"local calls, seen, ok = 0, "", true
api.on("message_update", function(e)
  calls = calls + 1
  if e.text ~= seen .. e.delta or e.delta == "" then ok = false end
  seen = e.text
end)
api.on("agent_end", function() api.notify("lua calls=" .. calls .. " ok=" .. tostring(ok) .. " len=" .. #seen) end)"#,
    );
    install(
        dir,
        "count.rhai",
        r#"api.state.calls = 0; api.state.seen = ""; api.state.ok = true;
api.on("message_update", |e| {
  api.state.calls += 1;
  if e.text != api.state.seen + e.delta || e.delta == "" { api.state.ok = false; }
  api.state.seen = e.text;
});
api.on("agent_end", |e| { api.notify(`rhai calls=${api.state.calls} ok=${api.state.ok} len=${api.state.seen.len()}`); });"#,
    );
}

/// The number in `prefix=N` of the line that starts with `who`.
fn calls(stderr: &str, who: &str) -> usize {
    let line = stderr
        .lines()
        .find(|l| l.contains(&format!("{who} calls=")))
        .unwrap_or_else(|| panic!("no report of {who}: {stderr}"));
    let after = &line[line.find("calls=").unwrap() + 6..];
    after.split(' ').next().unwrap().parse().unwrap()
}

#[test]
fn close_pieces_arrive_together_and_apart_ones_one_by_one() {
    let dir = TestDir::new();
    install_counters(&dir);
    let fast = "word ".repeat(2000);
    let out = faux(&dir, &[json!({"text": fast})])
        .args(["--no-session", "-p", "go"])
        .run();
    out.ok();
    assert_eq!(out.stdout.trim_end(), fast.trim_end(), "{}", out.describe());
    for who in ["lua", "rhai"] {
        let line = format!("{who} calls=");
        assert!(out.stderr.contains(&line), "{}", out.describe());
        assert!(
            out.stderr.contains("ok=true len=10000"),
            "every piece, in order: {}",
            out.describe()
        );
        // 2,000 pieces at once: handed over every few ms, not 2,000 times.
        let n = calls(&out.stderr, who);
        assert!(
            (1..500).contains(&n),
            "{who}: {n} calls: {}",
            out.describe()
        );
    }

    // Pieces 30 ms apart each reach the handlers on their own.
    let out = faux(
        &dir,
        &[json!({"text": "one two three four five", "delay_ms": 30})],
    )
    .args(["--no-session", "-p", "go"])
    .run();
    out.ok();
    for who in ["lua", "rhai"] {
        assert_eq!(calls(&out.stderr, who), 5, "{}", out.describe());
    }
    assert!(
        out.stderr.matches("ok=true len=23").count() == 2,
        "{}",
        out.describe()
    );
}

#[test]
fn a_block_cuts_the_reply_at_the_text_the_handler_saw() {
    let dir = TestDir::new();
    install(
        &dir,
        "guard.lua",
        r#"api.on("message_update", function(e)
  if e.text:find("SECRET", 1, true) then return { block = true, reason = "a secret" } end
end)"#,
    );
    let text = format!("{}SECRET {}", "safe ".repeat(3000), "after ".repeat(3000));
    let out = faux(&dir, &[json!({"text": text})])
        .args(["--no-session", "-p", "go"])
        .run();
    assert!(
        !out.stdout.contains("SECRET") && !out.stdout.contains("after"),
        "{}",
        out.describe()
    );
    assert!(out.stderr.contains("a secret"), "{}", out.describe());
}
