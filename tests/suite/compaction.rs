//! Conversations longer than the window (issue 12, point 5): before a request would not fit,
//! the older turns are summarised by the model (the summary request is what the fake server
//! received) and the recent one kept whole; `--continue` afterwards sends the same context;
//! `/compact [instructions]` does it on demand; a "context length exceeded" answer is met by
//! one compaction and one retry.

use serde_json::Value;

use super::wire::{system_prompt, user_texts};
use crate::common::{FakeOpenAi, Mypi, Output, Recorded, Reply, TestDir};

fn run(dir: &TestDir, fake: &FakeOpenAi, window: &str, args: &[&str]) -> Output {
    let out = Mypi::new(dir)
        .openai(fake)
        .env("MYPI_CONTEXT_WINDOW", window)
        .args(args)
        .run();
    out.ok();
    out
}

fn body_len(req: &Recorded) -> usize {
    req.raw_body.len()
}

fn texts(req: &Recorded) -> String {
    req.body["messages"].to_string()
}

#[test]
fn a_conversation_over_the_window_is_summarised_and_continue_sends_the_same_context() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![
        Reply::text("r1"),
        Reply::text("r2"),
        Reply::text("SUMMARY: the user sent a run of As and Bs"),
        Reply::text("r3"),
        Reply::text("r4"),
    ]);
    let (a, b, c) = ("A".repeat(3000), "B".repeat(3000), "C".repeat(3000));
    run(&dir, &fake, "3000", &["-p", &a]);
    run(&dir, &fake, "3000", &["--continue", "-p", &b]);
    let out = run(&dir, &fake, "3000", &["--continue", "-p", &c]);
    assert_eq!(out.stdout.trim(), "r3");
    assert!(
        out.stderr.contains(
            "compacted the conversation: summarised the older turns, kept the last 1 message whole"
        ),
        "{}",
        out.describe()
    );
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 4);
    // The summary request: the older turns, the summary instructions, no tools.
    let summary = &reqs[2];
    assert!(
        system_prompt(summary).starts_with("You summarise the earlier part"),
        "{}",
        system_prompt(summary)
    );
    let asked = user_texts(summary);
    assert_eq!(&asked[..2], [a.as_str(), b.as_str()]);
    assert!(asked[2].starts_with("Summarise the conversation above"));
    assert!(summary
        .body
        .get("tools")
        .is_none_or(|t| t.as_array().is_some_and(|a| a.is_empty())));
    // The request after it fits: the summary and the recent turn, not the older turns.
    let after = &reqs[3];
    assert!(texts(after).contains("SUMMARY: the user sent a run of As and Bs"));
    assert!(!texts(after).contains(&a) && !texts(after).contains(&b) && texts(after).contains(&c));
    assert!(body_len(after) < 3000 * 4, "{} bytes", body_len(after));
    // Resumed: the same context, and the new prompt.
    run(&dir, &fake, "3000", &["--continue", "-p", "D"]);
    let next = &fake.requests()[4];
    let msgs: Vec<Value> = next.body["messages"].as_array().unwrap().to_vec();
    let before: Vec<Value> = after.body["messages"].as_array().unwrap().to_vec();
    assert_eq!(
        &msgs[..before.len()],
        &before[..],
        "the same context as before the restart"
    );
    assert_eq!(user_texts(next).last().map(String::as_str), Some("D"));
}

#[test]
fn compact_on_demand_takes_instructions() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![
        Reply::text("r1"),
        Reply::text("r2"),
        Reply::text("SUMMARY 42"),
        Reply::text("r3"),
    ]);
    run(&dir, &fake, "100000", &["-p", "first, about the number 42"]);
    run(&dir, &fake, "100000", &["--continue", "-p", "second"]);
    let out = run(
        &dir,
        &fake,
        "100000",
        &["--continue", "-p", "/compact keep the numbers"],
    );
    assert!(
        out.stdout
            .starts_with("Compacted the conversation: summarised the older turns"),
        "{}",
        out.describe()
    );
    let reqs = fake.requests();
    assert!(user_texts(&reqs[2])
        .last()
        .unwrap()
        .ends_with("Also: keep the numbers"));
    run(&dir, &fake, "100000", &["--continue", "-p", "third"]);
    let last = &fake.requests()[3];
    assert!(texts(last).contains("SUMMARY 42") && !texts(last).contains("first, about"));
    assert_eq!(user_texts(last).last().map(String::as_str), Some("third"));
}

#[test]
fn context_length_exceeded_is_met_by_one_compaction_and_one_retry() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![
        Reply::text("r1"),
        Reply::error(400, "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens."),
        Reply::text("SUMMARY of the first turn"),
        Reply::text("ok after compaction"),
    ]);
    run(&dir, &fake, "100000", &["-p", "the first turn"]);
    let out = run(
        &dir,
        &fake,
        "100000",
        &["--continue", "-p", "the second turn"],
    );
    assert_eq!(out.stdout.trim(), "ok after compaction");
    assert!(
        out.stderr.contains("over the model's context window"),
        "{}",
        out.describe()
    );
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 4);
    let retry = &reqs[3];
    assert!(texts(retry).contains("SUMMARY of the first turn"));
    assert!(
        !user_texts(retry).iter().any(|t| t == "the first turn"),
        "{}",
        texts(retry)
    );
    assert_eq!(
        user_texts(retry).last().map(String::as_str),
        Some("the second turn")
    );
}

const CANCEL_LUA: &str = r#"
api.on("session_before_compact", function(e)
  if e.instructions == "not now" then
    return {cancel = true, reason = "the team wants the whole log (" .. e.reason .. ", " .. #e.messages .. " older messages)"}
  end
end)
"#;

const SUMMARY_RHAI: &str = r#"
api.on("session_before_compact", |e| {
  if e.instructions == "mine" {
    #{ summary: `my own summary of ${e.messages.len()} messages, keeping ${e.keep_last}` }
  }
});
"#;

#[test]
fn an_extension_can_cancel_a_compaction_or_give_the_summary() {
    let dir = TestDir::new();
    super::ext_util::install(&dir, "keep.lua", CANCEL_LUA);
    super::ext_util::install(&dir, "mine.rhai", SUMMARY_RHAI);
    let fake = FakeOpenAi::with_replies(vec![
        Reply::text("r1"),
        Reply::text("r2"),
        Reply::text("r3"),
    ]);
    run(&dir, &fake, "100000", &["-p", "one"]);
    run(&dir, &fake, "100000", &["--continue", "-p", "two"]);
    let out = run(
        &dir,
        &fake,
        "100000",
        &["--continue", "-p", "/compact not now"],
    );
    assert_eq!(
        out.stdout.trim(),
        "Compaction cancelled: the team wants the whole log (manual, 2 older messages)."
    );
    let out = run(
        &dir,
        &fake,
        "100000",
        &["--continue", "-p", "/compact mine"],
    );
    assert!(
        out.stdout
            .starts_with("Compacted the conversation: summarised"),
        "{}",
        out.describe()
    );
    run(&dir, &fake, "100000", &["--continue", "-p", "three"]);
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 3, "no summary request went to the model");
    let last = texts(&reqs[2]);
    assert!(
        last.contains("my own summary of 2 messages, keeping 2") && !last.contains("\"one\""),
        "{last}"
    );
}
