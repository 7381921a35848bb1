//! More of the parity suite (see `parity.rs`): a reload's `api.state` shaped by both the new
//! top level and the old `session_shutdown`, the messages of writes to read-only objects, of
//! a callback returning a function and of a callback stopped by its budget (with the line),
//! and a `message_update` event dumped whole.

use serde_json::{json, Value};

use super::ext_util::{faux, install, WAIT};
use crate::common::TestDir;

fn lua_counter(v: &str) -> String {
    format!(
        r#"api.state.n = (api.state.n or 0) + 1
api.on("session_shutdown", function() api.state.downs = (api.state.downs or 0) + 1 end)
api.command("l_sl", function() return "{v} n=" .. api.state.n .. " downs=" .. (api.state.downs or 0) end)
"#
    )
}

fn rhai_counter(v: &str) -> String {
    format!(
        r#"api.state.n = if "n" in api.state {{ api.state.n + 1 }} else {{ 1 }};
api.on("session_shutdown", |e| {{ api.state.downs = if "downs" in api.state {{ api.state.downs + 1 }} else {{ 1 }}; }});
api.command("r_sl", |a| {{ let d = if "downs" in api.state {{ api.state.downs }} else {{ 0 }}; `{v} n=${{api.state.n}} downs=${{d}}` }});
"#
    )
}

/// The new version's top level counts reloads (`api.state.n = n + 1`) and what the old
/// version's `session_shutdown` wrote arrives too: neither overwrites the other.
#[test]
fn a_reload_keeps_the_new_top_levels_writes_and_the_old_shutdowns_in_lua_and_rhai() {
    use super::reload::{ask, ext_rel, save_in_place, start};
    let dir = TestDir::new();
    let lua = dir.write(&ext_rel("c.lua"), &lua_counter("v1"));
    let rhai = dir.write(&ext_rel("c.rhai"), &rhai_counter("v1"));
    let mut m = start(&dir, &[]);
    ask(&mut m, "/l_sl", "v1 n=1 downs=0");
    ask(&mut m, "/r_sl", "v1 n=1 downs=0");
    for (v, n) in [("v2", 2), ("v3", 3)] {
        save_in_place(&lua, &lua_counter(v));
        m.wait_for_line("reloaded c.lua", WAIT);
        save_in_place(&rhai, &rhai_counter(v));
        m.wait_for_line("reloaded c.rhai", WAIT);
        let downs = n - 1;
        ask(&mut m, "/l_sl", &format!("{v} n={n} downs={downs}"));
        ask(&mut m, "/r_sl", &format!("{v} n={n} downs={downs}"));
    }
    m.send_line("/quit");
    m.wait().ok();
}

/// The message a `-p /command` prints on stderr, with the script's path cut to its name.
fn command_error(dir: &TestDir, command: &str, file: &str) -> String {
    let out = faux(dir, &[]).args(["-p", command]).run();
    let line = out
        .stderr
        .lines()
        .find(|l| l.contains(file))
        .unwrap_or_else(|| panic!("{command}: no message naming {file}: {}", out.describe()))
        .to_string();
    let at = line.find(file).unwrap_or(0);
    line[at..].replace(file, "FILE")
}

/// Runtime mistakes: (what, Lua command body, Rhai command body, the message both give).
const RUNTIME_ERRORS: &[(&str, &str, &str, &str)] = &[
    (
        "a write to ctx",
        r#"function(a, ctx) ctx.mode = "x" end"#,
        r#"|a, ctx| { ctx.mode = "x"; }"#,
        "FILE:NN: ctx is read-only",
    ),
    (
        "a write to api.flags",
        r#"function() api.flags.x = 1 end"#,
        r#"|a| { api.flags.x = 1; }"#,
        "FILE:NN: api.flags is read-only: declare options with api.flag{...}",
    ),
    (
        "a function returned",
        r#"function() return function() end end"#,
        r#"|a| || 1"#,
        "FILE: cannot return a function; return plain data (tables, strings, numbers, booleans)",
    ),
    (
        "an endless loop",
        r#"function() while true do end end"#,
        r#"|a| { loop { } }"#,
        "FILE:NN: stopped after 0.3 s (the CPU budget); does it loop forever?",
    ),
];

