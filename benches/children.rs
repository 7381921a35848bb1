//! Child agents (`cargo bench --bench children`): the time from asking the spawner for a child
//! (what `api.run_agent` does once its arguments are read) to that child's first model
//! request, and to its end, with the agent's 4 built-in tools and 40 more registered. The
//! model answers at once, in-process, so what is measured is mypi's own start of a child:
//! provider choice, tool subset, context, agent, hooks, request body.
// Test and benchmark code: system calls for fixtures and measures, and unwrap as a failed check.
#![allow(unsafe_code, clippy::unwrap_used)]

#[path = "util/mod.rs"]
mod util;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use mypi::agent::child::{ChildSpec, Spawner};
use mypi::app::children::{ChildParts, Children};
use mypi::config::{Config, Overrides};
use mypi::hooks::HookBus;
use mypi::providers::faux::FauxProvider;
use mypi::providers::{EventStream, Payload, Provider, ProviderError};
use mypi::tools::{Tool, ToolContext, ToolRegistry};
use mypi::vocab::protocol::{ToolOutput, ToolSpec};
use mypi::vocab::run::RunContext;
use serde_json::json;

const RUNS: usize = 2_000;

/// The faux model, noting when each request arrives.
struct Timed {
    inner: FauxProvider,
    first: Mutex<Option<Instant>>,
}

impl Provider for Timed {
    fn name(&self) -> &str {
        "faux"
    }

    fn model(&self) -> &str {
        "faux"
    }

    fn stream<'a>(
        &'a self,
        payload: &'a Payload,
    ) -> BoxFuture<'a, Result<Box<dyn EventStream>, ProviderError>> {
        *self.first.lock().expect("lock") = Some(Instant::now());
        self.inner.stream(payload)
    }
}

/// A tool that is only there to be offered.
struct Extra(ToolSpec);

impl Tool for Extra {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn call(&self, _args: serde_json::Value, _ctx: ToolContext) -> BoxFuture<'static, ToolOutput> {
        Box::pin(async { ToolOutput::ok("") })
    }
}

fn main() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let cwd = std::env::temp_dir();
    let config = Config::resolve(&Overrides::default(), &|_| None, cwd.clone()).expect("config");
    let tools = ToolRegistry::new();
    mypi::tools::register_builtins(&tools);
    for i in 0..40 {
        let spec = ToolSpec {
            name: format!("extra_{i}"),
            description: "an extra tool with a schema of a few fields".into(),
            parameters: json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}),
        };
        tools.register(mypi::vocab::owner::Owner::core(), Arc::new(Extra(spec)));
    }
    let provider = Arc::new(Timed {
        inner: FauxProvider::new(None),
        first: Mutex::new(None),
    });
    let children = Arc::new(Children::new(ChildParts {
        config,
        tools,
        hooks: HookBus::new(Arc::new(|_| {})),
        system_prompt: "You are a child.".into(),
        outlet: Arc::new(Discard),
        provider: provider.clone(),
        skills: mypi::config::sources::catalog::Catalog::new(16_000),
    }));
    // The parent runs the same model: its children share its provider.
    let parent = Arc::new(RunContext::new(
        cwd,
        mypi::vocab::run::RunMode::Print,
        String::new(),
        "faux".into(),
        tokio_util::sync::CancellationToken::new(),
        Arc::new(mypi::vocab::run::queue::Queues::new()),
    ));
    let (mut first, mut whole) = (Vec::with_capacity(RUNS), Vec::with_capacity(RUNS));
    for i in 0..RUNS + 100 {
        let spec = ChildSpec {
            task: "say hello".into(),
            ..ChildSpec::default()
        };
        let start = Instant::now();
        let (outcome, _record) = rt.block_on(children.run(spec, parent.clone(), None));
        let end = start.elapsed();
        assert!(outcome.error.is_none(), "{outcome:?}");
        let at = provider
            .first
            .lock()
            .expect("lock")
            .take()
            .expect("a request");
        if i >= 100 {
            first.push(at - start);
            whole.push(end);
        }
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "child agent, {RUNS} runs with 44 tools: to its first model request median {:.3} ms, \
         whole run (one faux reply) median {:.3} ms",
        ms(util::median(first)),
        ms(util::median(whole))
    );
}

/// An outlet that keeps nothing (no child here starts outside a tool call).
struct Discard;

impl mypi::agent::EventSink for Discard {
    fn emit(&self, _: mypi::vocab::protocol::AgentEvent) {}
}
