//! The dialogs and the screen of `ctx.ui` (issue 13, points 1 and 2), through the binary in
//! Lua and Rhai: `select` (by number, by text, again after a wrong answer, nil on timeout),
//! `input` (default, typed text), `editor` (a scripted `$EDITOR`, and one that fails), all of
//! them nil / the default at once in print mode; `set_status` and `set_title` on a pipe and on
//! a terminal.

use std::time::{Duration, Instant};

use super::ext_util::{install, quit, WAIT};
use crate::common::{Mypi, TestDir};

const LUA: &str = r#"
api.command("pick", function(_, ctx)
  return "picked " .. tostring(ctx.ui.select("Colour?", { "red", "green" }))
end)
api.command("pickfast", function(_, ctx)
  return "fast " .. tostring(ctx.ui.select("Quick?", { "a", "b" }, { timeout_ms = 300 }))
end)
api.command("ask", function(_, ctx)
  return "name " .. tostring(ctx.ui.input("Name?", { default = "anon" }))
end)
api.command("edit", function(_, ctx) return "edited " .. tostring(ctx.ui.editor("a draft")) end)
api.command("busy", function(args, ctx)
  ctx.ui.set_status("work", args ~= "" and args or nil)
  return "ok"
end)
api.command("title", function(args, ctx) ctx.ui.set_title(args) return "titled" end)
api.command("sure", function(_, ctx) return "sure " .. tostring(ctx.ui.confirm("Sure?", { timeout_ms = 300 })) end)
"#;

const RHAI: &str = r#"
api.command("pick", |args, ctx| `picked ${ctx.ui.select("Colour?", ["red", "green"])}`);
api.command("pickfast", |args, ctx| `fast ${ctx.ui.select("Quick?", ["a", "b"], #{ timeout_ms: 300 })}`);
api.command("ask", |args, ctx| `name ${ctx.ui.input("Name?", #{ "default": "anon" })}`);
api.command("edit", |args, ctx| `edited ${ctx.ui.editor("a draft")}`);
api.command("busy", |args, ctx| {
  if args == "" { ctx.ui.set_status("work", ()); } else { ctx.ui.set_status("work", args); }
  "ok"
});
api.command("title", |args, ctx| { ctx.ui.set_title(args); "titled" });
api.command("sure", |args, ctx| `sure ${ctx.ui.confirm("Sure?", #{ timeout_ms: 300 })}`);
"#;

fn nil(file: &str) -> &'static str {
    if file.ends_with(".lua") {
        "nil"
    } else {
        ""
    }
}

fn dialogs(file: &str, source: &str) {
    let dir = TestDir::new();
    install(&dir, file, source);
    let editor = dir.write("ed.sh", "sed -i s/draft/final/ \"$1\"\n");
    let mut m = Mypi::new(&dir)
        .env("EDITOR", format!("sh {}", editor.display()))
        .env_remove("VISUAL")
        .args(["--provider", "faux", "--no-watch"])
        .spawn();
    m.send_line("/pick");
    m.send_line("2");
    m.wait_for_line("picked green", WAIT);
    m.send_line("/pick");
    m.send_line("blue");
    m.send_line("red");
    m.wait_for_line("picked red", WAIT);
    let started = Instant::now();
    m.send_line("/pickfast");
    m.wait_for_line(&format!("fast {}", nil(file)), WAIT);
    assert!(started.elapsed() < Duration::from_secs(5));
    // A line typed after the timeout is not taken as the answer: it is either dropped with
    // a note (the line editor still held the question) or waits as the next prompt.
    m.send_line("b");
    std::thread::sleep(Duration::from_millis(500));
    assert!(!m.stdout_so_far().contains("fast b"));
    m.send_line("/ask");
    m.send_line("Bob");
    m.wait_for_line("name Bob", WAIT);
    m.send_line("/edit");
    m.wait_for_line("edited a final", WAIT);
    m.send_line("/sure");
    m.send_line("y");
    m.wait_for_line("sure true", WAIT);
    let started = Instant::now();
    m.send_line("/sure");
    m.wait_for_line("sure false", WAIT);
    assert!(started.elapsed() < Duration::from_secs(5));
    m.send_line("n");
    std::thread::sleep(Duration::from_millis(300));
    m.send_line("/busy indexing");
    m.wait_for_line("status: indexing", WAIT);
    m.send_line("/busy");
    m.wait_for_line("status cleared", WAIT);
    quit(m);
}

#[test]
fn lua_dialogs_on_the_repl() {
    dialogs("d.lua", LUA);
}

#[test]
fn rhai_dialogs_on_the_repl() {
    dialogs("d.rhai", RHAI);
}

#[test]
fn in_print_mode_dialogs_answer_at_once_and_the_screen_is_left_alone() {
    for (file, source) in [("d.lua", LUA), ("d.rhai", RHAI)] {
        let dir = TestDir::new();
        install(&dir, file, source);
        let run = |line: &str| {
            let out = Mypi::new(&dir)
                .env("EDITOR", "touch /nonexistent-dir/x")
                .args(["--provider", "faux", "-p", line])
                .run();
            out.ok();
            out.stdout.trim().to_string()
        };
        let started = Instant::now();
        assert_eq!(run("/pick"), format!("picked {}", nil(file)).trim_end());
        assert_eq!(run("/ask"), "name anon");
        assert_eq!(run("/edit"), format!("edited {}", nil(file)).trim_end());
        assert_eq!(run("/busy x"), "ok");
        assert_eq!(run("/title t"), "titled");
        assert!(started.elapsed() < Duration::from_secs(20));
    }
}

