//! The REPL with stdin on a pipe (no terminal): lines are read one by one, answers and
//! command output go to stdout, `/quit` and end of input leave with exit code 0.

use std::time::Duration;

use serde_json::json;

use crate::common::{FakeOpenAi, Mypi, Reply, TestDir};

use super::wire::{no_panic, only_session, user_texts};

const WAIT: Duration = Duration::from_secs(10);

#[test]
fn prompt_session_and_quit_through_a_pipe() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![Reply::text("Hello back to you!")]);
    let mut mypi = Mypi::new(&dir).openai(&fake).spawn();
    let banner = mypi.wait_for_line("mypi ", WAIT);
    assert!(banner.contains("test-model"), "{banner}");
    assert!(banner.contains("openai"), "{banner}");

    mypi.send_line("hello");
    mypi.wait_for_line("Hello back to you!", WAIT);
    assert_eq!(user_texts(&fake.requests()[0]), vec!["hello"]);

    mypi.send_line("/session");
    let session = mypi.wait_for_line("Session:", WAIT);
    let path = only_session(&dir);
    assert!(
        session.contains(&path.display().to_string()),
        "{session} / {}",
        path.display()
    );
    mypi.wait_for_line("Messages: 2", WAIT);
    mypi.wait_for_line("Tokens this session: 10 in, 5 out", WAIT);

    mypi.send_line("/quit");
    let out = mypi.wait();
    out.ok();
    no_panic(&out.stderr);
    assert_eq!(fake.request_count(), 1);
    let history = std::fs::read_to_string(dir.home().join(".agents/mypi_history"))
        .expect("the REPL keeps a history file");
    assert!(history.contains("hello"), "{history}");
    assert!(history.contains("/session"), "{history}");
}

#[test]
fn end_of_input_leaves_with_exit_0() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::start();
    let mut mypi = Mypi::new(&dir).openai(&fake).spawn();
    mypi.wait_for_line("mypi ", WAIT);
    mypi.close_stdin();
    let out = mypi.wait();
    out.ok();
    no_panic(&out.stderr);
    assert_eq!(fake.request_count(), 0);
}

#[test]
fn faux_repl_says_no_model_is_configured_and_echoes() {
    let dir = TestDir::new();
    let mut mypi = Mypi::new(&dir).spawn();
    mypi.wait_for_line("faux", WAIT);
    mypi.wait_for_line("No model configured", WAIT);
    mypi.send_line("echo this line");
    mypi.wait_for_line("echo this line", WAIT);
    let out = mypi.wait();
    out.ok();
}

#[test]
fn tool_calls_show_a_line_each() {
    let dir = TestDir::new();
    dir.write("a.txt", "one\ntwo\nthree\n");
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls(vec![
            ("c1", "read", json!({"path": "a.txt"})),
            ("c2", "bash", json!({"command": "exit 4"})),
        ]),
        Reply::text("Finished."),
    ]);
    let mut mypi = Mypi::new(&dir).openai(&fake).spawn();
    mypi.send_line("look at a.txt");
    // Every call of the batch is announced before the results come in, in call order.
    let read = mypi.wait_for_line("→ read", WAIT);
    assert!(read.contains("a.txt"), "{read}");
    mypi.wait_for_line("→ bash", WAIT);
    mypi.wait_for_line("✓ 3 lines", WAIT);
    let failed = mypi.wait_for_line("✗", WAIT);
    assert!(failed.contains("exit code: 4"), "{failed}");
    mypi.wait_for_line("Finished.", WAIT);
    mypi.send_line("/quit");
    mypi.wait().ok();
}

#[test]
fn errors_keep_the_repl_open() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![
        Reply::error(401, "Incorrect API key provided"),
        Reply::text("second try works"),
    ]);
    let mut mypi = Mypi::new(&dir).openai(&fake).spawn();
    mypi.send_line("/hlep");
    let unknown = mypi.wait_for_line("unknown command /hlep", WAIT);
    assert!(unknown.contains("/help"), "{unknown}");
    mypi.send_line("first");
    let err = mypi.wait_for_line("401", WAIT);
    assert!(err.contains("Incorrect API key provided"), "{err}");
    mypi.send_line("second");
    mypi.wait_for_line("second try works", WAIT);
    mypi.send_line("/exit");
    let out = mypi.wait();
    out.ok();
    no_panic(&out.stderr);
    assert_eq!(fake.request_count(), 2);
}

