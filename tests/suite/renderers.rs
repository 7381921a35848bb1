//! Renderers (issue 13, point 5) through the binary: `api.renderer(tool, {call, result})`
//! replaces the REPL's call and result lines of a tool, in Lua and in Rhai; a renderer that
//! fails gets the default lines and one notice per run; removing its handle, or reloading its
//! extension without it, brings the default back; print mode never calls one.

use serde_json::{json, Value};

use super::ext_util::{faux, install, quit, WAIT};
use crate::common::TestDir;

fn bash(id: &str, command: &str) -> Value {
    json!({"tool_calls": [{"id": id, "name": "bash", "arguments": {"command": command}}]})
}

/// Where `needle` is in `text` (panics with the text when it is not there).
fn at(text: &str, needle: &str) -> usize {
    text.find(needle)
        .unwrap_or_else(|| panic!("no {needle:?} in:\n{text}"))
}

const LUA_BASH: &str = r#"
local h = api.renderer("bash", {
  call = function(args, ctx) return "\27[1m$\27[0m " .. args.command end,
  result = function(text, details, ctx)
    local n = 0
    for l in text:gmatch("[^\n]+") do
      if not l:match("^exit code:") then n = n + 1 end
    end
    return n .. " lines"
  end,
})
api.command("plain", function() return "removed=" .. tostring(h:remove()) end)
"#;

#[test]
fn a_lua_renderer_shows_bash_its_way_until_its_handle_is_removed() {
    let dir = TestDir::new();
    install(&dir, "render.lua", LUA_BASH);
    let replies = [
        bash("c1", "printf 'a\\nb\\nc\\n'"),
        json!({"text": "first done"}),
        bash("c2", "echo plain-again"),
        json!({"text": "second done"}),
    ];
    let mut m = faux(&dir, &replies).arg("--no-watch").spawn();
    m.send_line("go");
    m.wait_for_line("first done", WAIT);
    m.send_line("/plain");
    m.wait_for_line("removed=true", WAIT);
    m.send_line("again");
    m.wait_for_line("second done", WAIT);
    let out = quit(m);
    let first = &out.stdout[..at(&out.stdout, "first done")];
    // The bold `$` is plain here: the tests run with NO_COLOR.
    let call = at(first, "\n$ printf 'a\\nb\\nc\\n'\n");
    let result = at(first, "3 lines\n");
    assert!(call < result, "the call line comes first:\n{first}");
    assert!(!first.contains("→ bash"), "no default call line:\n{first}");
    assert!(
        !first.contains("exit 0"),
        "no default result line:\n{first}"
    );
    let second = &out.stdout[at(&out.stdout, "removed=true")..];
    at(second, "→ bash echo plain-again");
    at(second, "✓ exit 0");
    assert!(!second.contains("$ echo"), "{second}");
}

const RHAI_STATS: &str = r#"
api.tool(#{
  name: "stats",
  description: "counts the files",
  execute: |args, ctx| #{ content: "3 files, 12 lines", details: #{ files: 3, lines: 12 } },
});
// `call` is a keyword in Rhai: the key is written as a string.
api.renderer("stats", #{
  "call": |args, ctx| "counting…",
  result: |text, details, ctx| `stats: ${details.files} files / ${details.lines} lines`,
});
"#;

#[test]
fn a_rhai_renderer_renders_a_script_tool_from_its_details() {
    let dir = TestDir::new();
    install(&dir, "stats.rhai", RHAI_STATS);
    let replies = [
        json!({"tool_calls": [{"id": "s1", "name": "stats", "arguments": {}}]}),
        json!({"text": "all counted"}),
    ];
    let mut m = faux(&dir, &replies).arg("--no-watch").spawn();
    m.send_line("go");
    m.wait_for_line("all counted", WAIT);
    let out = quit(m);
    let call = at(&out.stdout, "counting…\n");
    let result = at(&out.stdout, "stats: 3 files / 12 lines\n");
    assert!(call < result, "{}", out.stdout);
    assert!(!out.stdout.contains("→ stats"), "{}", out.stdout);
    assert!(!out.stdout.contains("✓ 3 files"), "{}", out.stdout);
}

const LUA_FAILING: &str = "api.renderer(\"bash\", {\n  call = function(args) error(\"cannot draw \" .. args.command) end,\n  result = function() return {not_text = true} end,\n})\n";

