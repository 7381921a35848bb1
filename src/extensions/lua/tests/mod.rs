//! Tests of the Lua engine: real script files in a temporary folder, a [`Recording`]
//! registrar, and every engine run on a thread with the worker's 8 MiB stack.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use super::LuaEngine;
use crate::extensions::api::{ApiLink, Engine};
use crate::extensions::registrar::Recording;
use crate::extensions::script::{
    CallbackId, ErrorKind, ExtensionInfo, Language, Limits, ScriptError,
};
use crate::platform::testutil::{TempDir, EVENTS};
use crate::vocab::owner::Owner;
use crate::vocab::run::RunContext;

mod fs;
mod isolation;
mod members;
mod modules;

const BUDGET: Duration = Duration::from_millis(200);

/// Runs `f` on a thread with the extension workers' stack size.
fn on_worker(f: impl FnOnce() + Send + 'static) {
    let h = std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(f)
        .unwrap();
    if let Err(panic) = h.join() {
        std::panic::resume_unwind(panic);
    }
}

/// A loaded (or not) extension.
struct Ext {
    dir: TempDir,
    rec: Arc<Recording>,
    engine: LuaEngine,
    ctx: Arc<RunContext>,
}

fn limits() -> Limits {
    Limits {
        budget: BUDGET,
        ..Limits::default()
    }
}

/// Writes `files` (the first is the extension) and builds the engine, without loading.
fn build(files: &[(&str, &str)], limits: Limits, state: Json) -> Ext {
    let dir = TempDir::new("lua");
    for (name, text) in files {
        let p = dir.0.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
    }
    let path = dir.0.join(files[0].0);
    let info = ExtensionInfo {
        name: files[0].0.trim_end_matches(".lua").to_string(),
        path,
        language: Language::Lua,
        root: dir.0.clone(),
        embedded: None,
    };
    let rec = Recording::new(dir.0.clone());
    let link = Arc::new(ApiLink::new(
        info,
        Owner::new("test", 1),
        rec.link_host(),
        state,
    ));
    let engine = LuaEngine::new(link, limits).unwrap();
    let ctx = crate::platform::testutil::run_ctx(&dir.0);
    Ext {
        dir,
        rec,
        engine,
        ctx,
    }
}

/// Builds and loads `main.lua` with `text`.
fn load(text: &str) -> Ext {
    load_files(&[("main.lua", text)])
}

fn load_files(files: &[(&str, &str)]) -> Ext {
    let mut ext = build(files, limits(), json!({}));
    ext.engine.load().unwrap();
    ext
}

/// Loads `text` and expects the load to fail.
fn load_err(text: &str, limits: Limits) -> (Ext, ScriptError) {
    let mut ext = build(&[("main.lua", text)], limits, json!({}));
    let err = ext.engine.load().unwrap_err();
    (ext, err)
}

impl Ext {
    fn main(&self) -> String {
        self.dir.0.join("main.lua").display().to_string()
    }

    /// The callback registered by the `n`th `kind` registration.
    fn cb(&self, kind: &str, n: usize) -> CallbackId {
        self.rec.of(kind)[n].1
    }

    fn ctx(&self) -> Arc<RunContext> {
        self.ctx.clone()
    }

    fn call(&mut self, cb: CallbackId, args: Vec<Json>) -> Result<Json, ScriptError> {
        let ctx = self.ctx();
        self.engine.call(cb, &args, &ctx, BUDGET)
    }

    /// Like `fire`, with a budget generous enough that a loaded machine cannot turn the
    /// expected error into a budget stop.
    fn fire_patiently(&mut self, n: usize, event: Json) -> Result<Json, ScriptError> {
        let (cb, ctx) = (self.cb("on", n), self.ctx());
        self.engine
            .call(cb, &[event], &ctx, Duration::from_secs(10))
    }

    /// Calls the `n`th `api.on` handler with `event`.
    fn fire(&mut self, n: usize, event: Json) -> Result<Json, ScriptError> {
        let cb = self.cb("on", n);
        self.call(cb, vec![event])
    }

