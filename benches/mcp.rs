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

/// The time of each call through mypi's manager.
async fn through_manager(index: &Path) -> Vec<Duration> {
    let config = ServerConfig {
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
    };
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
    let entry = Transport::Stdio {
        command: "node".into(),
        args: vec![index.display().to_string(), "stdio".into()],
        env: Default::default(),
        cwd: None,
    };
    let cwd = std::env::current_dir().expect("cwd");
    let spawned = mypi::mcp::stdio::spawn(&entry, &cwd, Arc::new(|_| {})).expect("spawn");
    let mut child = spawned.child;
    let client = rmcp::serve_client(info(), spawned.transport)
        .await
        .expect("initialize");
    let times = echo_calls(&client).await;
    let _ = client.cancel().await;
    let _ = child.kill().await;
    times
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
