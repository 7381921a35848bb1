//! MCP tool-call latency (`cargo bench --bench mcp`): 1,000 sequential `echo` calls to
//! `@modelcontextprotocol/server-everything` over stdio through mypi's [`Manager`] (its own
//! stdio transport, timeouts reset by progress, the agent's registry), and the same with rmcp
//! used directly on the child's (stdout, stdin), in the same run; prints both medians per call.
//! The server comes from `MYPI_TEST_EVERYTHING` (its `dist/index.js`); without it the bench
//! says so and does nothing.

#[path = "util/mod.rs"]
mod util;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mypi::mcp::config::{ServerConfig, Transport};
use mypi::mcp::{Hooks, Manager, Registry};
use rmcp::model::{CallToolRequestParams, ClientConfig};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const CALLS: usize = 1_000;
const WARMUP: usize = 50;
/// Rounds of each (interleaved, so load on the machine hits both alike).
const ROUNDS: usize = 2;
const FALLBACK: &str =
    "/tmp/conf/everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js";

fn main() {
    let index = std::env::var_os("MYPI_TEST_EVERYTHING")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(FALLBACK));
    if !index.is_file() {
        println!(
            "mcp bench skipped: server-everything is not installed (set MYPI_TEST_EVERYTHING \
             to its dist/index.js)"
        );
        return;
    }
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let (mut managed, mut direct, mut ours) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        direct.extend(rt.block_on(through_rmcp(&index, false)));
        managed.extend(rt.block_on(through_manager(&index)));
        ours.extend(rt.block_on(through_rmcp(&index, true)));
    }
    let (lua, manager_mean) = rt.block_on(through_lua(&index));
    println!(
        "  api.mcp.call from Lua: mean {:.3} ms/call; the manager in the same set-up: mean \
         {:.3} ms/call ({:+.3} ms)",
        lua.as_secs_f64() * 1e3,
        manager_mean.as_secs_f64() * 1e3,
        (lua.as_secs_f64() - manager_mean.as_secs_f64()) * 1e3
    );
    println!(
        "  (rmcp on mypi's own stdio transport, no manager: median {:.3} ms/call)",
        util::median(ours).as_secs_f64() * 1e3
    );
    let (m, d) = (util::median(managed), util::median(direct));
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "mcp echo over stdio, {CALLS} sequential calls x {ROUNDS}: manager median {:.3} ms/call, \
         rmcp direct median {:.3} ms/call ({:+.1} %)",
        ms(m),
        ms(d),
        (ms(m) / ms(d) - 1.0) * 100.0
    );
}

/// The server's entry.
fn entry(index: &Path) -> ServerConfig {
    ServerConfig {
        name: "everything".into(),
        transport: Transport::Stdio {
            command: "node".into(),
            args: vec![index.display().to_string(), "stdio".into()],
            env: Default::default(),
            cwd: None,
        },
        enabled: true,
        timeout: Duration::from_secs(30),
        protocol: None,
        source: "bench".into(),
    }
}

/// The time of each call through mypi's manager.
async fn through_manager(index: &Path) -> Vec<Duration> {
    let config = entry(index);
    let registry = Registry::new(
        mypi::tools::ToolRegistry::new(),
        mypi::commands::CommandTable::with_builtins(),
        Arc::new(|_| {}),
    );
    let cwd = std::env::current_dir().expect("cwd");
    let m = Manager::new(vec![config], cwd, Hooks::quiet(), registry);
    m.start();
    m.wait_connecting(Duration::from_secs(30)).await;
    let cancel = CancellationToken::new();
    let mut times = Vec::with_capacity(CALLS);
    for i in 0..WARMUP + CALLS {
        let start = Instant::now();
        let r = m
            .call_tool("everything", "echo", json!({"message": "hi"}), &cancel)
            .await
            .expect("echo through the manager");
        if i >= WARMUP {
            times.push(start.elapsed());
        }
        assert!(r.to_string().contains("Echo: hi"), "{r}");
    }
    m.shutdown().await;
    times
}

/// The time of each call with rmcp on the child's pipes (no timeout, nothing around it), or
/// (`ours`) on mypi's stdio transport.
async fn through_rmcp(index: &Path, ours: bool) -> Vec<Duration> {
    if ours {
        return through_our_transport(index).await;
    }
    let mut child = tokio::process::Command::new("node")
        .arg(index)
        .arg("stdio")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start server-everything");
    let stdout = child.stdout.take().expect("stdout");
    let stdin = child.stdin.take().expect("stdin");
    let client = rmcp::serve_client(info(), (stdout, stdin))
        .await
        .expect("initialize");
    let times = echo_calls(&client).await;
    let _ = client.cancel().await;
    let _ = child.kill().await;
    times
}

