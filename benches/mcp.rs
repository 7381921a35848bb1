//! MCP tool-call latency (`cargo bench --bench mcp`): 1,000 sequential `echo` calls to
//! `@modelcontextprotocol/server-everything` over stdio through mypi's [`Manager`] (its own
//! stdio transport, timeouts reset by progress, the agent's registry), through rmcp on
//! mypi's stdio transport, and through rmcp used directly on the child's (stdout, stdin),
//! back to back, each client on a fresh server of its own in each of several rounds; the
//! manager against rmcp's bare call on one connection (the same server process: no
//! difference between node processes); then `api.mcp.call` from a Lua loop against the
//! manager, each as the slope between batches of 5 and 10 calls (what starting and ending a
//! batch costs cancels out), in alternating rounds. The three clients are also compared on
//! the bench's own Rust echo server ([`mcp_echo`]), which answers in microseconds: there a
//! call's time is the client's own, without node's pace, which differs from one process to
//! the next by as much as the clients differ.
//! Prints the medians per call. The server comes from `MYPI_TEST_EVERYTHING` (its
//! `dist/index.js`); without it the bench says so and does nothing.
// Test and benchmark code: system calls for fixtures and measures, and unwrap as a failed check.
#![allow(unsafe_code, clippy::unwrap_used)]

#[path = "mcp_echo.rs"]
mod mcp_echo;
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
const FALLBACK: &str =
    "/tmp/conf/everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js";

fn main() {
    if std::env::args().any(|a| a == mcp_echo::FLAG) {
        return mcp_echo::serve();
    }
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let echo = rt.block_on(side_by_side(&Server::echo()));
    println!(
        "  (the client's own cost, against the bench's Rust echo server that answers in \
         microseconds: manager median {:.1} µs/call, rmcp on mypi's transport {:.1} µs/call, \
         rmcp direct {:.1} µs/call: {:+.1} %, the median round {:+.1} %)",
        echo.managed.as_secs_f64() * 1e6,
        echo.ours.as_secs_f64() * 1e6,
        echo.direct.as_secs_f64() * 1e6,
        (echo.managed.as_secs_f64() / echo.direct.as_secs_f64() - 1.0) * 100.0,
        (echo.ratio - 1.0) * 100.0,
    );
    let index = std::env::var_os("MYPI_TEST_EVERYTHING")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(FALLBACK));
    if !index.is_file() {
        println!(
            "mcp bench against server-everything skipped: it is not installed (set \
             MYPI_TEST_EVERYTHING to its dist/index.js)"
        );
        return;
    }
    against_everything(&rt, &Server::everything(&index));
}

/// The comparisons on server-everything, the issue's numbers last.
fn against_everything(rt: &tokio::runtime::Runtime, everything: &Server) {
    let side = rt.block_on(side_by_side(everything));
    let (same_manager, same_bare) = rt.block_on(same_connection(everything));
    let lua = rt.block_on(through_lua(everything));
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "  api.mcp.call from Lua: {:.3} ms/call; the manager in the same set-up: {:.3} ms/call \
         ({:+.3} ms; each the slope between {BATCH}- and {}-call batches, medians over \
         alternating rounds)",
        lua.slope * 1e3,
        lua.manager * 1e3,
        (lua.slope - lua.manager) * 1e3,
        2 * BATCH,
    );
    println!(
        "  (the older measure: a {BATCH}-call Lua loop less an empty one, {:.3} ms/call, against \
         the mean of {BATCH} manager calls, {:.3} ms/call: {:+.3} ms)",
        lua.less_empty * 1e3,
        ms(lua.manager_mean),
        lua.less_empty * 1e3 - ms(lua.manager_mean),
    );
    println!(
        "  (rmcp on mypi's own stdio transport, no manager: median {:.3} ms/call)",
        ms(side.ours)
    );
    println!(
        "  (on one connection, {CALLS} calls each in alternating batches of {SIDE_BATCH}: the \
         manager {:.3} ms/call, rmcp's bare call {:.3} ms/call: {:+.1} %)",
        ms(same_manager),
        ms(same_bare),
        (ms(same_manager) / ms(same_bare) - 1.0) * 100.0
    );
    println!(
        "mcp echo over stdio, {CALLS} sequential calls each on fresh servers in {ROUNDS} rounds: \
         manager median {:.3} ms/call, rmcp direct median {:.3} ms/call ({:+.1} %; the median \
         round: {:+.1} %)",
        ms(side.managed),
        ms(side.direct),
        (ms(side.managed) / ms(side.direct) - 1.0) * 100.0,
        (side.ratio - 1.0) * 100.0,
    );
}

