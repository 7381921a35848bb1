//! Hot-path benchmarks (`cargo bench`): streaming many small deltas through the agent with no
//! hooks registered, emitting an event nobody subscribed to, and streaming 5,000, 20,000 and
//! 80,000 deltas of 21 characters with no subscriber and to a `message_update` subscriber that
//! does nothing in Lua and in Rhai (the cost per delta over none's, and whether it grows with
//! the text so far). A plain harness (median of repeated
//! runs, CPU time) keeps the build free of a benchmark framework.
// Test and benchmark code: system calls for fixtures and measures, and unwrap as a failed check.
#![allow(unsafe_code, clippy::unwrap_used)]

#[path = "util/mod.rs"]
mod util;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};
use util::*;

use futures_util::future::BoxFuture;
use mypi::agent::session::SessionSlot;
use mypi::agent::{Agent, AgentParts, EventSink};
use mypi::extensions::host::ExtensionHost;
use mypi::extensions::services::HostContext;
use mypi::hooks::{EventKind, HookBus, HookEvent, InputSource};
use mypi::providers::{EventStream, Payload, Provider, ProviderError, StreamEvent};
use mypi::tools::ToolRegistry;
use mypi::vocab::protocol::AgentEvent;
use mypi::vocab::run::RunContext;

const DELTAS: usize = 10_000;

struct Deltas(usize, &'static str);

struct DeltaStream(VecDeque<StreamEvent>);

impl EventStream for DeltaStream {
    fn next(&mut self) -> BoxFuture<'_, Option<Result<StreamEvent, ProviderError>>> {
        let e = self.0.pop_front().map(Ok);
        Box::pin(async move { e })
    }
}

impl Provider for Deltas {
    fn name(&self) -> &str {
        "bench"
    }
    fn model(&self) -> &str {
        "bench"
    }
    fn stream<'a>(
        &'a self,
        _payload: &'a Payload,
    ) -> BoxFuture<'a, Result<Box<dyn EventStream>, ProviderError>> {
        let mut events: VecDeque<StreamEvent> = (0..self.0)
            .map(|_| StreamEvent::TextDelta(self.1.to_string()))
            .collect();
        events.push_back(StreamEvent::Done { stop_reason: None });
        Box::pin(async move { Ok(Box::new(DeltaStream(events)) as Box<dyn EventStream>) })
    }
}

/// Forwards deltas the way a front end would (to a counter instead of a terminal).
struct CountingSink(std::sync::atomic::AtomicUsize);

impl EventSink for CountingSink {
    fn emit(&self, event: AgentEvent) {
        if let AgentEvent::TextDelta { delta } = event {
            self.0
                .fetch_add(delta.len(), std::sync::atomic::Ordering::Relaxed);
        }
    }
}

fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn bench_streaming(rt: &tokio::runtime::Runtime) {
    let hooks = HookBus::new(Arc::new(|_| {}));
    let mut agent = Agent::new(AgentParts {
        provider: Arc::new(Deltas(DELTAS, "ab")),
        tools: ToolRegistry::new(),
        hooks,
        cwd: std::env::temp_dir(),
        system_prompt: "bench".into(),
        session: SessionSlot::Off,
        messages: Vec::new(),
    });
    let sink = CountingSink(Default::default());
    let mut samples = Vec::new();
    for _ in 0..30 {
        agent.reset(SessionSlot::Off);
        let start = thread_cpu();
        rt.block_on(async {
            let out = agent
                .prompt(
                    "go",
                    InputSource::User,
                    &sink,
                    &Arc::new(RunContext::detached(std::env::temp_dir())),
                )
                .await;
            assert_eq!(out.map(|o| o.text.len()).unwrap_or(0), DELTAS * 2);
        });
        samples.push(thread_cpu() - start);
    }
    println!(
        "stream {DELTAS} deltas, no hooks: median {:.2} ms CPU per run (whole run incl. provider)",
        median(samples).as_secs_f64() * 1e3
    );
}

fn bench_unsubscribed_emit(rt: &tokio::runtime::Runtime) {
    let hooks = HookBus::new(Arc::new(|_| {}));
    let n = 1_000_000u32;
    let start = Instant::now();
    let mut hits = 0;
    for _ in 0..n {
        if hooks.has(std::hint::black_box(EventKind::MessageUpdate)) {
            hits += 1;
        }
    }
    let check = start.elapsed();
    let start = Instant::now();
    let ctx = Arc::new(RunContext::detached(std::env::temp_dir()));
    rt.block_on(async {
        for _ in 0..10_000 {
            let e = hooks.emit(HookEvent::TurnStart { turn: 1 }, &ctx).await;
            std::hint::black_box(e);
        }
    });
    let emit = start.elapsed();
    assert_eq!(hits, 0);
    println!(
        "event with no subscribers: has() {:.2} ns; emit() {:.0} ns",
        check.as_nanos() as f64 / n as f64,
        emit.as_nanos() as f64 / 10_000.0
    );
}