    /// The engine still answers after a failure.
    fn still_works(&mut self) {
        let v = self.engine.lua.load("return 1 + 1").eval::<i64>().unwrap();
        assert_eq!(v, 2);
    }
}

#[test]
fn registrations_reach_the_link() {
    on_worker(|| {
        let ext = load(
            r#"
            api.on("tool_call", function(e) end)
            api.tool{
              name = "greet", description = "says hi",
              parameters = {type = "object", properties = {}},
              execute = function(args) return "hi" end,
              parallel_safe = true, timeout_ms = 500,
            }
            api.tool{name = "bare", execute = function() end}
            api.command("hello", function(args) end, "greets")
            "#,
        );
        assert_eq!(ext.rec.of("on")[0].0, "tool_call");
        assert_eq!(ext.rec.of("command")[0].0, "hello");
        let tools = ext.rec.tools.lock().unwrap().clone();
        assert_eq!(tools[0].name, "greet");
        assert_eq!(tools[0].description, "says hi");
        assert_eq!(
            tools[0].parameters,
            json!({"type": "object", "properties": {}})
        );
        assert!(tools[0].parallel_safe);
        assert_eq!(tools[0].timeout_ms, Some(500));
        assert_eq!(
            tools[1].parameters,
            json!({"type": "object", "properties": {}})
        );
        let ids: Vec<_> = ["on", "tool", "command"]
            .iter()
            .map(|k| ext.cb(k, 0))
            .collect();
        assert!(ids[0] != ids[1] && ids[1] != ids[2]);
    });
}

#[test]
fn bad_registrations_fail_at_the_callers_line() {
    on_worker(|| {
        let (ext, err) = load_err("\n\napi.on('no_such_event', function() end)\n", limits());
        assert_eq!(err.kind, ErrorKind::Runtime);
        assert_eq!(
            err.message,
            format!(
                "{}:3: api.on: unknown event 'no_such_event'; the events are: {}",
                ext.main(),
                EVENTS
            )
        );
        let (ext, err) = load_err("api.tool{name = 'x'}", limits());
        assert_eq!(
            err.message,
            format!(
                "{}:1: api.tool: 'execute' (a function) is required",
                ext.main()
            )
        );
        let (_, err) = load_err("api.on('input')", limits());
        assert!(
            err.message
                .contains("api.on: the handler (a function) is missing"),
            "{}",
            err.message
        );
    });
}

