//! Extension features through the real binary: discovery and listing, the todo example in Lua
//! and Rhai, overriding a built-in tool, removing handles, modules (`require` / `import`),
//! `ctx.ui`, `api.exec` and the Rhai file helpers.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{Mypi, TestDir};

use super::ext_util::{example, faux, install, quit, repl, BUDGET_MS, WAIT};
use super::wire::no_panic;

/// The JSON events of a `--json` run.
pub fn events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The events of one `type`.
pub fn of_type(events: &[Value], kind: &str) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["type"] == kind)
        .cloned()
        .collect()
}

fn command(name: &str, reply: &str) -> String {
    format!("api.command(\"{name}\", function() return \"{reply}\" end, \"the {name} command\")\n")
}

#[test]
fn discovery_is_recursive_sorted_and_skips_hidden_files() {
    let dir = TestDir::new();
    install(&dir, "b.lua", &command("b", "from b"));
    install(&dir, "a.rhai", "api.command(\"a\", |args| \"from a\");\n");
    install(&dir, "git/guard.lua", &command("g", "from git/guard"));
    install(&dir, "broken.lua", "error('this one is broken')\n");
    // Skipped: helpers and anything in a `_` or `.` folder or file.
    install(&dir, "_helpers.lua", &command("helpers", "x"));
    install(&dir, "_lib/x.lua", &command("libx", "x"));
    install(&dir, ".hidden/y.lua", &command("hiddeny", "x"));
    install(&dir, ".dot.lua", &command("dot", "x"));
    install(&dir, "notes.txt", "not a script");

    let mut m = repl(&dir);
    let banner: Vec<String> = ["ext a ", "ext b ", "broken", "ext git/guard "]
        .iter()
        .map(|p| m.wait_for_line(p, WAIT))
        .collect();
    let a = dir.join(".agents/extensions/a.rhai").display().to_string();
    assert!(banner[0].contains(&format!("a (rhai, {a})")), "{banner:?}");
    assert!(banner[0].contains("1 command") && banner[0].contains("/a"));
    assert!(banner[1].contains("(lua, ") && banner[1].contains("commands /b"));
    assert!(banner[2].contains("✗ broken (lua)"), "{banner:?}");
    assert!(banner[2].contains("broken.lua:1: this one is broken"));
    assert!(banner[3].contains("git/guard.lua") && banner[3].contains("/g"));

    m.send_line("/extensions");
    m.wait_for_line("Extensions:", WAIT);
    let listed: Vec<String> = (0..4).map(|_| m.wait_for_line("  ", WAIT)).collect();
    assert!(listed[0].contains("a (rhai, "), "{listed:?}");
    assert!(listed[1].contains("b (lua, "), "{listed:?}");
    assert!(listed[2].contains("✗ broken (lua)"), "{listed:?}");
    assert!(listed[3].contains("git/guard (lua, "), "{listed:?}");

    m.send_line("/g");
    m.wait_for_line("from git/guard", WAIT);
    for hidden in ["helpers", "libx", "hiddeny", "dot"] {
        m.send_line(&format!("/{hidden}"));
        m.wait_for_line(&format!("unknown command /{hidden}"), WAIT);
    }
    let out = quit(m);
    for hidden in ["_helpers", "_lib", ".hidden", ".dot"] {
        assert!(!out.stdout.contains(hidden), "{hidden}: {}", out.stdout);
    }
}

