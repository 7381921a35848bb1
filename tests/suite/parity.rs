//! The parity suite: the same scenarios written as a Lua and as a Rhai script, run through
//! the binary, must give the same results and the same messages (the path of the script and
//! its suffix aside). The script API is defined once (`src/extensions/surface.rs`); this is
//! what holds the two languages to it from the outside.

use serde_json::json;

use super::ext_util::{faux, install};
use crate::common::{Mypi, TestDir};

/// `mypi ext check FILE` of a one-line script; the failure message without `path:line: `.
fn load_error(dir: &TestDir, name: &str, source: &str) -> String {
    let file = dir.write(name, source);
    let out = Mypi::new(dir).args(["ext", "check"]).arg(&file).run();
    assert_eq!(out.code, 1, "{name} loaded: {}", out.describe());
    // `mypi ext check` shows a path inside the working folder relative to it.
    let path = name.to_string();
    let line = out
        .stdout
        .lines()
        .find(|l| l.contains(&path))
        .unwrap_or_else(|| panic!("no line for {name}: {}", out.describe()))
        .to_string();
    let after = line
        .split_once(&format!("{path}:1: "))
        .map(|(_, m)| m.to_string());
    after.unwrap_or_else(|| panic!("no `{path}:1:` in {line}"))
}

/// Load-time mistakes: (what, Lua line, Rhai line, the message both must give).
const LOAD_ERRORS: &[(&str, &str, &str, &str)] = &[
    (
        "run_agent without a task",
        r#"api.run_agent{name = "x"}"#,
        r#"api.run_agent(#{ name: "x" });"#,
        "api.run_agent: 'task' (a string) is required",
    ),
    (
        "run_agents with a spec that is not a table",
        r#"api.run_agents({ "look around" })"#,
        r#"api.run_agents(["look around"]);"#,
        "api.run_agents: agent 1: an agent must be a table with a task, not \"look around\"",
    ),
    (
        "complete during a check",
        r#"api.complete{prompt = "hi"}"#,
        r#"api.complete(#{ prompt: "hi" });"#,
        "api.complete: not run during a check (mypi ext check only records what the file registers)",
    ),
    (
        "unknown event",
        r#"api.on("nope", function() end)"#,
        r#"api.on("nope", |e| ());"#,
        "api.on: unknown event 'nope'; the events are: session_start, session_shutdown, input, \
         before_agent_start, turn_start, context, before_provider_request, message_update, \
         message_end, tool_call, tool_result, turn_end, agent_end, extension_loaded, \
         session_before_compact, session_before_new, session_before_resume, before_quit, model_select, \
         user_shell",
    ),
    (
        "handler not a function",
        r#"api.on("input", 42)"#,
        r#"api.on("input", 42);"#,
        "api.on: the handler must be a function, not a number",
    ),
    (
        "handler missing",
        r#"api.on("input")"#,
        r#"api.on("input");"#,
        "api.on: the handler (a function) is missing",
    ),
    (
        "tool without execute",
        r#"api.tool{name = "t"}"#,
        r#"api.tool(#{ name: "t" });"#,
        "api.tool: 'execute' (a function) is required",
    ),
    (
        "tool with a bad name",
        r#"api.tool{name = "a b", execute = function() end}"#,
        r#"api.tool(#{ name: "a b", execute: |a| () });"#,
        "api.tool 'a b': the name must be letters, digits, '_' or '-'",
    ),
    (
        "tool parameters not an object schema",
        r#"api.tool{name = "t", parameters = {type = "string"}, execute = function() end}"#,
        r#"api.tool(#{ name: "t", parameters: #{ "type": "string" }, execute: |a| () });"#,
        "api.tool 't': parameters must be a JSON Schema object with type = \"object\"",
    ),
    (
        "tool parameters not a valid schema",
        r#"api.tool{name = "t", parameters = {type = "object", properties = {n = {type = 5}}}, execute = function() end}"#,
        r#"api.tool(#{ name: "t", parameters: #{ "type": "object", properties: #{ n: #{ "type": 5 } } }, execute: |a| () });"#,
        "api.tool 't': parameters are not a valid JSON Schema: 5 is not valid under any of the schemas listed in the 'anyOf' keyword",
    ),
    (
        "tool timeout not positive",
        r#"api.tool{name = "t", timeout_ms = -5, execute = function() end}"#,
        r#"api.tool(#{ name: "t", timeout_ms: -5, execute: |a| () });"#,
        "api.tool 't': 'timeout_ms' must be a positive integer",
    ),
    (
        "tool with an unknown field",
        r#"api.tool{name = "t", execute = function() end, paralel_safe = true}"#,
        r#"api.tool(#{ name: "t", execute: |a| (), paralel_safe: true });"#,
        "api.tool: unknown field 'paralel_safe'; the fields are name, description, parameters, \
         execute, parallel_safe, timeout_ms",
    ),
    (
        "tool timeout not an integer",
        r#"api.tool{name = "t", timeout_ms = "soon", execute = function() end}"#,
        r#"api.tool(#{ name: "t", timeout_ms: "soon", execute: |a| () });"#,
        "api.tool: 'timeout_ms' must be an integer, not a string",
    ),
    (
        "deliver_as unknown",
        r#"api.send_message("x", {deliver_as = "later"})"#,
        r#"api.send_message("x", #{ deliver_as: "later" });"#,
        "api.send_message: deliver_as must be \"steer\" or \"follow_up\", not \"later\"",
    ),
    (
        "command name with a space",
        r#"api.command("a b", function() end)"#,
        r#"api.command("a b", |args| ());"#,
        "api.command: command name \"a b\" must be one word without spaces",
    ),
    (
        "exec arguments not strings",
        r#"api.exec("true", {"a", {}})"#,
        r#"api.exec("true", ["a", #{}]);"#,
        "api.exec: the arguments must be a list of strings, but one is a table",
    ),
    (
        "exec with an unknown option",
        r#"api.exec("true", {}, {timout_ms = 5})"#,
        r#"api.exec("true", [], #{ timout_ms: 5 });"#,
        "api.exec: unknown field 'timout_ms'; the fields are timeout_ms, cwd",
    ),
    (
        "too many arguments",
        r#"api.notify("a", "b")"#,
        r#"api.notify("a", "b");"#,
        "api.notify takes 1 argument (message), got 2",
    ),
    (
        "set_active_tools with an unknown tool",
        r#"api.set_active_tools({"read", "nope"})"#,
        r#"api.set_active_tools(["read", "nope"]);"#,
        "api.set_active_tools: there is no tool 'nope'; the tools are: bash, edit, read, write",
    ),
    (
        "append_entry with a bad kind",
        r#"api.append_entry("a b", {})"#,
        r#"api.append_entry("a b", #{});"#,
        "api.append_entry: the kind must be 1 to 200 letters, digits or _ - . : (not \"a b\")",
    ),
    (
        "a timer without a handler",
        r#"api.timer(10)"#,
        r#"api.timer(10);"#,
        "api.timer: the handler (a function) is missing",
    ),
    (
        "a repeating timer too fast",
        r#"api.timer(1, function() end, {["repeat"] = true})"#,
        r#"api.timer(1, |c| (), #{ repeat: true });"#,
        "api.timer: ms must be 10 to 86400000 (a day) for a repeating timer",
    ),
    (
        "a flag named like mypi's own option",
        r#"api.flag{name = "model", type = "string"}"#,
        r#"api.flag(#{ name: "model", type: "string" });"#,
        "api.flag: --model is one of mypi's own options",
    ),
    (
        "a flag of an unknown type",
        r#"api.flag{name = "x", type = "number"}"#,
        r#"api.flag(#{ name: "x", type: "number" });"#,
        "api.flag: type must be \"bool\" or \"string\", not \"number\"",
    ),
    (
        "a provider with a built-in name",
        r#"api.provider{name = "openai", api = "openai"}"#,
        r#"api.provider(#{ name: "openai", api: "openai" });"#,
        "api.provider: 'openai' is a built-in provider; choose another name",
    ),
    (
        "a provider of an unknown API",
        r#"api.provider{name = "p", api = "gemini"}"#,
        r#"api.provider(#{ name: "p", api: "gemini" });"#,
        "api.provider: api must be \"openai\" or \"anthropic\", not \"gemini\"",
    ),
    (
        "a builtin tool that does not exist",
        r#"api.builtin_tool("nope")"#,
        r#"api.builtin_tool("nope");"#,
        "api.builtin_tool: there is no built-in tool 'nope'; they are: read, write, edit, bash",
    ),
    (
        "an event without a name",
        r#"api.events.emit("", 1)"#,
        r#"api.events.emit("", 1);"#,
        "api.events.emit: the name must be 1 to 200 bytes long",
    ),
    (
        "a renderer with neither function",
        r#"api.renderer("bash", {})"#,
        r#"api.renderer("bash", #{});"#,
        "api.renderer: the renderer needs a 'call' or a 'result' function (or both)",
    ),
];