#[test]
fn handlers_get_the_event_and_ctx_and_return_results() {
    on_worker(|| {
        let mut ext = load(
            r#"
            api.on("tool_call", function(e, ctx)
              local ok = ctx.ui.confirm("run " .. e.name .. "?")
              ctx.ui.notify("asked")
              return {
                block = not ok, reason = "denied " .. e.args.cmd,
                seen = {e.id, #e.list, ctx.cwd ~= nil, ctx.mode, ctx.session_id, ctx.model},
                n = 3, f = 1.5, empty = {},
              }
            end)
            api.on("input", function() ctx_missing = true end)
            "#,
        );
        let v = ext
            .fire(
                0,
                json!({"id": "c1", "name": "bash", "args": {"cmd": "ls"}, "list": [1, 2]}),
            )
            .unwrap();
        assert_eq!(
            v,
            json!({
                "block": true, "reason": "denied ls",
                "seen": ["c1", 2, true, "print", "s1", "m1"],
                "n": 3, "f": 1.5, "empty": {},
            })
        );
        assert_eq!(ext.rec.of("confirm")[0].0, "[main] run bash?");
        assert_eq!(ext.rec.of("notify")[0].0, "[main] asked");
        assert_eq!(ext.fire(1, json!({"text": "x"})).unwrap(), Json::Null);
    });
}

#[test]
fn tools_and_commands_are_called_with_their_arguments() {
    on_worker(|| {
        let mut ext = load(
            r#"
            api.tool{name = "add", execute = function(args, ctx) return args.a + args.b end}
            api.command("echo", function(text, ctx) ctx.abort() return "said " .. text end)
            "#,
        );
        let tool = ext.cb("tool", 0);
        assert_eq!(
            ext.call(tool, vec![json!({"a": 2, "b": 3})]).unwrap(),
            json!(5)
        );
        let cmd = ext.cb("command", 0);
        assert_eq!(ext.call(cmd, vec![json!("hi")]).unwrap(), json!("said hi"));
        assert!(ext.ctx.cancel.is_cancelled(), "ctx.abort() cancels the run");
    });
}

#[test]
fn handles_remove_their_registration() {
    on_worker(|| {
        let mut ext = load(
            r#"
            local h = api.on("input", function() return {block = true} end)
            api.command("off", function() return {h:remove(), h:remove(), tostring(h):match("^handle") ~= nil} end)
            "#,
        );
        let cmd = ext.cb("command", 0);
        assert_eq!(
            ext.call(cmd, vec![json!("")]).unwrap(),
            json!([true, false, true])
        );
        assert_eq!(ext.rec.removed.lock().unwrap().len(), 1);
        // The removed handler's function is gone: a late call answers nothing.
        assert_eq!(ext.fire(0, json!({})).unwrap(), Json::Null);
    });
}

#[test]
fn renderers_get_their_lines_and_their_handle_forgets_both_functions() {
    on_worker(|| {
        let mut ext = load(
            r#"
            local h = api.renderer("bash", {
              call = function(args, ctx) return "$ " .. args.command .. " in " .. ctx.mode end,
              result = function(text, details) return #text .. " bytes " .. tostring(details) end,
            })
            api.renderer("read", {result = function() end})
            api.command("off", function() return h:remove() end)
            "#,
        );
        let seen = ext.rec.of("renderer");
        let names: Vec<&str> = seen.iter().map(|(what, _)| what.as_str()).collect();
        assert_eq!(names, ["bash:call", "bash:result", "read:result"]);
        let (call, result) = (seen[0].1, seen[1].1);
        assert_eq!(
            ext.call(call, vec![json!({"command": "ls"})]).unwrap(),
            json!("$ ls in print")
        );
        assert_eq!(
            ext.call(result, vec![json!("abc"), Json::Null]).unwrap(),
            json!("3 bytes nil")
        );
        let off = ext.cb("command", 0);
        assert_eq!(ext.call(off, vec![json!("")]).unwrap(), json!(true));
        assert_eq!(ext.call(call, vec![json!({})]).unwrap(), Json::Null);
        assert_eq!(ext.call(result, vec![json!("")]).unwrap(), Json::Null);
        let (ext, err) = load_err("api.renderer('bash', {})", limits());
        assert_eq!(
            err.message,
            format!(
                "{}:1: api.renderer: the renderer needs a 'call' or a 'result' function (or both)",
                ext.main()
            )
        );
        let (_, err) = load_err("api.renderer('bash', {call = 1})", limits());
        assert!(
            err.message
                .contains("api.renderer: 'call' must be a function, not a number"),
            "{}",
            err.message
        );
        let (_, err) = load_err("api.renderer('bash', {cal = print})", limits());
        assert!(
            err.message
                .contains("unknown field 'cal'; the fields are call, result"),
            "{}",
            err.message
        );
    });
}

#[test]
fn send_message_log_and_notify() {
    on_worker(|| {
        let mut ext = load(
            r#"
            api.send_message("now")
            api.send_message("later", {deliver_as = "follow_up"})
            api.log("debug line")
            api.notify("shown")
            print("printed", 1, nil)
            api.command("bad", function() api.send_message("x", {deliver_as = "soon"}) end)
            "#,
        );
        let sent: Vec<_> = ext
            .rec
            .of("send_message")
            .into_iter()
            .map(|c| c.0)
            .collect();
        assert_eq!(sent, ["steer:now", "follow_up:later"]);
        let logs: Vec<_> = ext.rec.of("log").into_iter().map(|c| c.0).collect();
        assert_eq!(logs, ["[main] debug line", "[main] printed\t1\tnil"]);
        assert_eq!(ext.rec.of("notify")[0].0, "[main] shown");
        let cmd = ext.cb("command", 0);
        let err = ext.call(cmd, vec![json!("")]).unwrap_err();
        assert_eq!(
            err.message,
            format!(
                "{}:7: api.send_message: deliver_as must be \"steer\" or \"follow_up\", not \"soon\"",
                ext.main()
            )
        );
    });
}

#[test]
fn exec_runs_a_process() {
    on_worker(|| {
        let mut ext = load(
            r#"
            api.command("run", function()
              local r = api.exec("sh", {"-c", "echo out; echo err >&2; exit 3"})
              local t = api.exec("sleep", {"5"}, {timeout_ms = 50})
              return {r.code, r.stdout, r.stderr, r.timed_out, t.timed_out, t.code == nil}
            end)
            api.command("missing", function() return api.exec("no-such-program-xyz") end)
            "#,
        );
        let cmd = ext.cb("command", 0);
        assert_eq!(
            ext.call(cmd, vec![json!("")]).unwrap(),
            json!([3, "out\n", "err\n", false, true, true])
        );
        let cmd = ext.cb("command", 1);
        let err = ext.call(cmd, vec![json!("")]).unwrap_err();
        assert!(
            err.message
                .contains(":7: api.exec: cannot run no-such-program-xyz"),
            "{}",
            err.message
        );
    });
}

#[test]
fn state_and_extension_info() {
    on_worker(|| {
        let mut ext = build(
            &[(
                "main.lua",
                r#"
                api.state.count = (api.state.count or 0) + 1
                api.state.f = print
                api.state.list = {"a", "b"}
                api.on("input", function() return {api.extension.name, api.extension.language, api.extension.path} end)
                "#,
            )],
            limits(),
            json!({"count": 41, "kept": {"x": [1]}}),
        );
        ext.engine.load().unwrap();
        assert_eq!(
            ext.engine.state().0,
            json!({"count": 42, "kept": {"x": [1]}, "list": ["a", "b"]})
        );
        let main = ext.main();
        assert_eq!(
            ext.fire(0, json!({})).unwrap(),
            json!(["main", "lua", main])
        );
    });
}

#[test]
fn syntax_and_runtime_errors_name_the_file_and_line() {
    on_worker(|| {
        let (ext, err) = load_err("local x = 1\nlocal = 2\n", limits());
        assert_eq!(err.kind, ErrorKind::Syntax);
        assert!(
            err.message.starts_with(&format!("{}:2:", ext.main())),
            "{}",
            err.message
        );
        let (ext, err) = load_err("local x = 1\nerror('top level')\n", limits());
        assert_eq!(err.kind, ErrorKind::Runtime);
        assert_eq!(err.message, format!("{}:2: top level", ext.main()));
        let (ext, err) = load_err("error({code = 1})", limits());
        assert!(err.message.starts_with(&ext.main()), "{}", err.message);

        let mut ext = load("api.on('input', function(e)\n  return e.nope.deeper\nend)");
        let err = ext.fire(0, json!({})).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Runtime);
        assert!(
            err.message
                .starts_with(&format!("{}:2: attempt to index a nil value", ext.main())),
            "{}",
            err.message
        );
    });
}

