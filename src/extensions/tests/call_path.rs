//! Host-level tests of the call path: a whole handler chain is one job on the worker, with
//! the chaining rules kept, and an unchanged event comes back without a copy; and a fake
//! nested run, in which an extension that waits up the chain is not re-entered (its
//! handlers are skipped with one notice, its tools refuse) while the other extensions'
//! handlers run with the child's `ctx.depth`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::commands::Action;
use crate::extensions::discovery;
use crate::extensions::host::ExtensionHost;
use crate::extensions::services::HostContext;
use crate::hooks::HookEvent;
use crate::platform::testutil::TempDir;

fn host(dir: &TempDir, files: &[(&str, &str)]) -> (ExtensionHost, Arc<Mutex<Vec<String>>>) {
    let root = dir.0.join("ext");
    std::fs::create_dir_all(&root).unwrap();
    for (name, text) in files {
        std::fs::write(root.join(name), text).unwrap();
    }
    let notices = Arc::new(Mutex::new(Vec::new()));
    let n = notices.clone();
    let notice: crate::hooks::NoticeFn = Arc::new(move |m| n.lock().unwrap().push(m));
    let host = ExtensionHost::new(Arc::new(HostContext::standalone(dir.0.clone(), notice)));
    (host, notices)
}

async fn load(host: &ExtensionHost, dir: &TempDir) {
    let loaded = host
        .load_all(discovery::discover(&[dir.0.join("ext")]))
        .await;
    assert!(loaded.iter().all(|s| s.error.is_none()), "{loaded:?}");
}

fn tool_call(args: Value) -> HookEvent {
    HookEvent::ToolCall {
        id: "c1".into(),
        name: "bash".into(),
        args,
        about: Default::default(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extensions_handlers_for_one_event_run_in_one_job_with_the_chaining_rules() {
    let dir = TempDir::new("chain");
    let (host, notices) = host(
        &dir,
        &[(
            "chain.lua",
            r#"api.on("tool_call", function(e) return {updated_args = {step = 1}} end)
api.on("tool_call", function(e) return {updated_args = {step = e.args.step + 1}} end)
api.on("tool_call", function(e) error("this guard broke") end)
api.on("tool_call", function(e) return {updated_args = {step = 99}} end)
api.on("input", function(e) return {updated_input = e.text .. "!"} end)
api.on("input", function(e) return {block = true, reason = "stop at " .. e.text} end)
api.on("input", function(e) return {updated_input = "never"} end)"#,
        )],
    );
    load(&host, &dir).await;
    let worker = host.lock()[0].worker.clone().unwrap();
    let ctx = host.context().session();
    let before = worker.jobs_served();
    let out = host.context().hooks.emit(tool_call(json!({})), &ctx).await;
    assert_eq!(worker.jobs_served() - before, 1, "four handlers, one job");
    // Rewrites chain; the failing guard blocks (fail-closed) and stops the chain.
    let HookEvent::ToolCall { args, .. } = &out.event else {
        panic!()
    };
    assert_eq!(args, &json!({"step": 2}));
    let blocked = out.blocked.unwrap();
    assert!(blocked.contains("the guard chain failed"), "{blocked}");
    assert!(notices.lock().unwrap()[0].contains("this guard broke"));
    let input = HookEvent::Input {
        text: "hi".into(),
        source: crate::hooks::InputSource::User,
    };
    let out = host.context().hooks.emit(input, &ctx).await;
    assert_eq!(out.blocked.as_deref(), Some("stop at hi!"));
    host.unload_all();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_waiting_up_the_chain_is_not_re_entered_by_the_child_run() {
    let dir = TempDir::new("nested");
    let (host, notices) = host(
        &dir,
        &[
            (
                "a.lua",
                r#"api.command("outer", function() api.exec("sleep", {"2"}) return "outer done" end)
api.on("tool_call", function(e) return {block = true, reason = "a would block"} end)
api.tool{name = "a_tool", execute = function() return "a ran" end}"#,
            ),
            (
                "b.lua",
                r#"api.on("tool_call", function(e, ctx) return {updated_args = {depth = ctx.depth}} end)"#,
            ),
        ],
    );
    load(&host, &dir).await;
    let a = host.lock()[0].worker.clone().unwrap();
    let ctx = host.context().clone();
    let parent = ctx.session();
    // A's command runs (and blocks on the host) as if it had started a child agent.
    let outer = {
        let command = ctx.commands.lookup("outer").unwrap();
        let parent = parent.clone();
        tokio::spawn(async move {
            match &command.action {
                Action::Handler(h) => h.call("", &parent).await,
                _ => unreachable!(),
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let child = Arc::new(parent.child(Some(a.id), "m".into()));
    let start = Instant::now();
    for _ in 0..2 {
        let out = ctx.hooks.emit(tool_call(json!({})), &child).await;
        assert_eq!(out.blocked, None, "A's blocking handler was skipped");
        let HookEvent::ToolCall { args, .. } = &out.event else {
            panic!()
        };
        assert_eq!(args, &json!({"depth": 1}), "B ran with the child's depth");
    }
    let tool = ctx.tools.get("a_tool").unwrap();
    let refused = tool.tool.call(json!({}), child.clone()).await;
    assert!(
        refused.is_error && refused.content.contains("waiting for this run"),
        "{refused:?}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "the child waited for A: {:?}",
        start.elapsed()
    );
    let skipped: Vec<String> = notices
        .lock()
        .unwrap()
        .iter()
        .filter(|n| n.contains("waiting for this run"))
        .cloned()
        .collect();
    assert_eq!(skipped.len(), 1, "one notice per run: {skipped:?}");
    assert_eq!(outer.await.unwrap().unwrap(), "outer done");
    // Outside the child, A serves again.
    let out = ctx.hooks.emit(tool_call(json!({})), &parent).await;
    assert_eq!(out.blocked.as_deref(), Some("a would block"));
    host.unload_all();
}

/// The extension's thread keeps the event a chain rewrote until after its next answer (so
/// that it, not the caller, frees it); an event that comes back unchanged must be let go
/// before the answer, or the caller would have to copy it (holding it a moment too long
/// copies about one call in a few hundred; this runs 2,000).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unchanged_event_comes_back_without_a_copy_between_rewrites() {
    let dir = TempDir::new("nocopy");
    let (host, _) = host(
        &dir,
        &[(
            "maybe.lua",
            r#"api.on("tool_call", function(e)
  if e.args.rewrite then return {updated_args = {n = e.args.n + 1}} end
end)"#,
        )],
    );
    load(&host, &dir).await;
    let ctx = host.context().session();
    let hooks = host.context().hooks.clone();
    for n in 0..2000 {
        let big = "x".repeat(4096);
        let sent = big.as_ptr();
        let rewrite = n % 3 == 0;
        let mut args = json!({"rewrite": rewrite, "n": n});
        args["big"] = Value::String(big);
        let out = hooks.emit(tool_call(args), &ctx).await;
        let HookEvent::ToolCall { args, .. } = &out.event else {
            panic!()
        };
        if rewrite {
            assert_eq!(args, &json!({"n": n + 1}), "call {n}");
        } else {
            let back = args["big"].as_str().unwrap();
            assert_eq!(back.as_ptr(), sent, "call {n}: the event was copied");
        }
    }
    host.unload_all();
}
