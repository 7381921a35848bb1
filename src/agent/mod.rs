//! The agent: the conversation, its session file, and the loop that turns a prompt into model
//! requests and tool calls. [`Agent::prompt`] runs one prompt (after the `input` hook) and then
//! any follow-ups queued while it ran. The loop itself is in `turn.rs`, tool batches in
//! `exec.rs`, the queues in `queue.rs`, the transcript in `session/`.
//!
//! The agent knows hooks, tools and providers only through their registries and traits; it
//! never sees scripts, MCP or the terminal.

pub mod calls;
pub mod child;
pub mod compact;
pub mod control;
mod exec;
pub mod fit;
pub mod prompt;
/// The queues live with the run context ([`crate::vocab::run::queue`]); this path stays for readers.
pub use crate::vocab::run::queue;
pub mod session;
mod shared;
mod turn;
mod updates;

use std::path::PathBuf;
use std::sync::Arc;

use crate::hooks::{HookBus, HookEvent, InputSource};
use crate::providers::{Provider, ProviderError, RetryPolicy};
use crate::tools::ToolRegistry;
use crate::vocab::protocol::{AgentEvent, ChildRecord, Message, Usage};
use crate::vocab::run::RunContext;
use session::{SessionError, SessionSlot, SessionWriter};

pub use crate::vocab::run::EventSink;

/// Why a prompt failed.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Provider(#[from] ProviderError),
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error("cancelled")]
    Cancelled,
    #[error("stopped after {0} turns without a final answer (the model kept calling tools)")]
    TooManyTurns(u32),
}

/// How a prompt ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunOutcome {
    /// The final assistant text, or the block reason when a hook answered instead.
    pub text: String,
    pub turns: u32,
    pub usage: Usage,
    /// `usage` by what spent it (the user's run only: its own turns, children, compaction,
    /// scripts' completions).
    pub spent: Vec<(crate::vocab::run::Spender, Usage)>,
    /// Set when an `input` or `message_update` handler blocked: its reason.
    pub blocked: Option<String>,
}

/// What the agent is built from.
pub struct AgentParts {
    pub provider: Arc<dyn Provider>,
    pub tools: Arc<ToolRegistry>,
    pub hooks: Arc<HookBus>,
    pub cwd: PathBuf,
    pub system_prompt: String,
    pub session: SessionSlot,
    pub messages: Vec<Message>,
}

/// The running agent.
pub struct Agent {
    provider: Arc<dyn Provider>,
    tools: Arc<ToolRegistry>,
    hooks: Arc<HookBus>,
    cwd: PathBuf,
    system_prompt: String,
    session: SessionSlot,
    messages: Vec<Message>,
    usage: Usage,
    pub retry: RetryPolicy,
    pub max_turns: u32,
    /// A child agent keeps its own children's runs here (it has no session file); `None`
    /// for the user's agent, whose session stores them.
    pub children: Option<Vec<ChildRecord>>,
    /// The model's context window in tokens ([`compact`]).
    pub context_window: u64,
    /// The model's prices (US dollars per million tokens), when known.
    pub prices: Option<crate::vocab::protocol::Prices>,
    /// The longest reply the model may write (`max_tokens`); none: the provider's default.
    pub max_output: Option<u64>,
    /// The thinking level asked for (`--thinking`, `/thinking`, `api.set_thinking`).
    pub thinking: crate::vocab::thinking::Thinking,
    /// Whether the model may be asked to think (`thinking = false` in its table entry: no).
    pub thinks: bool,
    /// The reasoning the model streamed in the last prompt's run (`/thinking show`).
    last_thought: std::sync::Mutex<String>,
    /// The context's size the provider reported for the last request, and how many
    /// messages there were then (what came after is estimated).
    last_context: Option<(u64, usize)>,
    /// What scripts read of the user's agent and the entries they add (`None` in a child).
    pub control: Option<Arc<crate::agent::control::Control>>,
    /// The skills listed in each run's system prompt (see [`crate::config::sources`]).
    pub skills: Option<Arc<crate::config::sources::catalog::Catalog>>,
    /// The parts hosts add to each run's system prompt, after the skills.
    pub sections: Vec<Arc<dyn prompt::PromptSection>>,
    /// Images for the next user message (an editor's prompt): the run that records it takes
    /// them; [`Agent::prompt`] drops what no run took (a handler blocked the prompt).
    pub images: Vec<crate::vocab::protocol::Image>,
    /// The tools the conversation found (`tool_search` results, tools called), in order:
    /// the deferred ones among them are offered after the direct ones. Derived from the
    /// messages when a conversation is taken up (so it survives a resume), then kept across
    /// compactions.
    found: Vec<String>,
}

