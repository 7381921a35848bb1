//! Hot reload benchmarks (`cargo bench --bench reload`), through the library:
//!
//! - end to end: write a script file (in place) -> the watcher (`reload::watch`) notices,
//!   debounces, reloads -> its `/command` answers the new text; median over 20 saves, for Lua
//!   and Rhai;
//! - the parts: the debounce (a constant), `ExtensionHost::reload_named` (fresh VM, top level,
//!   swap) and `ExtensionHost::sync` with the changed path (re-discovery + fingerprints +
//!   reload), so end to end minus both is the file-notification latency;
//! - scaling: reloading one extension with 1 vs 200 loaded (reload_named and sync).
// Test and benchmark code: system calls for fixtures and measures, and unwrap as a failed check.
#![allow(unsafe_code, clippy::unwrap_used)]

#[path = "util/mod.rs"]
mod util;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use util::*;

use mypi::commands::Action;
use mypi::extensions::discovery;
use mypi::extensions::host::ExtensionHost;
use mypi::extensions::reload::{self, DEBOUNCE};
use mypi::extensions::services::HostContext;

const SAVES: usize = 20;

fn context(cwd: &Path) -> Arc<HostContext> {
    let notice: mypi::hooks::NoticeFn = Arc::new(|_| {});
    Arc::new(HostContext::standalone(cwd.to_path_buf(), notice))
}

/// A script with a tool, a handler and a command `/<cmd>` answering `text`.
fn script(ext: &str, cmd: &str, text: &str) -> String {
    if ext == "lua" {
        format!(
            r#"api.tool{{name = "t_{cmd}", description = "t", parameters = {{type = "object", properties = {{}}}},
  execute = function() return "{text}" end}}
api.on("tool_call", function(e) return nil end)
api.command("{cmd}", function() return "{text}" end, "bench")
"#
        )
    } else {
        format!(
            r#"api.tool(#{{name: "t_{cmd}", description: "t", parameters: #{{type: "object", properties: #{{}}}},
  execute: |args| "{text}"}});
api.on("tool_call", |e| ());
api.command("{cmd}", |args| "{text}", "bench");
"#
        )
    }
}

/// What `/<cmd>` answers now (None when it is not registered).
async fn answer(ctx: &HostContext, cmd: &str) -> Option<String> {
    let command = ctx.commands.lookup(cmd)?;
    match &command.action {
        Action::Handler(h) => h.call("", &ctx.session()).await.ok(),
        Action::Builtin(_) | Action::Prompt(_) => None,
    }
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// A fresh root with `n` extensions (`e0` .. `e{n-1}`), loaded into a new host.
fn loaded_host(
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    tag: &str,
    ext: &str,
    n: usize,
) -> (Arc<ExtensionHost>, Arc<HostContext>, PathBuf) {
    let root = dir.join(tag);
    std::fs::create_dir_all(&root).expect("mkdir");
    for i in 0..n {
        let cmd = format!("e{i}");
        std::fs::write(root.join(format!("{cmd}.{ext}")), script(ext, &cmd, "v0")).expect("write");
    }
    let ctx = context(dir);
    let host = Arc::new(ExtensionHost::new(ctx.clone()));
    let loaded = rt.block_on(host.load_all(discovery::discover(std::slice::from_ref(&root))));
    assert_eq!(loaded.len(), n);
    assert!(loaded.iter().all(|s| s.error.is_none()), "{loaded:?}");
    (host, ctx, root)
}

/// Write -> the watcher reloads -> `/e0` answers the new text, `SAVES` times.
fn end_to_end(rt: &tokio::runtime::Runtime, dir: &Path, ext: &str) -> (Duration, Duration) {
    let (host, ctx, root) = loaded_host(rt, dir, &format!("e2e-{ext}"), ext, 1);
    let file = root.join(format!("e0.{ext}"));
    let _watcher = {
        let _enter = rt.enter();
        reload::watch(host.clone(), vec![root.clone()]).expect("watch")
    };
    let mut samples = Vec::new();
    rt.block_on(async {
        // Let the watcher settle before the first save.
        tokio::time::sleep(Duration::from_millis(50)).await;
        for i in 1..=SAVES {
            let want = format!("v{i}");
            let start = Instant::now();
            std::fs::write(&file, script(ext, "e0", &want)).expect("write");
            loop {
                if answer(&ctx, "e0").await.as_deref() == Some(want.as_str()) {
                    break;
                }
                assert!(
                    start.elapsed() < Duration::from_secs(5),
                    "no reload of {want}"
                );
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            samples.push(start.elapsed());
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
    });
    host.unload_all();
    let max = *samples.iter().max().expect("samples");
    (median(samples), max)
}

/// `reload_named("e0")` and `sync(roots, [e0])` after an edit, with `n` extensions loaded.
fn reload_parts(
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    ext: &str,
    n: usize,
) -> (Duration, Duration) {
    let (host, ctx, root) = loaded_host(rt, dir, &format!("parts-{ext}-{n}"), ext, n);
    let file = root.join(format!("e0.{ext}"));
    let roots = vec![root];
    let (mut named, mut synced) = (Vec::new(), Vec::new());
    rt.block_on(async {
        for i in 1..=SAVES {
            let want = format!("n{i}");
            std::fs::write(&file, script(ext, "e0", &want)).expect("write");
            let start = Instant::now();
            let line = host.reload_named("e0").await.expect("reload");
            named.push(start.elapsed());
            assert!(line.starts_with("reloaded"), "{line}");
            assert_eq!(answer(&ctx, "e0").await.as_deref(), Some(want.as_str()));

            let want = format!("s{i}");
            std::fs::write(&file, script(ext, "e0", &want)).expect("write");
            let start = Instant::now();
            let lines = host.sync(&roots, std::slice::from_ref(&file)).await;
            synced.push(start.elapsed());
            assert_eq!(lines.len(), 1, "{lines:?}");
            assert_eq!(answer(&ctx, "e0").await.as_deref(), Some(want.as_str()));
        }
    });
    host.unload_all();
    (median(named), median(synced))
}

fn main() {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("mypi-bench-reload-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let dir = dir.canonicalize().expect("canonicalize");
    // One worker, as the binary's runtime has (src/main.rs).
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    println!(
        "hot reload, median over {SAVES} saves (debounce constant: {})",
        ms(DEBOUNCE)
    );
    for ext in ["lua", "rhai"] {
        let (e2e, e2e_max) = end_to_end(&rt, &dir, ext);
        let (named1, sync1) = reload_parts(&rt, &dir, ext, 1);
        let (named200, sync200) = reload_parts(&rt, &dir, ext, 200);
        let notify = e2e.saturating_sub(DEBOUNCE + sync1);
        println!("{ext}:");
        println!(
            "  write -> new /command answers: {} (max {})",
            ms(e2e),
            ms(e2e_max)
        );
        println!(
            "    = debounce {} + sync (discover, fingerprint, reload) {} + notification and polling {}",
            ms(DEBOUNCE),
            ms(sync1),
            ms(notify)
        );
        println!(
            "  reload_named one extension: {} with 1 loaded, {} with 200 loaded",
            ms(named1),
            ms(named200)
        );
        println!(
            "  sync after one file changed: {} with 1 loaded, {} with 200 loaded",
            ms(sync1),
            ms(sync200)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