#[test]
fn long_paths_are_not_shortened() {
    on_worker(|| {
        let long = format!("{}/main.lua", "very-long-folder-name".repeat(4));
        let mut ext = build(&[(&long, "\nerror('boom')")], limits(), json!({}));
        let err = ext.engine.load().unwrap_err();
        let full = ext.dir.0.join(&long).display().to_string();
        assert_eq!(err.message, format!("{full}:2: boom"));
    });
}

#[test]
fn returning_a_function_is_an_error() {
    on_worker(|| {
        let mut ext =
            load("api.on('input', function() return {ok = true, f = function() end} end)");
        let err = ext.fire(0, json!({})).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Runtime);
        assert!(
            err.message
                .contains("cannot return a function (at result.f)"),
            "{}",
            err.message
        );
    });
}

#[test]
fn huge_strings_come_back_whole() {
    on_worker(|| {
        let mut ext =
            load("api.on('input', function() return string.rep('x', 10 * 1024 * 1024) end)");
        let v = ext.fire(0, json!({})).unwrap();
        assert_eq!(v.as_str().unwrap().len(), 10 * 1024 * 1024);
    });
}

#[test]
fn the_sandbox_keeps_dangerous_things_out() {
    on_worker(|| {
        let mut ext = load(
            r#"
            api.on("input", function()
              local bin_ok, bin_err = load("\27Lua\84\0\25\147\13\10\26\10")
              local fn_ok = load("return 1 + 1")
              local gc_ok = pcall(setmetatable, {}, {__gc = function() end})
              return {
                os_exit = os.exit == nil, debug = debug == nil, dump = string.dump == nil,
                execute = os.execute == nil, popen = io.popen == nil, loadlib = package.loadlib == nil,
                binary = bin_ok == nil and bin_err:find("binary") ~= nil,
                text = fn_ok() == 2, gc = not gc_ok,
                time = type(os.time()) == "number", io = type(io.open) == "function",
              }
            end)
            "#,
        );
        let v = ext.fire(0, json!({})).unwrap();
        for (k, ok) in v.as_object().unwrap() {
            assert_eq!(ok, &json!(true), "{k}");
        }
    });
}

