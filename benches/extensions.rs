//! Extension call benchmarks (`cargo bench --bench extensions`), Lua and Rhai:
//!
//! - one handler call with a small event and a small result, in the VM (the engine called
//!   directly) and through the host (bus -> worker round trip -> bus), median of 2,000, and
//!   the process CPU per call through the host (both threads' and the runtime's);
//! - the issue's workload: 100 counting `tool_call` handlers in one extension, 1,000 tool
//!   calls through the bus (one round trip per event), and the same 100 handlers spread over
//!   10 extensions (ten round trips per event);
//! - the process CPU time while a handler waits 3 s for `api.exec("sleep", {"3"})` (the wait
//!   must cost nothing).
//!
//! The calls are made from a task on the runtime's workers, as the agent makes them.
// Test and benchmark code: system calls for fixtures and measures, and unwrap as a failed check.
#![allow(unsafe_code, clippy::unwrap_used)]

#[path = "util/mod.rs"]
mod util;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use util::*;

use futures_util::future::BoxFuture;
use mypi::extensions::api::{ApiLink, LinkHost, ToolDef};
use mypi::extensions::discovery;
use mypi::extensions::host::ExtensionHost;
use mypi::extensions::registrar::{Registrar, Services};
use mypi::extensions::script::{CallbackId, ExtensionInfo, Language, Limits};
use mypi::extensions::services::HostContext;
use mypi::hooks::HookEvent;
use mypi::tools::ToolRegistry;
use mypi::vocab::owner::{next_id, Handle, Owner};
use mypi::vocab::run::queue::Queues;
use mypi::vocab::run::RunContext;
use serde_json::json;

const LUA: &str = r#"api.on("tool_call", function(e, ctx)
  if e.name == "bash" then return {updated_args = {command = e.args.command}} end
end)"#;
const RHAI: &str = r#"api.on("tool_call", |e, ctx| {
  if e.name == "bash" { #{updated_args: #{command: e.args.command}} } else { () }
});"#;
const LUA_COUNTERS: &str = r#"local n = 0
for i = 1, HANDLERS do api.on("tool_call", function(e) n = n + 1 end) end"#;
const RHAI_COUNTERS: &str = r#"let n = 0;
for i in 0..HANDLERS { api.on("tool_call", |e| { n += 1; }); }"#;
const LUA_SLEEP: &str =
    r#"api.command("wait", function() return api.exec("sleep", {"3"}).code end)"#;
const RHAI_SLEEP: &str = r#"api.command("wait", |args| api.exec("sleep", ["3"]).code);"#;

fn context(cwd: &Path) -> Arc<HostContext> {
    let notice: mypi::hooks::NoticeFn = Arc::new(|m| eprintln!("{m}"));
    Arc::new(HostContext::standalone(cwd.to_path_buf(), notice))
}

/// Accepts every registration (the in-VM benchmark calls the engine directly).
struct NullRegistrar(PathBuf, std::sync::Mutex<CallbackId>);

fn null_handle() -> Handle {
    Handle::new(next_id(), std::sync::Weak::<ToolRegistry>::new())
}

impl Registrar for NullRegistrar {
    fn on(&self, _: &Owner, _: &str, cb: CallbackId) -> Result<Handle, String> {
        *self.1.lock().expect("lock") = cb;
        Ok(null_handle())
    }
    fn tool(&self, _: &Owner, _: ToolDef, _: CallbackId) -> Result<Handle, String> {
        Ok(null_handle())
    }
    fn command(&self, _: &Owner, _: &str, _: &str, _: CallbackId) -> Result<Handle, String> {
        Ok(null_handle())
    }
    fn background(
        &self,
        _: &Owner,
        _: mypi::extensions::registrar::Background,
        _: CallbackId,
    ) -> Result<Handle, String> {
        Ok(null_handle())
    }
}

impl Services for NullRegistrar {
    fn send_message(&self, _: &str, _: &str, _: Option<Arc<Queues>>) -> Result<(), String> {
        Ok(())
    }
    fn log(&self, _: &str) {}
    fn notify(&self, _: &str) {}
    fn confirm(&self, _: &str) -> BoxFuture<'static, bool> {
        Box::pin(async { false })
    }
    fn cwd(&self) -> PathBuf {
        self.0.clone()
    }
}

