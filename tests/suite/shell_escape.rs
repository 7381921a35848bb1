//! The shell escape (issue 13, point 10) through the binary: `!cmd` shows the command's
//! output and hands it to the model with the next prompt (the request body pins the format),
//! `!!cmd` keeps nothing, `/new` forgets, a failing command shows its status, print mode,
//! Ctrl-C killing a long command, and the `user_shell` event blocking, rewriting and answering
//! a command, the same scenario in Lua and in Rhai.

use std::time::{Duration, Instant};

use super::ext_util::{install, repl, WAIT};
use crate::common::{FakeOpenAi, Mypi, Reply, TestDir};

/// The text of the last user message of a request body.
fn last_user(body: &serde_json::Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .map(|m| match m["content"].as_str() {
            Some(s) => s.to_string(),
            None => m["content"].to_string(),
        })
        .unwrap_or_default()
}

#[test]
fn bang_output_goes_with_the_next_prompt_and_double_bang_output_does_not() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![
        Reply::text("answer one"),
        Reply::text("answer two"),
        Reply::text("answer three"),
    ]);
    let mut m = Mypi::new(&dir).openai(&fake).arg("--no-watch").spawn();
    m.send_line("!echo hi");
    m.wait_for_line("hi", WAIT);
    assert_eq!(m.wait_for_line("exit code", WAIT), "exit code: 0");
    m.send_line("!!echo secret");
    m.wait_for_line("secret", WAIT);
    m.send_line("  !echo oops >&2; exit 3");
    m.wait_for_line("oops", WAIT);
    assert_eq!(m.wait_for_line("exit code", WAIT), "exit code: 3");
    m.send_line("what now");
    m.wait_for_line("answer one", WAIT);
    // The context went once: the prompt after has none.
    m.send_line("second");
    m.wait_for_line("answer two", WAIT);
    m.send_line("!echo later");
    m.wait_for_line("later", WAIT);
    m.send_line("/new");
    m.wait_for_line("Started a new session.", WAIT);
    m.send_line("fresh");
    m.wait_for_line("answer three", WAIT);
    let out = m.wait();
    out.ok();
    super::wire::no_panic(&out.stderr);
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 3, "{}", out.describe());
    assert_eq!(
        last_user(&reqs[0].body),
        "The user ran this command in the shell:\n```\n$ echo hi\nhi\nexit code: 0\n```\n\n\
         The user ran this command in the shell:\n```\n$ echo oops >&2; exit 3\noops\n\
         exit code: 3\n```\n\nwhat now"
    );
    assert!(!reqs[0].raw_body.contains("secret"), "{}", reqs[0].raw_body);
    assert_eq!(last_user(&reqs[1].body), "second");
    assert!(!reqs[1].raw_body.contains("later"));
    assert_eq!(last_user(&reqs[2].body), "fresh");
    assert!(!reqs[2].raw_body.contains("later"), "{}", reqs[2].raw_body);
}

#[test]
fn print_mode_runs_a_shell_escape_and_exits_0_whatever_the_command_did() {
    let dir = TestDir::new();
    dir.write("marker.txt", "");
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "!ls marker.txt; echo hi"])
        .run();
    out.ok();
    assert_eq!(
        out.stdout,
        "marker.txt\nhi\nexit code: 0\n",
        "{}",
        out.describe()
    );
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "!!echo bad >&2; exit 4"])
        .run();
    out.ok();
    assert_eq!(out.stdout, "bad\nexit code: 4\n", "{}", out.describe());
    // Piped text is not appended to the command.
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "!cat; echo done"])
        .stdin("piped text")
        .run();
    out.ok();
    assert_eq!(out.stdout, "done\nexit code: 0\n", "{}", out.describe());
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "--json", "-p", "!echo hi"])
        .run();
    out.ok();
    assert!(
        out.stdout
            .contains(r#"{"type":"command","name":"!","output":"hi\nexit code: 0"}"#),
        "{}",
        out.describe()
    );
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "!"])
        .run();
    out.expect_code(1);
    assert!(
        out.stderr
            .contains("nothing to run: write the command after the `!`"),
        "{}",
        out.describe()
    );
}

