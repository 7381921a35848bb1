//! The context of one agent run ([`RunContext`]): which session and model it serves, the mode
//! of the front end, its cancellation, its queues, and how deep it is nested (0 for the user's
//! agent, 1+ for a child agent). Every hook, tool and command call receives the context of the
//! run that made it, so a script's `ctx` is always the caller's, never a process-wide one.
//!
//! A child run records which extension workers are waiting up the chain for it (a handler or
//! tool that started the child and blocks until it ends). Those workers are not re-entered:
//! their handlers are skipped for the child and their tools refuse, instead of deadlocking.

mod nested;
pub mod queue;
mod sink;

pub use nested::{NestedReports, NestedSender};
pub use sink::EventSink;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::vocab::protocol::{AgentEvent, ChildRecord, ChildTag};
use queue::Queues;

/// How the front end talks to the user (`ctx.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunMode {
    Repl,
    Print,
    Json,
    /// `mypi acp`: an editor drives the session.
    Acp,
}

impl RunMode {
    pub fn name(self) -> &'static str {
        match self {
            RunMode::Repl => "repl",
            RunMode::Print => "print",
            RunMode::Json => "json",
            RunMode::Acp => "acp",
        }
    }
}

/// What a running tool call reports to the agent that runs it, besides its result.
#[derive(Debug)]
pub enum CallReport {
    /// Progress: the agent turns it into a `tool_update` event.
    Progress { kind: UpdateKind, text: String },
    /// What a child agent the call started did: the agent passes it on as a `child` event.
    Child {
        child: ChildTag,
        event: Box<AgentEvent>,
    },
    /// A tool call the call's script made (`code`), or its result: passed on as it is.
    Nested(Box<AgentEvent>),
}

/// Where the tool calls of one batch report while they run: `(call id, report)`, read by the
/// agent. Bounded and lossy: a report that finds the channel full is dropped (reports are
/// for the eye, the result carries what counts).
pub type ProgressTx = tokio::sync::mpsc::Sender<(String, CallReport)>;

/// How many progress reports may wait for the agent.
pub const PROGRESS_QUEUE: usize = 256;

/// The longest progress text passed on (longer is cut to its end).
pub const MAX_PROGRESS_BYTES: usize = 4096;

pub use crate::vocab::protocol::UpdateKind;

/// A function a tool reports progress through (for layers that know no [`RunContext`]).
pub type Reporter = Arc<dyn Fn(UpdateKind, &str) + Send + Sync>;

/// What a model call was made for, as usage is counted by ([`Spent`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Spender {
    /// The user's agent's own turns.
    Agent,
    /// Child agents' turns (`api.run_agent`, the subagent tool).
    Children,
    /// Compaction summaries.
    Compaction,
    /// Scripts' `api.complete`.
    Complete,
}

impl Spender {
    pub fn name(self) -> &'static str {
        match self {
            Spender::Agent => "agent",
            Spender::Children => "subagents",
            Spender::Compaction => "compaction",
            Spender::Complete => "api.complete",
        }
    }
}

/// The usage of every model call made for one line (its run, the children it started, its
/// compactions, scripts' completions), shared by the line's contexts and their children's.
#[derive(Debug, Default)]
pub struct Spent(Mutex<Vec<(Spender, crate::vocab::protocol::Usage)>>);

impl Spent {
    pub fn add(&self, by: Spender, usage: crate::vocab::protocol::Usage) {
        if usage == crate::vocab::protocol::Usage::default() {
            return;
        }
        let mut spent = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match spent.iter_mut().find(|(s, _)| *s == by) {
            Some((_, u)) => u.add(usage),
            None => {
                spent.push((by, usage));
                spent.sort_by_key(|(s, _)| *s);
            }
        }
    }

