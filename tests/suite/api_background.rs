//! What calls a script outside any run (issue 13, points 11 and 12), through the binary:
//! events between extensions (a Lua and a Rhai extension emitting to each other from their
//! handlers), timers (once, repeating, removed by their handle and by a reload, one that
//! queues a prompt while the REPL is idle, one that leaves mypi), file watches, and the
//! errors of bad arguments.

use std::time::{Duration, Instant};

use super::ext_util::{install, quit, repl, WAIT};
use crate::common::{Mypi, Running, TestDir};

/// How many lines of stdout so far contain `pattern`.
fn count(m: &Running, pattern: &str) -> usize {
    m.stdout_so_far().matches(pattern).count()
}

/// Waits until `pattern` has been printed `n` times.
fn wait_count(m: &Running, pattern: &str, n: usize) {
    let deadline = Instant::now() + WAIT;
    while count(m, pattern) < n {
        assert!(
            Instant::now() < deadline,
            "{pattern:?} seen {} times, not {n}:\n{}",
            count(m, pattern),
            m.stdout_so_far()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn lua_and_rhai_extensions_emit_events_to_each_other_without_deadlock() {
    let dir = TestDir::new();
    install(
        &dir,
        "a.lua",
        r#"
api.events.on("ping", function(d) api.notify("a got ping " .. d.n) if d.n < 300 then api.events.emit("pong", { n = d.n + 1 }) end end)
api.events.on("pong", function(d) api.notify("a saw pong " .. d.n) end)
api.command("lping", function() api.events.emit("ping", { n = 10 }) return "lua sent" end)
"#,
    );
    install(
        &dir,
        "b.rhai",
        r#"
api.events.on("pong", |d, ctx| { api.notify(`b got pong ${d.n}`); api.events.emit("ping", #{ n: 100 + d.n }); });
api.command("rping", |args, ctx| { api.events.emit("ping", #{ n: 1 }); "rhai sent" });
api.command("nobody", |args, ctx| { api.events.emit("unheard", ()); "fine" });
"#,
    );
    let mut m = repl(&dir);
    // The command's answer and the handlers' notices come from different tasks: either may
    // be printed first. The chain goes back and forth until a ping past 300.
    m.send_line("/rping");
    wait_count(&m, "rhai sent", 1);
    wait_count(&m, "[a] a got ping 304\n", 1);
    // Both handlers of `pong` get it, in load order.
    let out = m.stdout_so_far();
    let at = |line: &str| out.find(&format!("{line}\n")).unwrap_or(usize::MAX);
    assert!(at("[a] a got ping 1") < at("[a] a saw pong 2"), "{out}");
    assert!(at("[a] a saw pong 2") < at("[b] b got pong 2"), "{out}");
    assert!(at("[b] b got pong 2") < at("[a] a got ping 102"), "{out}");
    m.send_line("/lping");
    wait_count(&m, "lua sent", 1);
    wait_count(&m, "[a] a got ping 313\n", 1);
    m.send_line("/nobody");
    m.wait_for_line("fine", WAIT);
    quit(m);
}

const TIMERS_LUA: &str = r#"
api.timer(30, function() api.notify("once fired") end)
local n = 0
local tick = api.timer(20, function(ctx)
  n = n + 1
  api.notify("tick " .. n .. " idle=" .. tostring(ctx.is_idle()))
end, { ["repeat"] = true })
api.command("stop", function() return "stopped " .. tostring(tick:remove()) end)
api.command("later", function() api.timer(50, function() api.send_message("from the timer") end) return "set" end)
api.command("leave", function() api.timer(50, function(ctx) ctx.shutdown() end) return "leaving soon" end)
"#;

const TIMERS_RHAI: &str = r#"
api.timer(30, |ctx| api.notify("once fired"));
api.state.n = 0;
let tick = api.timer(20, |ctx| {
  api.state.n += 1;
  api.notify(`tick ${api.state.n} idle=${ctx.is_idle()}`);
}, #{ repeat: true });
api.command("later", |args, ctx| { api.timer(50, |ctx| api.send_message("from the timer")); "set" });
api.command("leave", |args, ctx| { api.timer(50, |ctx| ctx.shutdown()); "leaving soon" });
"#;

fn timers(file: &str, source: &str) {
    let dir = TestDir::new();
    install(&dir, file, source);
    let mut m = repl(&dir);
    m.wait_for_line("once fired", WAIT);
    wait_count(&m, "tick ", 3);
    assert!(
        m.stdout_so_far().contains("idle=true"),
        "{}",
        m.stdout_so_far()
    );
    assert_eq!(count(&m, "once fired"), 1);
    if file.ends_with(".lua") {
        m.send_line("/stop");
        m.wait_for_line("stopped true", WAIT);
    } else {
        // In Rhai the timer goes the other way: a reload into a version without it.
        install(&dir, file, "api.command(\"later\", |a, c| { api.timer(50, |ctx| api.send_message(\"from the timer\")); \"set\" });\napi.command(\"leave\", |a, c| { api.timer(50, |ctx| ctx.shutdown()); \"leaving soon\" });\n");
        m.send_line("/reload");
        m.wait_for_line("reloaded", WAIT);
    }
    std::thread::sleep(Duration::from_millis(100));
    let after = count(&m, "tick ");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        count(&m, "tick "),
        after,
        "the timer went on after it was removed"
    );
    // A timer's message runs while the REPL is idle (the faux model echoes it).
    m.send_line("/later");
    m.wait_for_line("set", WAIT);
    wait_count(&m, "from the timer", 1);
    // A timer that calls ctx.shutdown() while the REPL waits for a line ends mypi.
    m.send_line("/leave");
    m.wait_for_line("leaving soon", WAIT);
    let started = Instant::now();
    let deadline = started + WAIT;
    let out = loop {
        if let Some(code) = m.try_exit_code() {
            break code;
        }
        assert!(
            Instant::now() < deadline,
            "mypi did not leave:\n{}",
            m.stdout_so_far()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(out, 0);
}

#[test]
fn lua_timers_fire_stop_by_handle_queue_prompts_and_can_end_mypi() {
    timers("timers.lua", TIMERS_LUA);
}

#[test]
fn rhai_timers_fire_stop_on_reload_queue_prompts_and_can_end_mypi() {
    timers("timers.rhai", TIMERS_RHAI);
}

#[test]
fn a_watch_reports_changes_once_per_burst_in_both_languages() {
    for (file, source) in [
        (
            "w.lua",
            r#"api.watch("watched", function(c, ctx) api.notify("changed " .. #c.paths .. " " .. c.paths[1]:match("[^/]*$")) end)"#,
        ),
        (
            "w.rhai",
            r#"api.watch("watched", |c, ctx| api.notify(`changed ${c.paths.len()} ${c.paths[0].split("/").pop()}`));"#,
        ),
    ] {
        let dir = TestDir::new();
        dir.write("watched/keep.txt", "x");
        install(&dir, file, source);
        let mut m = repl(&dir);
        m.send_line("/extensions");
        m.wait_for_line("w (", WAIT);
        // Give the watcher a moment to be in place, then change one file a few times.
        std::thread::sleep(Duration::from_millis(200));
        for i in 0..3 {
            dir.write("watched/new.txt", &format!("{i}"));
        }
        m.wait_for_line("changed 1 new.txt", WAIT);
        quit(m);
    }
}

#[test]
fn bad_timer_and_watch_arguments_are_errors_at_the_line() {
    let dir = TestDir::new();
    for (file, source, message) in [
        (
            "t1.lua",
            "api.timer(-1, function() end)",
            "api.timer: ms must be 0 to 86400000 (a day)",
        ),
        (
            "t2.rhai",
            "api.timer(1, |ctx| (), #{ repeat: true });",
            "api.timer: ms must be 10 to 86400000 (a day) for a repeating timer",
        ),
        (
            "t3.lua",
            "api.watch('missing', function() end)",
            "api.watch: cannot watch ",
        ),
        (
            "t4.rhai",
            "api.events.emit(\"\", 1);",
            "api.events.emit: the name must be 1 to 200 bytes long",
        ),
    ] {
        let path = dir.write(file, source);
        let out = Mypi::new(&dir).args(["ext", "check"]).arg(&path).run();
        assert_eq!(out.code, 1, "{file}: {}", out.describe());
        assert!(
            out.stdout.contains(&format!("{file}:1: {message}")),
            "{file}: {}",
            out.describe()
        );
    }
}

#[test]
fn a_timer_that_keeps_failing_is_stopped_after_three_failures() {
    let dir = TestDir::new();
    install(
        &dir,
        "boom.lua",
        r#"api.timer(20, function() error("boom") end, { ["repeat"] = true })"#,
    );
    let m = repl(&dir);
    wait_count(&m, "stopped after 3 failures in a row", 1);
    // The second failure, the first one again, is counted and said once the burst is over.
    wait_count(&m, "… 1 more: boom failed in a timer", 1);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(count(&m, "failed in a timer"), 3, "{}", m.stdout_so_far());
    assert!(m.stdout_so_far().contains("boom.lua:1: boom"));
    quit(m);
}

#[test]
fn in_print_mode_an_event_a_command_emits_reaches_its_handlers_before_exit() {
    let dir = TestDir::new();
    install(
        &dir,
        "bus.lua",
        r#"
local fs = require("fs")
api.events.on("save", function(d) fs.write("got-" .. d.n .. ".txt", "yes") end)
api.command("emit", function(args) api.events.emit("save", { n = args }) end)
"#,
    );
    for n in 0..5 {
        let out = Mypi::new(&dir)
            .args(["--provider", "faux", "-p", &format!("/emit {n}")])
            .run();
        assert_eq!(
            out.ok().stdout,
            "",
            "a command that answers nothing prints nothing"
        );
        assert!(
            dir.exists(&format!("got-{n}.txt")),
            "run {n}: {}",
            out.describe()
        );
    }
}

#[test]
fn a_watch_goes_with_its_extension_on_reload() {
    let dir = TestDir::new();
    dir.write("watched/keep.txt", "x");
    install(
        &dir,
        "w.lua",
        r#"api.watch("watched", function(c) api.notify("saw a change") end)"#,
    );
    let mut m = repl(&dir);
    m.send_line("/extensions");
    m.wait_for_line("w (", WAIT);
    std::thread::sleep(Duration::from_millis(200));
    dir.write("watched/a.txt", "1");
    m.wait_for_line("saw a change", WAIT);
    install(
        &dir,
        "w.lua",
        "api.command(\"idle\", function() return \"idle\" end)\n",
    );
    m.send_line("/reload");
    m.wait_for_line("reloaded", WAIT);
    dir.write("watched/b.txt", "2");
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(count(&m, "saw a change"), 1, "{}", m.stdout_so_far());
    quit(m);
}