impl Agent {
    /// The reasoning the model streamed in the last prompt's run, whole.
    pub fn last_thought(&self) -> String {
        self.thought_mut().clone()
    }

    fn thought_mut(&self) -> std::sync::MutexGuard<'_, String> {
        self.last_thought.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn new(parts: AgentParts) -> Self {
        let usage = total_usage(&parts.messages);
        let mut found = Vec::new();
        crate::tools::search::found_in(&parts.messages, &mut found);
        Agent {
            provider: parts.provider,
            tools: parts.tools,
            hooks: parts.hooks,
            cwd: parts.cwd,
            system_prompt: parts.system_prompt,
            session: parts.session,
            messages: parts.messages,
            usage,
            retry: RetryPolicy::default(),
            max_turns: 50,
            children: None,
            context_window: compact::DEFAULT_WINDOW,
            prices: None,
            max_output: None,
            thinking: Default::default(),
            thinks: true,
            last_thought: Default::default(),
            last_context: None,
            control: None,
            skills: None,
            sections: Vec::new(),
            images: Vec::new(),
            found,
        }
    }

    pub fn provider(&self) -> &Arc<dyn Provider> {
        &self.provider
    }

    pub fn set_provider(&mut self, provider: Arc<dyn Provider>) {
        self.provider = provider;
    }

    /// Records in the session that it now uses `provider`/`model`.
    pub fn set_session_model(
        &mut self,
        provider: &str,
        model: &str,
    ) -> Result<(), crate::agent::session::SessionError> {
        self.session.set_model(provider, model)
    }

    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The session's id, known before its file is written (empty with `--no-session`).
    pub fn session_id(&self) -> &str {
        self.session.id().unwrap_or("")
    }

    /// The open session file (none before the first message or with `--no-session`).
    pub fn session(&self) -> Option<&SessionWriter> {
        self.session.writer()
    }

    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// Adds model calls made for the session outside a run (a command's) to its totals.
    pub fn add_spent(&mut self, spent: Vec<(crate::vocab::run::Spender, Usage)>) {
        for (_, u) in spent {
            self.usage.add(u);
        }
    }

    pub fn tools(&self) -> &Arc<ToolRegistry> {
        &self.tools
    }

    /// The tools the conversation found so far (see `tool_search`), in order.
    pub fn found_tools(&self) -> &[String] {
        &self.found
    }

    pub fn cwd(&self) -> &PathBuf {
        &self.cwd
    }

    /// Starts over: a new session file (when sessions are on) and an empty conversation.
    pub fn reset(&mut self, session: SessionSlot) {
        self.resume(session, Vec::new());
    }

    /// Goes on with another session and its conversation (`/resume`, `/fork`).
    pub fn resume(&mut self, session: SessionSlot, messages: Vec<Message>) {
        self.usage = total_usage(&messages);
        self.last_context = None;
        self.session = session;
        self.found.clear();
        crate::tools::search::found_in(&messages, &mut self.found);
        self.messages = messages;
    }

    /// The session's totals as its file says them, when they are more than its messages
    /// show (child agents', compaction summaries' and scripts' model calls).
    pub fn restore_totals(&mut self, totals: Option<Usage>) {
        if let Some(t) = totals {
            if t.input_tokens + t.output_tokens
                >= self.usage.input_tokens + self.usage.output_tokens
            {
                self.usage = t;
            }
        }
    }

    /// Runs one prompt through the `input` hook and the loop, then every follow-up queued
    /// meanwhile. The outcome is the last run's.
    pub async fn prompt(
        &mut self,
        text: &str,
        source: InputSource,
        sink: &dyn EventSink,
        ctx: &Arc<RunContext>,
    ) -> Result<RunOutcome, AgentError> {
        if source == InputSource::User {
            ctx.queues.user_prompted();
        }
        self.set_running(true);
        self.thought_mut().clear();
        let outcome = self.prompt_chain(text, source, sink, ctx).await;
        self.images.clear();
        self.set_running(false);
        self.hooks.flush_reports();
        self.keep_children(ctx, sink);
        self.write_pending(sink);
        outcome
    }

    /// Stores the child runs made directly in `ctx` (by a handler or a command rather than a
    /// tool call); a failure to write them is a notice.
    pub fn keep_children(&mut self, ctx: &RunContext, sink: &dyn EventSink) {
        let records = ctx.take_records();
        if records.is_empty() {
            return;
        }
        if let Err(e) = self.store_children(records) {
            sink.emit(AgentEvent::Notice {
                message: e.to_string(),
            });
        }
    }