#[test]
fn ctrl_c_kills_a_long_shell_command_and_it_is_not_kept() {
    let dir = TestDir::new();
    let mut m = repl(&dir);
    m.send_line("!echo $$ > pid; touch started; sleep 30");
    let deadline = Instant::now() + WAIT;
    while !dir.exists("started") {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    let pgid: i32 = dir.read("pid").trim().parse().unwrap();
    let started = Instant::now();
    m.interrupt();
    assert_eq!(m.wait_for_line("cancelled", WAIT), "cancelled");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // The whole group is gone (kill(-pgid, 0) finds nobody).
    let deadline = Instant::now() + Duration::from_secs(5);
    // SAFETY: kill(2) with signal 0 only checks whether the group exists.
    while unsafe { libc::kill(-pgid, 0) } == 0 {
        assert!(Instant::now() < deadline, "the command's group survived");
        std::thread::sleep(Duration::from_millis(50));
    }
    m.send_line("!!echo still here");
    m.wait_for_line("still here", WAIT);
    // The faux model echoes the prompt: nothing of the cancelled command went with it.
    m.send_line("next");
    m.wait_for_line("next", WAIT);
    let out = m.wait();
    out.ok();
    assert!(!out.stdout.contains("$ echo $$"), "{}", out.describe());
}

const LUA: &str = r#"
api.on("user_shell", function(e)
  api.notify("saw " .. e.command .. " keep=" .. tostring(e.add_to_context))
  if e.command:find("rm") then return { block = true, reason = "no rm here" } end
  if e.command == "greet" then
    return { updated_command = "echo rewritten > made.txt; echo hello from the rewrite" }
  end
  if e.command == "canned" then return { updated_output = "canned output" } end
end)
"#;

const RHAI: &str = r#"
api.on("user_shell", |e, ctx| {
  api.notify(`saw ${e.command} keep=${e.add_to_context}`);
  if e.command.contains("rm") { return #{ block: true, reason: "no rm here" }; }
  if e.command == "greet" {
    return #{ updated_command: "echo rewritten > made.txt; echo hello from the rewrite" };
  }
  if e.command == "canned" { return #{ updated_output: "canned output" }; }
});
"#;

fn user_shell_scenario(file: &str, source: &str) {
    let dir = TestDir::new();
    install(&dir, file, source);
    let fake = FakeOpenAi::with_replies(vec![Reply::text("understood")]);
    let mut m = Mypi::new(&dir).openai(&fake).arg("--no-watch").spawn();
    m.send_line("!touch victim.txt && rm -f nothing");
    m.wait_for_line("saw touch victim.txt && rm -f nothing keep=true", WAIT);
    m.wait_for_line("error: the command was not run: no rm here", WAIT);
    m.send_line("!!greet");
    m.wait_for_line("saw greet keep=false", WAIT);
    m.wait_for_line(
        "an extension changed the command to: echo rewritten > made.txt; echo hello from the rewrite",
        WAIT,
    );
    m.wait_for_line("hello from the rewrite", WAIT);
    m.send_line("!greet");
    m.wait_for_line("hello from the rewrite", WAIT);
    m.send_line("!canned");
    m.wait_for_line(
        "an extension gave the output; the command was not run",
        WAIT,
    );
    m.wait_for_line("canned output", WAIT);
    m.send_line("go on");
    m.wait_for_line("understood", WAIT);
    let out = m.wait();
    out.ok();
    super::wire::no_panic(&out.stderr);
    assert!(!dir.exists("victim.txt"), "a blocked command ran");
    assert!(dir.exists("made.txt"), "the rewritten command did not run");
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 1, "{file}: {}", out.describe());
    assert_eq!(
        last_user(&reqs[0].body),
        "The user ran this command in the shell:\n```\n$ echo rewritten > made.txt; echo hello \
         from the rewrite\nhello from the rewrite\nexit code: 0\n```\n\n\
         The user ran this command in the shell:\n```\n$ canned\ncanned output\n```\n\ngo on",
        "{file}"
    );
    // In print mode a refused command is a failure of the line: stderr says why, exit 1.
    let out = Mypi::new(&dir)
        .args([
            "--provider",
            "faux",
            "-p",
            "!touch victim.txt; rm -f nothing",
        ])
        .run();
    out.expect_code(1);
    assert!(
        out.stderr
            .contains("mypi: the command was not run: no rm here"),
        "{file}: {}",
        out.describe()
    );
    assert!(!dir.exists("victim.txt"));
}

#[test]
fn a_lua_extension_blocks_rewrites_and_answers_shell_commands() {
    user_shell_scenario("shell.lua", LUA);
}

#[test]
fn a_rhai_extension_does_the_same() {
    user_shell_scenario("shell.rhai", RHAI);
}
