//! Tool exposure and search (`cargo bench --bench tool_search`), side by side in one run:
//! the bytes of tool definitions the first request carries (OpenAI encoding) with 400 MCP
//! tools of ~640 bytes each beside a small server of 10, all offered directly (before
//! issue 37) and under the default budget of direct tools (the big server deferred, the
//! small one direct, `tool_search` added); the same once a search found one tool; and the
//! latency of `tool_search` over 1,000 deferred tools (median per query, the index built
//! once, as it is kept while the tools stay the same). The extra model turn a search costs is
//! shown by `tests/suite/mcp_exposure.rs` with the faux model.
// Benchmark code: the shared util's system call (process CPU), and unwrap as a failed check.
#![allow(unsafe_code, clippy::unwrap_used)]

#[path = "util/mod.rs"]
mod util;

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use mypi::mcp::exposure::{Budget, Exposures, Planned, ServerTools};
use mypi::providers::openai::OpenAiProvider;
use mypi::providers::{ModelRequest, Provider};
use mypi::tools::search::ToolSearch;
use mypi::tools::{Exposure, Tool, ToolContext, ToolRegistry};
use mypi::vocab::owner::Owner;
use mypi::vocab::protocol::{ToolOutput, ToolSpec};
use serde_json::{json, Value};

/// An MCP server's tool as the registry sees it: a spec, a server, an exposure slot.
struct Fake {
    spec: ToolSpec,
    server: String,
    slot: Arc<AtomicU8>,
}

impl Tool for Fake {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn exposure(&self) -> Exposure {
        Exposure::from_u8(self.slot.load(Ordering::Acquire))
    }
    fn server(&self) -> Option<&str> {
        Some(&self.server)
    }
    fn call(&self, _args: Value, _ctx: ToolContext) -> BoxFuture<'static, ToolOutput> {
        Box::pin(async { ToolOutput::ok("") })
    }
}

const VERBS: [&str; 8] = [
    "create", "list", "get", "update", "delete", "search", "merge", "archive",
];
const NOUNS: [&str; 13] = [
    "issue",
    "branch",
    "commit",
    "label",
    "milestone",
    "comment",
    "release",
    "webhook",
    "deployment",
    "project",
    "team",
    "secret",
    "workflow",
];

/// The `i`th tool of a big server: ~640 bytes of definition, like a real one's.
fn spec(server: &str, i: usize) -> ToolSpec {
    let (verb, noun) = (VERBS[i % 8], NOUNS[(i / 8) % 13]);
    ToolSpec {
        name: format!("mcp__{server}__{verb}_{noun}_{i}"),
        description: format!(
            "{verb} a {noun} of the service (number {i}). It takes the owner and the \
             repository, and answers what the service said, as JSON, with the fields the \
             service sends back for one {noun}. Needs a token with access."
        ),
        parameters: json!({"type": "object", "properties": {
            "owner": {"type": "string", "description": "The account that owns it."},
            "repo": {"type": "string", "description": "The repository's name."},
            "id": {"type": "integer", "description": format!("The {noun}'s number.")},
            "body": {"type": "string", "description": format!("Text for the {noun}, in Markdown.")}
        }, "required": ["owner", "repo"]}),
    }
}

/// Registers `n` tools of `server` in `registry`; returns them as the plan sees them.
fn add_server(registry: &ToolRegistry, server: &str, n: usize) -> ServerTools {
    let mut planned = Vec::new();
    for i in 0..n {
        let spec = spec(server, i);
        let slot = Arc::new(AtomicU8::new(0));
        planned.push(Planned {
            tool: spec.name.clone(),
            bytes: serde_json::to_string(&spec).unwrap().len(),
            slot: slot.clone(),
        });
        let tool = Fake {
            spec,
            server: server.into(),
            slot,
        };
        registry.register(Owner::new(format!("mcp:{server}"), 0), Arc::new(tool));
    }
    ServerTools {
        config: Default::default(),
        tools: planned,
    }
}

/// The bytes of the `tools` of the request `registry` makes having found `found`.
fn tool_bytes(registry: &ToolRegistry, found: &[String]) -> (usize, usize) {
    let provider = OpenAiProvider::new("m", None, None);
    let offered = registry.offered(found);
    let count = offered.len();
    let request = ModelRequest {
        model: "m".into(),
        system_prompt: String::new(),
        messages: Vec::new().into(),
        tools: offered.iter().map(|e| e.spec()).collect(),
        max_tokens: None,
        cache_key: None,
        thinking: Default::default(),
    };
    let body = provider.payload(&request);
    (count, body["tools"].to_string().len())
}

fn main() {
    // Before: every tool direct.
    let registry = ToolRegistry::new();
    mypi::tools::register_builtins(&registry);
    let big = add_server(&registry, "big", 400);
    let small = add_server(&registry, "small", 10);
    let (n_all, all) = tool_bytes(&registry, &[]);
    // After: the default budget.
    let exposures = Exposures::default();
    exposures.set_budget(Budget::default());
    exposures.update("small", Some(small), &registry);
    exposures.update("big", Some(big), &registry);
    let (n_budget, budget) = tool_bytes(&registry, &[]);
    let found = ["mcp__big__create_issue_0".to_string()];
    let (n_found, with_found) = tool_bytes(&registry, &found);
    let kb = |b: usize| b as f64 / 1024.0;
    println!(
        "first request, 400 + 10 MCP tools and the 4 built-ins: all direct {n_all} tools, \
         {:.1} KB of definitions; with the budget (40 tools / 20 KB) {n_budget} tools, {:.1} KB \
         ({:.1} % of it); after one search found a tool: {n_found} tools, {:.1} KB",
        kb(all),
        kb(budget),
        budget as f64 / all as f64 * 100.0,
        kb(with_found),
    );
    search_latency();
}

/// Median latency of `tool_search` over 1,000 deferred tools.
fn search_latency() {
    let registry = ToolRegistry::new();
    let servers = add_server(&registry, "many", 1000);
    for t in &servers.tools {
        t.slot.store(Exposure::Deferred.to_u8(), Ordering::Release);
    }
    let search = ToolSearch::new(Arc::downgrade(&registry));
    let start = Instant::now();
    search.index(&registry);
    let build = start.elapsed();
    let queries = [
        "create an issue",
        "merge a pull request branch",
        "list releases of a repository",
        "delete webhook",
        "archive the team project",
        "search commits by message",
        "update milestone due date",
        "get a deployment secret",
        "workflow runs",
        "label",
    ];
    let mut times: Vec<Duration> = Vec::new();
    let mut hits = 0;
    for round in 0..200 {
        for q in queries {
            let start = Instant::now();
            let out = search.answer(&registry, q, 5);
            let took = start.elapsed();
            if round > 0 {
                times.push(took);
                hits += usize::from(out.details.is_some());
            }
        }
    }
    let p90 = {
        let mut t = times.clone();
        t.sort();
        t[t.len() * 9 / 10]
    };
    println!(
        "tool_search over 1,000 deferred tools: median {:.1} µs per query, 90th percentile \
         {:.1} µs ({} queries, {hits} with matches; the index built once in {:.2} ms)",
        util::median(times.clone()).as_secs_f64() * 1e6,
        p90.as_secs_f64() * 1e6,
        times.len(),
        build.as_secs_f64() * 1e3,
    );
}
