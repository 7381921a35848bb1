//! The hook bus: typed events ([`HookEvent`]), their results ([`HookResult`]) and
//! [`HookBus::emit`], which runs the subscribed handlers in order and applies the chaining
//! rules of the design doc: handlers run in load order then registration order, each sees the
//! event as rewritten by the ones before it, the first `block` stops the chain, a failing
//! handler is reported and skipped, except for `tool_call`, where it blocks the call.
//!
//! The bus knows no script engine: a handler is anything implementing [`HookHandler`].
//! An event nobody subscribed to costs one atomic load ([`HookBus::has`]).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock, RwLock, Weak};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::owner::{next_id, Handle, Owner, Unregister};
use crate::protocol::Message;
use crate::run::RunContext;
use futures_util::future::BoxFuture;

mod repeats;
mod result;
mod text;
pub use result::HookResult;
pub use text::SharedText;

/// Names of the events, as scripts write them in `api.on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    SessionStart,
    SessionShutdown,
    Input,
    BeforeAgentStart,
    TurnStart,
    Context,
    BeforeProviderRequest,
    MessageUpdate,
    MessageEnd,
    ToolCall,
    ToolResult,
    TurnEnd,
    AgentEnd,
    ExtensionLoaded,
    SessionBeforeCompact,
}

impl EventKind {
    pub const ALL: [EventKind; 15] = [
        EventKind::SessionStart,
        EventKind::SessionShutdown,
        EventKind::Input,
        EventKind::BeforeAgentStart,
        EventKind::TurnStart,
        EventKind::Context,
        EventKind::BeforeProviderRequest,
        EventKind::MessageUpdate,
        EventKind::MessageEnd,
        EventKind::ToolCall,
        EventKind::ToolResult,
        EventKind::TurnEnd,
        EventKind::AgentEnd,
        EventKind::ExtensionLoaded,
        EventKind::SessionBeforeCompact,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EventKind::SessionStart => "session_start",
            EventKind::SessionShutdown => "session_shutdown",
            EventKind::SessionBeforeCompact => "session_before_compact",
            EventKind::Input => "input",
            EventKind::BeforeAgentStart => "before_agent_start",
            EventKind::TurnStart => "turn_start",
            EventKind::Context => "context",
            EventKind::BeforeProviderRequest => "before_provider_request",
            EventKind::MessageUpdate => "message_update",
            EventKind::MessageEnd => "message_end",
            EventKind::ToolCall => "tool_call",
            EventKind::ToolResult => "tool_result",
            EventKind::TurnEnd => "turn_end",
            EventKind::AgentEnd => "agent_end",
            EventKind::ExtensionLoaded => "extension_loaded",
        }
    }

    /// Parses an event name; `None` for an unknown one.
    pub fn parse(name: &str) -> Option<EventKind> {
        EventKind::ALL.into_iter().find(|k| k.name() == name)
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

/// Why a session started or stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    Startup,
    Reload,
    New,
    Resume,
    Quit,
}

/// Where an input line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputSource {
    User,
    Extension,
}

/// An event with its payload. Serialized, it is what a script handler receives (plus `type`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HookEvent {
    SessionStart {
        reason: Reason,
    },
    SessionShutdown {
        reason: Reason,
    },
    Input {
        text: String,
        source: InputSource,
    },
    BeforeAgentStart {
        prompt: String,
        system_prompt: String,
    },
    TurnStart {
        turn: u32,
    },
    Context {
        messages: Vec<Message>,
    },
    BeforeProviderRequest {
        provider: String,
        payload: Value,
    },
    MessageUpdate {
        delta: String,
        /// The reply so far; shared, not copied, per delta.
        text: SharedText,
    },
    MessageEnd {
        message: Message,
    },
    ToolCall {
        id: String,
        name: String,
        args: Value,
        #[serde(flatten)]
        about: CallAbout,
    },
    ToolResult {
        id: String,
        name: String,
        args: Value,
        result: String,
        is_error: bool,
        #[serde(flatten)]
        about: CallAbout,
    },
    TurnEnd {
        turn: u32,
        message: Message,
        tool_results: Vec<Message>,
    },
    AgentEnd {
        messages: Vec<Message>,
    },
    ExtensionLoaded {
        name: String,
        path: String,
        reason: Reason,
    },
    /// The conversation is about to be compacted: a handler may cancel it or give the
    /// summary itself.
    SessionBeforeCompact {
        /// `auto` (the next request would not fit), `manual` (`/compact`), `overflow` (the
        /// provider said it was over the window).
        reason: CompactReason,
        tokens: u64,
        window: u64,
        /// The older messages to compact, and how many recent ones stay whole.
        messages: Vec<Message>,
        keep_last: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        instructions: Option<String>,
        /// Set by a handler's `summary`: used instead of asking the model.
        #[serde(skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
    },
}

