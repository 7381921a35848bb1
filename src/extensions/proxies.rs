//! Script handlers, tools, commands and renderers as entries of the Rust registries. Each proxy
//! holds the extension's worker and the script callback, and turns a registry call into a job
//! on the worker with the calling run's context. Handlers of one extension for one event run
//! as one chain in one job ([`HandlerGroup`]).
//!
//! A run records the workers waiting up its chain (a handler or tool that started a child
//! agent and blocks until it ends). Such a worker is never re-entered: its handlers are skipped
//! for that run (with one notice per run) and its tools refuse with an error the model reads.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::script::CallbackId;
use super::worker::{Chain, Worker};
use crate::commands::{CommandError, CommandHandler};
use crate::hooks::{Emitted, HandlerGroup, HookError, HookEvent, HookHandler, NoticeFn};
use crate::tools::renderers::{RenderFuture, Renderer};
use crate::tools::{Tool, ToolContext};
use crate::vocab::owner::Owner;
use crate::vocab::protocol::{ToolOutput, ToolSpec};
use crate::vocab::run::RunContext;

/// Why a worker waiting up the chain cannot serve a call of this run.
fn waiting_error(worker: &Worker) -> String {
    format!(
        "{} is waiting for this run to end (one of its calls started it), so it cannot serve \
         it; its handlers are skipped and its tools refuse inside it",
        worker.name
    )
}

pub(super) struct HookProxy {
    pub worker: Arc<Worker>,
    pub cb: CallbackId,
}

impl HookHandler for HookProxy {
    fn call(
        &self,
        event: &HookEvent,
        ctx: &Arc<RunContext>,
    ) -> BoxFuture<'static, Result<Option<Value>, HookError>> {
        let (worker, cb, ctx) = (self.worker.clone(), self.cb, ctx.clone());
        let args = vec![event.to_value()];
        Box::pin(async move {
            if ctx.is_waiting(worker.id) {
                return Ok(None);
            }
            match worker.call(cb, args, ctx, worker.limits.budget).await {
                Ok(Value::Null) => Ok(None),
                Ok(v) => Ok(Some(v)),
                Err(e) => Err(HookError::new(e.message)),
            }
        })
    }

    fn group(&self) -> Option<&dyn HandlerGroup> {
        Some(self)
    }
}

impl HandlerGroup for HookProxy {
    fn key(&self) -> u64 {
        self.worker.id
    }

    fn member(&self) -> u64 {
        self.cb
    }

    fn run(
        &self,
        members: Vec<u64>,
        event: HookEvent,
        owner: Owner,
        notice: NoticeFn,
        ctx: &Arc<RunContext>,
    ) -> BoxFuture<'static, Emitted> {
        let (worker, ctx) = (self.worker.clone(), ctx.clone());
        Box::pin(async move {
            if ctx.is_waiting(worker.id) {
                if ctx.first_skip(worker.id) {
                    notice(waiting_error(&worker));
                }
                return Emitted {
                    event,
                    blocked: None,
                };
            }
            let chain = Chain {
                callbacks: members,
                event: Arc::new(event),
                owner,
                notice,
            };
            worker.chain(chain, ctx).await
        })
    }
}

pub(super) struct ToolProxy {
    pub spec: ToolSpec,
    pub parallel_safe: bool,
    pub budget: Duration,
    pub worker: Arc<Worker>,
    pub cb: CallbackId,
}

impl Tool for ToolProxy {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn parallel_safe(&self) -> bool {
        self.parallel_safe
    }

    fn usable(&self, ctx: &RunContext) -> bool {
        !ctx.is_waiting(self.worker.id)
    }

    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, ToolOutput> {
        let (worker, cb, budget) = (self.worker.clone(), self.cb, self.budget);
        let name = self.spec.name.clone();
        Box::pin(async move {
            if ctx.is_waiting(worker.id) {
                return ToolOutput::error(format!(
                    "the tool '{name}' cannot run here: {}",
                    waiting_error(&worker)
                ));
            }
            if ctx.cancel.is_cancelled() {
                return ToolOutput::error("cancelled");
            }
            match worker.call(cb, vec![args], ctx, budget).await {
                Ok(v) => tool_output(v),
                Err(e) => ToolOutput::error(e.message),
            }
        })
    }
}

