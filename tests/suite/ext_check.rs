//! `mypi ext check [PATH...]` and `mypi ext list`: what extension authors (and their CI) see
//! without starting the agent.

use crate::common::{Mypi, Output, TestDir};

use super::ext_util::{example, fixture, install};
use super::wire::no_panic;

fn ext(dir: &TestDir, args: &[&str]) -> Output {
    let out = Mypi::new(dir).arg("ext").args(args).run();
    no_panic(&out.stderr);
    out
}

fn lines(out: &Output) -> Vec<&str> {
    out.stdout.lines().collect()
}

#[test]
fn check_of_good_files_lists_what_each_registered_and_exits_0() {
    let dir = TestDir::new();
    dir.write("ext/todo.lua", &example("todo.lua"));
    dir.write("ext/todo.rhai", &example("todo.rhai"));
    dir.write("ext/guard.lua", &example("guard.lua"));
    let out = ext(&dir, &["check", "ext/todo.lua", "ext/guard.lua"]);
    out.ok();
    // Paths inside the working folder are shown as the user typed them.
    let todo = "ext/todo.lua";
    let guard = "ext/guard.lua";
    assert_eq!(
        lines(&out),
        vec![
            format!(
                "ok   todo (lua, {todo}): 1 tool, 1 command, 1 handler — tools todo_add — \
                 commands /todos"
            )
            .as_str(),
            format!("ok   guard (lua, {guard}): 0 tools, 0 commands, 1 handler").as_str(),
            "2 extensions checked, 0 failed",
        ],
        "{}",
        out.describe()
    );
    let out = ext(&dir, &["check", "ext/todo.rhai"]);
    out.ok();
    let rhai = "ext/todo.rhai";
    assert_eq!(
        lines(&out),
        vec![
            format!(
                "ok   todo (rhai, {rhai}): 1 tool, 1 command, 1 handler — tools todo_add — \
                 commands /todos"
            )
            .as_str(),
            "1 extension checked, 0 failed",
        ],
        "{}",
        out.describe()
    );
}

#[test]
fn check_of_a_folder_reports_failures_with_file_and_line_and_exits_1() {
    let dir = TestDir::new();
    for f in [
        "healthy.lua",
        "syntax_error.rhai",
        "top_error.lua",
        "dup_a.lua",
        "dup_b.rhai",
    ] {
        dir.write(&format!("ext/{f}"), &fixture(f));
    }
    dir.write(
        "ext/nested/bad_tool.lua",
        "api.tool{name = 'bad name', parameters = {type = 'object'}, execute = function() end}\n",
    );
    dir.write("ext/_helper.lua", "error('helpers are not checked')\n");
    let out = ext(&dir, &["check", "ext"]);
    out.expect_code(1);
    let l = lines(&out);
    let p = |f: &str| format!("ext/{f}");
    assert!(l[0].starts_with("ok   dup_a (lua, "), "{}", out.stdout);
    assert!(
        l[1].starts_with("ok   dup_b (rhai, ") && l[1].contains("/dup:2"),
        "{}",
        out.stdout
    );
    assert!(l[2].starts_with("ok   healthy (lua, "), "{}", out.stdout);
    assert!(
        l[3].starts_with("FAIL ✗ nested/bad_tool (lua): "),
        "{}",
        out.stdout
    );
    assert!(l[3].contains(&p("nested/bad_tool.lua")), "{}", out.stdout);
    assert!(l[3].contains("must be letters, digits"), "{}", out.stdout);
    assert_eq!(
        l[4],
        format!(
            "FAIL ✗ syntax_error (rhai): {}:2: Unexpected ';'",
            p("syntax_error.rhai")
        )
    );
    assert_eq!(
        l[5],
        format!(
            "FAIL ✗ top_error (lua): {}:2: broken at the top level",
            p("top_error.lua")
        )
    );
    assert_eq!(
        l[6],
        "note: command /dup from dup_b is also defined by dup_a; it is reachable as /dup:2"
    );
    assert_eq!(l[7], "6 extensions checked, 3 failed");
    assert!(!out.stdout.contains("helper"), "{}", out.stdout);
}