#[test]
fn new_starts_a_fresh_conversation() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![Reply::text("reply-one"), Reply::text("reply-two")]);
    let mut mypi = Mypi::new(&dir).openai(&fake).spawn();
    mypi.send_line("first");
    mypi.wait_for_line("reply-one", WAIT);
    mypi.send_line("/new");
    mypi.wait_for_line("Started a new session.", WAIT);
    mypi.send_line("second");
    mypi.wait_for_line("reply-two", WAIT);
    mypi.send_line("/q");
    mypi.wait().ok();
    let reqs = fake.requests();
    assert_eq!(user_texts(&reqs[1]), vec!["second"]);
    assert_eq!(super::wire::session_files(&dir).len(), 2);
}

#[test]
fn ctrl_c_cancels_the_running_prompt_and_the_repl_stays_open() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![
        Reply::hang_then_text(Duration::from_secs(20), "too late"),
        Reply::text("after the cancel"),
    ]);
    let mut mypi = Mypi::new(&dir).openai(&fake).spawn();
    mypi.wait_for_line("mypi ", WAIT);
    mypi.send_line("slow question");
    fake.wait_for_requests(1, WAIT);
    // Let the REPL's Ctrl-C listener be polled once after the request went out.
    std::thread::sleep(Duration::from_millis(50));
    let t = std::time::Instant::now();
    mypi.interrupt();
    mypi.wait_for_line("cancelling", WAIT);
    mypi.send_line("next question");
    mypi.wait_for_line("after the cancel", WAIT);
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    mypi.send_line("/quit");
    let out = mypi.wait();
    out.ok();
    no_panic(&out.stderr);
    assert!(!out.stdout.contains("too late"));
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(user_texts(&reqs[1]), vec!["slow question", "next question"]);
}

#[test]
fn ctrl_c_during_a_tool_stops_it_and_answers_the_call() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls(vec![(
            "c_sleep",
            "bash",
            json!({"command": "touch started.txt; sleep 20; touch finished.txt"}),
        )]),
        Reply::text("continued"),
    ]);
    let mut mypi = Mypi::new(&dir).openai(&fake).spawn();
    mypi.send_line("run the slow thing");
    mypi.wait_for_line("→ bash", WAIT);
    let deadline = std::time::Instant::now() + WAIT;
    while !dir.exists("started.txt") {
        assert!(std::time::Instant::now() < deadline, "bash never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    mypi.interrupt();
    mypi.wait_for_line("cancelling", WAIT);
    mypi.send_line("go on");
    mypi.wait_for_line("continued", WAIT);
    mypi.send_line("/quit");
    mypi.wait().ok();
    assert!(!dir.exists("finished.txt"), "the command was stopped");
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 2);
    let results = super::wire::tool_results(&reqs[1]);
    assert_eq!(
        results.len(),
        1,
        "the interrupted call still has a result: {}",
        reqs[1].raw_body
    );
    assert_eq!(results[0].id, "c_sleep");
}

#[test]
fn piped_script_of_lines_runs_in_order_then_ends_at_eof() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![Reply::text("answer-one"), Reply::text("answer-two")]);
    let out = Mypi::new(&dir)
        .openai(&fake)
        .stdin("first\n\nsecond\n/session\n")
        .spawn()
        .wait();
    out.ok();
    no_panic(&out.stderr);
    let one = out.stdout.find("answer-one").expect("first answer");
    let two = out.stdout.find("answer-two").expect("second answer");
    let session = out.stdout.find("Messages: 4").expect("session info");
    assert!(one < two && two < session, "{}", out.describe());
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 2, "the empty line is skipped");
    assert_eq!(user_texts(&reqs[1]), vec!["first", "second"]);
}

