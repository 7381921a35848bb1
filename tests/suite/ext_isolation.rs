//! Isolation: one broken extension (the fixtures in `tests/fixtures/isolation/`) never takes
//! mypi or the other extensions down. Each test runs a REPL through a pipe with the fixture
//! next to `healthy.lua` and checks, after the failure, that `/healthy` (or the model calling
//! `healthy_echo`) still works in the same process, and that mypi leaves normally.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::{FakeOpenAi, Mypi, Reply, Running, TestDir};

use super::ext_util::{
    healthy_still_works, install, install_fixture, quit, repl, repl_with_budget, BUDGET_MS, WAIT,
};
use super::wire::tool_results;

/// The budget of the memory and recursion tests.
const SLOW_BUDGET_MS: &str = "5000";

/// A project with `healthy.lua` and the fixtures, and a REPL on the echoing faux model.
fn start(fixtures: &[&str]) -> (TestDir, Running) {
    start_with_budget(fixtures, BUDGET_MS)
}

/// Like `start` with a script budget of `ms`: memory and stack limits must be reached before
/// the budget, also when a loaded machine runs the script slowly.
fn start_with_budget(fixtures: &[&str], ms: &str) -> (TestDir, Running) {
    let dir = TestDir::new();
    install_fixture(&dir, "healthy.lua");
    for f in fixtures {
        install_fixture(&dir, f);
    }
    let mut m = repl_with_budget(&dir, ms);
    m.wait_for_line("ext healthy (lua", WAIT);
    (dir, m)
}

/// Like `start`, against a fake OpenAI server (to see what the model received).
fn start_openai(fixtures: &[&str], fake: &FakeOpenAi) -> (TestDir, Running) {
    let dir = TestDir::new();
    install_fixture(&dir, "healthy.lua");
    for f in fixtures {
        install_fixture(&dir, f);
    }
    let m = Mypi::new(&dir)
        .openai(fake)
        .env("MYPI_EXT_BUDGET_MS", BUDGET_MS)
        .arg("--no-watch")
        .spawn();
    (dir, m)
}

/// The full path of an installed extension file, as messages show it.
fn path_of(dir: &TestDir, file: &str) -> String {
    dir.join(&format!(".agents/extensions/{file}"))
        .display()
        .to_string()
}

/// A fixture that fails to load: the banner names it with the error at `file:line`, the
/// healthy extension works, `/extensions` lists the failure too.
fn load_failure(file: &str, error: &str) {
    let dir = TestDir::new();
    install_fixture(&dir, "healthy.lua");
    install_fixture(&dir, file);
    let mut m = repl(&dir);
    let (name, lang) = file.split_once('.').unwrap();
    // Sorted order: `healthy` comes first.
    m.wait_for_line("ext healthy (lua", WAIT);
    let line = m.wait_for_line(&format!("ext ✗ {name} ({lang})"), WAIT);
    let expected = format!("{}{error}", path_of(&dir, file));
    assert!(line.contains(&expected), "{line}\nexpected {expected}");
    healthy_still_works(&mut m, "after load failure");
    m.send_line("/extensions");
    let listed = m.wait_for_line(&format!("✗ {name} ({lang})"), WAIT);
    assert!(listed.contains(&expected), "{listed}");
    quit(m);
}

#[test]
fn syntax_error_in_lua() {
    load_failure(
        "syntax_error.lua",
        ":4: 'end' expected (to close 'function' at line 1) near <eof>",
    );
}

#[test]
fn syntax_error_in_rhai() {
    load_failure("syntax_error.rhai", ":2: Unexpected ';'");
}

#[test]
fn error_at_the_top_level_in_lua() {
    load_failure("top_error.lua", ":2: broken at the top level");
}

#[test]
fn error_at_the_top_level_in_rhai() {
    load_failure("top_error.rhai", ":2: broken at the top level");
}

#[test]
fn endless_loop_at_load_in_lua() {
    load_failure(
        "loop_load.lua",
        ":1: stopped after 0.3 s (the CPU budget); does it loop forever?",
    );
}

#[test]
fn endless_loop_at_load_in_rhai() {
    load_failure("loop_load.rhai", ":1: stopped after 0.3 s (the CPU budget)");
}