/// A tool's return value as output: a string, `{content, is_error?, details?}` (the model
/// sees `content`; `details` is kept with the result), or any value as JSON.
fn tool_output(v: Value) -> ToolOutput {
    match v {
        Value::String(s) => ToolOutput::ok(s),
        Value::Null => ToolOutput::ok(""),
        Value::Object(mut map) if map.get("content").is_some_and(Value::is_string) => ToolOutput {
            content: match map.remove("content") {
                Some(Value::String(s)) => s,
                _ => String::new(),
            },
            is_error: map
                .get("is_error")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            images: Vec::new(),
            details: map.remove("details").filter(|d| !d.is_null()),
        },
        other => ToolOutput::ok(other.to_string()),
    }
}

pub(super) struct CommandProxy {
    pub worker: Arc<Worker>,
    pub cb: CallbackId,
}

impl CommandHandler for CommandProxy {
    fn call(
        &self,
        args: &str,
        ctx: &Arc<RunContext>,
    ) -> BoxFuture<'static, Result<String, CommandError>> {
        let (worker, cb, ctx) = (self.worker.clone(), self.cb, ctx.clone());
        let args = vec![Value::String(args.to_string())];
        Box::pin(async move {
            if ctx.is_waiting(worker.id) {
                return Err(CommandError(waiting_error(&worker)));
            }
            match worker.call(cb, args, ctx, worker.limits.budget).await {
                Ok(Value::String(s)) => Ok(s),
                Ok(Value::Null) => Ok(String::new()),
                Ok(other) => Ok(other.to_string()),
                Err(e) => Err(CommandError(e.message)),
            }
        })
    }
}

/// `api.renderer(tool, {call, result})`: each function present renders its line.
pub(super) struct RendererProxy {
    pub worker: Arc<Worker>,
    pub call: Option<CallbackId>,
    pub result: Option<CallbackId>,
}

impl RendererProxy {
    /// Calls the renderer's `which` function `cb`: its string, nil for the default, or why
    /// not. A worker waiting up the chain is not asked (the default, quietly).
    fn ask(
        &self,
        which: &'static str,
        cb: CallbackId,
        args: Vec<Value>,
        ctx: &Arc<RunContext>,
    ) -> RenderFuture {
        let (worker, ctx) = (self.worker.clone(), ctx.clone());
        Box::pin(async move {
            if ctx.is_waiting(worker.id) {
                return Ok(None);
            }
            match worker.call(cb, args, ctx, worker.limits.budget).await {
                Ok(Value::String(s)) => Ok(Some(s)),
                Ok(Value::Null) => Ok(None),
                Ok(other) => Err(format!(
                    "{}: its {which} function returned {}, not a string or nil",
                    worker.path(),
                    kind_of(&other)
                )),
                Err(e) => Err(e.message),
            }
        })
    }
}

impl Renderer for RendererProxy {
    fn call(&self, args: &Value, ctx: &Arc<RunContext>) -> Option<RenderFuture> {
        let cb = self.call?;
        Some(self.ask("call", cb, vec![args.clone()], ctx))
    }

    fn result(
        &self,
        content: &str,
        details: Option<&Value>,
        ctx: &Arc<RunContext>,
    ) -> Option<RenderFuture> {
        let cb = self.result?;
        let args = vec![
            Value::String(content.to_string()),
            details.cloned().unwrap_or(Value::Null),
        ];
        Some(self.ask("result", cb, args, ctx))
    }
}

/// A value's kind as scripts say it.
fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "nil",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) | Value::Object(_) => "a table",
    }
}
