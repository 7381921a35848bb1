//! Extension call benchmarks (`cargo bench --bench extensions`): one handler call with a small
//! event and a small result, in the VM and through the host (worker round trip included), and
//! ten `tool_call` handlers per tool call, for Lua and Rhai.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mypi::extensions::api::{ApiLink, CallCtx, ExtensionInfo, Language, Limits};
use mypi::extensions::api::{CallbackId, ToolDef};
use mypi::extensions::discovery;
use mypi::extensions::host::ExtensionHost;
use mypi::extensions::proxies::HostContext;
use mypi::extensions::registrar::Registrar;
use mypi::hooks::HookEvent;
use mypi::owner::Owner;
use mypi::owner::{next_id, Handle};
use mypi::tools::ToolRegistry;
use serde_json::json;

const LUA: &str = r#"api.on("tool_call", function(e, ctx)
  if e.name == "bash" then return {updated_args = {command = e.args.command}} end
end)"#;
const RHAI: &str = r#"api.on("tool_call", |e, ctx| {
  if e.name == "bash" { #{updated_args: #{command: e.args.command}} } else { () }
});"#;

fn context(cwd: &Path) -> Arc<HostContext> {
    let notice: mypi::hooks::NoticeFn = Arc::new(|m| eprintln!("{m}"));
    Arc::new(HostContext::standalone(cwd.to_path_buf(), notice))
}

/// Accepts every registration (the in-VM benchmark calls the engine directly).
struct NullRegistrar(PathBuf, std::sync::Mutex<CallbackId>);

impl Registrar for NullRegistrar {
    fn on(&self, _: &Owner, _: &str, cb: CallbackId) -> Result<Handle, String> {
        *self.1.lock().expect("lock") = cb;
        Ok(Handle::new(
            next_id(),
            std::sync::Weak::<ToolRegistry>::new(),
        ))
    }
    fn tool(&self, _: &Owner, _: ToolDef, _: CallbackId) -> Result<Handle, String> {
        Ok(Handle::new(
            next_id(),
            std::sync::Weak::<ToolRegistry>::new(),
        ))
    }
    fn command(&self, _: &Owner, _: &str, _: &str, _: CallbackId) -> Result<Handle, String> {
        Ok(Handle::new(
            next_id(),
            std::sync::Weak::<ToolRegistry>::new(),
        ))
    }
    fn send_message(&self, _: &str, _: &str) -> Result<(), String> {
        Ok(())
    }
    fn log(&self, _: &str) {}
    fn notify(&self, _: &str) {}
    fn confirm(&self, _: &str) -> bool {
        false
    }
    fn abort(&self) {}
    fn cwd(&self) -> PathBuf {
        self.0.clone()
    }
}

fn event() -> HookEvent {
    HookEvent::ToolCall {
        id: "c1".into(),
        name: "bash".into(),
        args: json!({"command": "ls -la"}),
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn in_vm(dir: &Path, language: Language, source: &str) -> Duration {
    let ext = if language == Language::Lua {
        "lua"
    } else {
        "rhai"
    };
    let path = dir.join(format!("vm.{ext}"));
    std::fs::write(&path, source).expect("write script");
    let ctx = context(dir);
    let info = ExtensionInfo {
        name: "vm".into(),
        path,
        language,
        root: dir.to_path_buf(),
    };
    let registrar = Arc::new(NullRegistrar(ctx.cwd.clone(), Default::default()));
    let link = Arc::new(ApiLink::new(
        info,
        Owner::new("vm", 1),
        registrar.clone(),
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
    let call_ctx = CallCtx::default();
    let mut samples = Vec::new();
    for _ in 0..2000 {
        let start = Instant::now();
        let _ = engine.call(cb, args.clone(), &call_ctx, Duration::from_secs(1));
        samples.push(start.elapsed());
    }
    median(samples)
}

fn through_host(
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    handlers: usize,
    language: Language,
) -> Duration {
    let root = dir.join(format!("host-{handlers}-{}", language.name()));
    std::fs::create_dir_all(&root).expect("mkdir");
    let (ext, source) = match language {
        Language::Lua => ("lua", LUA),
        Language::Rhai => ("rhai", RHAI),
    };
    for i in 0..handlers {
        std::fs::write(root.join(format!("h{i}.{ext}")), source).expect("write");
    }
    let ctx = context(dir);
    let host = ExtensionHost::new(ctx.clone());
    let loaded = rt.block_on(host.load_all(discovery::discover(&[root])));
    assert!(loaded.iter().all(|s| s.error.is_none()), "{loaded:?}");
    let mut samples = Vec::new();
    rt.block_on(async {
        for _ in 0..2000 {
            let start = Instant::now();
            let out = ctx.hooks.emit(event()).await;
            samples.push(start.elapsed());
            std::hint::black_box(out);
        }
    });
    host.unload_all();
    median(samples)
}

fn main() {
    let dir: PathBuf = std::env::temp_dir().join(format!("mypi-bench-ext-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    for (language, source) in [(Language::Lua, LUA), (Language::Rhai, RHAI)] {
        let name = language.name();
        let vm = in_vm(&dir, language, source);
        let one = through_host(&rt, &dir, 1, language);
        let ten = through_host(&rt, &dir, 10, language);
        println!(
            "{name}: handler call in VM {:.2} µs; through the host {:.2} µs; ten tool_call handlers {:.1} µs per tool call",
            vm.as_secs_f64() * 1e6,
            one.as_secs_f64() * 1e6,
            ten.as_secs_f64() * 1e6
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