/// Why the conversation is compacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactReason {
    Auto,
    Manual,
    Overflow,
}

/// What else a `tool_call` / `tool_result` event says about the call, when known.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CallAbout {
    /// The tool's annotations (MCP `readOnlyHint`, `destructiveHint`, ...): hints from the
    /// tool's author, to be trusted for nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hints: Option<Value>,
    /// Who made the call when it was not the model: `{extension = NAME}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
}

/// The maker of a call that did not come from the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Origin {
    pub extension: String,
}

impl HookEvent {
    pub fn kind(&self) -> EventKind {
        match self {
            HookEvent::SessionStart { .. } => EventKind::SessionStart,
            HookEvent::SessionShutdown { .. } => EventKind::SessionShutdown,
            HookEvent::Input { .. } => EventKind::Input,
            HookEvent::BeforeAgentStart { .. } => EventKind::BeforeAgentStart,
            HookEvent::TurnStart { .. } => EventKind::TurnStart,
            HookEvent::Context { .. } => EventKind::Context,
            HookEvent::BeforeProviderRequest { .. } => EventKind::BeforeProviderRequest,
            HookEvent::MessageUpdate { .. } => EventKind::MessageUpdate,
            HookEvent::MessageEnd { .. } => EventKind::MessageEnd,
            HookEvent::ToolCall { .. } => EventKind::ToolCall,
            HookEvent::ToolResult { .. } => EventKind::ToolResult,
            HookEvent::TurnEnd { .. } => EventKind::TurnEnd,
            HookEvent::AgentEnd { .. } => EventKind::AgentEnd,
            HookEvent::ExtensionLoaded { .. } => EventKind::ExtensionLoaded,
            HookEvent::SessionBeforeCompact { .. } => EventKind::SessionBeforeCompact,
        }
    }

    /// Stands in for an event moved out of a chain for a moment.
    fn placeholder() -> HookEvent {
        HookEvent::TurnStart { turn: 0 }
    }

    /// The payload as JSON, the way scripts see it.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The payload as JSON for a script, with the one field that grows without bound
    /// (`message_update`'s `text`) left out and handed over as it is, to be read on demand.
    pub fn to_script(&self) -> (Value, Option<SharedText>) {
        match self {
            HookEvent::MessageUpdate { delta, text } => (
                serde_json::json!({"type": "message_update", "delta": delta}),
                Some(text.clone()),
            ),
            other => (other.to_value(), None),
        }
    }
}

/// A handler failed. `message` is what the user reads, with the script's file and line
/// when there is one.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[error("{message}")]
pub struct HookError {
    pub message: String,
}

impl HookError {
    pub fn new(message: impl Into<String>) -> Self {
        HookError {
            message: message.into(),
        }
    }
}

/// Something that handles an event, for the run `ctx`. Returns `None` to only observe, or a
/// result object (a JSON object with the result fields of the design doc).
pub trait HookHandler: Send + Sync {
    fn call(
        &self,
        event: &HookEvent,
        ctx: &Arc<RunContext>,
    ) -> BoxFuture<'static, Result<Option<Value>, HookError>>;

    /// A handler that can run together with the handlers after it that share its group (an
    /// extension's handlers, on its worker) says so here; the bus then hands the whole run of
    /// them to [`HandlerGroup::run`] in one call.
    fn group(&self) -> Option<&dyn HandlerGroup> {
        None
    }
}

/// Handlers that run as one chain in one call (see [`HookHandler::group`]).
pub trait HandlerGroup: Send + Sync {
    /// Handlers with equal keys belong to the same group.
    fn key(&self) -> u64;
    /// This handler's place in the group (the script's callback).
    fn member(&self) -> u64;
    /// Runs `members` in order on `event` with the chaining rules of [`apply_outcome`].
    fn run(
        &self,
        members: Vec<u64>,
        event: HookEvent,
        owner: Owner,
        notice: NoticeFn,
        ctx: &Arc<RunContext>,
    ) -> BoxFuture<'static, Emitted>;
}