#[test]
fn runtime_mistakes_give_the_same_message_in_lua_and_rhai() {
    for (i, (what, lua, rhai, expected)) in RUNTIME_ERRORS.iter().enumerate() {
        let dir = TestDir::new();
        // Three lines before the command, so the line is 4 in both languages.
        let pad = "\n\n\n";
        install(&dir, "m.lua", &format!("{pad}api.command(\"l{i}\", {lua})"));
        install(
            &dir,
            "m.rhai",
            &format!("{pad}api.command(\"r{i}\", {rhai});"),
        );
        let expected = expected.replace("NN", "4");
        let from_lua = command_error(&dir, &format!("/l{i}"), "m.lua");
        let from_rhai = command_error(&dir, &format!("/r{i}"), "m.rhai");
        assert_eq!(from_lua, expected, "{what} (Lua)");
        assert_eq!(from_rhai, expected, "{what} (Rhai)");
    }
}

/// A Lua memory bomb is reported at the line it was running.
#[test]
fn a_lua_memory_bomb_names_its_line() {
    let dir = TestDir::new();
    install(
        &dir,
        "bomb.lua",
        "api.command(\"bomb\", function()\n  local t = {}\n  while true do t[#t + 1] = string.rep(\"y\", 1000000) .. #t end\nend)",
    );
    let out = faux(&dir, &[])
        .env("MYPI_EXT_MEMORY_MB", "16")
        .args(["-p", "/bomb"])
        .run();
    assert!(
        out.stderr.contains("bomb.lua:3: out of memory"),
        "{}",
        out.describe()
    );
}

/// A Rhai handler given by the name of a function the script does not have fails at load.
#[test]
fn a_rhai_handler_named_after_no_function_fails_at_load() {
    let dir = TestDir::new();
    let file = dir.write(
        "n.rhai",
        "fn real(e) { }\napi.on(\"input\", \"real\");\napi.on(\"input\", \"nosuch\");",
    );
    let out = crate::common::Mypi::new(&dir)
        .args(["ext", "check"])
        .arg(&file)
        .run();
    assert_eq!(out.code, 1, "{}", out.describe());
    assert!(
        out.stdout.contains(
            "n.rhai:3: api.on: the handler must be a function, not a string naming no function of the script ('nosuch')"
        ),
        "{}",
        out.describe()
    );
}

/// A `message_update` event dumped whole (`json.encode` / `json_encode`) has its `text`.
#[test]
fn a_message_update_event_dumps_whole_in_lua_and_rhai() {
    let dir = TestDir::new();
    install(
        &dir,
        "d.lua",
        r#"local json = require("json")
api.on("message_update", function(e) api.state.dump = json.encode(e) end)
api.command("l_dump", function() return api.state.dump end)"#,
    );
    install(
        &dir,
        "d.rhai",
        r#"api.on("message_update", |e| { api.state.dump = json_encode(e); api.state.keys = e.keys().len(); });
api.command("r_dump", |a| api.state.dump);
api.command("r_keys", |a| `${api.state.keys}`);"#,
    );
    let mut m = faux(&dir, &[json!({"text": "hello world"})])
        .args(["--no-watch", "--no-session"])
        .spawn();
    m.send_line("go");
    m.wait_for_line("hello world", WAIT);
    for p in ["l", "r"] {
        m.send_line(&format!("/{p}_dump"));
        let line = m.wait_for_line("message_update", WAIT);
        let at = line.find('{').unwrap_or(0);
        let v: Value = serde_json::from_str(&line[at..]).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_eq!(v["text"], "hello world", "{p}: {line}");
        assert_eq!(v["type"], "message_update", "{p}: {line}");
        assert!(v["delta"].is_string(), "{p}: {line}");
        assert_eq!(v["kind"], "text", "{p}: {line}");
    }
    m.send_line("/r_keys");
    m.wait_for_line("4", WAIT);
    super::ext_util::quit(m);
}
