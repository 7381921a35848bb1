//! Project code runs only in a trusted project (issue 8, family 11): a folder's own
//! `.agents/extensions` load only when it is trusted; the REPL asks once per folder (showing
//! what would load) and remembers the answer; print mode loads none and says so in one line;
//! user-level extensions always load; `mypi trust [PATH] [--list | --revoke | --children]`.

use crate::common::{Mypi, TestDir};

use super::ext_util::{install, quit, WAIT};

/// An untrusted project with one extension that would run a command, and a user extension.
fn project() -> TestDir {
    let dir = TestDir::new();
    dir.untrust();
    install(
        &dir,
        "evil.lua",
        r#"api.exec("sh", {"-c", "echo ran > pwned"}) api.command("evil", function() return "evil loaded" end)"#,
    );
    dir.write(
        "home/.agents/extensions/mine.lua",
        r#"api.command("mine", function() return "mine loaded" end)"#,
    );
    dir
}

fn print(dir: &TestDir, extra: &[&str], prompt: &str) -> crate::common::Output {
    Mypi::new(dir)
        .args(["--provider", "faux", "--no-session"])
        .args(extra)
        .args(["-p", prompt])
        .run()
}

#[test]
fn print_mode_skips_an_untrusted_project_and_says_how_to_trust_it() {
    let dir = project();
    let out = print(&dir, &[], "/mine");
    out.ok();
    assert_eq!(out.stdout, "mine loaded\n", "{}", out.describe());
    let line = format!(
        "mypi: 1 project extension in {} not loaded: the folder is not trusted (pass --trust, or run `mypi trust {}`)",
        dir.path().display(),
        dir.path().display()
    );
    assert!(out.stderr.contains(&line), "{}", out.describe());
    assert_eq!(
        out.stderr.matches("not loaded").count(),
        1,
        "{}",
        out.describe()
    );
    assert!(!dir.exists("pwned"), "untrusted code ran");
    let evil = print(&dir, &[], "/evil");
    assert!(!evil.stdout.contains("evil loaded"), "{}", evil.describe());
    // --trust: this run only.
    let trusted = print(&dir, &["--trust"], "/evil");
    trusted.ok();
    assert_eq!(trusted.stdout, "evil loaded\n", "{}", trusted.describe());
    assert!(dir.exists("pwned"));
    let again = print(&dir, &[], "/evil");
    assert!(
        !again.stdout.contains("evil loaded"),
        "{}",
        again.describe()
    );
}

#[test]
fn mypi_trust_trusts_lists_and_revokes() {
    let dir = project();
    let trust = |args: &[&str]| Mypi::new(&dir).arg("trust").args(args).run();
    let out = trust(&[]);
    out.ok();
    assert_eq!(out.stdout, format!("trusted {}\n", dir.path().display()));
    print(&dir, &[], "/evil").ok();
    assert!(print(&dir, &[], "/evil").stdout.contains("evil loaded"));
    let list = trust(&["--list"]);
    assert!(
        list.stdout
            .contains(&format!("trusted: {}", dir.path().display())),
        "{}",
        list.describe()
    );
    trust(&["--revoke"]).ok();
    assert!(!print(&dir, &[], "/evil").stdout.contains("evil loaded"));
    // A parent trusted with its children covers the project; a path elsewhere works too.
    let parent = dir.path().parent().unwrap().to_path_buf();
    let out = Mypi::new(&dir)
        .args(["trust", "--children"])
        .arg(&parent)
        .run();
    out.ok();
    assert!(print(&dir, &[], "/evil").stdout.contains("evil loaded"));
    let bad = trust(&["no/such/folder"]);
    bad.expect_code(2);
    assert!(bad.stderr.contains("no such folder"), "{}", bad.describe());
}