    /// Everything counted since the last take, by what spent it, and emptied.
    pub fn take(&self) -> Vec<(Spender, crate::vocab::protocol::Usage)> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// Everything a call made on behalf of one run needs to know about it.
#[derive(Debug, Clone)]
pub struct RunContext {
    /// Unique per context value (engines cache what they build from a context by it).
    pub id: u64,
    pub cwd: PathBuf,
    pub mode: RunMode,
    /// The session this run belongs to (known before its file is written).
    pub session_id: String,
    pub model: String,
    /// The thinking level asked of the model (`ctx.thinking`).
    pub thinking: crate::vocab::thinking::Thinking,
    /// 0 for the user's agent, 1+ inside a child agent.
    pub depth: u32,
    /// Cancelled by Ctrl-C, `ctx.abort()` or the parent's cancellation.
    pub cancel: CancellationToken,
    pub queues: Arc<Queues>,
    /// Extension workers waiting up the chain for this run.
    waiting: Vec<u64>,
    /// Waiting workers whose skipped handlers were reported in this run already.
    skipped: Arc<Mutex<Vec<u64>>>,
    /// The tool call this context was made for (a tool's own context), if any.
    pub call_id: Option<String>,
    /// The tool call a `tool_call` handler decides on (its context only): a question the
    /// handler asks is about that call.
    pub about_call: Option<String>,
    /// Child agent runs made in this context, waiting for the agent to store them.
    records: Arc<Mutex<Vec<ChildRecord>>>,
    /// Where a tool call's progress goes (a tool's own context only).
    progress: Option<ProgressTx>,
    /// The usage of the line's model calls, children's included.
    pub spent: Arc<Spent>,
    /// Where events that come from outside the agent's loop (a settings hook's run) reach
    /// the line's event sink, when the line has one; children's runs share their parent's.
    events: Option<EventTx>,
}

/// Sends events to a line's sink ([`RunContext::with_events`]).
pub type EventTx = tokio::sync::mpsc::UnboundedSender<crate::vocab::protocol::AgentEvent>;

use crate::vocab::owner::next_id;

impl RunContext {
    /// The context of a top-level run (depth 0).
    pub fn new(
        cwd: PathBuf,
        mode: RunMode,
        session_id: String,
        model: String,
        cancel: CancellationToken,
        queues: Arc<Queues>,
    ) -> Self {
        RunContext {
            id: next_id(),
            cwd,
            mode,
            session_id,
            model,
            thinking: Default::default(),
            depth: 0,
            cancel,
            queues,
            waiting: Vec::new(),
            skipped: Arc::default(),
            call_id: None,
            about_call: None,
            records: Arc::default(),
            progress: None,
            spent: Arc::default(),
            events: None,
        }
    }

    /// A context with no agent behind it (`mypi ext check`, benchmarks, tests).
    pub fn detached(cwd: PathBuf) -> Self {
        Self::new(
            cwd,
            RunMode::Print,
            String::new(),
            String::new(),
            CancellationToken::new(),
            Arc::new(Queues::new()),
        )
    }

    /// The context of a child run started from a call in this one by the extension worker
    /// `waiting` (which blocks until the child ends): one level deeper, cancelled with this
    /// run, with queues of its own.
    pub fn child(&self, waiting: Option<u64>, model: String) -> Self {
        let mut chain = self.waiting.clone();
        chain.extend(waiting);
        RunContext {
            id: next_id(),
            cwd: self.cwd.clone(),
            mode: self.mode,
            session_id: self.session_id.clone(),
            model,
            thinking: self.thinking,
            depth: self.depth + 1,
            cancel: self.cancel.child_token(),
            queues: Arc::new(Queues::new()),
            waiting: chain,
            skipped: Arc::default(),
            call_id: None,
            about_call: None,
            records: Arc::default(),
            progress: None,
            spent: self.spent.clone(),
            events: self.events.clone(),
        }
    }

    /// The same context, its events (see [`RunContext::emit`]) sent through `tx`.
    pub fn with_events(mut self, tx: EventTx) -> Self {
        self.events = Some(tx);
        self
    }

    /// Sends `event` to the line's sink; false when this context has none (a session
    /// event outside a line).
    pub fn emit(&self, event: crate::vocab::protocol::AgentEvent) -> bool {
        self.events
            .as_ref()
            .is_some_and(|tx| tx.send(event).is_ok())
    }