fn event() -> HookEvent {
    HookEvent::ToolCall {
        id: "c1".into(),
        name: "bash".into(),
        args: json!({"command": "ls -la"}),
        about: Default::default(),
    }
}

fn suffix(language: Language) -> &'static str {
    match language {
        Language::Lua => "lua",
        Language::Rhai => "rhai",
    }
}

fn in_vm(dir: &Path, language: Language, source: &str, calls: usize) -> Duration {
    let path = dir.join(format!("vm.{}", suffix(language)));
    std::fs::write(&path, source).expect("write script");
    let info = ExtensionInfo {
        name: "vm".into(),
        path,
        language,
        root: dir.to_path_buf(),
        embedded: None,
    };
    let registrar = Arc::new(NullRegistrar(dir.to_path_buf(), Default::default()));
    let link = Arc::new(ApiLink::new(
        info,
        Owner::new("vm", 1),
        LinkHost::of(registrar.clone(), context(dir)),
        json!({}),
    ));
    let factory = match language {
        Language::Lua => mypi::extensions::lua::new_engine,
        Language::Rhai => mypi::extensions::rhai::new_engine,
    };
    let mut engine = factory(link, Limits::default()).expect("engine");
    engine.load().expect("load");
    let cb = *registrar.1.lock().expect("lock");
    let args = vec![event().to_value()];
    let ctx = Arc::new(RunContext::detached(dir.to_path_buf()));
    let mut samples = Vec::new();
    for _ in 0..calls {
        let start = Instant::now();
        let _ = engine.call(cb, &args, &ctx, Duration::from_secs(1));
        samples.push(start.elapsed());
    }
    median(samples)
}

/// Loads `files` (name, source) from a fresh root into a standalone host.
fn host_with(
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    tag: &str,
    files: &[(String, String)],
) -> (ExtensionHost, Arc<HostContext>) {
    let root = dir.join(tag);
    std::fs::create_dir_all(&root).expect("mkdir");
    for (name, source) in files {
        std::fs::write(root.join(name), source).expect("write");
    }
    let ctx = context(dir);
    let host = ExtensionHost::new(ctx.clone());
    let loaded = rt.block_on(host.load_all(discovery::discover(&[root])));
    assert!(loaded.iter().all(|s| s.error.is_none()), "{loaded:?}");
    (host, ctx)
}

/// The times of `n` `tool_call` emits (sorted), and their total, from a task on the runtime.
fn emits(
    rt: &tokio::runtime::Runtime,
    ctx: &Arc<HostContext>,
    n: usize,
) -> (Vec<Duration>, Duration) {
    let hooks = ctx.hooks.clone();
    let run = ctx.session();
    rt.block_on(async move {
        tokio::spawn(async move {
            let mut samples = Vec::with_capacity(n);
            let all = Instant::now();
            for _ in 0..n {
                let start = Instant::now();
                let out = hooks.emit(event(), &run).await;
                samples.push(start.elapsed());
                std::hint::black_box(out);
            }
            let all = all.elapsed();
            samples.sort();
            (samples, all)
        })
        .await
        .expect("bench task")
    })
}

/// One handler call through the host, 2,000 times: the sorted wall times, and the process
/// CPU per call.
fn through_host(
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    language: Language,
) -> (Vec<Duration>, Duration) {
    let source = if language == Language::Lua { LUA } else { RHAI };
    let files = [(format!("h.{}", suffix(language)), source.to_string())];
    let (host, ctx) = host_with(rt, dir, &format!("one-{}", language.name()), &files);
    let cpu = process_cpu();
    let (samples, _) = emits(rt, &ctx, 2000);
    let cpu = (process_cpu() - cpu) / 2000;
    host.unload_all();
    (samples, cpu)
}

/// 1,000 tool calls through 100 counting handlers in `extensions` extensions; total time.
fn counters(
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    language: Language,
    extensions: usize,
) -> Duration {
    let template = if language == Language::Lua {
        LUA_COUNTERS
    } else {
        RHAI_COUNTERS
    };
    let source = template.replace("HANDLERS", &(100 / extensions).to_string());
    let files: Vec<(String, String)> = (0..extensions)
        .map(|i| (format!("c{i:02}.{}", suffix(language)), source.clone()))
        .collect();
    let tag = format!("counters-{extensions}-{}", language.name());
    let (host, ctx) = host_with(rt, dir, &tag, &files);
    let (_, total) = emits(rt, &ctx, 1000);
    host.unload_all();
    total
}