    /// [`Agent::prompt`] without the final report of repeated hook failures.
    async fn prompt_chain(
        &mut self,
        text: &str,
        source: InputSource,
        sink: &dyn EventSink,
        ctx: &Arc<RunContext>,
    ) -> Result<RunOutcome, AgentError> {
        let mut outcome = self.prompt_once(text, source, sink, ctx).await?;
        loop {
            // A cancel leaves the queued messages where they are (the REPL gives them back).
            if ctx.cancel.is_cancelled() {
                return Err(AgentError::Cancelled);
            }
            let Some(next) = next_queued(&ctx.queues, sink) else {
                break;
            };
            outcome = self
                .prompt_once(&next, InputSource::Extension, sink, ctx)
                .await?;
        }
        Ok(outcome)
    }

    async fn prompt_once(
        &mut self,
        text: &str,
        source: InputSource,
        sink: &dyn EventSink,
        ctx: &Arc<RunContext>,
    ) -> Result<RunOutcome, AgentError> {
        let mut text = text.to_string();
        if self.hooks.has(crate::hooks::EventKind::Input) {
            let out = self
                .hooks
                .emit(HookEvent::Input { text, source }, ctx)
                .await;
            if let Some(reason) = out.blocked {
                sink.emit(AgentEvent::Final {
                    text: reason.clone(),
                    turns: 0,
                    usage: Usage::default(),
                    usage_by: Vec::new(),
                    session_usage: self.usage,
                });
                return Ok(RunOutcome {
                    text: reason.clone(),
                    blocked: Some(reason),
                    ..RunOutcome::default()
                });
            }
            text = match out.event {
                HookEvent::Input { text, .. } => text,
                _ => String::new(),
            };
        }
        let outcome = self.run(text, sink, ctx).await;
        match &outcome {
            // The session file says the totals after every run.
            Ok(_) => self.session.append_totals(&self.usage)?,
            // And when a run was cancelled (what it did so far is in the lines before); a
            // failure to say so is not worth more than the cancel itself.
            Err(AgentError::Cancelled) => {
                let _ = self.session.append_cancel();
            }
            Err(_) => {}
        }
        match &outcome {
            Ok(o) => sink.emit(AgentEvent::Final {
                text: o.text.clone(),
                turns: o.turns,
                usage: o.usage,
                usage_by: spent_by(&o.spent),
                session_usage: self.usage,
            }),
            Err(e) => sink.emit(AgentEvent::Error {
                message: e.to_string(),
            }),
        }
        outcome
    }

    /// Stores child agent runs: in the session file, or (in a child) with the child's own.
    fn store_children(&mut self, records: Vec<ChildRecord>) -> Result<(), SessionError> {
        if let Some(kept) = &mut self.children {
            kept.extend(records);
            return Ok(());
        }
        for record in &records {
            self.session.append_child(record)?;
        }
        Ok(())
    }

    /// Appends a message to the conversation and the session file.
    fn record(&mut self, message: Message) -> Result<(), AgentError> {
        self.session.append(&message)?;
        self.messages.push(message);
        self.write_pending_entries()?;
        self.show_context();
        Ok(())
    }
}

#[cfg(test)]
mod tests;

/// The next queued prompt that may run now, reported as it enters the conversation; when
/// the chain limit ends it, a notice says so.
pub(crate) fn next_queued(queues: &queue::Queues, sink: &dyn EventSink) -> Option<String> {
    match queues.next_chained() {
        Ok(Some((text, delivery))) => {
            sink.emit(AgentEvent::QueuedMessage {
                text: text.clone(),
                delivery,
            });
            Some(text)
        }
        Ok(None) => None,
        Err(ended) => {
            sink.emit(AgentEvent::Notice {
                message: ended.to_string(),
            });
            None
        }
    }
}

/// A run's usage by what spent it, for the `final` event: nothing when the agent's own
/// turns spent it all.
pub fn spent_by(
    spent: &[(crate::vocab::run::Spender, Usage)],
) -> Vec<crate::vocab::protocol::SpentBy> {
    if spent
        .iter()
        .all(|(s, _)| *s == crate::vocab::run::Spender::Agent)
    {
        return Vec::new();
    }
    spent
        .iter()
        .map(|(s, u)| crate::vocab::protocol::SpentBy {
            by: s.name().to_string(),
            usage: *u,
        })
        .collect()
}

/// A resumed conversation's totals: what its assistant messages' requests used.
fn total_usage(messages: &[Message]) -> Usage {
    let mut usage = Usage::default();
    for m in messages {
        if let Some(u) = m.usage {
            usage.add(u);
        }
    }
    usage
}