/// Loads run on stacks the extension threads share (`platform::stacks`): a top level that
/// recurses without end stops at the engine's limit there too, and the stack serves the next
/// loads (12 of them at once) and calls as before.
#[test]
fn endless_recursion_at_load_fails_that_load_only() {
    let dir = TestDir::new();
    install_fixture(&dir, "healthy.lua");
    for f in ["deep_load.lua", "deep_load_native.lua", "deep_load.rhai"] {
        install_fixture(&dir, f);
    }
    for i in 0..12 {
        let body = format!("local function f(n) if n == 0 then return 0 end return f(n - 1) + 1 end\napi.command(\"c{i}\", function() return \"c{i}=\" .. f(150) end)\n");
        std::fs::write(dir.join(&format!(".agents/extensions/many{i}.lua")), body).unwrap();
    }
    let mut m = repl_with_budget(&dir, SLOW_BUDGET_MS);
    for (name, lang, error) in [
        ("deep_load", "lua", ":1: stack overflow"),
        ("deep_load_native", "lua", "stack overflow"),
        (
            "deep_load",
            "rhai",
            ":2: stack overflow: more than 64 nested call levels",
        ),
    ] {
        m.send_line("/extensions");
        let line = m.wait_for_line(&format!("✗ {name} ({lang})"), WAIT);
        assert!(line.contains(error), "{line}\nexpected {error}");
    }
    for i in [0, 5, 11] {
        m.send_line(&format!("/c{i}"));
        m.wait_for_line(&format!("c{i}=150"), WAIT);
    }
    healthy_still_works(&mut m, "after deep loads");
    quit(m);
}

#[test]
fn error_in_a_command_is_reported_with_file_and_line() {
    let (dir, mut m) = start(&["handler_error.lua", "handler_error.rhai"]);
    m.send_line("/fails");
    let err = m.wait_for_line("error: /fails:", WAIT);
    let lua = path_of(&dir, "handler_error.lua");
    assert!(
        err.contains(&format!("{lua}:3: attempt to index a nil value")),
        "{err}"
    );
    healthy_still_works(&mut m, "after lua");
    m.send_line("/fails_rhai");
    let err = m.wait_for_line("error: /fails_rhai:", WAIT);
    let rhai = path_of(&dir, "handler_error.rhai");
    assert!(err.contains(&format!("{rhai}:3: ")), "{err}");
    healthy_still_works(&mut m, "after rhai");
    quit(m);
}

#[test]
fn error_in_a_handler_is_reported_and_the_chain_goes_on() {
    let dir = TestDir::new();
    install_fixture(&dir, "healthy.lua");
    install(
        &dir,
        "a_fails.lua",
        "api.on('input', function(e)\n  error('the input handler broke')\nend)\n",
    );
    install(
        &dir,
        "b_rewrites.rhai",
        "api.on(\"input\", |e| #{ updated_input: e.text + \" [b saw it]\" });\n",
    );
    let mut m = repl(&dir);
    m.send_line("hello");
    let notice = m.wait_for_line("a_fails failed in input", WAIT);
    let at = format!(
        "{}:2: the input handler broke",
        path_of(&dir, "a_fails.lua")
    );
    assert!(notice.contains(&at), "{notice}");
    // The handler after it still ran and the prompt was answered (the faux model echoes).
    m.wait_for_line("hello [b saw it]", WAIT);
    healthy_still_works(&mut m, "after the handler");
    quit(m);
}

#[test]
fn a_failing_tool_call_handler_blocks_the_call() {
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls(vec![("c1", "healthy_echo", json!({"text": "hi"}))]),
        Reply::text("It was blocked."),
    ]);
    let (dir, mut m) = start_openai(&["handler_error.lua"], &fake);
    m.send_line("echo hi");
    m.wait_for_line("It was blocked.", WAIT);
    let sent = &tool_results(&fake.requests()[1])[0];
    assert!(
        sent.content
            .starts_with("blocked: the guard handler_error failed ("),
        "{sent:?}"
    );
    assert!(sent.content.contains("the guard crashed"), "{sent:?}");
    assert!(
        sent.content.contains(&path_of(&dir, "handler_error.lua")),
        "{sent:?}"
    );
    assert!(sent.content.ends_with("the call was not run"), "{sent:?}");
    healthy_still_works(&mut m, "after the guard");
    quit(m);
}