/// Calls per batch when two clients take turns on one connection.
const SIDE_BATCH: usize = 10;
/// Rounds of the side-by-side comparison, each on three fresh server processes: one node
/// process can be steadily faster or slower than another for its whole life, by as much as
/// the difference measured, so each client's calls are spread over many processes.
const ROUNDS: usize = 16;

/// The three clients of one round, each on a server of its own.
struct Set {
    direct: (Client, tokio::process::Child),
    ours: (Client, Leftover),
    manager: Arc<Manager>,
}

impl Set {
    async fn start(server: &Server) -> Set {
        let (direct, ours, manager) = tokio::join!(
            rmcp_on_pipes(server),
            rmcp_on_our_transport(server),
            manager(server)
        );
        Set {
            direct,
            ours,
            manager,
        }
    }

    async fn stop(self) {
        self.manager.shutdown().await;
        let (direct, mut child) = self.direct;
        let (ours, mut leftover) = self.ours;
        let _ = direct.cancel().await;
        let _ = ours.cancel().await;
        let _ = child.kill().await;
        let _ = leftover.child.kill().await;
    }
}

/// What the side-by-side comparison measured: each client's median per call over all its
/// calls, and the median over the rounds of the manager's median against rmcp direct's.
struct SideBySide {
    managed: Duration,
    direct: Duration,
    ours: Duration,
    ratio: f64,
}

/// The median time per call through the manager, through rmcp on the child's pipes, and
/// through rmcp on mypi's own stdio transport. Each of [`ROUNDS`] rounds starts the three
/// on fresh servers; each then makes [`WARMUP`] calls, not counted, and [`CALLS`]
/// sequential calls, one client after the other (each client first in every third round:
/// drift in the machine's pace hits all three alike).
async fn side_by_side(server: &Server) -> SideBySide {
    let cancel = CancellationToken::new();
    let (mut m, mut d, mut o) = (Vec::new(), Vec::new(), Vec::new());
    let mut ratios = Vec::new();
    for round in 0..ROUNDS {
        let set = Set::start(server).await;
        let mut medians = [Duration::ZERO; 3];
        for turn in 0..3 {
            let kind = (round + turn) % 3;
            let n = WARMUP + CALLS;
            let mut times = match kind {
                0 => echo_calls(&set.direct.0, n).await,
                1 => echo_calls(&set.ours.0, n).await,
                _ => manager_echoes(&set.manager, n, &cancel).await,
            };
            // The warm-up calls do not count.
            let times = times.split_off(WARMUP);
            medians[kind] = util::median(times.clone());
            [&mut d, &mut o, &mut m][kind].extend(times);
        }
        ratios.push(medians[2].as_secs_f64() / medians[0].as_secs_f64());
        set.stop().await;
    }
    ratios.sort_by(f64::total_cmp);
    SideBySide {
        managed: util::median(m),
        direct: util::median(d),
        ours: util::median(o),
        ratio: ratios[ratios.len() / 2],
    }
}

/// The manager's calls and rmcp's bare calls on the same connection (one server process, so
/// that its pace, which differs from one node process to the next, does not count): the
/// medians per call, after a warm-up round.
async fn same_connection(server: &Server) -> (Duration, Duration) {
    let m = manager(server).await;
    let conn = m.conn("everything").await.expect("connected");
    let cancel = CancellationToken::new();
    let (mut managed, mut bare) = (Vec::new(), Vec::new());
    for round in 0..1 + CALLS / SIDE_BATCH {
        let warm = round == 0;
        for turn in 0..2 {
            let times = if (round + turn) % 2 == 0 {
                manager_echoes(&m, SIDE_BATCH, &cancel).await
            } else {
                let mut times = Vec::with_capacity(SIDE_BATCH);
                for _ in 0..SIDE_BATCH {
                    let start = Instant::now();
                    let r = conn
                        .call_tool_bare("echo", json!({"message": "hi"}))
                        .await
                        .expect("echo, bare");
                    times.push(start.elapsed());
                    assert!(r.to_string().contains("Echo: hi"), "{r}");
                }
                times
            };
            let into = if (round + turn) % 2 == 0 {
                &mut managed
            } else {
                &mut bare
            };
            into.extend(times.into_iter().filter(|_| !warm));
        }
    }
    m.shutdown().await;
    (util::median(managed), util::median(bare))
}

