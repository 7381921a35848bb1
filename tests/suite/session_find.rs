//! Finding and resuming sessions (issue 12, point 4): `mypi sessions`, `--resume PREFIX` (an
//! ambiguous or unknown one is refused), `-r` / `/resume` choosing from the list, the recap of
//! the last turns on resuming, and `/fork`.

use std::time::Duration;

use super::wire::{session_files, session_messages, sessions_dir, user_texts};
use crate::common::{FakeOpenAi, Mypi, Reply, TestDir};

const WAIT: Duration = Duration::from_secs(20);

/// A session file of this project with id `id` and one exchange per prompt.
fn session(dir: &TestDir, id: &str, prompts: &[&str]) {
    let mut text = format!(
        "{{\"type\":\"session\",\"version\":2,\"id\":\"{id}\",\"cwd\":\"/x\",\"created_ms\":1,\"provider\":\"openai\",\"model\":\"m-{id}\"}}\n"
    );
    for p in prompts {
        text.push_str(&format!(
            "{{\"type\":\"message\",\"message\":{{\"role\":\"user\",\"content\":\"{p}\"}}}}\n"
        ));
        text.push_str(&format!("{{\"type\":\"message\",\"message\":{{\"role\":\"assistant\",\"content\":\"answer to {p}\"}}}}\n"));
    }
    let path = sessions_dir(dir).join(format!("{id}.jsonl"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn three_sessions(dir: &TestDir) {
    session(dir, "20250101-000000-aaaa", &["first question", "second"]);
    std::thread::sleep(Duration::from_millis(20));
    session(dir, "20250101-000000-aaab", &["other"]);
    std::thread::sleep(Duration::from_millis(20));
    session(dir, "20250102-120000-bbbb", &["newest one"]);
}

#[test]
fn sessions_lists_this_projects_sessions_newest_first() {
    let dir = TestDir::new();
    let out = Mypi::new(&dir).arg("sessions").run();
    out.ok();
    assert!(
        out.stdout.starts_with("No sessions of this project yet"),
        "{}",
        out.stdout
    );
    three_sessions(&dir);
    let out = Mypi::new(&dir).arg("sessions").run();
    out.ok();
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(
        lines[0].starts_with("20250102-120000-bbbb  "),
        "{}",
        out.stdout
    );
    assert!(
        lines[0].contains("  1 turn ")
            && lines[0].contains("openai/m-20250102-120000-bbbb")
            && lines[0].ends_with("newest one"),
        "{}",
        lines[0]
    );
    assert!(
        lines[2].starts_with("20250101-000000-aaaa")
            && lines[2].contains("  2 turns")
            && lines[2].ends_with("first question"),
        "{}",
        lines[2]
    );
    assert!(lines[3].contains("mypi --resume ID"));
}

#[test]
fn resume_takes_a_unique_prefix_and_refuses_an_ambiguous_one() {
    let dir = TestDir::new();
    three_sessions(&dir);
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "--resume", "20250101", "-p", "x"])
        .run();
    out.expect_code(2);
    assert!(
        out.stderr
            .contains("\"20250101\" names 2 sessions: 20250101-000000-aaab, 20250101-000000-aaaa"),
        "{}",
        out.describe()
    );
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "--resume", "2019", "-p", "x"])
        .run();
    out.expect_code(2);
    assert!(
        out.stderr
            .contains("no session of this project has an id starting with \"2019\""),
        "{}",
        out.describe()
    );
    let fake = FakeOpenAi::with_replies(vec![Reply::text("resumed it")]);
    let out = Mypi::new(&dir)
        .openai(&fake)
        .args(["--resume", "20250101-000000-aaaa", "-p", "go on"])
        .run();
    out.ok();
    assert_eq!(
        user_texts(&fake.requests()[0]),
        ["first question", "second", "go on"]
    );
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-r", "-p", "x"])
        .run();
    out.expect_code(2);
}

#[test]
fn resuming_in_the_repl_shows_the_last_turns_and_resume_switches_sessions() {
    let dir = TestDir::new();
    three_sessions(&dir);
    let fake = FakeOpenAi::with_replies(vec![Reply::text("back in aaaa")]);
    let mut m = Mypi::new(&dir)
        .openai(&fake)
        .args(["--no-watch", "--resume", "20250102"])
        .spawn();
    m.wait_for_line("Resumed session 20250102-120000-bbbb.", WAIT);
    m.wait_for_line("  > newest one", WAIT);
    m.wait_for_line("  answer to newest one", WAIT);
    m.send_line("/resume 20250101-000000-aaaa");
    m.wait_for_line("Resumed session 20250101-000000-aaaa.", WAIT);
    m.wait_for_line("  > second", WAIT);
    m.send_line("and now?");
    m.wait_for_line("back in aaaa", WAIT);
    m.send_line("/quit");
    m.wait().ok();
    assert_eq!(
        user_texts(&fake.requests()[0]),
        ["first question", "second", "and now?"]
    );
}

#[test]
fn r_on_a_terminal_lists_the_sessions_and_resumes_the_chosen_one() {
    let dir = TestDir::new();
    three_sessions(&dir);
    let m = Mypi::new(&dir).args(["--provider", "faux", "--no-watch", "-r"]);
    let mut pty = crate::common::pty::Pty::spawn(m.command());
    let at = pty.wait_for("Resume which?", 0, WAIT);
    pty.type_keys("3\r");
    let at = pty.wait_for("Resumed session 20250101-000000-aaaa.", at, WAIT);
    pty.wait_for("> second", at, WAIT);
    pty.type_keys("/quit\r");
    assert_eq!(pty.wait(WAIT), 0, "{}", pty.screen());
}

#[test]
fn fork_copies_the_conversation_into_a_new_session_that_goes_on() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![Reply::text("one"), Reply::text("two")]);
    let mut m = Mypi::new(&dir).openai(&fake).arg("--no-watch").spawn();
    m.send_line("hello");
    m.wait_for_line("one", WAIT);
    m.send_line("/fork");
    m.wait_for_line("this one goes on from here", WAIT);
    m.send_line("more");
    m.wait_for_line("two", WAIT);
    m.send_line("/quit");
    m.wait().ok();
    let files = session_files(&dir);
    assert_eq!(files.len(), 2, "{files:?}");
    let counts: Vec<usize> = files.iter().map(|f| session_messages(f).len()).collect();
    assert!(counts.contains(&2) && counts.contains(&4), "{counts:?}");
    assert_eq!(user_texts(&fake.requests()[1]), ["hello", "more"]);
}