impl<F> HookHandler for F
where
    F: Fn(&HookEvent) -> Result<Option<Value>, HookError> + Send + Sync,
{
    fn call(
        &self,
        event: &HookEvent,
        _ctx: &Arc<RunContext>,
    ) -> BoxFuture<'static, Result<Option<Value>, HookError>> {
        let out = self(event);
        Box::pin(async move { out })
    }
}

/// What one handler's outcome did to the chain.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// The event is as it was.
    Unchanged,
    /// A result field rewrote the event.
    Changed,
    /// The chain stops here; the reason.
    Blocked(String),
}

/// Applies one handler's outcome to `event` with the chaining rules: result fields rewrite the
/// event (problems with them are reported through `notice` and ignored), `block` stops the
/// chain, and a failing handler is reported and skipped, except in `tool_call`, where it
/// blocks the call (fail-closed, since it may be a guard).
pub fn apply_outcome(
    event: &mut HookEvent,
    owner: &Owner,
    outcome: Result<Option<Value>, HookError>,
    notice: &NoticeFn,
) -> Step {
    let kind = event.kind();
    match outcome {
        Ok(None) => Step::Unchanged,
        Ok(Some(value)) => {
            let (result, problems) = HookResult::from_value(&value, kind);
            for p in problems {
                notice(format!("{owner} ({}): {p}", kind.name()));
            }
            let changed = result.rewrites();
            match result.apply(event, owner) {
                Some(reason) => Step::Blocked(reason),
                None if changed => Step::Changed,
                None => Step::Unchanged,
            }
        }
        Err(err) => {
            notice(format!("{owner} failed in {}: {err}", kind.name()));
            if kind == EventKind::ToolCall {
                Step::Blocked(format!(
                    "the guard {owner} failed ({err}); the call was not run"
                ))
            } else {
                Step::Unchanged
            }
        }
    }
}

/// Receives the bus's reports (handler failures, ignored result fields).
pub type NoticeFn = Arc<dyn Fn(String) + Send + Sync>;

struct Entry {
    id: u64,
    owner: Owner,
    handler: Arc<dyn HookHandler>,
}

/// The outcome of [`HookBus::emit`]: the event as the last handler left it, and the block
/// reason when a handler blocked.
#[derive(Debug, Clone, PartialEq)]
pub struct Emitted {
    pub event: HookEvent,
    pub blocked: Option<String>,
}

/// Subscriptions per event kind.
pub struct HookBus {
    lists: [RwLock<Arc<Vec<Arc<Entry>>>>; EventKind::ALL.len()],
    mask: AtomicU32,
    notice: NoticeFn,
    repeats: Arc<repeats::Repeats>,
    weak_self: OnceLock<Weak<HookBus>>,
}

impl HookBus {
    /// A bus reporting through `notice`; a report that repeats is counted until
    /// [`HookBus::flush_reports`].
    pub fn new(notice: NoticeFn) -> Arc<Self> {
        let repeats = Arc::new(repeats::Repeats::new(notice));
        let counted = repeats.clone();
        let bus = Arc::new(HookBus {
            lists: std::array::from_fn(|_| RwLock::new(Arc::new(Vec::new()))),
            mask: AtomicU32::new(0),
            notice: Arc::new(move |m| counted.notice(m)),
            repeats,
            weak_self: OnceLock::new(),
        });
        let _ = bus.weak_self.set(Arc::downgrade(&bus));
        bus
    }

    /// Reports how often each report of the run repeated ("… 6,310 more: ...").
    pub fn flush_reports(&self) {
        self.repeats.flush();
    }

    /// Whether anybody listens to `kind`; callers skip building the event when not.
    #[inline]
    pub fn has(&self, kind: EventKind) -> bool {
        self.mask.load(Ordering::Acquire) & kind.bit() != 0
    }

    /// Subscribes `handler` to `kind` for `owner`.
    pub fn on(&self, kind: EventKind, owner: Owner, handler: Arc<dyn HookHandler>) -> Handle {
        self.on_with_id(next_id(), kind, owner, handler)
    }