/// How to start a server: server-everything under node, or the bench's own echo server.
#[derive(Clone)]
struct Server {
    command: String,
    args: Vec<String>,
}

impl Server {
    fn everything(index: &Path) -> Server {
        Server {
            command: "node".into(),
            args: vec![index.display().to_string(), "stdio".into()],
        }
    }

    /// This bench binary as [`mcp_echo`]'s server.
    fn echo() -> Server {
        let exe = std::env::current_exe().expect("the bench's own path");
        Server {
            command: exe.display().to_string(),
            args: vec![mcp_echo::FLAG.into()],
        }
    }
}

/// The server's entry.
fn entry(server: &Server) -> ServerConfig {
    ServerConfig {
        name: "everything".into(),
        transport: Transport::Stdio {
            command: server.command.clone(),
            args: server.args.clone(),
            env: Default::default(),
            cwd: None,
        },
        enabled: true,
        timeout: Duration::from_secs(30),
        protocol: None,
        exposure: Default::default(),
        source: "bench".into(),
        oauth: Default::default(),
    }
}

/// mypi's manager with the server connected (its own stdio transport, timeouts reset by
/// progress, the agent's registry).
async fn manager(server: &Server) -> Arc<Manager> {
    let registry = Registry::new(
        mypi::tools::ToolRegistry::new(),
        mypi::commands::CommandTable::with_builtins(),
        Arc::new(|_| {}),
    );
    let cwd = std::env::current_dir().expect("cwd");
    let m = Manager::new(vec![entry(server)], cwd, Hooks::quiet(), registry);
    m.start();
    m.wait_connecting(Duration::from_secs(30)).await;
    m
}

type Client = rmcp::service::RunningService<rmcp::RoleClient, ClientConfig>;

