//! The `code` tool (code mode): the model writes a Lua script that calls tools, filters and
//! combines their results, and returns only what it needs, in one model turn instead of one
//! per call. The script runs in a fresh sandboxed VM ([`super::lua::code`]) on a thread of its
//! own, under its budgets (`[code_mode]`: script time, memory, printed bytes, and the call's
//! wall clock); each `tools.NAME(args)` it makes is a nested call through the hooks
//! ([`crate::agent::calls::Nested`]), run on the async runtime while the script's thread
//! waits (a host wait: not script time). The nested calls' reports reach the agent in
//! batches ([`crate::vocab::run::NestedReports`]), all of them before the result. The run's cancellation stops
//! the script and the calls it started.
//!
//! The result is what the script printed, then what it returned (text as it is, anything
//! else as JSON); its `details` list the nested calls (`calls`), which the session keeps
//! with the result.

use std::sync::{Arc, Weak};

use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::lua::code::{self, Answer, CodeLimits, Request};
use crate::agent::calls::Nested;
use crate::config::CodeMode;
use crate::hooks::HookBus;
use crate::tools::search::{self, Cache};
use crate::tools::{Exposure, Tool, ToolContext, ToolRegistry, MAX_OUTPUT_BYTES};
use crate::vocab::protocol::{ToolOutput, ToolSpec};
use crate::vocab::run::{NestedSender, RunContext};

/// The tool's name.
pub const CODE_TOOL: &str = "code";

/// Nested calls listed in a result's details (the rest are counted).
const LISTED: usize = 200;
/// Characters of a nested call's result kept in the details.
const KEPT: usize = 2000;
/// The stack of a script's thread (as an extension worker's: deep native recursion in a
/// smaller one could abort the process).
const STACK: usize = 8 << 20;

const DESCRIPTION: &str = "Run a Lua 5.4 script that calls tools and returns only what you \
need: chain several calls, filter and combine their results in one step instead of one turn \
per call. In the script: tools.NAME(args) calls any tool (args is a table shaped like the \
tool's JSON arguments) and returns its result text and details; mcp.SERVER.TOOL(args) calls \
an MCP server's tool, including tools offered only here; search_tools(query) lists matching \
tools as {name, call, description, parameters}; json.decode(text), json.encode(value); \
print(...) adds lines to the result. A failed call raises an error naming it (pcall catches \
it). The result is what the script printed, then what it returned (as JSON). There is no \
file or process access except through tools.";

/// The `code` tool of one registry.
pub struct CodeTool {
    spec: ToolSpec,
    nested: Nested,
    config: CodeMode,
    index: Cache,
}

impl CodeTool {
    pub fn new(tools: Weak<ToolRegistry>, hooks: Arc<HookBus>, config: CodeMode) -> CodeTool {
        CodeTool {
            spec: ToolSpec {
                name: CODE_TOOL.into(),
                description: format!(
                    "{DESCRIPTION} A script has {:.1} s of CPU time and {}.",
                    config.budget.as_secs_f64(),
                    crate::vocab::text::mib(config.memory_bytes)
                ),
                parameters: json!({"type": "object", "properties": {
                    "script": {"type": "string", "description": "the Lua 5.4 script"}
                }, "required": ["script"]}),
            },
            nested: Nested {
                tools,
                hooks,
                caller: CODE_TOOL.into(),
            },
            config,
            index: Cache::default(),
        }
    }
}

impl Tool for CodeTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn with_indirect(&self) -> bool {
        self.config.enabled.is_none()
    }

    fn rebind(&self, registry: Weak<ToolRegistry>) -> Option<Arc<dyn Tool>> {
        let hooks = self.nested.hooks.clone();
        Some(Arc::new(CodeTool::new(registry, hooks, self.config)))
    }

    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, ToolOutput> {
        let script = args["script"].as_str().unwrap_or("").to_string();
        let host = Host {
            nested: self.nested.clone(),
            index: self.index.clone(),
            parent: ctx.call_id.clone().unwrap_or_default(),
            ctx: ctx.clone(),
            reports: NestedSender::default(),
            calls: Vec::new(),
            total: 0,
            handle: tokio::runtime::Handle::current(),
        };
        let config = self.config;
        Box::pin(async move { run(script, host, config, ctx).await })
    }
}

/// Runs the script on its own thread, within the wall clock; a cancelled run stops it.
async fn run(script: String, mut host: Host, config: CodeMode, ctx: ToolContext) -> ToolOutput {
    let stop = ctx.cancel.child_token();
    let script_ctx = Arc::new(ctx.with_cancel(stop.clone()));
    host.ctx = script_ctx.clone();
    let reports = ctx.nested_reports();
    host.reports = reports.sender();
    let limits = CodeLimits {
        budget: config.budget,
        memory_bytes: config.memory_bytes,
        output_bytes: MAX_OUTPUT_BYTES,
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("mypi-code".into())
        .stack_size(STACK)
        .spawn(move || {
            let out = code::run(&script, limits, script_ctx, &mut |r| host.answer(r));
            let _ = tx.send((out, host.calls, host.total));
        });
    if let Err(e) = spawned {
        return ToolOutput::error(format!("cannot start the script's thread: {e}"));
    }
    let _stop_on_drop = stop.clone().drop_guard();
    // A cancelled run says so even when the script, stopped by the same cancellation, has
    // already answered with its own error.
    let ended = tokio::select! {
        biased;
        _ = ctx.cancel.cancelled() => Err("stopped: the call was cancelled".to_string()),
        done = rx => done.map_err(|_| "the script's thread crashed".to_string()),
        _ = tokio::time::sleep(config.timeout) => Err(format!(
            "stopped after {} s (the code call's time limit, [code_mode] timeout_s)",
            config.timeout.as_secs()
        )),
    };
    // The reports of the calls made so far, before the result (a stopped script's later
    // ones are dropped, as the agent would drop them after the result).
    reports.finish().await;
    let (out, calls, total) = match ended {
        Ok(done) => done,
        Err(why) => return ToolOutput::error(why),
    };
    let mut output = match out {
        Ok(ran) => ToolOutput::ok(shown(&ran.printed, &ran.value)),
        Err(failed) => {
            let mut text = failed.message;
            if !failed.printed.is_empty() {
                text.push_str("\nprinted before:\n");
                text.push_str(failed.printed.trim_end());
            }
            ToolOutput::error(text)
        }
    };
    if total > 0 {
        output.details = Some(json!({"calls": calls, "calls_total": total}));
    }
    output
}

/// The result's text: the printed lines, then the returned value.
fn shown(printed: &str, value: &Value) -> String {
    let value = match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        v => v.to_string(),
    };
    let text = match (printed.trim_end(), value.as_str()) {
        ("", "") => "(the script printed nothing and returned nothing)".to_string(),
        (p, "") => p.to_string(),
        ("", v) => v.to_string(),
        (p, v) => format!("{p}\n{v}"),
    };
    text
}

