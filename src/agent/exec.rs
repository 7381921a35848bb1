//! One batch of tool calls from a model reply: each call goes through the `tool_call` hook
//! (block / rewrite arguments) and schema validation in call order, then the calls run
//! (consecutive parallel-safe calls together, the others one at a time), then each result
//! goes through the `tool_result` hook. Results come back in call order.

use std::sync::Arc;

use serde_json::Value;
use tokio::task::JoinHandle;

use super::{Agent, EventSink};
use crate::hooks::{EventKind, HookEvent};
use crate::protocol::{AgentEvent, Message, ToolCall, ToolOutput};
use crate::run::RunContext;
use crate::text::truncate_middle;
use crate::tools::{ToolEntry, MAX_OUTPUT_BYTES};

/// A call after its hooks: ready to run, or already answered (blocked, invalid).
enum Prepared {
    Run { entry: Arc<ToolEntry>, args: Value },
    Answered(ToolOutput),
}

impl Agent {
    pub(super) async fn run_tools(
        &self,
        calls: &[ToolCall],
        sink: &dyn EventSink,
        ctx: &Arc<RunContext>,
    ) -> Vec<Message> {
        let mut prepared = Vec::with_capacity(calls.len());
        let mut final_args = Vec::with_capacity(calls.len());
        for call in calls {
            let (p, args) = self.prepare(call, ctx).await;
            sink.emit(AgentEvent::ToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: args.clone(),
            });
            prepared.push(p);
            final_args.push(args);
        }
        let outputs = self.execute(prepared, ctx).await;
        let mut results = Vec::with_capacity(calls.len());
        for ((call, args), output) in calls.iter().zip(final_args).zip(outputs) {
            let output = self.after(call, args, output, ctx).await;
            sink.emit(AgentEvent::ToolResult {
                id: call.id.clone(),
                name: call.name.clone(),
                content: output.content.clone(),
                is_error: output.is_error,
            });
            results.push(Message::tool_result(call, &output));
        }
        results
    }

    /// Hooks and validation for one call; returns it with the arguments it will run with.
    async fn prepare(&self, call: &ToolCall, ctx: &Arc<RunContext>) -> (Prepared, Value) {
        if let Some(raw) = &call.invalid_arguments {
            let why = serde_json::from_str::<Value>(raw)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            let msg = format!(
                "the arguments for '{}' are not valid JSON ({why}): {}. Call the tool again with \
                 one JSON object that matches its parameters.",
                call.name,
                truncate_middle(raw, 400)
            );
            return (Prepared::Answered(ToolOutput::error(msg)), Value::Null);
        }
        let Some(entry) = self.tools.get(&call.name) else {
            let names: Vec<String> = self.tools.specs().into_iter().map(|s| s.name).collect();
            let msg = format!(
                "unknown tool '{}'; the tools are: {}",
                call.name,
                names.join(", ")
            );
            return (
                Prepared::Answered(ToolOutput::error(msg)),
                call.arguments.clone(),
            );
        };
        let mut args = call.arguments.clone();
        if self.hooks.has(EventKind::ToolCall) {
            let out = self
                .hooks
                .emit(
                    HookEvent::ToolCall {
                        id: call.id.clone(),
                        name: call.name.clone(),
                        args,
                    },
                    ctx,
                )
                .await;
            args = match out.event {
                HookEvent::ToolCall { args, .. } => args,
                _ => Value::Null,
            };
            if let Some(reason) = out.blocked {
                let output = ToolOutput::error(format!("blocked: {reason}"));
                return (Prepared::Answered(output), args);
            }
        }
        if let Err(problems) = entry.validate(&args) {
            let msg = format!(
                "invalid arguments for '{}': {problems}. The parameters are: {}",
                call.name,
                entry.spec().parameters
            );
            return (Prepared::Answered(ToolOutput::error(msg)), args);
        }
        (
            Prepared::Run {
                entry,
                args: args.clone(),
            },
            args,
        )
    }

    /// Runs the prepared calls: consecutive parallel-safe ones together.
    async fn execute(&self, prepared: Vec<Prepared>, ctx: &Arc<RunContext>) -> Vec<ToolOutput> {
        let mut outputs = Vec::with_capacity(prepared.len());
        let mut group: Vec<JoinHandle<ToolOutput>> = Vec::new();
        for p in prepared {
            match p {
                Prepared::Answered(output) => {
                    drain(&mut group, &mut outputs).await;
                    outputs.push(output);
                }
                Prepared::Run { entry, args } => {
                    let safe = entry.tool.parallel_safe();
                    if !safe {
                        drain(&mut group, &mut outputs).await;
                    }
                    group.push(tokio::spawn(entry.tool.call(args, ctx.clone())));
                    if !safe {
                        drain(&mut group, &mut outputs).await;
                    }
                }
            }
        }
        drain(&mut group, &mut outputs).await;
        outputs
    }

    /// Truncates the output and runs the `tool_result` hook.
    async fn after(
        &self,
        call: &ToolCall,
        args: Value,
        mut output: ToolOutput,
        ctx: &Arc<RunContext>,
    ) -> ToolOutput {
        if output.content.len() > MAX_OUTPUT_BYTES {
            output.content = truncate_middle(&output.content, MAX_OUTPUT_BYTES);
        }
        if !self.hooks.has(EventKind::ToolResult) {
            return output;
        }
        let event = HookEvent::ToolResult {
            id: call.id.clone(),
            name: call.name.clone(),
            args,
            result: output.content.clone(),
            is_error: output.is_error,
        };
        if let HookEvent::ToolResult { result, .. } = self.hooks.emit(event, ctx).await.event {
            // A rewritten result is cut like the tool's own before it is stored or sent.
            output.content = if result.len() > MAX_OUTPUT_BYTES {
                truncate_middle(&result, MAX_OUTPUT_BYTES)
            } else {
                result
            };
        }
        output
    }
}

/// Awaits the running group in order.
async fn drain(group: &mut Vec<JoinHandle<ToolOutput>>, outputs: &mut Vec<ToolOutput>) {
    for handle in group.drain(..) {
        outputs.push(match handle.await {
            Ok(output) => output,
            Err(e) => ToolOutput::error(format!("the tool crashed: {e}")),
        });
    }
}