#[test]
fn a_failing_editor_gives_nil() {
    let dir = TestDir::new();
    install(&dir, "d.lua", LUA);
    let mut m = Mypi::new(&dir)
        .env("EDITOR", "false")
        .env_remove("VISUAL")
        .args(["--provider", "faux", "--no-watch"])
        .spawn();
    m.send_line("/edit");
    m.wait_for_line("edited nil", WAIT);
    quit(m);
}

#[test]
fn on_a_terminal_the_status_shows_above_the_prompt_and_the_title_is_set() {
    let dir = TestDir::new();
    install(&dir, "d.lua", LUA);
    let m = Mypi::new(&dir).args(["--provider", "faux", "--no-watch", "--no-session"]);
    let mut pty = crate::common::pty::Pty::spawn(m.command());
    let at = pty.wait_for("/help for commands", 0, WAIT);
    let at = pty.wait_for("> ", at, WAIT);
    pty.type_keys("/busy 3 todos\r");
    let at = pty.wait_for("ok", at, WAIT);
    // The next prompt comes with the status line right above it.
    let at = pty.wait_for("3 todos\r\n", at, WAIT);
    pty.wait_for("> ", at, WAIT);
    pty.type_keys("/title my \u{7}project\r");
    pty.wait_for("titled", at, WAIT);
    assert!(
        pty.screen().contains("\u{1b}]0;my project\u{7}"),
        "{:?}",
        pty.screen()
    );
    pty.type_keys("/quit\r");
    pty.wait(WAIT);
}

#[test]
fn dialogs_of_two_extensions_at_once_are_asked_one_after_another() {
    let dir = TestDir::new();
    for who in ["a", "b"] {
        install(
            &dir,
            &format!("{who}.lua"),
            &format!(
                r#"api.tool{{ name = "ask_{who}", description = "d", parallel_safe = true,
  execute = function(args, ctx) return "{who} got " .. tostring(ctx.ui.input("Question {who}?")) end }}"#
            ),
        );
    }
    let replies = [
        serde_json::json!({"tool_calls": [{"name": "ask_a", "arguments": {}}, {"name": "ask_b", "arguments": {}}]}),
        serde_json::json!({"text": "both answered"}),
    ];
    let mut m = super::ext_util::faux(&dir, &replies)
        .arg("--no-watch")
        .spawn();
    m.send_line("go");
    let asked = |m: &crate::common::Running| {
        let out = m.stdout_so_far();
        ["a", "b"]
            .into_iter()
            .filter(|w| out.contains(&format!("Question {w}?")))
            .collect::<Vec<_>>()
    };
    let deadline = Instant::now() + WAIT;
    while asked(&m).is_empty() {
        assert!(Instant::now() < deadline, "{}", m.stdout_so_far());
        std::thread::sleep(Duration::from_millis(20));
    }
    // The other question waits for this one's answer.
    std::thread::sleep(Duration::from_millis(500));
    let first = asked(&m);
    assert_eq!(first.len(), 1, "{}", m.stdout_so_far());
    m.send_line("one");
    while asked(&m).len() < 2 {
        assert!(Instant::now() < deadline, "{}", m.stdout_so_far());
        std::thread::sleep(Duration::from_millis(20));
    }
    m.send_line("two");
    m.wait_for_line("both answered", WAIT);
    let out = m.stdout_so_far();
    assert!(out.contains(&format!("{} got one", first[0])), "{out}");
    quit(m);
}

#[test]
fn a_status_change_while_the_user_types_keeps_the_half_typed_line() {
    let dir = TestDir::new();
    install(
        &dir,
        "later.lua",
        r#"api.command("later", function(_, ctx)
  api.timer(800, function(c) c.ui.set_status("t", "tick from a timer") end)
  return "soon"
end)"#,
    );
    let m = Mypi::new(&dir).args(["--provider", "faux", "--no-watch", "--no-session"]);
    let mut pty = crate::common::pty::Pty::spawn(m.command());
    let at = pty.wait_for("/help for commands", 0, WAIT);
    let at = pty.wait_for("> ", at, WAIT);
    pty.type_keys("/later\r");
    let at = pty.wait_for("soon", at, WAIT);
    let at = pty.wait_for("> ", at, WAIT);
    let before = at;
    pty.type_keys("half");
    let at = pty.wait_for("tick from a timer", at, WAIT);
    pty.type_keys(" done\r");
    // The faux model echoes the whole line (then the run's summary line): what was typed
    // before the status came is kept.
    let echoed = pty.wait_for("· faux ·", at, WAIT);
    let screen = pty.screen();
    let seen = &screen[before..echoed];
    // The status was printed above the line being edited, which was drawn again after it.
    let status = seen.find("tick from a timer").unwrap_or(0);
    assert!(seen[status..].contains("> half"), "{seen:?}");
    assert!(
        seen.contains("half done\r\n"),
        "the answer echoes the whole line: {seen:?}"
    );
    pty.type_keys("/quit\r");
    pty.wait(WAIT);
}