#[test]
fn a_failing_renderer_falls_back_with_one_notice_per_run() {
    let dir = TestDir::new();
    let path = install(&dir, "broken.lua", LUA_FAILING);
    let replies = [
        bash("c1", "echo one"),
        bash("c2", "echo two"),
        json!({"text": "run done"}),
        bash("c3", "echo three"),
        json!({"text": "next run done"}),
    ];
    let mut m = faux(&dir, &replies).arg("--no-watch").spawn();
    m.send_line("go");
    m.wait_for_line("run done", WAIT);
    m.send_line("again");
    m.wait_for_line("next run done", WAIT);
    let out = quit(m);
    let said = |text: &str| text.matches("the renderer of tool 'bash'").count();
    assert_eq!(
        said(&out.stdout),
        2,
        "once more in the next run:\n{}",
        out.stdout
    );
    let run = &out.stdout[..at(&out.stdout, "run done")];
    let one = at(run, "→ bash echo one");
    let two = at(run, "→ bash echo two");
    assert!(one < two, "{run}");
    assert_eq!(
        run.matches("✓ exit 0").count(),
        2,
        "default results:\n{run}"
    );
    let notices: Vec<&str> = run
        .lines()
        .filter(|l| l.contains("the renderer of tool 'bash'"))
        .collect();
    assert_eq!(notices.len(), 1, "one notice for two calls:\n{run}");
    let notice = notices[0];
    assert!(notice.starts_with("! "), "{notice}");
    assert!(
        notice.contains("from broken failed in its call function"),
        "{notice}"
    );
    assert!(
        notice.contains(&format!("{}:2:", path.display()))
            && notice.contains("cannot draw echo one"),
        "names the file and line: {notice}"
    );
    assert!(
        at(run, notice) < one,
        "the notice comes before the line:\n{run}"
    );
}

#[test]
fn a_renderer_returning_a_table_falls_back_and_says_so() {
    let dir = TestDir::new();
    install(
        &dir,
        "table.lua",
        "api.renderer(\"bash\", {result = function() return {1, 2} end})\n",
    );
    let replies = [bash("c1", "echo one"), json!({"text": "run done"})];
    let mut m = faux(&dir, &replies).arg("--no-watch").spawn();
    m.send_line("go");
    m.wait_for_line("run done", WAIT);
    let out = quit(m);
    at(&out.stdout, "→ bash echo one");
    at(&out.stdout, "✓ exit 0");
    let notice = out
        .stdout
        .lines()
        .find(|l| l.contains("the renderer of tool 'bash'"))
        .unwrap_or_else(|| panic!("no notice:\n{}", out.stdout));
    assert!(
        notice.contains("table.lua: its result function returned a table, not a string or nil"),
        "{notice}"
    );
}

#[test]
fn a_reloaded_extension_without_the_renderer_leaves_the_default() {
    let dir = TestDir::new();
    let path = install(&dir, "render.lua", LUA_BASH);
    let replies = [
        bash("c1", "echo one"),
        json!({"text": "first done"}),
        bash("c2", "echo two"),
        json!({"text": "second done"}),
    ];
    let mut m = faux(&dir, &replies).arg("--no-watch").spawn();
    m.wait_for_line("— renders bash", WAIT);
    m.send_line("go");
    m.wait_for_line("first done", WAIT);
    std::fs::write(
        &path,
        "api.command(\"plain\", function() return \"x\" end)\n",
    )
    .unwrap();
    m.send_line("/reload");
    m.wait_for_line("render", WAIT);
    m.send_line("/extensions");
    m.wait_for_line("Extensions:", WAIT);
    let listed = m.wait_for_line("render (lua", WAIT);
    assert!(!listed.contains("renders"), "{listed}");
    m.send_line("again");
    m.wait_for_line("second done", WAIT);
    let out = quit(m);
    let first = &out.stdout[..at(&out.stdout, "first done")];
    at(first, "$ echo one");
    let second = &out.stdout[at(&out.stdout, "first done")..];
    at(second, "→ bash echo two");
    assert!(!second.contains("$ echo two"), "{second}");
}

#[test]
fn print_mode_never_calls_a_renderer() {
    let dir = TestDir::new();
    install(
        &dir,
        "loud.lua",
        "api.renderer(\"bash\", {call = function() error(\"called in print mode\") end})\n",
    );
    let replies = [bash("c1", "echo one"), json!({"text": "printed"})];
    let out = faux(&dir, &replies).args(["-p", "go"]).run();
    out.ok();
    assert_eq!(out.stdout.trim(), "printed", "{}", out.describe());
    assert!(!out.stderr.contains("renderer"), "{}", out.describe());
}