#[test]
fn check_without_paths_uses_the_extension_roots() {
    let dir = TestDir::new();
    install(&dir, "todo.lua", &example("todo.lua"));
    dir.write(
        "home/.agents/extensions/mine.rhai",
        "api.command(\"mine\", |a| \"m\");\n",
    );
    let out = ext(&dir, &["check"]);
    out.ok();
    assert!(out.stdout.contains("ok   todo (lua, "), "{}", out.stdout);
    assert!(out.stdout.contains("ok   mine (rhai, "), "{}", out.stdout);
    // The shipped extension is checked with the roots.
    assert!(
        out.stdout
            .contains("ok   subagent (lua, builtin:scripts/subagent.lua): 0 tools, 1 command"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.ends_with("3 extensions checked, 0 failed\n"),
        "{}",
        out.stdout
    );

    // An explicit path with nothing to check fails.
    dir.write("empty/readme.txt", "no scripts here");
    let out = ext(&dir, &["check", "empty"]);
    out.expect_code(1);
    assert!(
        out.stdout.contains("no extensions found"),
        "{}",
        out.describe()
    );
}

#[test]
fn list_names_the_extensions_that_would_load_without_loading_them() {
    let dir = TestDir::new();
    install(&dir, "b.lua", "error('not loaded by list')\n");
    install(&dir, "a/x.rhai", "");
    install(&dir, "_skip.lua", "");
    dir.write("more/m.lua", "");
    let out = ext(&dir, &["list"]);
    out.ok();
    let root = ".agents/extensions";
    assert_eq!(
        out.stdout,
        format!(
            "a/x (rhai, {root}/a/x.rhai)\nb (lua, {root}/b.lua)\n\
             subagent (lua, builtin:scripts/subagent.lua)\n"
        ),
        "{}",
        out.describe()
    );
    let out = Mypi::new(&dir)
        .args(["--extensions-dir", "more", "ext", "list"])
        .run();
    out.ok();
    assert_eq!(
        out.stdout,
        "m (lua, more/m.lua)\nsubagent (lua, builtin:scripts/subagent.lua)\n",
        "{}",
        out.describe()
    );
    let out = Mypi::new(&dir)
        .args(["--no-extensions", "ext", "list"])
        .run();
    out.ok();
    assert_eq!(out.stdout.trim(), "no extensions found");
}

#[test]
fn check_runs_nothing_the_file_asks_for_and_still_reports_what_it_registers() {
    let dir = TestDir::new();
    dir.write(
        "ext/hostile.lua",
        r#"
local ok, err = pcall(api.exec, "touch", { "pwned-by-exec" })
local fs = require("fs")
pcall(fs.write, "pwned-by-write", "x")
api.tool{ name = "seen", description = tostring(ok) .. " " .. tostring(err),
  parameters = { type = "object" }, execute = function() return "" end }
api.exec("touch", { "pwned-at-top" })
"#,
    );
    dir.write(
        "ext/polite.lua",
        r#"
pcall(api.exec, "touch", { "pwned-by-polite" })
api.tool{ name = "seen", description = "d", parameters = { type = "object" },
  execute = function() return "" end }
"#,
    );
    dir.write("keep.txt", "mine");
    dir.write(
        "ext/writer.lua",
        r#"
pcall(os.remove, "keep.txt")
pcall(os.rename, "keep.txt", "moved.txt")
io.open("pwned-by-io", "w")
"#,
    );
    dir.write(
        "ext/quiet.rhai",
        r#"
let r = api.exec("touch", ["pwned-by-rhai"]);
"#,
    );
    let out = ext(
        &dir,
        &[
            "check",
            "ext/hostile.lua",
            "ext/polite.lua",
            "ext/quiet.rhai",
            "ext/writer.lua",
        ],
    );
    out.expect_code(1);
    let made = [
        "pwned-by-exec",
        "pwned-by-write",
        "pwned-at-top",
        "pwned-by-polite",
    ];
    for f in made
        .into_iter()
        .chain(["pwned-by-rhai", "pwned-by-io", "moved.txt"])
    {
        assert!(
            !dir.exists(f),
            "{f} was made by a check:\n{}",
            out.describe()
        );
    }
    let s = &out.stdout;
    assert!(
        s.contains("FAIL ✗ hostile (lua): ext/hostile.lua:7: api.exec: not run during a check (mypi ext check only records what the file registers)"),
        "{s}"
    );
    assert!(
        s.contains("FAIL ✗ quiet (rhai): ext/quiet.rhai:2: api.exec: not run during a check"),
        "{s}"
    );
    assert_eq!(dir.read("keep.txt"), "mine");
    assert!(
        s.contains("FAIL ✗ writer (lua): ext/writer.lua:4: io.open: not run during a check"),
        "{s}"
    );
    // What a file registers is still reported.
    assert!(
        s.contains(
            "ok   polite (lua, ext/polite.lua): 1 tool, 0 commands, 0 handlers — tools seen"
        ),
        "{s}"
    );
}
