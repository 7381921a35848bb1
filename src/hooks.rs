//! The hook bus: typed events ([`HookEvent`]), their results ([`HookResult`]) and
//! [`HookBus::emit`], which runs the subscribed handlers in order and applies the chaining
//! rules of the design doc: handlers run in load order then registration order, each sees the
//! event as rewritten by the ones before it, the first `block` stops the chain, a failing
//! handler is reported and skipped, except for `tool_call`, where it blocks the call.
//!
//! The bus knows no script engine: a handler is anything implementing [`HookHandler`].
//! An event nobody subscribed to costs one atomic load ([`HookBus::has`]).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, RwLock, Weak};

use serde_json::Value;

use crate::vocab::owner::{next_id, Handle, Owner, Unregister};
use crate::vocab::run::RunContext;
use futures_util::future::BoxFuture;

pub mod command;
mod event;
mod lazy;
pub mod repeats;
mod result;
mod text;
pub use event::{
    CallAbout, CompactReason, EventKind, HookEvent, InputSource, Origin, Reason, ScriptPayload,
    UpdateKind,
};
pub use lazy::{LazyField, SharedMessages};
pub use result::HookResult;
pub use text::SharedText;

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
    settle(event.kind(), owner, outcome, notice, |result| {
        result.apply(event, owner)
    })
}

/// [`apply_outcome`] on an event shared with others: it is copied only when a result rewrites
/// it, and then without the fields the result replaces.
pub fn apply_outcome_shared(
    event: &mut Arc<HookEvent>,
    owner: &Owner,
    outcome: Result<Option<Value>, HookError>,
    notice: &NoticeFn,
) -> Step {
    settle(event.kind(), owner, outcome, notice, |result| {
        if !result.rewrites() {
            return result.verdict(owner);
        }
        if Arc::get_mut(event).is_none() {
            *event = Arc::new(result.copy_for(event));
        }
        result.apply(Arc::make_mut(event), owner)
    })
}

/// The rules of [`apply_outcome`], with `apply` rewriting the event with a parsed result
/// (and giving the block reason, if it blocks).
fn settle(
    kind: EventKind,
    owner: &Owner,
    outcome: Result<Option<Value>, HookError>,
    notice: &NoticeFn,
    apply: impl FnOnce(HookResult) -> Option<String>,
) -> Step {
    match outcome {
        Ok(None) => Step::Unchanged,
        Ok(Some(value)) => {
            let (result, problems) = HookResult::from_value(value, kind);
            for p in problems {
                notice(format!("{owner} ({}): {p}", kind.name()));
            }
            let changed = result.rewrites();
            match apply(result) {
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
    /// Itself, for the handles it gives out.
    weak_self: Weak<HookBus>,
}

impl HookBus {
    /// A bus reporting through `notice`; a report that repeats is counted until
    /// [`HookBus::flush_reports`].
    pub fn new(notice: NoticeFn) -> Arc<Self> {
        Self::reporting_to(Arc::new(repeats::Repeats::new(notice)))
    }

    /// A bus reporting through `repeats`, which other sources of notices share.
    pub fn reporting_to(repeats: Arc<repeats::Repeats>) -> Arc<Self> {
        Arc::new_cyclic(|weak| HookBus {
            lists: std::array::from_fn(|_| RwLock::new(Arc::new(Vec::new()))),
            mask: AtomicU32::new(0),
            notice: repeats::Repeats::counting(&repeats),
            repeats,
            weak_self: weak.clone(),
        })
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
        let target: Weak<dyn Unregister> = self.weak_self.clone();
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
pub(crate) mod tests;
