//! Tests of the Rhai engine: fixture scripts in a temp folder, a [`Recording`] registrar,
//! each test on an 8 MiB thread like the extension workers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::RhaiEngine;
use crate::extensions::api::{ApiLink, Engine};
use crate::extensions::registrar::Recording;
use crate::extensions::script::{ErrorKind, ExtensionInfo, Language, Limits, ScriptError};
use crate::platform::testutil::{TempDir, EVENTS};
use crate::vocab::owner::Owner;
use crate::vocab::run::RunContext;

const BUDGET: Duration = Duration::from_millis(200);

struct Fixture {
    dir: TempDir,
    rec: Arc<Recording>,
    engine: RhaiEngine,
}

fn limits() -> Limits {
    Limits {
        budget: BUDGET,
        ..Limits::default()
    }
}

/// Writes `files` and `main.rhai` into a temp folder and builds (not loads) the engine.
fn fixture_with(main: &str, files: &[(&str, &str)], limits: Limits, state: Value) -> Fixture {
    let dir = TempDir::new("rhai");
    for (name, text) in files {
        let p = dir.0.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let path = dir.0.join("main.rhai");
    std::fs::write(&path, main).unwrap();
    let rec = Recording::new(dir.0.clone());
    let info = ExtensionInfo {
        name: "main".into(),
        path,
        language: Language::Rhai,
        root: dir.0.clone(),
        embedded: None,
    };
    let link = Arc::new(ApiLink::new(
        info,
        Owner::new("main", 1),
        rec.link_host(),
        state,
    ));
    let engine = RhaiEngine::new(link, limits).unwrap();
    Fixture { dir, rec, engine }
}

/// A loaded fixture.
fn loaded(main: &str) -> Fixture {
    let mut f = fixture_with(main, &[], limits(), json!({}));
    f.engine.load().unwrap();
    f
}

/// Runs `f` on a thread with the workers' 8 MiB stack.
fn on_worker(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

fn ctx() -> Arc<RunContext> {
    crate::platform::testutil::run_ctx(std::path::Path::new("/w"))
}

impl Fixture {
    fn path(&self) -> String {
        self.dir.0.join("main.rhai").to_string_lossy().into_owned()
    }

    /// The callback of the `n`th registration of `kind` (`on`, `tool`, `command`).
    fn cb(&self, kind: &str, n: usize) -> u64 {
        self.rec.of(kind)[n].1
    }

    fn call(&mut self, kind: &str, n: usize, args: Vec<Value>) -> Result<Value, ScriptError> {
        let cb = self.cb(kind, n);
        self.engine.call(cb, &args, &ctx(), BUDGET)
    }

    fn what(&self, kind: &str) -> Vec<String> {
        self.rec.of(kind).into_iter().map(|c| c.0).collect()
    }
}

#[test]
fn registers_handlers_tools_and_commands() {
    on_worker(|| {
        let f = loaded(
            r#"
            api.on("input", |event, ctx| ());
            api.tool(#{
                name: "greet",
                description: "says hi",
                parameters: #{ "type": "object", properties: #{ who: #{ "type": "string" } } },
                execute: |args, ctx| "hi " + args.who,
                parallel_safe: true,
                timeout_ms: 500,
            });
            api.tool(#{ name: "empty", parameters: #{}, execute: |args| 1 });
            api.command("hello", |args| args);
            api.command("bye", |args, ctx| (), "says bye");
            "#,
        );
        assert_eq!(f.what("on"), ["input"]);
        assert_eq!(f.what("tool"), ["greet", "empty"]);
        assert_eq!(f.what("command"), ["hello", "bye"]);
        let tools = f.rec.tools.lock().unwrap().clone();
        assert_eq!(
            tools[0].parameters,
            json!({"type": "object", "properties": {"who": {"type": "string"}}})
        );
        assert_eq!(tools[0].description, "says hi");
        assert!(tools[0].parallel_safe);
        assert_eq!(tools[0].timeout_ms, Some(500));
        assert_eq!(
            tools[1].parameters,
            json!({"type": "object", "properties": {}})
        );
        assert!(!tools[1].parallel_safe);
    });
}

#[test]
fn handlers_get_the_event_and_return_result_fields() {
    on_worker(|| {
        let mut f = loaded(
            r#"
            api.on("tool_call", |event, ctx| {
                if event.name == "bash" { #{ block: true, reason: "no " + event.args.cmd } }
            });
            api.tool(#{ name: "t", parameters: #{}, execute: |args, ctx| args.n * 2 });
            api.command("echo", |text| text);
            "#,
        );
        let ev = json!({"type": "tool_call", "id": "1", "name": "bash", "args": {"cmd": "ls"}});
        let r = f.call("on", 0, vec![ev]).unwrap();
        assert_eq!(r, json!({"block": true, "reason": "no ls"}));
        let ev = json!({"type": "tool_call", "id": "1", "name": "read", "args": {}});
        assert_eq!(f.call("on", 0, vec![ev]).unwrap(), Value::Null);
        assert_eq!(
            f.call("tool", 0, vec![json!({"n": 21})]).unwrap(),
            json!(42)
        );
        assert_eq!(
            f.call("command", 0, vec![json!("a b")]).unwrap(),
            json!("a b")
        );
    });
}

#[test]
fn callbacks_with_fewer_parameters_and_named_functions() {
    on_worker(|| {
        let mut f = loaded(
            r#"
            fn on_input(event, ctx) { event.text + "@" + ctx.mode }
            fn no_args() { "none" }
            api.on("input", Fn("on_input"));
            api.on("input", "no_args");
            api.on("input", || 7);
            let captured = "c";
            api.on("input", |event| captured + event.text);
            "#,
        );
        let ev = || vec![json!({"text": "x"})];
        assert_eq!(f.call("on", 0, ev()).unwrap(), json!("x@print"));
        assert_eq!(f.call("on", 1, ev()).unwrap(), json!("none"));
        assert_eq!(f.call("on", 2, ev()).unwrap(), json!(7));
        assert_eq!(f.call("on", 3, ev()).unwrap(), json!("cx"));
    });
}

#[test]
fn handles_remove_their_registration() {
    on_worker(|| {
        let mut f = loaded(
            r#"
            let h = api.on("input", |e| ());
            api.command("rm", |args| h.remove());
            "#,
        );
        assert_eq!(f.call("command", 0, vec![json!("")]).unwrap(), json!(true));
        assert_eq!(f.call("command", 0, vec![json!("")]).unwrap(), json!(false));
        assert_eq!(f.rec.removed.lock().unwrap().len(), 1);
        let cb = f.cb("on", 0);
        // The removed handler's function is gone: a late call answers nothing, as in Lua.
        let late = f.engine.call(cb, &[json!({})], &ctx(), BUDGET).unwrap();
        assert_eq!(late, serde_json::Value::Null);
    });
}

#[test]
fn unknown_event_is_an_error_at_the_caller() {
    on_worker(|| {
        let mut f = fixture_with("\napi.on(\"nope\", |e| ());", &[], limits(), json!({}));
        let e = f.engine.load().unwrap_err();
        assert_eq!(e.kind, ErrorKind::Runtime);
        assert_eq!(
            e.message,
            format!(
                "{}:2: api.on: unknown event 'nope'; the events are: {}",
                f.path(),
                EVENTS
            )
        );
    });
}

#[test]
fn sends_messages_logs_and_notifies() {
    on_worker(|| {
        let mut f = loaded(
            r#"
            api.send_message("one");
            api.send_message("two", #{ deliver_as: "follow_up" });
            api.log("a log");
            api.notify(42);
            print("printed");
            fn shout(text) { api.notify(text + "!") }
            api.command("shout", |args| shout(args));
            "#,
        );
        assert_eq!(f.what("send_message"), ["steer:one", "follow_up:two"]);
        assert_eq!(f.what("log"), ["[main] a log", "[main] printed"]);
        assert_eq!(f.what("notify"), ["[main] 42"]);
        f.call("command", 0, vec![json!("hey")]).unwrap();
        assert_eq!(f.what("notify"), ["[main] 42", "[main] hey!"]);
    });
}

#[test]
fn exec_runs_processes() {
    on_worker(|| {
        let mut f = loaded(
            r#"
            api.command("run", |args| [
                api.exec("sh", ["-c", "echo hi; echo err >&2; exit 3"]),
                api.exec("sleep", ["5"], #{ timeout_ms: 50 }),
                api.exec("pwd", [], #{ cwd: "sub" }).stdout,
            ]);
            "#,
        );
        std::fs::create_dir(f.dir.0.join("sub")).unwrap();
        let r = f.call("command", 0, vec![json!("")]).unwrap();
        assert_eq!(
            r[0],
            json!({"code": 3, "stdout": "hi\n", "stderr": "err\n", "timed_out": false})
        );
        assert_eq!(r[1]["code"], Value::Null);
        assert_eq!(r[1]["timed_out"], json!(true));
        assert!(r[2].as_str().unwrap().trim_end().ends_with("/sub"), "{r}");
    });
}

#[test]
fn ctx_has_fields_ui_and_abort() {
    on_worker(|| {
        let mut f = loaded(
            r#"
            api.on("input", |e, ctx| {
                ctx.ui.notify("shown");
                ctx.abort();
                #{ cwd: ctx.cwd, mode: ctx.mode, sid: ctx.session_id, model: ctx.model,
                   depth: ctx.depth, ok: ctx.ui.confirm("sure?") }
            });
            "#,
        );
        let r = f.call("on", 0, vec![json!({})]).unwrap();
        assert_eq!(r["cwd"], "/w");
        assert_eq!(r["mode"], "print");
        assert_eq!(r["sid"], "s1");
        assert_eq!(r["model"], "m1");
        assert_eq!(r["ok"], false);
        assert_eq!(r["depth"], 0);
        assert_eq!(f.what("confirm"), ["[main] sure?"]);
        assert_eq!(f.what("notify"), ["[main] shown"]);
    });
}

#[test]
fn closures_keep_captured_variables() {
    on_worker(|| {
        let mut f = loaded(
            r#"
            let count = 0;
            let prefix = "n=";
            api.on("input", |e| { count += 1; #{ updated_input: prefix + count } });
            "#,
        );
        let r1 = f.call("on", 0, vec![json!({})]).unwrap();
        let r2 = f.call("on", 0, vec![json!({})]).unwrap();
        assert_eq!(
            (r1, r2),
            (
                json!({"updated_input": "n=1"}),
                json!({"updated_input": "n=2"})
            )
        );
    });
}

#[test]
fn api_info_and_files() {
    on_worker(|| {
        let mut f = loaded(
            r#"
            api.command("files", |args| {
                write_file("out/a.txt", "hello");
                [read_file("out/a.txt"), file_exists("out/a.txt"), file_exists("nope"),
                 list_dir("out"), api.extension]
            });
            "#,
        );
        let r = f.call("command", 0, vec![json!("")]).unwrap();
        assert_eq!(r[0], "hello");
        assert_eq!((&r[1], &r[2]), (&json!(true), &json!(false)));
        assert_eq!(r[3], json!(["a.txt"]));
        assert_eq!(
            r[4],
            json!({"name": "main", "path": f.path(), "language": "rhai"})
        );
    });
}

#[test]
fn json_encode_and_decode() {
    on_worker(|| {
        let mut f = loaded(
            r#"
            api.command("j", |args| {
                let v = json_decode(args);
                v.b.push(3);
                json_encode(v)
            });
            api.command("bad", |args| json_decode("{"));
            "#,
        );
        let r = f.call("command", 0, vec![json!(r#"{"a":1.5,"b":[1,2],"c":null}"#)]);
        let v: Value = serde_json::from_str(r.unwrap().as_str().unwrap()).unwrap();
        assert_eq!(v, json!({"a": 1.5, "b": [1, 2, 3], "c": null}));
        let e = f.call("command", 1, vec![json!("")]).unwrap_err();
        assert!(e.message.contains("json_decode: invalid JSON"), "{e:?}");
    });
}

#[test]
fn results_that_are_not_data_are_errors() {
    on_worker(|| {
        let mut f = loaded(r#"api.command("f", |args| || 1);"#);
        let e = f.call("command", 0, vec![json!("")]).unwrap_err();
        assert!(e.message.contains("cannot return a function"), "{e:?}");
    });
}

#[test]
fn syntax_errors_have_path_and_line() {
    on_worker(|| {
        let mut f = fixture_with("let a = 1;\nlet = ;\n", &[], limits(), json!({}));
        let e = f.engine.load().unwrap_err();
        assert_eq!(e.kind, ErrorKind::Syntax);
        assert!(e.message.starts_with(&format!("{}:2: ", f.path())), "{e:?}");
    });
}

#[test]
fn errors_at_top_level_and_in_handlers_have_path_and_line() {
    on_worker(|| {
        let mut f = fixture_with("let x = 1;\nthrow \"boom\";", &[], limits(), json!({}));
        let e = f.engine.load().unwrap_err();
        assert_eq!(
            (e.kind, e.message),
            (ErrorKind::Runtime, format!("{}:2: boom", f.path()))
        );

        let main = "fn helper(e) {\n  e.missing.field\n}\napi.on(\"input\", |e| {\n  let y = 1;\n  helper(e)\n});\napi.on(\"input\", |e| {\n\n  undefined_fn(1)\n});";
        let mut f = fixture_with(main, &[], limits(), json!({}));
        f.engine.load().unwrap();
        let e = f.call("on", 0, vec![json!({})]).unwrap_err();
        assert!(e.message.starts_with(&format!("{}:2: ", f.path())), "{e:?}");
        let e = f.call("on", 1, vec![json!({})]).unwrap_err();
        assert!(
            e.message.starts_with(&format!("{}:10: ", f.path())),
            "{e:?}"
        );
        assert!(e.message.contains("undefined_fn"), "{e:?}");
    });
}

/// Asserts a budget error within a reasonable time.
fn assert_budget(r: Result<Value, ScriptError>, start: Instant) {
    let e = r.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Budget, "{e:?}");
    assert!(
        e.message
            .ends_with("stopped after 0.2 s (the CPU budget); does it loop forever?"),
        "{e:?}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn endless_loops_end_at_the_budget() {
    on_worker(|| {
        let mut f = fixture_with("let i = 0;\nloop { i += 1; }", &[], limits(), json!({}));
        let start = Instant::now();
        assert_budget(f.engine.load().map(|_| Value::Null), start);

        let mut f = loaded(
            r#"
            api.on("input", |e| { loop {} });
            api.on("input", |e| { loop { try { loop {} } catch (err) { } } });
            api.on("input", |e| "fine");
            "#,
        );
        for n in 0..2 {
            let start = Instant::now();
            assert_budget(f.call("on", n, vec![json!({})]), start);
        }
        assert_eq!(f.call("on", 2, vec![json!({})]).unwrap(), json!("fine"));
    });
}

/// Rhai checks sizes after expressions and `&mut` method calls, but not after `m[k] = v` on
/// a map: that growth is bounded by the time budget only.
#[test]
fn size_bombs_are_memory_errors() {
    on_worker(|| {
        // A budget that a loaded machine cannot use up before the size limits are reached.
        let small = Limits {
            max_string_bytes: 1 << 20,
            max_array_len: 1_000,
            max_map_len: 1_000,
            budget: Duration::from_secs(10),
            ..limits()
        };
        let main = r#"
            api.command("s", |a| { let s = "x"; loop { s += s; } });
            api.command("a", |a| { let v = []; loop { v.push(1); } });
            api.command("m", |a| { let m = #{}; let i = 0; loop { m.set("k" + i, i); i += 1; } });
            api.command("ok", |a| "ok");
        "#;
        let mut f = fixture_with(main, &[], small, json!({}));
        f.engine.load().unwrap();
        for n in 0..3 {
            let e = f.call("command", n, vec![json!("")]).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Memory, "{n}: {e:?}");
            assert!(
                e.message.contains("too large (the script size limits)"),
                "{e:?}"
            );
        }
        assert_eq!(f.call("command", 3, vec![json!("")]).unwrap(), json!("ok"));
    });
}

#[test]
fn deep_recursion_is_an_error() {
    on_worker(|| {
        let main = "fn down(n) { down(n + 1) }\napi.command(\"r\", |a| down(0));";
        let mut f = fixture_with(main, &[], limits(), json!({}));
        f.engine.load().unwrap();
        let e = f.call("command", 0, vec![json!("")]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Runtime, "{e:?}");
        assert!(e.message.contains("stack overflow: more than 64"), "{e:?}");
    });
}

#[test]
fn imports_siblings_subfolders_and_stdlib() {
    on_worker(|| {
        let files = [
            ("_util.rhai", "fn twice(x) { x * 2 }"),
            (
                "lib/x.rhai",
                "import \"y\" as y;\nfn hello() { \"hi \" + y::name() }",
            ),
            ("lib/y.rhai", "fn name() { \"y\" }"),
        ];
        let main = r#"
            import "_util" as util;
            import "lib/x" as x;
            import "path" as path;
            import "schema" as schema;
            api.tool(#{
                name: "t",
                parameters: schema::object(#{
                    file: schema::string("a file"),
                    n: schema::optional(schema::integer()),
                }),
                execute: |args| [util::twice(args.n), x::hello(), path::join("a", "b.rs"),
                                  path::dirname("a/b/c.rs"), path::basename("a/b/c.rs"),
                                  path::ext("a/b/c.rs"), path::stem("c.tar.gz"), path::dirname("c")],
            });
        "#;
        let mut f = fixture_with(main, &files, limits(), json!({}));
        f.engine.load().unwrap();
        let params = f.rec.tools.lock().unwrap()[0].parameters.clone();
        assert_eq!(
            params,
            json!({"type": "object", "required": ["file"], "properties": {
                "file": {"type": "string", "description": "a file"},
                "n": {"type": "integer"}}})
        );
        let r = f.call("tool", 0, vec![json!({"n": 4})]).unwrap();
        assert_eq!(
            r,
            json!([8, "hi y", "a/b.rs", "a/b", "c.rs", "rs", "c.tar", "."])
        );
        let names: Vec<_> = f
            .engine
            .imported_files()
            .iter()
            .map(|p| {
                p.strip_prefix(&f.dir.0)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        assert_eq!(names, ["_util.rhai", "lib/x.rhai", "lib/y.rhai"]);
    });
}

#[test]
fn errors_in_modules_name_the_module() {
    on_worker(|| {
        let files = [("bad.rhai", "fn f() { 1 }\nlet = 2;")];
        let mut f = fixture_with("import \"bad\" as bad;", &files, limits(), json!({}));
        let e = f.engine.load().unwrap_err();
        let bad = f.dir.0.join("bad.rhai");
        assert!(
            e.message.starts_with(&format!("{}:2: ", bad.display())),
            "{e:?}"
        );
        assert_eq!(e.kind, ErrorKind::Syntax);
        let mut f = fixture_with("import \"missing\" as m;", &[], limits(), json!({}));
        let e = f.engine.load().unwrap_err();
        assert!(e.message.contains("missing"), "{e:?}");
    });
}

#[test]
fn median_call_time() {
    on_worker(|| {
        let mut f = loaded(
            r#"api.on("tool_call", |event, ctx| {
                if event.name == "bash" { #{ block: true, reason: "no" } }
            });"#,
        );
        let ev = json!({"type": "tool_call", "id": "c1", "name": "bash", "args": {"cmd": "ls"}});
        let cb = f.cb("on", 0);
        let mut times: Vec<Duration> = (0..2000)
            .map(|_| {
                let start = Instant::now();
                f.engine
                    .call(cb, std::slice::from_ref(&ev), &ctx(), BUDGET)
                    .unwrap();
                start.elapsed()
            })
            .collect();
        times.sort();
        println!("rhai call median: {:?}", times[times.len() / 2]);
    });
}

mod state;
mod text;