    /// The context of one tool call of this run: the same run, with the call's id, a place
    /// of its own for the child runs the call makes, and where its progress goes.
    pub fn for_call(&self, call_id: &str, progress: Option<ProgressTx>) -> Self {
        RunContext {
            id: next_id(),
            call_id: Some(call_id.to_string()),
            records: Arc::default(),
            progress,
            ..self.clone()
        }
    }

    /// The same run, deciding on tool call `call_id` (the context of its `tool_call`
    /// handlers): what they ask the user is about that call.
    pub fn about(&self, call_id: &str) -> Self {
        RunContext {
            id: next_id(),
            about_call: Some(call_id.to_string()),
            ..self.clone()
        }
    }

    /// Reports progress of the tool call this context was made for (nothing outside one).
    pub fn report(&self, kind: UpdateKind, text: &str) {
        if let Some(report) = self.reporter() {
            report(kind, text);
        }
    }

    /// [`RunContext::report`] as a function, when this context is a tool call's.
    pub fn reporter(&self) -> Option<Reporter> {
        let (tx, id) = (self.progress.clone()?, self.call_id.clone()?);
        Some(Arc::new(move |kind, text: &str| {
            let text = crate::vocab::text::tail_bytes(text, MAX_PROGRESS_BYTES).to_string();
            let _ = tx.try_send((id.clone(), CallReport::Progress { kind, text }));
        }))
    }

    /// Reports what a child agent started by this context's tool call did; false (nothing
    /// sent) outside a tool call, where the caller finds another way to the user.
    pub fn report_child(&self, child: ChildTag, event: AgentEvent) -> bool {
        let (Some(tx), Some(id)) = (&self.progress, &self.call_id) else {
            return false;
        };
        let event = Box::new(event);
        let _ = tx.try_send((id.clone(), CallReport::Child { child, event }));
        true
    }

    /// Keeps a child run made in this context until the agent stores it.
    pub fn add_record(&self, record: ChildRecord) {
        self.records
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(record);
    }

    /// The child runs made in this context so far (each taken once).
    pub fn take_records(&self) -> Vec<ChildRecord> {
        std::mem::take(&mut *self.records.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The same run, with extension worker `worker` waiting in it (a host operation the
    /// worker's script asked for, such as `api.mcp.call`, fires hooks: they must not call
    /// back into that worker).
    pub fn with_waiting(&self, worker: Option<u64>) -> Self {
        let mut ctx = self.clone();
        ctx.id = next_id();
        ctx.waiting.extend(worker);
        // The caller knows what it called: its own skipped handlers need no notice.
        ctx.skipped = Arc::new(Mutex::new(worker.into_iter().collect()));
        ctx
    }

    /// The same run with another cancellation token (a fresh prompt of the same session).
    pub fn with_cancel(&self, cancel: CancellationToken) -> Self {
        RunContext {
            id: next_id(),
            cancel,
            skipped: Arc::default(),
            ..self.clone()
        }
    }

    /// Resolves a path argument against the working folder.
    pub fn resolve(&self, path: &str) -> PathBuf {
        let p = std::path::Path::new(path);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.cwd.join(p)
        }
    }

    /// Whether extension worker `worker` waits up the chain for this run.
    pub fn is_waiting(&self, worker: u64) -> bool {
        self.waiting.contains(&worker)
    }

    /// True the first time it is asked about `worker` in this run (one notice per run for
    /// the skipped handlers of a waiting worker).
    pub fn first_skip(&self, worker: u64) -> bool {
        let mut seen = self.skipped.lock().unwrap_or_else(|p| p.into_inner());
        if seen.contains(&worker) {
            false
        } else {
            seen.push(worker);
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_deeper_cancelled_with_its_parent_and_knows_who_waits() {
        let parent = RunContext::detached(PathBuf::from("/w"));
        let child = parent.child(Some(7), "m".into());
        let grandchild = child.child(Some(9), "m".into());
        assert_eq!((child.depth, grandchild.depth), (1, 2));
        assert!(grandchild.is_waiting(7) && grandchild.is_waiting(9));
        assert!(!parent.is_waiting(7));
        assert_ne!(parent.id, child.id);
        parent.cancel.cancel();
        assert!(grandchild.cancel.is_cancelled());
    }
}