#[test]
fn endless_loops_in_lua_commands_are_stopped_then_the_extension_is_disabled() {
    let (dir, mut m) = start(&["loops.lua"]);
    let lua = path_of(&dir, "loops.lua");
    for (cmd, line) in [("spin", 1), ("spin_pcall", 3), ("spin_coroutine", 6)] {
        let t = Instant::now();
        m.send_line(&format!("/{cmd}"));
        let err = m.wait_for_line(&format!("error: /{cmd}:"), WAIT);
        assert!(
            err.contains(&format!(
                "{lua}:{line}: stopped after 0.3 s (the CPU budget); does it loop forever?"
            )),
            "{err}"
        );
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        healthy_still_works(&mut m, cmd);
    }
    // Three budget failures in a row: the extension is disabled.
    m.send_line("/spin");
    let err = m.wait_for_line("error: /spin:", WAIT);
    assert!(
        err.contains("loops is disabled after 3 calls in a row failed on their time budget"),
        "{err}"
    );
    m.send_line("/extensions");
    m.wait_for_line("✗ loops (lua): disabled after repeated failures", WAIT);
    healthy_still_works(&mut m, "at the end");
    quit(m);
}

#[test]
fn an_endless_loop_in_a_tool_is_an_error_result() {
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls(vec![("c1", "spin_tool", json!({}))]),
        Reply::tool_calls(vec![("c2", "healthy_echo", json!({"text": "still here"}))]),
        Reply::text("Done."),
    ]);
    let (dir, mut m) = start_openai(&["loops.lua"], &fake);
    m.send_line("spin");
    m.wait_for_line("Done.", WAIT);
    let reqs = fake.requests();
    let spun = &tool_results(&reqs[1])[0];
    assert!(
        spun.content.contains(&format!(
            "{}:10: stopped after 0.3 s (the CPU budget)",
            path_of(&dir, "loops.lua")
        )),
        "{spun:?}"
    );
    assert_eq!(tool_results(&reqs[2])[1].content, "healthy: still here");
    healthy_still_works(&mut m, "after the tool");
    quit(m);
}

#[test]
fn endless_loops_in_rhai_commands_are_stopped() {
    let (dir, mut m) = start(&["loops.rhai"]);
    let rhai = path_of(&dir, "loops.rhai");
    // The line of the handler: Rhai gives a limit's stop no place inside a callback.
    for (line, cmd) in [(1, "spin_rhai"), (2, "spin_try_rhai")] {
        m.send_line(&format!("/{cmd}"));
        let err = m.wait_for_line(&format!("error: /{cmd}:"), WAIT);
        assert!(
            err.contains(&format!(
                "{rhai}:{line}: stopped after 0.3 s (the CPU budget); does it loop forever?"
            )),
            "{err}"
        );
        healthy_still_works(&mut m, cmd);
    }
    quit(m);
}

#[test]
fn memory_bomb_in_lua_hits_the_memory_cap() {
    let (dir, mut m) = start_with_budget(&["memory.lua"], SLOW_BUDGET_MS);
    m.send_line("/bomb");
    let err = m.wait_for_line("error: /bomb:", WAIT);
    assert!(
        err.contains(&format!(
            "{}:3: out of memory: the script used more than its 64 MiB",
            path_of(&dir, "memory.lua")
        )),
        "{err}"
    );
    healthy_still_works(&mut m, "after the bomb");
    // The VM recovered: the same command fails the same way again.
    m.send_line("/bomb");
    m.wait_for_line("out of memory", WAIT);
    quit(m);
}

#[test]
fn memory_bomb_in_rhai_hits_the_size_limits() {
    let (dir, mut m) = start_with_budget(&["memory.rhai"], SLOW_BUDGET_MS);
    m.send_line("/bomb_rhai");
    let err = m.wait_for_line("error: /bomb_rhai:", WAIT);
    assert!(err.contains(&path_of(&dir, "memory.rhai")), "{err}");
    assert!(err.contains("the script size limits"), "{err}");
    healthy_still_works(&mut m, "after the bomb");
    quit(m);
}

#[test]
fn unbounded_recursion_does_not_abort_the_process() {
    let (dir, mut m) = start_with_budget(&["recursion.lua", "recursion.rhai"], SLOW_BUDGET_MS);
    m.send_line("/recurse");
    let err = m.wait_for_line("error: /recurse:", WAIT);
    assert!(
        err.contains(&format!(
            "{}:2: stack overflow",
            path_of(&dir, "recursion.lua")
        )),
        "{err}"
    );
    healthy_still_works(&mut m, "after lua");
    // Through a native function (string.gsub calling back): caught by Lua's C stack limit.
    m.send_line("/recurse_native");
    m.wait_for_line("stack overflow", WAIT);
    healthy_still_works(&mut m, "after native");
    m.send_line("/recurse_rhai");
    let err = m.wait_for_line("error: /recurse_rhai:", WAIT);
    assert!(
        err.contains(&format!(
            "{}:2: stack overflow: more than 64 nested call levels",
            path_of(&dir, "recursion.rhai")
        )),
        "{err}"
    );
    healthy_still_works(&mut m, "after rhai");
    let out = quit(m);
    assert_eq!(out.code, 0);
}