/// What answers a script's requests, on the script's thread.
struct Host {
    nested: Nested,
    index: Cache,
    /// The `code` call's id.
    parent: String,
    ctx: Arc<RunContext>,
    /// Where the nested calls' reports go.
    reports: NestedSender,
    /// The nested calls so far (the first [`LISTED`]), and how many there were.
    calls: Vec<Value>,
    total: usize,
    handle: tokio::runtime::Handle,
}

impl Host {
    fn answer(&mut self, request: Request) -> Answer {
        match request {
            Request::Tool { name, args } => self.call(&name, args),
            Request::Mcp { server, tool, args } => {
                let name = self.mcp_name(&server, &tool)?;
                self.call(&name, args)
            }
            Request::Search { query, limit } => Ok(vec![self.search(&query, limit)]),
        }
    }

    /// One nested call, waited for on this thread (stopped when the run is).
    fn call(&mut self, name: &str, args: Value) -> Answer {
        self.total += 1;
        let id = format!("{}.{}", self.parent, self.total);
        let (nested, ctx, reports) = (&self.nested, &self.ctx, &self.reports);
        let done = self.handle.block_on(async {
            tokio::select! {
                done = nested.call(&self.parent, &id, name, args, ctx, reports) => Some(done),
                _ = ctx.cancel.cancelled() => None,
            }
        });
        let Some(done) = done else {
            return Err("stopped: the call was cancelled".into());
        };
        let out = done.output;
        if self.calls.len() < LISTED {
            self.calls.push(json!({
                "id": id,
                "name": name,
                "arguments": done.args,
                "result": crate::vocab::text::truncate_middle(&out.content, KEPT),
                "is_error": out.is_error,
            }));
        }
        if out.is_error {
            return Err(out.content);
        }
        Ok(vec![
            Value::String(out.content),
            out.details.unwrap_or(Value::Null),
        ])
    }

    fn registry(&self) -> Result<Arc<ToolRegistry>, String> {
        self.nested
            .tools
            .upgrade()
            .ok_or_else(|| "mypi is shutting down".to_string())
    }

    /// The agent name of `server`'s tool `tool` (`mcp__server__tool`, or the suffixed name
    /// it got when that collided).
    fn mcp_name(&self, server: &str, tool: &str) -> Result<String, String> {
        let registry = self.registry()?;
        let plain = format!(
            "mcp__{}__{}",
            crate::vocab::text::identifier(server),
            crate::vocab::text::identifier(tool)
        );
        let of_server: Vec<String> = (registry.active().into_iter())
            .filter(|e| e.tool.server() == Some(server))
            .map(|e| e.spec().name.clone())
            .collect();
        if let Some(name) = of_server.iter().find(|n| **n == plain) {
            return Ok(name.clone());
        }
        let suffix = format!("__{}", crate::vocab::text::identifier(tool));
        let mut near = of_server.iter().filter(|n| n.contains(&suffix));
        match (near.next(), near.next()) {
            (Some(name), None) => Ok(name.clone()),
            _ if of_server.is_empty() => Err(format!(
                "no MCP server '{server}' (or it has no tools yet); search_tools finds the tools"
            )),
            _ => Ok(plain),
        }
    }

    /// `search_tools`: every tool a script can call, ranked by BM25 (deferred and
    /// `code`-only ones too; servers still connecting are waited for).
    fn search(&self, query: &str, limit: usize) -> Value {
        let Ok(registry) = self.registry() else {
            return json!([]);
        };
        self.handle.block_on(registry.settle_late());
        let index = search::index(&self.index, &registry);
        let keep = |e: &crate::tools::ToolEntry| {
            let name = &e.spec().name;
            name != CODE_TOOL
                && registry.is_active(name)
                && registry.exposure_of(e) != Exposure::Hidden
        };
        let hits = index.search(query, limit, keep);
        let found: Vec<Value> = hits
            .iter()
            .map(|e| {
                let spec = e.spec();
                let ident = spec
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_');
                let call = match ident {
                    true => format!("tools.{}", spec.name),
                    false => format!("tools[{:?}]", spec.name),
                };
                json!({
                    "name": spec.name,
                    "call": call,
                    "server": e.tool.server(),
                    "description": crate::vocab::text::one_line(&spec.description, 400),
                    "parameters": spec.parameters,
                })
            })
            .collect();
        Value::Array(found)
    }
}