#[test]
fn the_repl_asks_once_on_a_terminal_and_remembers() {
    for (answer, loads) in [("y", true), ("n", false)] {
        let dir = project();
        // The project's settings hooks follow the answer too.
        dir.write(
            ".claude/settings.json",
            r#"{"hooks": {"UserPromptSubmit": [{"hooks": [
                {"type": "command", "command": "touch \"$CLAUDE_PROJECT_DIR/hook-ran\""}]}]}}"#,
        );
        let start = || {
            let m = Mypi::new(&dir).args(["--provider", "faux", "--no-session", "--no-watch"]);
            crate::common::pty::Pty::spawn(m.command())
        };
        let mut pty = start();
        let at = pty.wait_for("run any command", 0, WAIT);
        let at = pty.wait_for(".agents/extensions/evil.lua", at, WAIT);
        let at = pty.wait_for("[y/N]", at, WAIT);
        pty.type_keys(&format!("{answer}\r"));
        let at = pty.wait_for("> ", at, WAIT);
        pty.type_keys("/evil\r");
        let at = pty.wait_for("/evil", at, WAIT);
        let at = pty.wait_for("> ", at, WAIT);
        pty.type_keys("/mine\r");
        let at = pty.wait_for("mine loaded", at, WAIT);
        assert_eq!(
            pty.screen().contains("evil loaded"),
            loads,
            "{answer}: {}",
            pty.screen()
        );
        // At the prompt again: a line typed while /mine still runs is queued, and a queued
        // message is no `UserPromptSubmit`.
        let at = pty.wait_for("> ", at, WAIT);
        pty.type_keys("hello\r");
        let at = pty.wait_for("hello", at, WAIT);
        pty.wait_for("> ", at, WAIT);
        assert_eq!(dir.exists("hook-ran"), loads, "{answer}: {}", pty.screen());
        pty.type_keys("/quit\r");
        assert_eq!(pty.wait(WAIT), 0);
        assert_eq!(dir.exists("pwned"), loads);
        // Asked once: the next start does not ask again.
        let mut pty = start();
        let at = pty.wait_for("/help for commands", 0, WAIT);
        pty.type_keys("/mine\r");
        pty.wait_for("mine loaded", at, WAIT);
        assert!(
            !pty.screen().contains("run any command"),
            "{answer}: asked again"
        );
        if !loads {
            assert!(
                pty.screen().contains("you chose not to trust"),
                "{}",
                pty.screen()
            );
        }
        pty.type_keys("/quit\r");
        assert_eq!(pty.wait(WAIT), 0);
    }
}

#[test]
fn a_repl_reading_a_pipe_does_not_ask_and_remembers_nothing() {
    let dir = project();
    let mut m = Mypi::new(&dir)
        .args(["--provider", "faux", "--no-session", "--no-watch"])
        .spawn();
    m.send_line("y");
    m.send_line("/mine");
    m.wait_for_line("mine loaded", WAIT);
    let out = quit(m);
    assert!(
        out.stdout.contains("the folder is not trusted"),
        "{}",
        out.describe()
    );
    assert!(!out.stdout.contains("evil"), "{}", out.describe());
    assert!(!dir.exists("pwned"));
    assert!(!dir.home().join(".agents/config.toml").exists());
}

#[test]
fn ext_check_and_list_skip_an_untrusted_project() {
    let dir = project();
    for sub in ["check", "list"] {
        let out = Mypi::new(&dir).args(["ext", sub]).run();
        assert!(
            out.stderr.contains("skipped: the folder is not trusted"),
            "{sub}: {}",
            out.describe()
        );
        assert!(!out.stdout.contains("evil"), "{sub}: {}", out.describe());
        assert!(!dir.exists("pwned"), "{sub} ran untrusted code");
    }
    // Named explicitly, a file is checked: the user asked for it.
    let out = Mypi::new(&dir)
        .args(["ext", "check", ".agents/extensions/evil.lua"])
        .run();
    assert!(out.stdout.contains("evil"), "{}", out.describe());
    let trusted = Mypi::new(&dir).args(["--trust", "ext", "list"]).run();
    assert!(trusted.stdout.contains("evil"), "{}", trusted.describe());
}