#[test]
fn an_idle_engine_is_small() {
    on_worker(|| {
        let ext = load("api.on('input', function(e) return {ok = true} end)");
        let used = ext.engine.used_memory();
        assert!(used < 1024 * 1024, "{used} bytes");
    });
}

/// `cargo test --lib lua::tests::timing -- --ignored --nocapture`
#[test]
#[ignore = "a timing printout, not a check: cargo test --lib lua::tests::timing -- --ignored --nocapture"]
fn timing() {
    on_worker(|| {
        let mut ext = load("api.on('tool_call', function(e, ctx) if e.name == 'bash' then return {block = false, reason = e.id} end end)");
        println!("idle engine: {} bytes", ext.engine.used_memory());
        let event = json!({"id": "c1", "name": "bash", "args": {"cmd": "ls -la"}});
        let mut times = Vec::new();
        let cb = ext.cb("on", 0);
        let ctx = ext.ctx();
        for _ in 0..20_000 {
            let args = vec![event.clone()];
            let start = Instant::now();
            ext.engine.call(cb, &args, &ctx, BUDGET).unwrap();
            times.push(start.elapsed());
        }
        times.sort();
        println!(
            "call: median {:?}, p99 {:?}",
            times[times.len() / 2],
            times[times.len() * 99 / 100]
        );
        let start = Instant::now();
        let mut e = build(
            &[("main.lua", "api.on('input', function() end)")],
            limits(),
            json!({}),
        );
        e.engine.load().unwrap();
        println!("new engine + load: {:?}", start.elapsed());
    });
}

#[test]
fn ctx_is_read_only_and_lists_its_fields() {
    on_worker(|| {
        let mut ext = load(
            r#"
            api.command("w", function(_, ctx)
              local ok, e = pcall(function() ctx.mode = "repl" end)
              local keys = {}
              for k in pairs(ctx) do keys[#keys + 1] = k end
              table.sort(keys)
              return {ok, e, ctx.mode, table.concat(keys, ",")}
            end)
            "#,
        );
        let cmd = ext.cb("command", 0);
        let v = ext.call(cmd, vec![json!("")]).unwrap();
        assert_eq!(v[0], json!(false));
        assert!(v[1].as_str().unwrap().ends_with("ctx is read-only"), "{v}");
        assert_eq!(v[2], json!("print"));
        assert_eq!(
            v[3],
            json!("abort,context_usage,cwd,depth,is_idle,mode,model,new_session,progress,reload,session,session_id,shutdown,system_prompt,thinking,ui,update")
        );
    });
}