/// rmcp on the child's pipes, nothing around it.
async fn rmcp_on_pipes(server: &Server) -> (Client, tokio::process::Child) {
    let mut child = tokio::process::Command::new(&server.command)
        .args(&server.args)
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
    (client, child)
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

/// rmcp on mypi's stdio transport, without the manager; the rest of the spawn (its process
/// group guard) lives as long as the client.
async fn rmcp_on_our_transport(server: &Server) -> (Client, Leftover) {
    let cwd = std::env::current_dir().expect("cwd");
    let spawned =
        mypi::mcp::stdio::spawn(&entry(server).transport, &cwd, Arc::new(|_| {})).expect("spawn");
    let client = rmcp::serve_client(info(), spawned.transport)
        .await
        .expect("initialize");
    let leftover = Leftover {
        child: spawned.child,
        _group: spawned.group,
        _stderr: spawned.stderr,
    };
    (client, leftover)
}

/// What a client on mypi's stdio transport needs kept.
struct Leftover {
    child: tokio::process::Child,
    _group: mypi::platform::process::Group,
    _stderr: mypi::mcp::stdio::StderrTail,
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

/// Calls per timed batch of the Lua comparison (a script has no wall clock finer than
/// seconds, so each loop is timed from outside). Batches are small and alternate with batches
/// through the manager, so that the server's own pace (node takes most of the CPU of a call,
/// and its speed drifts) hits both alike.
const BATCH: usize = 5;

/// What the Lua comparison measured.
struct LuaCalls {
    /// Seconds per `api.mcp.call`: the median over rounds of (a 2×[`BATCH`]-call loop less
    /// a [`BATCH`]-call loop) / [`BATCH`]; what calling the loop's command costs, and its
    /// first call's extra, cancel out.
    slope: f64,
    /// Seconds per call by the older measure: a [`BATCH`]-call loop less an empty one (the
    /// empty command's round trip is shorter than a full loop's start and end).
    less_empty: f64,
    /// Seconds per call through the manager, by the same slope.
    manager: f64,
    /// The mean time of one call through the manager in a [`BATCH`]-call batch, median over
    /// the rounds (what the older measure compared with).
    manager_mean: Duration,
}

/// `api.mcp.call` from a Lua loop, and calls through the manager, in the same set-up.
async fn through_lua(server: &Server) -> LuaCalls {
    use mypi::extensions::{discovery, host::ExtensionHost, services::HostContext};
    let dir = std::env::temp_dir().join(format!("mypi-bench-mcp-{}", std::process::id()));
    let root = dir.join("ext");
    std::fs::create_dir_all(&root).expect("mkdir");
    std::fs::write(root.join("bench.lua"), LUA_LOOP).expect("write");
    let mut ctx = HostContext::standalone(dir.clone(), Arc::new(|_| {}));
    let registry = Registry::new(ctx.tools.clone(), ctx.commands.clone(), Arc::new(|_| {}));
    let m = Manager::new(vec![entry(server)], dir.clone(), Hooks::quiet(), registry);
    m.start();
    m.wait_connecting(Duration::from_secs(30)).await;
    ctx.mcp = Arc::new(mypi::mcp::script::ScriptService {
        manager: m.clone(),
        hooks: ctx.hooks.clone(),
    });
    let ctx = Arc::new(ctx);
    let host = ExtensionHost::new(ctx.clone());
    let loaded = host.load_all(discovery::discover(&[root])).await;
    assert!(loaded.iter().all(|s| s.error.is_none()), "{loaded:?}");
    let run = ctx.session();
    let command = |name: &str| match ctx.commands.lookup(name).map(|c| c.action.clone()) {
        Some(mypi::commands::Action::Handler(h)) => h,
        _ => panic!("the {name} command"),
    };
    let (bench, servers) = (command("bench"), command("servers"));
    let measured = lua_rounds(&bench, &m, &run).await;
    // The same round trip into the host with no I/O behind it: what the hand-off costs.
    servers.call("100", &run).await.expect("warm-up");
    let start = Instant::now();
    servers
        .call(&CALLS.to_string(), &run)
        .await
        .expect("the servers loop");
    println!(
        "  api.mcp.servers() from Lua (a host round trip, no I/O): mean {:.3} ms/call",
        (start.elapsed() / CALLS as u32).as_secs_f64() * 1e3
    );
    host.unload_all();
    m.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
    measured
}

/// The rounds of the Lua comparison: an empty loop, a [`BATCH`]-call loop, a 2×[`BATCH`]
/// one, then [`BATCH`] and 2×[`BATCH`] calls through the manager; about [`CALLS`] Lua calls
/// in all.
async fn lua_rounds(
    bench: &Arc<dyn mypi::commands::CommandHandler>,
    m: &Manager,
    run: &Arc<mypi::vocab::run::RunContext>,
) -> LuaCalls {
    let lua_loop = |n: usize| async move {
        let start = Instant::now();
        bench.call(&n.to_string(), run).await.expect("the Lua loop");
        start.elapsed().as_secs_f64()
    };
    lua_loop(WARMUP).await;
    let cancel = CancellationToken::new();
    let (mut slope, mut less_empty) = (Vec::new(), Vec::new());
    let (mut managed, mut manager_mean) = (Vec::new(), Vec::new());
    for _ in 0..CALLS / (3 * BATCH) {
        let empty = lua_loop(0).await;
        let short = lua_loop(BATCH).await;
        let long = lua_loop(2 * BATCH).await;
        slope.push((long - short) / BATCH as f64);
        less_empty.push((short - empty) / BATCH as f64);
        let short: Duration = manager_echoes(m, BATCH, &cancel).await.iter().sum();
        let long: Duration = manager_echoes(m, 2 * BATCH, &cancel).await.iter().sum();
        managed.push((long.as_secs_f64() - short.as_secs_f64()) / BATCH as f64);
        manager_mean.push(short / BATCH as u32);
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    LuaCalls {
        slope: median(slope),
        less_empty: median(less_empty),
        manager: median(managed),
        manager_mean: util::median(manager_mean),
    }
}

/// The time of each of `n` echo calls through `manager`.
async fn manager_echoes(manager: &Manager, n: usize, cancel: &CancellationToken) -> Vec<Duration> {
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        let r = manager
            .call_tool("everything", "echo", json!({"message": "hi"}), cancel)
            .await
            .expect("echo through the manager");
        times.push(start.elapsed());
        assert!(r.to_string().contains("Echo: hi"), "{r}");
    }
    times
}

/// The time of each of `n` echo calls through `client`.
async fn echo_calls(client: &Client, n: usize) -> Vec<Duration> {
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let args = json!({"message": "hi"}).as_object().cloned();
        let mut params = CallToolRequestParams::new("echo");
        params.arguments = args;
        let start = Instant::now();
        let r = client.call_tool(params).await.expect("echo through rmcp");
        times.push(start.elapsed());
        assert!(!r.content.is_empty());
    }
    times
}