/// CPU time the whole process spends while a command waits 3 s on `api.exec("sleep 3")`.
fn host_wait_cpu(
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    language: Language,
) -> (Duration, Duration) {
    let source = if language == Language::Lua {
        LUA_SLEEP
    } else {
        RHAI_SLEEP
    };
    let files = [(format!("w.{}", suffix(language)), source.to_string())];
    let (host, ctx) = host_with(rt, dir, &format!("wait-{}", language.name()), &files);
    let command = ctx.commands.lookup("wait").expect("the wait command");
    let run = ctx.session();
    let (cpu0, wall0) = (process_cpu(), Instant::now());
    let out = rt.block_on(async move {
        match &command.action {
            mypi::commands::Action::Handler(h) => h.call("", &run).await,
            _ => unreachable!("a script command"),
        }
    });
    assert_eq!(out.as_deref(), Ok("0"), "the command ran sleep to its end");
    let taken = (process_cpu() - cpu0, wall0.elapsed());
    host.unload_all();
    taken
}

fn main() {
    let dir: PathBuf = std::env::temp_dir().join(format!("mypi-bench-ext-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // One worker, as the binary's runtime has (src/main.rs); `BENCH_WORKERS=2` for the
    // runtime builds before the fourth pass had (benches/README), to compare with them.
    let workers = std::env::var("BENCH_WORKERS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .expect("runtime");
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let languages = [(Language::Lua, LUA), (Language::Rhai, RHAI)];
    // `BENCH_COUNTERS=n`: only the 100 handlers in one Lua extension, n times (for a profiler).
    if let Some(n) = std::env::var("BENCH_COUNTERS")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        for _ in 0..n {
            let took = counters(&rt, &dir, Language::Lua, 1);
            println!(
                "lua: 100 handlers x 1,000 calls {:.0} ms",
                took.as_secs_f64() * 1e3
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    // `BENCH_HOST_CALLS=n`: only the calls through the host, n rounds of each language, with
    // their spread (for a profiler, and for the spread itself).
    if let Some(n) = std::env::var("BENCH_HOST_CALLS")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        for _ in 0..n {
            for (language, _) in languages {
                let (samples, cpu) = through_host(&rt, &dir, language);
                let at = |q: usize| us(samples[samples.len() * q / 100]);
                println!(
                    "{}: one call through the host: p10 {:.2}, p50 {:.2}, p90 {:.2} µs, \
                     {:.2} µs of process CPU",
                    language.name(),
                    at(10),
                    at(50),
                    at(90),
                    us(cpu)
                );
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    // `BENCH_VM_CALLS=n`: only the in-VM calls, n of each language (for a profiler).
    if let Some(n) = std::env::var("BENCH_VM_CALLS")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        for (language, source) in languages {
            let vm = in_vm(&dir, language, source, n);
            println!(
                "{}: one handler call in the VM {:.2} µs",
                language.name(),
                us(vm)
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    for (language, source) in languages {
        let name = language.name();
        let vm = in_vm(&dir, language, source, 2000);
        let (one, one_cpu) = through_host(&rt, &dir, language);
        let one = one[one.len() / 2];
        let batched = counters(&rt, &dir, language, 1);
        let spread = counters(&rt, &dir, language, 10);
        let (cpu, wall) = host_wait_cpu(&rt, &dir, language);
        println!("{name}:");
        println!(
            "  one handler call: in the VM {:.2} µs, through the host {:.2} µs (medians), \
             {:.2} µs of process CPU",
            us(vm),
            us(one),
            us(one_cpu)
        );
        println!(
            "  100 counting tool_call handlers, 1,000 tool calls: {:.0} ms in 1 extension, {:.0} ms in 10",
            batched.as_secs_f64() * 1e3,
            spread.as_secs_f64() * 1e3
        );
        println!(
            "  a handler waiting {:.1} s on api.exec(\"sleep\", {{\"3\"}}): {:.3} s of process CPU",
            wall.as_secs_f64(),
            cpu.as_secs_f64()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