#[test]
fn extensions_dir_replaces_the_roots_and_no_extensions_loads_none() {
    let dir = TestDir::new();
    install(&dir, "proj.lua", &command("proj", "project ext"));
    dir.write(
        "home/.agents/extensions/user.lua",
        &command("user", "user ext"),
    );
    dir.write("more/deep/extra.lua", &command("extra", "extra ext"));

    // Default: the project and the user root.
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "/extensions"])
        .run();
    out.ok();
    assert!(out.stdout.contains("proj (lua, "), "{}", out.describe());
    assert!(out.stdout.contains("user (lua, "), "{}", out.describe());
    assert!(!out.stdout.contains("extra"), "{}", out.describe());

    // --extensions-dir replaces both.
    let run = |args: &[&str]| {
        Mypi::new(&dir)
            .args(["--provider", "faux", "--extensions-dir", "more"])
            .args(args)
            .run()
    };
    let out = run(&["-p", "/extensions"]);
    out.ok();
    assert!(
        out.stdout.contains("deep/extra (lua, "),
        "{}",
        out.describe()
    );
    assert!(!out.stdout.contains("proj"), "{}", out.describe());
    assert!(!out.stdout.contains("user"), "{}", out.describe());
    assert_eq!(run(&["-p", "/extra"]).ok().stdout.trim(), "extra ext");
    let out = run(&["-p", "/proj"]);
    assert_eq!(out.code, 1, "{}", out.describe());
    assert!(
        out.stderr.contains("unknown command /proj"),
        "{}",
        out.describe()
    );

    // --no-extensions.
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "--no-extensions", "-p", "/extensions"])
        .run();
    out.ok();
    assert!(
        out.stdout.contains("No extensions loaded") && out.stdout.contains("--no-extensions"),
        "{}",
        out.describe()
    );
}

/// The faux model calls `todo_add`, `/todos` lists the item in the same process, and the
/// `agent_end` reminder appears; then the same in print mode, where the notice is on stderr.
fn todo_end_to_end(file: &str) {
    let dir = TestDir::new();
    install(&dir, file, &example(file));
    let replies = [
        json!({"tool_calls": [{"name": "todo_add", "arguments": {"text": "buy milk"}}]}),
        json!({"text": "Added it."}),
    ];
    let mut m = faux(&dir, &replies).arg("--no-watch").spawn();
    let banner = m.wait_for_line("ext todo ", WAIT);
    assert!(banner.contains("tools todo_add") && banner.contains("commands /todos"));
    m.send_line("/todos");
    m.wait_for_line("no todos", WAIT);
    m.send_line("please remember to buy milk");
    m.wait_for_line("→ todo_add", WAIT);
    m.wait_for_line("Added it.", WAIT);
    m.wait_for_line("! [todo] 1 open todo(s): buy milk", WAIT);
    m.send_line("/todos");
    m.wait_for_line("1. buy milk", WAIT);
    quit(m);

    let out = faux(&dir, &replies)
        .args(["-p", "please remember to buy milk"])
        .run();
    out.ok();
    assert_eq!(out.stdout.trim(), "Added it.", "{}", out.describe());
    assert!(
        out.stderr.contains("[todo] 1 open todo(s): buy milk"),
        "{}",
        out.describe()
    );
}

#[test]
fn todo_example_in_lua_end_to_end() {
    todo_end_to_end("todo.lua");
}

#[test]
fn todo_example_in_rhai_end_to_end() {
    todo_end_to_end("todo.rhai");
}

#[test]
fn a_script_tool_overrides_read_with_a_notice_and_removing_it_restores_it() {
    let dir = TestDir::new();
    dir.write("a.txt", "the real file\n");
    install(
        &dir,
        "myread.lua",
        r#"local t = api.tool{name = "read", description = "script read",
  parameters = {type = "object", properties = {path = {type = "string"}}, required = {"path"}},
  execute = function(args) return "script read of " .. args.path end}
api.command("unread", function() return tostring(t:remove()) end)
"#,
    );
    let replies = [
        json!({"tool_calls": [{"name": "read", "arguments": {"path": "a.txt"}}]}),
        json!({"text": "done"}),
    ];
    let out = faux(&dir, &replies)
        .args(["--no-session", "-p", "read a.txt", "--json"])
        .run();
    out.ok();
    let ev = events(&out.stdout);
    let notices = of_type(&ev, "notice");
    assert!(
        notices.iter().any(|n| {
            let m = n["message"].as_str().unwrap_or("");
            m.contains("tool 'read' from myread") && m.contains("overrides the one from core")
        }),
        "{}",
        out.describe()
    );
    let results = of_type(&ev, "tool_result");
    assert_eq!(
        results[0]["content"],
        "script read of a.txt",
        "{}",
        out.describe()
    );

    // In one REPL: the override answers, /unread removes it, the built-in is back.
    let replies = [
        json!({"tool_calls": [{"name": "read", "arguments": {"path": "a.txt"}}]}),
        json!({"text": "first done"}),
        json!({"tool_calls": [{"name": "read", "arguments": {"path": "a.txt"}}]}),
        json!({"text": "second done"}),
    ];
    let mut m = faux(&dir, &replies).arg("--no-watch").spawn();
    m.wait_for_line("overrides the one from core", WAIT);
    m.send_line("read it");
    m.wait_for_line("first done", WAIT);
    m.send_line("/unread");
    m.wait_for_line("true", WAIT);
    m.send_line("read it again");
    m.wait_for_line("second done", WAIT);
    let out = quit(m);
    let session = super::wire::session_messages(&super::wire::only_session(&dir));
    let tool_texts: Vec<String> = session
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .collect();
    assert_eq!(tool_texts.len(), 2, "{session:?}");
    assert!(
        tool_texts[0].contains("script read of a.txt"),
        "{tool_texts:?}"
    );
    assert!(
        tool_texts[1].contains("the real file"),
        "{tool_texts:?}\n{}",
        out.stdout
    );
}

