//! One batch of tool calls from a model reply: each call goes through the `tool_call` hook
//! (block / rewrite arguments) and schema validation in call order, then the calls run
//! (consecutive parallel-safe calls together, the others one at a time). As each call
//! finishes, its result goes through the `tool_result` hook and is stored in the session at
//! once, so a process killed while later calls run keeps the results that were done. The
//! conversation gets the results in call order when the batch is over. A call's line and its
//! result go to the sink with [`EventSink::deliver`], which the agent awaits (the REPL asks a
//! script's renderer for the lines there).

use std::sync::Arc;

use futures_util::future::BoxFuture;
use futures_util::stream::{FuturesUnordered, StreamExt};
use serde_json::Value;

use super::calls::{self, CallInfo};
use super::session::SessionError;
use super::{Agent, AgentError, EventSink};
use crate::hooks::CallAbout;
use crate::tools::ToolEntry;
use crate::vocab::protocol::{AgentEvent, Message, ToolCall, ToolOutput};
use crate::vocab::run::{CallReport, RunContext};
use crate::vocab::text::truncate_middle;

/// A call after its hooks: ready to run, or already answered (blocked, invalid).
enum Prepared {
    Run { entry: Arc<ToolEntry>, args: Value },
    Answered(ToolOutput),
}

/// Calls running together; each yields its index in the batch and its output.
type Group = FuturesUnordered<BoxFuture<'static, (usize, ToolOutput)>>;
type Progress = tokio::sync::mpsc::Receiver<(String, CallReport)>;

/// One batch in progress: the calls, the arguments they run with, and the results so far.
struct Batch<'a> {
    calls: &'a [ToolCall],
    args: Vec<Value>,
    results: Vec<Option<Message>>,
    /// The first failure to store a result; later results are not written.
    stored: Result<(), SessionError>,
    /// Each running call's own context (its id, the child runs it made).
    call_ctxs: Vec<Option<Arc<RunContext>>>,
    sink: &'a dyn EventSink,
    ctx: &'a Arc<RunContext>,
}