#[test]
fn continue_in_the_repl_resumes_the_conversation() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![Reply::text("earlier"), Reply::text("later")]);
    Mypi::new(&dir)
        .openai(&fake)
        .args(["-p", "before"])
        .run()
        .ok();
    let mut mypi = Mypi::new(&dir).openai(&fake).arg("--continue").spawn();
    mypi.send_line("/session");
    mypi.wait_for_line("Messages: 2", WAIT);
    mypi.send_line("after");
    mypi.wait_for_line("later", WAIT);
    mypi.wait().ok();
    assert_eq!(user_texts(&fake.requests()[1]), vec!["before", "after"]);
}

/// A REPL on a real terminal, on the faux model replying with `replies` in turn; the screen
/// position after its banner.
fn pty_repl(dir: &TestDir, replies: &[serde_json::Value]) -> (crate::common::pty::Pty, usize) {
    let m = super::ext_util::faux(dir, replies).args(["--no-session", "--no-watch"]);
    let pty = crate::common::pty::Pty::spawn(m.command());
    let at = pty.wait_for("/help for commands", 0, Duration::from_secs(20));
    (pty, at)
}

/// Ctrl-C typed on a real terminal during the first reply cancels the reply and never kills
/// mypi (issue 8, family 5), over many starts: the line editor must not put back the default
/// SIGINT handler it found before the runtime registered its own.
#[test]
fn ctrl_c_during_the_first_reply_never_kills_the_repl() {
    let dir = TestDir::new();
    let slow = serde_json::json!({"text": "one two three four five six seven eight nine ten ".repeat(20), "delay_ms": 20});
    for round in 0..12 {
        let (mut pty, at) = pty_repl(&dir, &[slow.clone(), slow.clone()]);
        pty.type_keys("hello\r");
        let at = pty.wait_for("four", at, Duration::from_secs(20));
        pty.type_keys("\x03");
        let at = pty.wait_for("cancel", at, Duration::from_secs(20));
        assert!(
            pty.alive(),
            "round {round}: Ctrl-C killed mypi:\n{}",
            pty.screen()
        );
        pty.type_keys("/quit\r");
        assert_eq!(
            pty.wait(Duration::from_secs(20)),
            0,
            "round {round}:\n{}",
            &pty.screen()[at..]
        );
    }
}

/// `/quit` typed on a real terminal while a tool runs leaves at once; a line typed during the
/// run steers it; streamed text is not held back meanwhile.
#[test]
fn quit_typed_on_a_terminal_during_a_run_leaves_at_once() {
    let dir = TestDir::new();
    let call =
        serde_json::json!({"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 2"}}]});
    let slow = serde_json::json!({"text": "streaming along ".repeat(40), "delay_ms": 30});
    let replies = [
        call.clone(),
        serde_json::json!({"text": "first done"}),
        slow,
        call,
        serde_json::json!({"text": "never"}),
    ];
    let (mut pty, at) = pty_repl(&dir, &replies);
    pty.type_keys("one\r");
    let at = pty.wait_for("sleep 2", at, Duration::from_secs(20));
    // Typed during the run: queued as steering (the model sees it after the tool call).
    pty.type_keys("two\r");
    let at = pty.wait_for("» queued as steering: two", at, Duration::from_secs(20));
    let at = pty.wait_for("first done", at, Duration::from_secs(20));
    let at = pty.wait_for(" s\r\n", at, Duration::from_secs(20));
    pty.type_keys("three\r");
    let at = pty.wait_for(
        "streaming along streaming along",
        at,
        Duration::from_secs(20),
    );
    // Steering typed during a reply with no tool call runs next, as a prompt.
    pty.type_keys("four\r");
    let at = pty.wait_for("sleep 2", at, Duration::from_secs(20));
    let started = std::time::Instant::now();
    pty.type_keys("/quit\r");
    assert_eq!(
        pty.wait(Duration::from_secs(20)),
        0,
        "{}",
        &pty.screen()[at..]
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(!pty.screen().contains("never"), "{}", pty.screen());
}