/// What the bench's own client says in `initialize` (what mypi says, under another name).
fn info() -> ClientConfig {
    serde_json::from_value(json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"roots": {"listChanged": false}, "elicitation": {"form": {}}},
        "clientInfo": {"name": "bench", "version": "0"},
    }))
    .expect("client config")
}

async fn through_our_transport(index: &Path) -> Vec<Duration> {
    let cwd = std::env::current_dir().expect("cwd");
    let spawned =
        mypi::mcp::stdio::spawn(&entry(index).transport, &cwd, Arc::new(|_| {})).expect("spawn");
    let mut child = spawned.child;
    let client = rmcp::serve_client(info(), spawned.transport)
        .await
        .expect("initialize");
    let times = echo_calls(&client).await;
    let _ = client.cancel().await;
    let _ = child.kill().await;
    times
}

const LUA_LOOP: &str = r#"
api.command("bench", function(args, ctx)
  for i = 1, tonumber(args) do
    local r = api.mcp.call("everything", "echo", { message = "hi" })
    if r.text ~= "Echo: hi" then error("unexpected: " .. r.text) end
  end
  return "ok"
end)
api.command("servers", function(args, ctx)
  for i = 1, tonumber(args) do api.mcp.servers() end
  return "ok"
end)
"#;

/// The mean time of one `api.mcp.call` from a Lua loop (a script has no wall clock finer
/// than seconds, so the loop is timed from outside), and of one call through the manager in
/// the same set-up.
async fn through_lua(index: &Path) -> (Duration, Duration) {
    use mypi::extensions::{discovery, host::ExtensionHost, services::HostContext};
    let dir = std::env::temp_dir().join(format!("mypi-bench-mcp-{}", std::process::id()));
    let root = dir.join("ext");
    std::fs::create_dir_all(&root).expect("mkdir");
    std::fs::write(root.join("bench.lua"), LUA_LOOP).expect("write");
    let ctx = Arc::new(HostContext::standalone(dir.clone(), Arc::new(|_| {})));
    let registry = Registry::new(ctx.tools.clone(), ctx.commands.clone(), Arc::new(|_| {}));
    let m = Manager::new(vec![entry(index)], dir.clone(), Hooks::quiet(), registry);
    m.start();
    m.wait_connecting(Duration::from_secs(30)).await;
    ctx.set_mcp(m.clone());
    let host = ExtensionHost::new(ctx.clone());
    let loaded = host.load_all(discovery::discover(&[root])).await;
    assert!(loaded.iter().all(|s| s.error.is_none()), "{loaded:?}");
    let command = ctx.commands.lookup("bench").expect("the bench command");
    let mypi::commands::Action::Handler(h) = &command.action else {
        panic!("a script command")
    };
    let run = ctx.session();
    h.call(&WARMUP.to_string(), &run).await.expect("warm-up");
    let start = Instant::now();
    h.call(&CALLS.to_string(), &run)
        .await
        .expect("the Lua loop");
    let lua = start.elapsed() / CALLS as u32;
    // The same round trip into the host with no I/O behind it: what the hand-off costs.
    let servers = ctx.commands.lookup("servers").expect("the servers command");
    let mypi::commands::Action::Handler(h) = &servers.action else {
        panic!("a script command")
    };
    h.call("100", &run).await.expect("warm-up");
    let start = Instant::now();
    h.call(&CALLS.to_string(), &run)
        .await
        .expect("the servers loop");
    println!(
        "  api.mcp.servers() from Lua (a host round trip, no I/O): mean {:.3} ms/call",
        (start.elapsed() / CALLS as u32).as_secs_f64() * 1e3
    );
    let cancel = CancellationToken::new();
    let start = Instant::now();
    for _ in 0..CALLS {
        m.call_tool("everything", "echo", json!({"message": "hi"}), &cancel)
            .await
            .expect("echo through the manager");
    }
    let direct = start.elapsed() / CALLS as u32;
    host.unload_all();
    m.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
    (lua, direct)
}

async fn echo_calls(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ClientConfig>,
) -> Vec<Duration> {
    let mut times = Vec::with_capacity(CALLS);
    for i in 0..WARMUP + CALLS {
        let args = json!({"message": "hi"}).as_object().cloned();
        let mut params = CallToolRequestParams::new("echo");
        params.arguments = args;
        let start = Instant::now();
        let r = client.call_tool(params).await.expect("echo through rmcp");
        if i >= WARMUP {
            times.push(start.elapsed());
        }
        assert!(!r.content.is_empty());
    }
    times
}