#[test]
fn load_time_mistakes_give_the_same_message_in_lua_and_rhai() {
    let dir = TestDir::new();
    for (i, (what, lua, rhai, expected)) in LOAD_ERRORS.iter().enumerate() {
        let from_lua = load_error(&dir, &format!("l{i}.lua"), lua);
        let from_rhai = load_error(&dir, &format!("r{i}.rhai"), rhai);
        assert_eq!(from_lua, *expected, "{what} (Lua)");
        assert_eq!(from_rhai, *expected, "{what} (Rhai)");
    }
}

/// Runtime behaviour: the same commands in both languages answer the same.
#[test]
fn the_same_scripts_answer_the_same_in_lua_and_rhai() {
    let dir = TestDir::new();
    install(
        &dir,
        "p.lua",
        r#"api.command("l_ctx", function(args, ctx)
  return ("mode=%s depth=%d model=%s sid=%s"):format(ctx.mode, ctx.depth, ctx.model, tostring(#ctx.session_id > 0))
end)
api.command("l_send", function() api.send_message("later", {deliver_as = "follow-up"}) return "queued" end)
api.command("l_exec", function()
  local r = api.exec("sh", {"-c", "echo out; echo err >&2; exit 3"})
  return ("code=%s out=%s err=%s timed_out=%s"):format(r.code, r.stdout, r.stderr, tostring(r.timed_out))
end)
api.command("l_ext", function() return api.extension.name .. " " .. api.extension.language end)
api.command("l_pcall", function()
  local ok, e = pcall(api.on, "nope", function() end)
  return tostring(ok) .. " " .. (e:match("api%.on: unknown event 'nope'") or e)
end)"#,
    );
    install(
        &dir,
        "p.rhai",
        r#"api.command("r_ctx", |args, ctx| `mode=${ctx.mode} depth=${ctx.depth} model=${ctx.model} sid=${ctx.session_id.len() > 0}`);
api.command("r_send", |args| { api.send_message("later", #{ deliver_as: "follow-up" }); "queued" });
api.command("r_exec", |args| {
  let r = api.exec("sh", ["-c", "echo out; echo err >&2; exit 3"]);
  `code=${r.code} out=${r.stdout} err=${r.stderr} timed_out=${r.timed_out}`
});
api.command("r_ext", |args| api.extension.name + " " + api.extension.language);
api.command("r_pcall", |args| {
  let out = "true";
  try { api.on("nope", |e| ()); } catch (e) {
    out = if e.contains("api.on: unknown event 'nope'") { "false api.on: unknown event 'nope'" } else { e };
  }
  out
});"#,
    );
    for (cmd, expected) in [
        ("ctx", "mode=print depth=0 model=faux sid=true"),
        ("send", "queued"),
        ("exec", "code=3 out=out\n err=err\n timed_out=false"),
        ("pcall", "false api.on: unknown event 'nope'"),
    ] {
        let l = faux(&dir, &[json!({"text": "a"})])
            .args(["-p", &format!("/l_{cmd}")])
            .run();
        let r = faux(&dir, &[json!({"text": "a"})])
            .args(["-p", &format!("/r_{cmd}")])
            .run();
        l.ok();
        r.ok();
        let first = |s: &str| s.lines().next().unwrap_or("").to_string();
        let (lt, rt) = if cmd == "exec" {
            (
                l.stdout.trim_end().to_string(),
                r.stdout.trim_end().to_string(),
            )
        } else {
            (first(&l.stdout), first(&r.stdout))
        };
        assert_eq!(lt, expected, "/l_{cmd}: {}", l.describe());
        assert_eq!(rt, expected, "/r_{cmd}: {}", r.describe());
    }
    let l = faux(&dir, &[]).args(["-p", "/l_ext"]).run();
    let r = faux(&dir, &[]).args(["-p", "/r_ext"]).run();
    assert_eq!(l.stdout.trim(), "p lua");
    assert_eq!(r.stdout.trim(), "p rhai");
}

/// A guard removed through its handle stops blocking, in both languages.
#[test]
fn a_removed_handler_is_not_called_again_in_lua_and_rhai() {
    for (file, source) in [
        (
            "g.lua",
            r#"local h = api.on("tool_call", function() return {block = true, reason = "guarded"} end)
api.command("off", function() return tostring(h:remove()) .. " " .. tostring(h:remove()) end)"#,
        ),
        (
            "g.rhai",
            r#"let h = api.on("tool_call", |e| #{ block: true, reason: "guarded" });
api.command("off", |args| `${h.remove()} ${h.remove()}`);"#,
        ),
    ] {
        let dir = TestDir::new();
        install(&dir, file, source);
        let replies = [
            json!({"tool_calls": [{"name": "bash", "arguments": {"command": "echo ran > ran.txt"}}]}),
            json!({"text": "done"}),
        ];
        let mut m = faux(&dir, &replies).arg("--no-watch").spawn();
        m.send_line("/off");
        m.wait_for_line("true false", super::ext_util::WAIT);
        m.send_line("go");
        m.wait_for_line("done", super::ext_util::WAIT);
        m.close_stdin();
        let out = m.wait();
        out.ok();
        assert_eq!(
            dir.read("ran.txt").trim(),
            "ran",
            "{file}: {}",
            out.describe()
        );
        assert!(
            !out.stdout.contains("guarded"),
            "{file}: {}",
            out.describe()
        );
    }
}

fn lua_alias(v: &str) -> String {
    format!(
        r#"local s = api.state
s.n = s.n or 0
api.on("session_shutdown", function(e) if e.reason == "reload" then s.n = s.n + 10 end end)
api.command("l_n", function() return "{v} n=" .. s.n end)
api.command("l_inc", function() s.n = s.n + 1 return "{v} n=" .. api.state.n end)
"#
    )
}

fn rhai_alias(v: &str) -> String {
    format!(
        r#"let s = api.state;
if !("n" in s) {{ s.n = 0; }}
api.on("session_shutdown", |e| {{ if e.reason == "reload" {{ s.n += 10; }} }});
api.command("r_n", |a| `{v} n=${{s.n}}`);
api.command("r_inc", |a| {{ s.n += 1; `{v} n=${{api.state.n}}` }});
"#
    )
}

/// `local s = api.state` / `let s = api.state;` is the state itself, before and after a
/// reload hands over what the old version's `session_shutdown` left in it.
#[test]
fn an_alias_of_api_state_stays_the_state_across_a_reload_in_lua_and_rhai() {
    use super::reload::{ask, ext_rel, save_in_place, start};
    let dir = TestDir::new();
    let lua = dir.write(&ext_rel("a.lua"), &lua_alias("v1"));
    let rhai = dir.write(&ext_rel("a.rhai"), &rhai_alias("v1"));
    let mut m = start(&dir, &[]);
    for p in ["l", "r"] {
        ask(&mut m, &format!("/{p}_inc"), "v1 n=1");
        ask(&mut m, &format!("/{p}_n"), "v1 n=1");
    }
    save_in_place(&lua, &lua_alias("v2"));
    m.wait_for_line("reloaded a.lua", super::ext_util::WAIT);
    save_in_place(&rhai, &rhai_alias("v2"));
    m.wait_for_line("reloaded a.rhai", super::ext_util::WAIT);
    for p in ["l", "r"] {
        ask(&mut m, &format!("/{p}_n"), "v2 n=11");
        ask(&mut m, &format!("/{p}_inc"), "v2 n=12");
    }
    m.send_line("/quit");
    m.wait().ok();
}

/// Three `tool_call` handlers of one extension (one round trip to its thread): the second
/// sees the first one's rewrite, the third chains on it, and the model's call runs with the
/// last rewrite. The same in both languages.
#[test]
fn the_handlers_of_one_extension_chain_their_rewrites_in_lua_and_rhai() {
    for (file, source) in [
        (
            "c.lua",
            r#"api.on("tool_call", function(e) return {updated_args = {command = "printf one"}} end)
api.on("tool_call", function(e) return {updated_args = {command = e.args.command .. "-two"}} end)
api.on("tool_call", function(e) return {updated_args = {command = e.args.command .. "-three > ran.txt"}} end)"#,
        ),
        (
            "c.rhai",
            r#"api.on("tool_call", |e| #{ updated_args: #{ command: "printf one" } });
api.on("tool_call", |e| #{ updated_args: #{ command: e.args.command + "-two" } });
api.on("tool_call", |e| #{ updated_args: #{ command: e.args.command + "-three > ran.txt" } });"#,
        ),
    ] {
        let dir = TestDir::new();
        install(&dir, file, source);
        let replies = [
            json!({"tool_calls": [{"name": "bash", "arguments": {"command": "printf model > ran.txt"}}]}),
            json!({"text": "done"}),
        ];
        let out = faux(&dir, &replies).args(["-p", "go"]).run();
        out.ok();
        assert_eq!(
            dir.read("ran.txt"),
            "one-two-three",
            "{file}: {}",
            out.describe()
        );
    }
}

/// In Lua the handlers of one extension share the event's table until one rewrites the
/// event (as the reference says): a field set in place is seen by the next handler of the
/// same extension, never by the host or by another extension, and a rewrite gives the next
/// handler a fresh table.
#[test]
fn lua_handlers_of_one_extension_share_the_event_table_until_a_rewrite() {
    let dir = TestDir::new();
    install(
        &dir,
        "a.lua",
        r#"local seen = {}
api.on("tool_call", function(e) e.note = "set in place"; e.args.command = "printf changed > ran.txt" end)
api.on("tool_call", function(e) seen[#seen + 1] = tostring(e.note) end)
api.on("tool_call", function(e) return {updated_args = {command = e.args.command}} end)
api.on("tool_call", function(e) seen[#seen + 1] = tostring(e.note) end)
api.command("seen", function() return table.concat(seen, ",") end)"#,
    );
    install(
        &dir,
        "b.lua",
        r#"local notes = {}
api.on("tool_call", function(e) notes[#notes + 1] = tostring(e.note) end)
api.command("notes", function() return table.concat(notes, ",") end)"#,
    );
    let replies = [
        json!({"tool_calls": [{"name": "bash", "arguments": {"command": "printf model > ran.txt"}}]}),
        json!({"text": "done"}),
    ];
    let mut m = faux(&dir, &replies).arg("--no-watch").spawn();
    m.send_line("go");
    m.wait_for_line("done", super::ext_util::WAIT);
    m.send_line("/seen");
    m.wait_for_line("set in place,nil", super::ext_util::WAIT);
    m.send_line("/notes");
    m.wait_for_line("nil", super::ext_util::WAIT);
    m.close_stdin();
    let out = m.wait();
    out.ok();
    // The in-place change of args reached the third handler, which returned it as a rewrite.
    assert_eq!(dir.read("ran.txt"), "changed", "{}", out.describe());
}

/// In Rhai each handler of one view gets its own copy of the event (the first the converted
/// value, the second a fresh conversion, the rest copies of it): a field one sets is not seen
/// by the next, and all of them see the model's arguments.
#[test]
fn rhai_handlers_of_one_view_each_get_their_own_copy_of_the_event() {
    let dir = TestDir::new();
    install(
        &dir,
        "r.rhai",
        r#"let seen = api.state;
seen.log = [];
api.on("tool_call", |e| { api.state.log.push(`${e.args.command}|${"note" in e}`); e.note = "mine"; });
api.on("tool_call", |e| { api.state.log.push(`${e.args.command}|${"note" in e}`); e.note = "mine"; });
api.on("tool_call", |e| { api.state.log.push(`${e.args.command}|${"note" in e}`); });
api.on("tool_call", |e| { api.state.log.push(`${e.args.command}|${"note" in e}`); });
api.command("seen", |args| api.state.log.reduce(|sum, x| if sum == "" { x } else { sum + "," + x }, ""));"#,
    );
    let replies = [
        json!({"tool_calls": [{"name": "bash", "arguments": {"command": "true"}}]}),
        json!({"text": "done"}),
    ];
    let mut m = faux(&dir, &replies).arg("--no-watch").spawn();
    m.send_line("go");
    m.wait_for_line("done", super::ext_util::WAIT);
    m.send_line("/seen");
    m.wait_for_line(
        "true|false,true|false,true|false,true|false",
        super::ext_util::WAIT,
    );
    m.close_stdin();
    m.wait().ok();
}