    /// Subscribes with an id allocated beforehand (a reload stages registrations with their
    /// handles, then swaps them in).
    pub fn on_with_id(
        &self,
        id: u64,
        kind: EventKind,
        owner: Owner,
        handler: Arc<dyn HookHandler>,
    ) -> Handle {
        self.edit(kind, |list| {
            list.push(Arc::new(Entry { id, owner, handler }));
            list.sort_by_key(|e| (e.owner.order, e.id));
        });
        let target: Weak<dyn Unregister> = match self.weak_self.get() {
            Some(w) => w.clone(),
            None => Weak::<HookBus>::new(),
        };
        Handle::new(id, target)
    }

    /// Removes every handler `owner` registered; returns how many went.
    pub fn remove_owner(&self, owner: &Owner) -> usize {
        let mut removed = 0;
        for kind in EventKind::ALL {
            self.edit(kind, |list| {
                let before = list.len();
                list.retain(|e| &e.owner != owner);
                removed += before - list.len();
            });
        }
        removed
    }

    /// How many handlers `owner` has, per event kind (for listings).
    pub fn count_owner(&self, owner: &Owner) -> usize {
        EventKind::ALL
            .iter()
            .map(|k| {
                self.snapshot(*k)
                    .iter()
                    .filter(|e| &e.owner == owner)
                    .count()
            })
            .sum()
    }

    fn snapshot(&self, kind: EventKind) -> Arc<Vec<Arc<Entry>>> {
        self.lists[kind as usize]
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn edit(&self, kind: EventKind, f: impl FnOnce(&mut Vec<Arc<Entry>>)) {
        let mut guard = self.lists[kind as usize]
            .write()
            .unwrap_or_else(|p| p.into_inner());
        let mut list: Vec<Arc<Entry>> = guard.as_ref().clone();
        f(&mut list);
        let empty = list.is_empty();
        *guard = Arc::new(list);
        if empty {
            self.mask.fetch_and(!kind.bit(), Ordering::AcqRel);
        } else {
            self.mask.fetch_or(kind.bit(), Ordering::AcqRel);
        }
    }

    /// Runs only `owner`'s handlers of the event's kind (a reload tells the old version it
    /// stops and the new one it starts).
    pub async fn emit_owner(
        &self,
        owner: &Owner,
        event: HookEvent,
        ctx: &Arc<RunContext>,
    ) -> Emitted {
        self.run_chain(event, Some(owner), ctx).await
    }

    /// Runs the handlers of the event's kind in order, for the run `ctx`, and applies their
    /// results.
    pub async fn emit(&self, event: HookEvent, ctx: &Arc<RunContext>) -> Emitted {
        self.run_chain(event, None, ctx).await
    }

    async fn run_chain(
        &self,
        event: HookEvent,
        only: Option<&Owner>,
        ctx: &Arc<RunContext>,
    ) -> Emitted {
        let kind = event.kind();
        let mut out = Emitted {
            event,
            blocked: None,
        };
        if !self.has(kind) {
            return out;
        }
        let list = self.snapshot(kind);
        let mut i = 0;
        while i < list.len() {
            let entry = &list[i];
            i += 1;
            if only.is_some_and(|o| o != &entry.owner) {
                continue;
            }
            if let Some(group) = entry.handler.group() {
                let mut members = vec![group.member()];
                while let Some(next) = list.get(i).filter(|e| e.owner == entry.owner) {
                    match next.handler.group() {
                        Some(g) if g.key() == group.key() => members.push(g.member()),
                        _ => break,
                    }
                    i += 1;
                }
                let event = std::mem::replace(&mut out.event, HookEvent::placeholder());
                let owner = entry.owner.clone();
                out = group
                    .run(members, event, owner, self.notice.clone(), ctx)
                    .await;
                if out.blocked.is_some() {
                    return out;
                }
                continue;
            }
            let outcome = entry.handler.call(&out.event, ctx).await;
            if let Step::Blocked(reason) =
                apply_outcome(&mut out.event, &entry.owner, outcome, &self.notice)
            {
                out.blocked = Some(reason);
                return out;
            }
        }
        out
    }
}

impl Unregister for HookBus {
    fn unregister(&self, id: u64) -> bool {
        let mut found = false;
        for kind in EventKind::ALL {
            if self.snapshot(kind).iter().any(|e| e.id == id) {
                self.edit(kind, |list| list.retain(|e| e.id != id));
                found = true;
            }
        }
        found
    }
}

#[cfg(test)]
mod tests;