#[test]
fn removing_a_handle_stops_its_handler_in_lua_and_rhai() {
    let dir = TestDir::new();
    install(
        &dir,
        "h.lua",
        r#"local h
h = api.on("input", function(e)
  local removed = h:remove()
  return { updated_input = e.text .. " [once " .. tostring(removed) .. "]" }
end)
local h2 = api.on("input", function(e) return { updated_input = e.text .. " [lua]" } end)
api.command("unhook", function() return "removed: " .. tostring(h2:remove()) end)
"#,
    );
    install(
        &dir,
        "r.rhai",
        r#"let h = api.on("input", |e| #{ updated_input: e.text + " [rhai]" });
api.command("unhook_rhai", |args| "removed: " + h.remove());
"#,
    );
    // Without a script the faux model echoes the prompt it received.
    let mut m = repl(&dir);
    m.send_line("one");
    m.wait_for_line("one [once true] [lua] [rhai]", WAIT);
    m.send_line("two");
    let two = m.wait_for_line("two", WAIT);
    assert_eq!(two, "two [lua] [rhai]");
    m.send_line("/unhook");
    m.wait_for_line("removed: true", WAIT);
    m.send_line("/unhook");
    m.wait_for_line("removed: false", WAIT);
    m.send_line("three");
    assert_eq!(m.wait_for_line("three", WAIT), "three [rhai]");
    m.send_line("/unhook_rhai");
    m.wait_for_line("removed: true", WAIT);
    m.send_line("/unhook_rhai");
    m.wait_for_line("removed: false", WAIT);
    m.send_line("four");
    assert_eq!(m.wait_for_line("four", WAIT), "four");
    m.send_line("/extensions");
    let h = m.wait_for_line("  h (lua", WAIT);
    assert!(h.contains("0 handlers"), "{h}");
    quit(m);
}

#[test]
fn lua_require_finds_helpers_lib_files_and_the_stdlib() {
    let dir = TestDir::new();
    install(
        &dir,
        "_util.lua",
        "return { shout = function(s) return s:upper() end }\n",
    );
    install(&dir, "lib/x.lua", "return { name = 'lib.x' }\n");
    install(&dir, "_lib/y.lua", "return { name = '_lib.y' }\n");
    install(
        &dir,
        "main.lua",
        r#"local util = require("_util")
local x = require("lib.x")
local y = require("_lib.y")
local json = require("json")
local path = require("path")
local schema = require("schema")
local s = schema.object{ text = schema.string("what"), n = schema.integer():optional() }
api.command("req", function()
  local decoded = json.decode('{"k":[1,2]}')
  return table.concat({
    util.shout("hi"), x.name, y.name,
    json.encode({ a = 1 }), tostring(#decoded.k),
    path.join("a", "b", "c.txt"), path.basename("/x/y.lua"), path.stem("y.lua"),
    s.type, s.properties.text.type, json.encode(s.required),
  }, "|")
end)
"#,
    );
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "/req"])
        .run();
    out.ok();
    assert_eq!(
        out.stdout.trim(),
        r#"HI|lib.x|_lib.y|{"a":1}|2|a/b/c.txt|y.lua|y|object|string|["text"]"#,
        "{}",
        out.describe()
    );
    // lib/x.lua is also an extension of its own; _util and _lib/y are not.
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "/extensions"])
        .run();
    out.ok();
    assert!(out.stdout.contains("lib/x (lua, "), "{}", out.stdout);
    assert!(out.stdout.contains("main (lua, "), "{}", out.stdout);
    assert!(!out.stdout.contains("_lib"), "{}", out.stdout);
    assert!(!out.stdout.contains("_util"), "{}", out.stdout);
}

