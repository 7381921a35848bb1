//! Script handlers, tools and commands as entries of the Rust registries. Each proxy holds the
//! extension's worker and the script callback, and turns a registry call into a job on the
//! worker with the calling run's context. Handlers of one extension for one event run as one
//! chain in one job ([`HandlerGroup`]).
//!
//! A run records the workers waiting up its chain (a handler or tool that started a child
//! agent and blocks until it ends). Such a worker is never re-entered: its handlers are skipped
//! for that run (with one notice per run) and its tools refuse with an error the model reads.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::api::CallbackId;
use super::worker::{Chain, Worker};
use crate::commands::{CommandError, CommandHandler};
use crate::hooks::{Emitted, HandlerGroup, HookError, HookEvent, HookHandler, NoticeFn};
use crate::owner::Owner;
use crate::protocol::{ToolOutput, ToolSpec};
use crate::run::RunContext;
use crate::tools::{Tool, ToolContext};

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