#[test]
fn a_pathological_pattern_is_given_up_and_the_extension_marked_busy() {
    let (_dir, mut m) = start(&["pattern.lua"]);
    let t = Instant::now();
    m.send_line("/pattern");
    let err = m.wait_for_line("error: /pattern:", WAIT);
    assert!(
        err.contains("pattern did not answer within 0.8 s (stuck in native code?)"),
        "{err}"
    );
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    m.send_line("/extensions");
    m.wait_for_line(
        "✗ pattern (lua): busy (a call is stuck in native code)",
        WAIT,
    );
    healthy_still_works(&mut m, "while busy");
    m.send_line("hello while busy");
    m.wait_for_line("hello while busy", WAIT);
    m.send_line("/pattern");
    m.wait_for_line("pattern is busy: an earlier call is still stuck", WAIT);
    // mypi leaves normally although the thread is still stuck.
    let out = quit(m);
    assert_eq!(out.code, 0);
}

#[test]
fn a_result_field_of_the_wrong_type_is_reported_and_ignored() {
    let (_dir, mut m) = start(&["wrong_type.lua"]);
    m.send_line("hello there");
    m.wait_for_line(
        "! wrong_type (input): result field 'updated_input' must be a string, got a number; ignored",
        WAIT,
    );
    // The prompt is answered unchanged (the faux model echoes it).
    let answer = m.wait_for_line("hello there", WAIT);
    assert_eq!(answer, "hello there");
    healthy_still_works(&mut m, "after wrong type");
    quit(m);
}

#[test]
fn os_exit_is_not_available() {
    let (dir, mut m) = start(&["os_exit.lua"]);
    m.send_line("/bye");
    let err = m.wait_for_line("error: /bye:", WAIT);
    assert!(
        err.contains(&format!(
            "{}:1: attempt to call a nil value (field 'exit')",
            path_of(&dir, "os_exit.lua")
        )),
        "{err}"
    );
    healthy_still_works(&mut m, "after bye");
    let out = quit(m);
    assert_eq!(out.code, 0);
}

#[test]
fn the_lua_sandbox_has_no_debug_dump_or_process_escapes() {
    let dir = TestDir::new();
    install_fixture(&dir, "healthy.lua");
    install(
        &dir,
        "probe.lua",
        r#"api.command("probe", function()
  local bin = string.dump and "dump" or "no dump"
  local f, err = load("\27Lua binary")
  return table.concat({ tostring(debug), tostring(os.exit), tostring(os.execute),
    tostring(io.popen), tostring(package.loadlib), bin, tostring(f), tostring(err) }, " ")
end)
"#,
    );
    let mut m = repl(&dir);
    m.send_line("/probe");
    let line = m.wait_for_line("nil nil", WAIT);
    assert!(
        line.starts_with("nil nil nil nil nil no dump nil "),
        "{line}"
    );
    assert!(line.contains("binary chunk"), "{line}");
    healthy_still_works(&mut m, "after probe");
    quit(m);
}

#[test]
fn a_huge_tool_result_is_cut_with_a_note() {
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls(vec![("c1", "huge", json!({}))]),
        Reply::text("That was big."),
    ]);
    let (_dir, mut m) = start_openai(&["huge.lua"], &fake);
    m.send_line("get it all");
    m.wait_for_line("That was big.", WAIT);
    let req = &fake.requests()[1];
    let sent = &tool_results(req)[0];
    assert!(
        sent.content.len() < 60 * 1024,
        "{} bytes",
        sent.content.len()
    );
    assert!(
        sent.content.contains("bytes (0 lines) omitted ...]"),
        "{}",
        &sent.content[..200]
    );
    assert!(sent.content.starts_with("0123456789"));
    assert!(
        req.raw_body.len() < 120 * 1024,
        "{} bytes",
        req.raw_body.len()
    );
    healthy_still_works(&mut m, "after huge");
    quit(m);
}

#[test]
fn two_extensions_with_the_same_command_are_both_reachable() {
    let (_dir, mut m) = start(&["dup_a.lua", "dup_b.rhai"]);
    m.send_line("/dup");
    m.wait_for_line("from a", WAIT);
    m.send_line("/dup:2");
    m.wait_for_line("from b", WAIT);
    healthy_still_works(&mut m, "after dup");
    let out = quit(m);
    assert!(
        out.stdout.contains(
            "! command /dup from dup_b is also defined by dup_a; it is reachable as /dup:2"
        ),
        "{}",
        out.stdout
    );
}