#[test]
fn rhai_import_finds_a_sibling_module_and_the_stdlib() {
    let dir = TestDir::new();
    install(&dir, "_greet.rhai", "fn greet(who) { `hello ${who}` }\n");
    install(
        &dir,
        "main.rhai",
        r#"import "_greet" as g;
import "path" as path;
import "schema" as schema;
let s = schema::object(#{ text: schema::string("what") });
api.command("imp", |args| {
  let decoded = json_decode(`{"k":[1,2,3]}`);
  [g::greet("rhai"), path::join("a", "b"), path::basename("/x/y.rhai"), s.type,
   s.properties.text.type, json_encode(#{ n: decoded.k.len() })].reduce(|acc, v| if acc == () { v } else { acc + "|" + v })
});
"#,
    );
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "/imp"])
        .run();
    out.ok();
    assert_eq!(
        out.stdout.trim(),
        r#"hello rhai|a/b|y.rhai|object|string|{"n":3}"#,
        "{}",
        out.describe()
    );
}

#[test]
fn ctx_ui_confirm_is_false_in_print_mode_and_notify_prints_a_line() {
    let dir = TestDir::new();
    install(
        &dir,
        "ui.lua",
        r#"api.command("ask", function(args, ctx)
  ctx.ui.notify("asking in " .. ctx.mode)
  return "answer: " .. tostring(ctx.ui.confirm("really?"))
end)
"#,
    );
    install(
        &dir,
        "ui_rhai.rhai",
        r#"api.command("ask_rhai", |args, ctx| { ctx.ui.notify("rhai asking"); `answer: ${ctx.ui.confirm("sure?")}` });"#,
    );
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "/ask"])
        .run();
    out.ok();
    assert_eq!(out.stdout.trim(), "answer: false", "{}", out.describe());
    assert!(
        out.stderr.contains("[ui] asking in print"),
        "{}",
        out.describe()
    );
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "/ask_rhai"])
        .run();
    out.ok();
    assert_eq!(out.stdout.trim(), "answer: false", "{}", out.describe());
    assert!(
        out.stderr.contains("[ui_rhai] rhai asking"),
        "{}",
        out.describe()
    );

    // In the REPL the notice is a line of its own.
    let mut m = repl(&dir);
    m.send_line("/ask_rhai");
    m.wait_for_line("! [ui_rhai] rhai asking", WAIT);
    m.close_stdin();
    m.wait().ok();
}

#[test]
fn api_exec_runs_a_process_and_kills_it_at_its_timeout() {
    let dir = TestDir::new();
    install(
        &dir,
        "ex.lua",
        r#"local json = require("json")
api.command("nap", function()
  local r = api.exec("sleep", { "5" }, { timeout_ms = 200 })
  return json.encode({ timed_out = r.timed_out, code = r.code == nil and "nil" or r.code })
end)
api.command("hello", function()
  local r = api.exec("sh", { "-c", "echo out; echo err >&2; exit 3" })
  return r.code .. "|" .. r.stdout .. "|" .. r.stderr
end)
"#,
    );
    let start = Instant::now();
    let out = Mypi::new(&dir)
        .env("MYPI_EXT_BUDGET_MS", BUDGET_MS)
        .args(["--provider", "faux", "-p", "/nap"])
        .run();
    out.ok();
    assert_eq!(
        out.stdout.trim(),
        r#"{"code":"nil","timed_out":true}"#,
        "{}",
        out.describe()
    );
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "{:?}",
        start.elapsed()
    );
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "/hello"])
        .run();
    out.ok();
    assert_eq!(out.stdout.trim(), "3|out\n|err", "{}", out.describe());
}