/// The subscribers measured: none, and a `message_update` handler that does nothing in Lua
/// and in Rhai (file name, source).
const SUBSCRIBERS: [(&str, Option<(&str, &str)>); 3] = [
    ("none", None),
    (
        "lua",
        Some(("noop.lua", r#"api.on("message_update", function(e) end)"#)),
    ),
    (
        "rhai",
        Some(("noop.rhai", r#"api.on("message_update", |e| {});"#)),
    ),
];

/// Process CPU to stream `n` deltas of 21 characters through the agent, with `script` (a
/// file name and its source) loaded as an extension.
fn stream_to_subscriber(
    rt: &tokio::runtime::Runtime,
    n: usize,
    script: Option<(&str, &str)>,
) -> Duration {
    let dir = std::env::temp_dir().join(format!("mypi-bench-mu-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    if let Some((file, source)) = script {
        std::fs::write(dir.join(file), source).expect("write script");
    }
    let notice: mypi::hooks::NoticeFn = Arc::new(|m| eprintln!("{m}"));
    let ctx = Arc::new(HostContext::standalone(dir.clone(), notice));
    let host = ExtensionHost::new(ctx.clone());
    let loaded = rt.block_on(host.load_all(mypi::extensions::discovery::discover(
        std::slice::from_ref(&dir),
    )));
    assert!(loaded.iter().all(|s| s.error.is_none()), "{loaded:?}");
    assert_eq!(loaded.len(), usize::from(script.is_some()));
    let mut agent = Agent::new(AgentParts {
        provider: Arc::new(Deltas(n, "0123456789abcdefghij ")),
        tools: ToolRegistry::new(),
        hooks: ctx.hooks.clone(),
        cwd: dir.clone(),
        system_prompt: "bench".into(),
        session: SessionSlot::Off,
        messages: Vec::new(),
    });
    let run = ctx.session();
    let start = process_cpu();
    let out = rt.block_on(async move {
        tokio::spawn(async move {
            let sink = CountingSink(Default::default());
            agent
                .prompt("go", InputSource::User, &sink, &run)
                .await
                .map(|o| o.text.len())
        })
        .await
        .expect("bench task")
    });
    let cpu = process_cpu() - start;
    assert_eq!(out.unwrap_or(0), n * 21);
    host.unload_all();
    let _ = std::fs::remove_dir_all(&dir);
    cpu
}

/// Process CPU per delta with no subscriber and with a do-nothing Lua and Rhai subscriber,
/// at 5,000, 20,000 and 80,000 deltas, runs interleaved; each figure over the no-subscriber
/// one of the same length (the budget: at most 1.6), and the same at every length (flat).
fn bench_subscriber_is_flat() {
    // One worker, as the binary's runtime has (src/main.rs).
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    const SIZES: [usize; 3] = [5_000, 20_000, 80_000];
    let mut cpu = vec![vec![Vec::new(); SIZES.len()]; SUBSCRIBERS.len()];
    for _ in 0..5 {
        for (s, (_, script)) in SUBSCRIBERS.iter().enumerate() {
            for (i, n) in SIZES.iter().enumerate() {
                cpu[s][i].push(stream_to_subscriber(&rt, *n, *script));
            }
        }
    }
    let us: Vec<Vec<f64>> = cpu
        .into_iter()
        .map(|per_size| {
            per_size
                .into_iter()
                .zip(SIZES)
                .map(|(runs, n)| median(runs).as_secs_f64() * 1e6 / n as f64)
                .collect()
        })
        .collect();
    println!("message_update subscriber that does nothing, process CPU per delta (median of 5):");
    for (s, (name, _)) in SUBSCRIBERS.iter().enumerate() {
        let row: Vec<String> = SIZES
            .iter()
            .enumerate()
            .map(|(i, n)| format!("{n}: {:.2} µs ({:.2}× none)", us[s][i], us[s][i] / us[0][i]))
            .collect();
        println!("  {name:<5} {}", row.join(", "));
    }
}

fn main() {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot build a runtime: {e}");
            std::process::exit(1);
        }
    };
    bench_streaming(&rt);
    bench_unsubscribed_emit(&rt);
    bench_subscriber_is_flat();
}
