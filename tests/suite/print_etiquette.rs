//! Print mode as a shell user meets it (issue 11, point 8) and the REPL's line after a run
//! (point 4): piped text goes with the prompt, a silent open pipe is not waited for, the
//! offline model says it answered, a base URL without a scheme is refused, a reply cut by
//! the token limit says so.

use std::time::{Duration, Instant};

use super::ext_util::WAIT;
use super::wire::user_texts;
use crate::common::{FakeOpenAi, Mypi, Reply, TestDir};

#[test]
fn piped_text_is_sent_after_the_prompt() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![Reply::text("looks fine")]);
    let out = Mypi::new(&dir)
        .openai(&fake)
        .args(["-p", "review this"])
        .stdin("diff --git a/x b/x\n+new line\n")
        .run();
    out.ok();
    assert_eq!(out.stdout.trim(), "looks fine");
    assert_eq!(
        user_texts(&fake.requests()[0]),
        ["review this\n\ndiff --git a/x b/x\n+new line"]
    );
    // A slash command is not given the piped text; the prompt alone from stdin still works.
    let out = Mypi::new(&dir).args(["-p", "/help"]).stdin("ignored").run();
    out.ok();
    fake.push(Reply::text("ok"));
    Mypi::new(&dir)
        .openai(&fake)
        .arg("-p")
        .stdin("only stdin\n")
        .run()
        .ok();
    assert_eq!(user_texts(&fake.requests()[1]), ["only stdin"]);
}

#[test]
fn an_open_pipe_that_sends_nothing_is_not_waited_for() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![Reply::text("answered")]);
    // The pipe is created and kept open, and nothing is written to it.
    let started = Instant::now();
    let mut m = Mypi::new(&dir)
        .openai(&fake)
        .args(["-p", "hi"])
        .stdin("")
        .spawn();
    m.wait_for_line("answered", WAIT);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(8), "{took:?}");
    let out = m.wait();
    out.ok();
    assert!(
        out.stderr
            .contains("standard input is open but sent nothing in 2 s"),
        "{}",
        out.describe()
    );
    assert_eq!(user_texts(&fake.requests()[0]), ["hi"]);
}

#[test]
fn the_offline_model_says_it_answered() {
    let dir = TestDir::new();
    let out = Mypi::new(&dir).args(["-p", "hello"]).run();
    out.ok();
    assert_eq!(out.stdout.trim(), "hello");
    assert!(
        out.stderr
            .contains("No model configured: using the offline faux model"),
        "{}",
        out.describe()
    );
    // A command needs no model: nothing is said.
    let out = Mypi::new(&dir).args(["-p", "/tools"]).run();
    out.ok();
    assert!(out.stderr.is_empty(), "{}", out.describe());
}

#[test]
fn a_base_url_without_a_scheme_is_a_usage_error() {
    let dir = TestDir::new();
    let out = Mypi::new(&dir)
        .args([
            "--provider",
            "openai",
            "--base-url",
            "localhost:11434/v1",
            "-p",
            "hi",
        ])
        .run();
    out.expect_code(2);
    assert!(
        out.stderr
            .contains("did you mean \"http://localhost:11434/v1\"?"),
        "{}",
        out.describe()
    );
}

#[test]
fn a_reply_cut_by_the_token_limit_says_so() {
    let dir = TestDir::new();
    let body = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"The answer is\"},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n",
        "data: [DONE]\n\n"
    );
    let fake = FakeOpenAi::with_replies(vec![Reply::raw(200, "text/event-stream", body)]);
    let out = Mypi::new(&dir).openai(&fake).args(["-p", "go"]).run();
    out.ok();
    assert_eq!(out.stdout.trim(), "The answer is");
    assert!(
        out.stderr
            .contains("the reply was cut short: the model reached its output token limit"),
        "{}",
        out.describe()
    );
}

#[test]
fn the_repl_shows_model_tokens_and_time_after_a_run() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![
        Reply::text("one").usage(1200, 30),
        Reply::text("two").usage(800, 20),
    ]);
    let mut m = Mypi::new(&dir).openai(&fake).arg("--no-watch").spawn();
    m.send_line("first");
    let line = m.wait_for_line(
        "· test-model · 1.2k in / 30 out · session 1.2k in / 30 out · ",
        WAIT,
    );
    assert!(line.trim_end().ends_with(" s"), "{line}");
    m.send_line("second");
    m.wait_for_line(
        "· test-model · 800 in / 20 out · session 2.0k in / 50 out · ",
        WAIT,
    );
    // A command is not a run: no such line.
    m.send_line("/tools");
    m.wait_for_line("Tools:", WAIT);
    m.send_line("/quit");
    let out = m.wait();
    assert_eq!(
        out.stdout.matches("· test-model ·").count(),
        2,
        "{}",
        out.stdout
    );
}

#[test]
fn a_mentioned_file_is_attached_and_a_missing_one_stops_the_prompt() {
    let dir = TestDir::new();
    dir.write("src/lib.rs", "pub fn answer() -> u32 { 42 }\n");
    let fake = FakeOpenAi::with_replies(vec![Reply::text("it returns 42")]);
    let out = Mypi::new(&dir)
        .openai(&fake)
        .args(["-p", "what does @src/lib.rs return? ask me@example.com"])
        .run();
    out.ok();
    let sent = &user_texts(&fake.requests()[0])[0];
    assert!(
        sent.starts_with(
            "what does @src/lib.rs return? ask me@example.com\n\n<file path=\"src/lib.rs\">\n"
        ),
        "{sent}"
    );
    assert!(sent.contains("pub fn answer() -> u32 { 42 }"), "{sent}");
    assert!(sent.ends_with("</file>"), "{sent}");

    let out = Mypi::new(&dir)
        .openai(&fake)
        .args(["-p", "compare @src/lib.rs and @src/gone.rs"])
        .run();
    out.expect_code(1);
    assert!(
        out.stderr.contains("@src/gone.rs: ") && out.stderr.contains("(nothing was sent)"),
        "{}",
        out.describe()
    );
    assert_eq!(
        fake.request_count(),
        1,
        "nothing was sent for the second prompt"
    );
}

#[test]
fn a_prompt_may_start_with_a_slash() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![Reply::text("a"), Reply::text("b")]);
    let run = |prompt: &str| {
        Mypi::new(&dir)
            .openai(&fake)
            .args(["-p", prompt])
            .run()
            .ok()
            .stdout
            .clone()
    };
    run("//help is what I need");
    run("/etc/hosts maps names to addresses, right?");
    let reqs = fake.requests();
    assert_eq!(user_texts(&reqs[0]), ["/help is what I need"]);
    assert_eq!(
        user_texts(&reqs[1]),
        ["/etc/hosts maps names to addresses, right?"]
    );
}

#[test]
fn session_totals_survive_a_resume() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![
        Reply::text("one").usage(100, 7),
        Reply::text("two").usage(50, 3),
    ]);
    Mypi::new(&dir)
        .openai(&fake)
        .args(["-p", "first"])
        .run()
        .ok();
    Mypi::new(&dir)
        .openai(&fake)
        .args(["--continue", "-p", "second"])
        .run()
        .ok();
    let out = Mypi::new(&dir)
        .openai(&fake)
        .args(["--continue", "-p", "/session"])
        .run();
    out.ok();
    assert!(
        out.stdout.contains("Tokens this session: 150 in, 10 out"),
        "{}",
        out.describe()
    );
    // The usage is kept with each assistant message, and never sent to the model.
    assert!(fake.requests()[1].raw_body.find("\"usage\"").is_none());
}
