//! Prompt caching from the binary, against a fake Anthropic server whose cache serves like
//! the real one (only at the request's breakpoints, see `tests/common/prompt_cache.rs`).

use serde_json::{json, Value};

use super::json_events::events;
use crate::common::{FakeAnthropic, Mypi, Reply, TestDir};

/// A 20-turn session (19 tool turns, then the answer): from turn 3 on, over 80 % of each
/// request's input is read from the cache, and what is read and written is in the usage of
/// `--json`'s turns and final event.
#[test]
fn a_long_session_reads_most_of_each_request_from_the_cache() {
    let dir = TestDir::new();
    let (_, ev) = reading_session(&dir, 20);
    let turns: Vec<&Value> = ev.iter().filter(|e| e["type"] == "turn_end").collect();
    assert_eq!(turns.len(), 20);
    let shares = read_shares(&ev);
    eprintln!("cache read share per turn: {shares:.2?}");
    assert!(
        shares[2..].iter().all(|s| *s > 0.8),
        "from turn 3 on: {shares:.2?}"
    );
    let first = &turns[0]["usage"];
    assert!(
        first["cache_write_tokens"].as_u64().unwrap_or(0) > 0,
        "{first}"
    );
    let last = ev.last().unwrap();
    assert!(
        last["usage"]["cached_tokens"].as_u64().unwrap_or(0) > 0,
        "{last}"
    );
}

/// A `context` handler that rewrites an old message from turn 5 on (as a redaction would)
/// breaks the cached prefix once: that turn writes the conversation again, and from the next
/// one on over 80 % of each request is read from the cache again.
#[test]
fn a_context_rewrite_costs_one_cache_write() {
    let dir = TestDir::new();
    crate::suite::ext_util::install(
        &dir,
        "redact.lua",
        r#"local turn = 0
api.on("turn_start", function(e) turn = e.turn end)
api.on("context", function(e)
  if turn < 5 then return nil end
  e.messages[1].content = e.messages[1].content .. " [redacted]"
  return { updated_messages = e.messages }
end)"#,
    );
    let (fake, ev) = reading_session(&dir, 10);
    let shares = read_shares(&ev);
    eprintln!("cache read share per turn, rewritten from turn 5: {shares:.2?}");
    assert_eq!(shares.len(), 10);
    let rewritten = &fake.requests()[4].body["messages"][0];
    assert!(rewritten.to_string().contains("[redacted]"), "{rewritten}");
    // Turn 5 reads only what comes before the rewritten message (tools, system prompt) and
    // writes the rest again: many times what turn 4 wrote.
    let writes: Vec<u64> = ev
        .iter()
        .filter(|e| e["type"] == "turn_end")
        .map(|t| t["usage"]["cache_write_tokens"].as_u64().unwrap_or(0))
        .collect();
    eprintln!("cache writes per turn: {writes:?}");
    assert!(shares[4] < shares[3] - 0.2, "{shares:.2?}");
    assert!(writes[4] > 3 * writes[3], "{writes:?}");
    for (i, share) in shares.iter().enumerate().skip(2) {
        assert!(i == 4 || *share > 0.8, "turn {}: {shares:.2?}", i + 1);
    }
}

/// A compaction (`/compact` between prompts) rewrites the conversation: the first request
/// after it writes the new prefix (the summary and what was kept), and from the next one on
/// over 80 % of each request is read from the cache again.
#[test]
fn a_compaction_costs_one_cache_write() {
    let dir = TestDir::new();
    dir.write("notes.txt", &"Notes to read.\n".repeat(40));
    let read =
        |i: usize| Reply::tool_calls([(format!("c{i}"), "read", json!({"path": "notes.txt"}))]);
    let mut replies: Vec<Reply> = (1..6).map(read).collect();
    replies.push(Reply::text("read"));
    replies.push(Reply::text("you are welcome"));
    replies.push(Reply::text("SUMMARY: the notes were read five times."));
    replies.extend((6..11).map(read));
    replies.push(Reply::text("read again"));
    let fake = FakeAnthropic::caching(replies);
    let run = |args: &[&str]| {
        let out = Mypi::new(&dir).anthropic(&fake).args(args).run();
        out.ok();
        out
    };
    run(&["-p", "read the notes five times"]);
    run(&["--continue", "-p", "thanks"]);
    let compacted = run(&["--continue", "-p", "/compact"]);
    assert!(
        compacted.stdout.starts_with("Compacted the conversation"),
        "{}",
        compacted.describe()
    );
    let out = run(&["--continue", "-p", "read them five times more", "--json"]);
    let ev = events(&out);
    let shares = read_shares(&ev);
    eprintln!("cache read share per turn after /compact: {shares:.2?}");
    assert_eq!(shares.len(), 6);
    let first = &fake.requests()[8].body;
    assert!(first.to_string().contains("SUMMARY: the notes"), "{first}");
    let written = |i: usize| {
        ev.iter()
            .filter(|e| e["type"] == "turn_end")
            .nth(i)
            .unwrap()["usage"]["cache_write_tokens"]
            .as_u64()
            .unwrap_or(0)
    };
    assert!(written(0) > 0, "the new prefix is written");
    assert!(shares[1..].iter().all(|s| *s > 0.8), "{shares:.2?}");
}

/// A session of `turns` turns against the caching fake: the model reads a file `turns - 1`
/// times, then answers. The fake, and `--json`'s events.
pub fn reading_session(dir: &TestDir, turns: usize) -> (FakeAnthropic, Vec<Value>) {
    dir.write(
        "notes.txt",
        &"A line of notes to read again and again.\n".repeat(20),
    );
    let mut replies: Vec<Reply> = (1..turns)
        .map(|i| Reply::tool_calls([(format!("c{i}"), "read", json!({"path": "notes.txt"}))]))
        .collect();
    replies.push(Reply::text("read them all"));
    let fake = FakeAnthropic::caching(replies);
    let out = Mypi::new(dir)
        .anthropic(&fake)
        .args([
            "--no-session",
            "-p",
            "read the notes, again and again",
            "--json",
        ])
        .run();
    out.ok();
    (fake, events(&out))
}

/// Each turn's share of its input read from the prompt cache, from `--json`'s `turn_end`s.
fn read_shares(events: &[Value]) -> Vec<f64> {
    events
        .iter()
        .filter(|e| e["type"] == "turn_end")
        .map(|t| {
            let input = t["usage"]["input_tokens"].as_u64().unwrap() as f64;
            t["usage"]["cached_tokens"].as_u64().unwrap_or(0) as f64 / input
        })
        .collect()
}

/// Without breakpoints nothing would be read: the fake reads only at them, so a request that
/// sends none gets no cached tokens (the fake's own check).
#[test]
fn the_fake_cache_reads_only_at_breakpoints() {
    let mut cache = crate::common::prompt_cache::PromptCache::default();
    let big = "x".repeat(8000);
    let marked = json!({"system": [{"type": "text", "text": big, "cache_control": {"type": "ephemeral"}}],
                        "messages": [{"role": "user", "content": "hi"}]});
    let plain = json!({"system": big, "messages": [{"role": "user", "content": "hi"}]});
    assert_eq!(cache.serve(&plain).1, 0);
    assert_eq!(
        cache.serve(&plain).1,
        0,
        "nothing was written without a breakpoint"
    );
    let (_, read, write) = cache.serve(&marked);
    assert!(read == 0 && write >= 2000, "{read} {write}");
    assert_eq!(cache.serve(&marked).1, write);
}
