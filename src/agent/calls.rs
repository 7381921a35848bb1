//! The hooks around one tool call, shared by the model's calls ([`super::exec`]) and the calls
//! a tool makes itself ([`Nested`]: a `code` script's `tools.NAME(args)`): `tool_call` (block,
//! rewrite the arguments) before, the cut to [`MAX_OUTPUT_BYTES`] and `tool_result` (rewrite
//! the result) after. A nested call passes the same hooks as the model's, with
//! `parent_tool_call_id` naming the call that made it, so a guard that blocks a tool for the
//! model blocks it inside a script too; it is reported to the front end as
//! `nested_tool_call` / `nested_tool_result` events through the parent call's report channel,
//! in batches ([`NestedSender`]: a burst of calls does not wake the agent for each).

use std::sync::{Arc, Weak};

use serde_json::Value;

use crate::hooks::{CallAbout, EventKind, HookBus, HookEvent};
use crate::tools::{Exposure, ToolEntry, ToolRegistry, MAX_OUTPUT_BYTES};
use crate::vocab::protocol::{AgentEvent, ToolOutput};
use crate::vocab::run::{NestedSender, RunContext};
use crate::vocab::text::truncate_middle;

/// One call as its hooks see it.
pub struct CallInfo<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub about: CallAbout,
}

/// The `tool_call` hook: the arguments to run with, and the reason when a handler blocked.
pub async fn before(
    hooks: &HookBus,
    call: &CallInfo<'_>,
    args: Value,
    ctx: &Arc<RunContext>,
) -> (Value, Option<String>) {
    if !hooks.has(EventKind::ToolCall) {
        return (args, None);
    }
    let ctx = &Arc::new(ctx.about(call.id));
    let event = HookEvent::ToolCall {
        id: call.id.to_string(),
        name: call.name.to_string(),
        args,
        about: call.about.clone(),
    };
    let out = hooks.emit(event, ctx).await;
    let args = match out.event {
        HookEvent::ToolCall { args, .. } => args,
        _ => Value::Null,
    };
    (args, out.blocked)
}

/// Cuts the output to [`MAX_OUTPUT_BYTES`] and runs the `tool_result` hook (a rewritten
/// result is cut the same way).
pub async fn after(
    hooks: &HookBus,
    call: CallInfo<'_>,
    args: Value,
    mut output: ToolOutput,
    ctx: &Arc<RunContext>,
) -> ToolOutput {
    if output.content.len() > MAX_OUTPUT_BYTES {
        output.content = truncate_middle(&output.content, MAX_OUTPUT_BYTES);
    }
    if !hooks.has(EventKind::ToolResult) {
        return output;
    }
    let event = HookEvent::ToolResult {
        id: call.id.to_string(),
        name: call.name.to_string(),
        args,
        result: output.content.clone(),
        is_error: output.is_error,
        details: output.details.clone(),
        about: call.about,
    };
    if let HookEvent::ToolResult { result, .. } = hooks.emit(event, ctx).await.event {
        output.content = if result.len() > MAX_OUTPUT_BYTES {
            truncate_middle(&result, MAX_OUTPUT_BYTES)
        } else {
            result
        };
    }
    output
}

/// What a tool needs to make calls of its own through the hooks: the registry it is in and
/// the hook bus.
#[derive(Clone)]
pub struct Nested {
    pub tools: Weak<ToolRegistry>,
    pub hooks: Arc<HookBus>,
    /// The tool that makes the calls (it cannot call itself).
    pub caller: String,
}

/// A nested call as it ended: the arguments it ran with and its output.
pub struct NestedDone {
    pub args: Value,
    pub output: ToolOutput,
}

impl Nested {
    /// Calls tool `name` with `args` as call `id` of the tool call `ctx` was made for
    /// (`parent`), through the hooks; reports it to the front end through `reports`. Any
    /// tool the model could call, deferred ones and those only code can reach
    /// ([`Exposure::Code`]) too; not hidden ones, nor the caller itself.
    pub async fn call(
        &self,
        parent: &str,
        id: &str,
        name: &str,
        args: Value,
        ctx: &Arc<RunContext>,
        reports: &NestedSender,
    ) -> NestedDone {
        let entry = match self.find(name, ctx).await {
            Ok(entry) => entry,
            Err(why) => return done(args, ToolOutput::error(why)),
        };
        let info = || CallInfo {
            id,
            name,
            about: CallAbout {
                hints: entry.tool.hints().cloned(),
                origin: None,
                parent_tool_call_id: Some(parent.to_string()),
            },
        };
        let (args, blocked) = before(&self.hooks, &info(), args, ctx).await;
        reports.send(AgentEvent::NestedToolCall {
            parent_id: parent.to_string(),
            id: id.to_string(),
            name: name.to_string(),
            arguments: args.clone(),
        });
        let output = match (blocked, entry.validate(&args)) {
            (Some(reason), _) => ToolOutput::error(format!("blocked: {reason}")),
            (None, Err(problems)) => ToolOutput::error(format!(
                "invalid arguments for '{name}': {problems}. The parameters are: {}",
                entry.spec().parameters
            )),
            (None, Ok(())) => {
                let call_ctx = Arc::new(ctx.for_call(id, None));
                let output = entry.tool.call(args.clone(), call_ctx.clone()).await;
                for record in call_ctx.take_records() {
                    ctx.add_record(record);
                }
                output
            }
        };
        let output = after(&self.hooks, info(), args.clone(), output, ctx).await;
        reports.send(AgentEvent::NestedToolResult {
            parent_id: parent.to_string(),
            id: id.to_string(),
            name: name.to_string(),
            content: output.content.clone(),
            is_error: output.is_error,
        });
        NestedDone { args, output }
    }
}

impl Nested {
    /// The tool a nested call of `name` runs, or why there is none.
    async fn find(&self, name: &str, ctx: &RunContext) -> Result<Arc<ToolEntry>, String> {
        let tools = (self.tools.upgrade()).ok_or_else(|| "mypi is shutting down".to_string())?;
        if name == self.caller {
            return Err(format!("'{name}' cannot be called from its own script"));
        }
        // `code`-only tools too, which the model's lookup leaves out.
        let reach = |t: &ToolRegistry| t.get(name).filter(|e| t.exposure_of(e) != Exposure::Hidden);
        let found = match reach(&tools) {
            Some(e) => Ok(e),
            None => match tools.get_or_wait(name).await {
                Ok(e) => Ok(e),
                Err(why) => reach(&tools).ok_or(why),
            },
        };
        let entry = found.map_err(|why| match why {
            None => format!("unknown tool '{name}'; search_tools(query) finds the tools"),
            Some(why) => format!("tool '{name}' is not available yet: {why}"),
        })?;
        if !entry.tool.usable(ctx) {
            return Err(format!(
                "'{name}' cannot run here: its extension is waiting for this run"
            ));
        }
        Ok(entry)
    }
}

fn done(args: Value, output: ToolOutput) -> NestedDone {
    NestedDone { args, output }
}