impl Agent {
    /// Runs a batch; returns the results in call order, each already in the session file.
    pub(super) async fn run_tools(
        &mut self,
        calls: &[ToolCall],
        sink: &dyn EventSink,
        ctx: &Arc<RunContext>,
    ) -> Result<Vec<Message>, AgentError> {
        let mut prepared = Vec::with_capacity(calls.len());
        let mut args = Vec::with_capacity(calls.len());
        for call in calls {
            let (p, final_args) = self.prepare(call, ctx).await;
            let event = AgentEvent::ToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: final_args.clone(),
            };
            sink.deliver(event, ctx).await;
            prepared.push(p);
            args.push(final_args);
        }
        let mut batch = Batch {
            calls,
            args,
            results: vec![None; calls.len()],
            stored: Ok(()),
            call_ctxs: vec![None; calls.len()],
            sink,
            ctx,
        };
        self.execute(prepared, &mut batch).await;
        let results: Vec<Message> = batch.results.into_iter().flatten().collect();
        // The calls ran: the conversation has their results even if the file could not.
        self.messages.extend(results.iter().cloned());
        crate::tools::search::found_in(&results, &mut self.found);
        batch.stored?;
        Ok(results)
    }

    /// Runs the prepared calls (consecutive parallel-safe ones together), finishing each
    /// result as soon as its call is done and passing on their progress meanwhile.
    async fn execute(&mut self, prepared: Vec<Prepared>, batch: &mut Batch<'_>) {
        let mut group = Group::new();
        let (tx, mut progress) = tokio::sync::mpsc::channel(crate::vocab::run::PROGRESS_QUEUE);
        for (index, p) in prepared.into_iter().enumerate() {
            match p {
                Prepared::Answered(output) => self.finish(index, output, batch).await,
                Prepared::Run { entry, args } => {
                    let safe = entry.tool.parallel_safe();
                    if !safe {
                        self.drain(&mut group, &mut progress, batch).await;
                    }
                    let call_ctx = batch.ctx.for_call(&batch.calls[index].id, Some(tx.clone()));
                    let call_ctx = Arc::new(call_ctx);
                    batch.call_ctxs[index] = Some(call_ctx.clone());
                    let handle = tokio::spawn(entry.tool.call(args, call_ctx));
                    group.push(Box::pin(async move {
                        let output = match handle.await {
                            Ok(output) => output,
                            Err(e) => ToolOutput::error(format!("the tool crashed: {e}")),
                        };
                        (index, output)
                    }));
                    if !safe {
                        self.drain(&mut group, &mut progress, batch).await;
                    }
                }
            }
        }
        self.drain(&mut group, &mut progress, batch).await;
    }

    /// Finishes the running calls in the order they end; their progress reports become
    /// `tool_update` events meanwhile (a call's reports always before its result).
    async fn drain(&mut self, group: &mut Group, progress: &mut Progress, batch: &mut Batch<'_>) {
        loop {
            tokio::select! {
                biased;
                done = group.next() => {
                    while let Ok(update) = progress.try_recv() {
                        pass_on(update, batch);
                    }
                    match done {
                        Some((index, output)) => self.finish(index, output, batch).await,
                        None => break,
                    }
                }
                Some(update) = progress.recv() => pass_on(update, batch),
            }
        }
    }

    /// The end of one call: the `tool_result` hook, the event, and the session line.
    async fn finish(&mut self, index: usize, output: ToolOutput, batch: &mut Batch<'_>) {
        let call = &batch.calls[index];
        let args = std::mem::take(&mut batch.args[index]);
        let output = self.after(call, args, output, batch.ctx).await;
        let event = AgentEvent::ToolResult {
            id: call.id.clone(),
            name: call.name.clone(),
            content: output.content.clone(),
            is_error: output.is_error,
            details: output.details.clone(),
        };
        batch.sink.deliver(event, batch.ctx).await;
        let result = Message::tool_result(call, &output);
        if let Some(ctx) = batch.call_ctxs[index].take() {
            let children = ctx.take_records();
            if batch.stored.is_ok() {
                batch.stored = self.store_children(children);
            }
        }
        if batch.stored.is_ok() {
            batch.stored = self.session.append(&result);
        }
        batch.results[index] = Some(result);
    }

    /// What the model is told when it calls a tool there is none of: why it is not there
    /// yet (its MCP server is still connecting), or the tools there are.
    fn missing(&self, name: &str, why: Option<String>) -> String {
        match why {
            Some(why) => format!("tool '{name}' is not available yet: {why}"),
            None => {
                let names = self.tools.offered_names(&self.found);
                let near = names
                    .iter()
                    .map(|n| (crate::vocab::text::edit_distance(n, name), n))
                    .filter(|(d, n)| *d <= 3.max(n.len() / 5))
                    .min()
                    .map(|(_, n)| format!(" did you mean '{n}'?"))
                    .unwrap_or_default();
                format!(
                    "unknown tool '{name}';{near} the tools are: {}",
                    names.join(", ")
                )
            }
        }
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
        let entry = match self.tools.get_or_wait(&call.name).await {
            Ok(entry) => entry,
            // A name the model got slightly wrong (an MCP server's own tool name): the tool
            // it meant, when only one can be meant.
            Err(why) => match (why, self.tools.by_alias(&call.name)) {
                (None, Some(entry)) => entry,
                (why, _) => {
                    let output = ToolOutput::error(self.missing(&call.name, why));
                    return (Prepared::Answered(output), call.arguments.clone());
                }
            },
        };
        let info = CallInfo {
            id: &call.id,
            name: &entry.spec().name,
            about: CallAbout {
                hints: entry.tool.hints().cloned(),
                ..CallAbout::default()
            },
        };
        let (args, blocked) = calls::before(&self.hooks, &info, call.arguments.clone(), ctx).await;
        if let Some(reason) = blocked {
            let output = ToolOutput::error(format!("blocked: {reason}"));
            return (Prepared::Answered(output), args);
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

    /// Truncates the output and runs the `tool_result` hook.
    async fn after(
        &self,
        call: &ToolCall,
        args: Value,
        output: ToolOutput,
        ctx: &Arc<RunContext>,
    ) -> ToolOutput {
        let hints = (self.tools.get(&call.name)).and_then(|e| e.tool.hints().cloned());
        let info = CallInfo {
            id: &call.id,
            name: &call.name,
            about: CallAbout {
                hints,
                ..CallAbout::default()
            },
        };
        calls::after(&self.hooks, info, args, output, ctx).await
    }
}

/// A progress report as a `tool_update` event, for a call still running (never after its
/// result).
fn pass_on((id, report): (String, CallReport), batch: &Batch<'_>) {
    let Some(i) = batch.calls.iter().position(|c| c.id == id) else {
        return;
    };
    match report {
        // Progress after the result is stale.
        CallReport::Progress { kind, text } if batch.results[i].is_none() => {
            let name = batch.calls[i].name.clone();
            batch.sink.emit(AgentEvent::ToolUpdate {
                id,
                name,
                kind,
                text,
            });
        }
        CallReport::Progress { .. } => {}
        CallReport::Nested(event) if batch.results[i].is_none() => batch.sink.emit(*event),
        CallReport::Nested(_) => {}
        CallReport::Child { child, event } => batch.sink.emit(AgentEvent::Child {
            call_id: Some(id),
            child,
            event,
        }),
    }
}