#[test]
fn rhai_reads_and_writes_files_relative_to_the_working_folder() {
    let dir = TestDir::new();
    dir.write("input.txt", "from disk");
    install(
        &dir,
        "files.rhai",
        r#"api.command("copy", |args| {
  let text = read_file("input.txt");
  write_file("out/copy.txt", text + " (copied)");
  `${file_exists("out/copy.txt")} ${list_dir("out")}`
});
api.command("missing", |args| read_file("nope.txt"));
"#,
    );
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "/copy"])
        .run();
    out.ok();
    assert_eq!(
        out.stdout.trim(),
        r#"true ["copy.txt"]"#,
        "{}",
        out.describe()
    );
    assert_eq!(dir.read("out/copy.txt"), "from disk (copied)");
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "/missing"])
        .run();
    assert_eq!(out.code, 1, "{}", out.describe());
    assert!(out.stderr.contains("/missing: "), "{}", out.describe());
    assert!(out.stderr.contains("nope.txt"), "{}", out.describe());
    no_panic(&out.stderr);
}

#[test]
fn ctx_ui_confirm_asks_on_the_repl() {
    let dir = TestDir::new();
    install(
        &dir,
        "ui.lua",
        r#"api.command("ask", function(args, ctx)
  return "answer: " .. tostring(ctx.ui.confirm("delete " .. args .. "?"))
end)
"#,
    );
    let mut m = repl(&dir);
    m.send_line("/ask a.txt");
    m.send_line("y");
    m.wait_for_line("answer: true", WAIT);
    m.send_line("/ask b.txt");
    m.send_line("n");
    m.wait_for_line("answer: false", WAIT);
    quit(m);
}

#[test]
fn ctx_abort_cancels_the_running_prompt() {
    let dir = TestDir::new();
    install(
        &dir,
        "stop.lua",
        r#"api.on("tool_call", function(e, ctx) if e.name == "bash" then ctx.abort() end end)"#,
    );
    let started = Instant::now();
    let out = faux(
        &dir,
        &[
            json!({"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 5; echo late"}}]}),
            json!({"text": "never reached"}),
        ],
    )
    .args(["-p", "go"])
    .run();
    assert_eq!(out.code, 1, "{}", out.describe());
    assert!(out.stderr.contains("cancelled"), "{}", out.describe());
    assert!(!out.stdout.contains("never reached"), "{}", out.describe());
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the bash call was not stopped"
    );
}

#[test]
fn api_log_shows_only_with_mypi_log_and_print_goes_to_the_log() {
    let dir = TestDir::new();
    install(
        &dir,
        "chatty.lua",
        r#"api.command("talk", function() api.log("debug line") print("printed line") return "said" end)"#,
    );
    install(
        &dir,
        "chatty_rhai.rhai",
        r#"api.command("rtalk", |a| { api.log("rhai debug"); print("rhai printed"); "said" });"#,
    );
    for cmd in ["/talk", "/rtalk"] {
        let quiet = Mypi::new(&dir)
            .args(["--provider", "faux", "-p", cmd])
            .run();
        quiet.ok();
        assert_eq!(quiet.stdout.trim(), "said", "{}", quiet.describe());
        assert!(!quiet.stderr.contains("debug"), "{}", quiet.describe());
        let loud = Mypi::new(&dir)
            .env("MYPI_LOG", "1")
            .args(["--provider", "faux", "-p", cmd])
            .run();
        loud.ok();
        assert_eq!(loud.stdout.trim(), "said", "{}", loud.describe());
        assert!(loud.stderr.contains("debug"), "{}", loud.describe());
        assert!(loud.stderr.contains("printed"), "{}", loud.describe());
    }
}
