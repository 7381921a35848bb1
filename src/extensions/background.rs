//! Registrations that call an extension on their own, outside any run: subscriptions to
//! events between extensions (`api.events.on` / `api.events.emit`), timers (`api.timer`) and
//! file watches (`api.watch`). Each is owned by its extension and removed with it (a reload,
//! an unload) or by its handle.
//!
//! - An emitted event is queued and delivered by one dispatcher task, in order, to every
//!   subscriber of its name (the emitter's own included), each a call on that extension's
//!   worker. `emit` never waits for a handler, so two extensions that emit to each other from
//!   their handlers cannot deadlock. The queue is bounded ([`MAX_QUEUED_EVENTS`]).
//! - A timer or a watch is a task that sleeps (or waits for file events, debounced by
//!   [`WATCH_DEBOUNCE`]) and then calls the script; removing it cancels the task (and drops
//!   the watcher). A call still running when its timer fires again is not doubled: the next
//!   tick waits for it.
//!
//! Calls are made in the context of the session (`ctx.is_idle()` tells whether the agent
//! runs); a failing call is one notice.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

mod watch;

use super::script::CallbackId;
use super::worker::Worker;
use crate::hooks::NoticeFn;
use crate::vocab::owner::{Owner, Unregister};
use crate::vocab::run::RunContext;

/// Events waiting for delivery at most; `emit` beyond is an error.
pub const MAX_QUEUED_EVENTS: usize = 1024;
/// The data of the events waiting for delivery at most, in bytes of JSON.
pub const MAX_QUEUED_BYTES: usize = 16 * 1024 * 1024;
/// Calls in a row a timer or a watch may fail before it is stopped.
pub const MAX_FAILURES: u32 = 3;
/// Timers and watches one extension may have at once.
pub const MAX_TASKS_PER_EXTENSION: usize = 64;
/// The shortest interval of a repeating timer.
pub const MIN_REPEAT_MS: u64 = 10;
/// The longest delay of a timer (a day).
pub const MAX_TIMER_MS: u64 = 24 * 3600 * 1000;
/// How long mypi waits at exit for events still on their way.
pub const DRAIN_AT_EXIT: Duration = Duration::from_secs(2);
/// Quiet time after the last file change before a watch calls its script.
pub const WATCH_DEBOUNCE: Duration = Duration::from_millis(150);
/// The longest event name.
pub const MAX_EVENT_NAME: usize = 200;

/// A script function to call: the extension's worker and the callback.
#[derive(Clone)]
pub struct Target {
    pub worker: Arc<Worker>,
    pub cb: CallbackId,
}

struct Sub {
    id: u64,
    owner: Owner,
    name: String,
    target: Target,
}

struct Task {
    id: u64,
    owner: Owner,
    stop: CancellationToken,
}

/// What a timer or a watch waits for.
pub enum Trigger {
    Timer { ms: u64, repeat: bool },
    Watch { path: PathBuf },
}

/// One event on its way.
struct Delivery {
    name: String,
    data: Value,
    /// The size of `data` as JSON (counted against [`MAX_QUEUED_BYTES`]).
    size: usize,
    ctx: Arc<RunContext>,
}

/// All background registrations of the process.
pub struct Background {
    subs: RwLock<Vec<Sub>>,
    tasks: Mutex<Vec<Task>>,
    queue: OnceLock<mpsc::Sender<Delivery>>,
    queued_bytes: std::sync::atomic::AtomicUsize,
    /// Events queued and not yet delivered to all their handlers, and what wakes
    /// [`Background::drain`] when there are none.
    in_flight: std::sync::atomic::AtomicUsize,
    settled: tokio::sync::Notify,
    runtime: Option<tokio::runtime::Handle>,
    notice: NoticeFn,
    /// Itself, for the handles and tasks it gives out.
    weak_self: Weak<Background>,
}

impl Background {
    /// Background registrations reporting through `notice`; tasks run on the runtime current
    /// now (none outside a runtime: then nothing starts, and saying so is the caller's).
    pub fn new(notice: NoticeFn) -> Arc<Self> {
        Arc::new_cyclic(|weak| Background {
            subs: RwLock::new(Vec::new()),
            tasks: Mutex::new(Vec::new()),
            queue: OnceLock::new(),
            queued_bytes: std::sync::atomic::AtomicUsize::new(0),
            in_flight: std::sync::atomic::AtomicUsize::new(0),
            settled: tokio::sync::Notify::new(),
            runtime: tokio::runtime::Handle::try_current().ok(),
            notice,
            weak_self: weak.clone(),
        })
    }

    /// What a handle of these registrations unregisters through.
    pub fn target(&self) -> Weak<dyn Unregister> {
        self.weak_self.clone()
    }

    fn tasks(&self) -> std::sync::MutexGuard<'_, Vec<Task>> {
        self.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `api.events.on(name, fn)`.
    pub fn subscribe(&self, id: u64, owner: Owner, name: String, target: Target) {
        self.subs
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .push(Sub {
                id,
                owner,
                name,
                target,
            });
    }

    /// `api.events.emit(name, data)`: queues the event for its subscribers; returns at once.
    pub fn emit(&self, name: &str, data: Value, ctx: Arc<RunContext>) -> Result<(), String> {
        let subscribed = self
            .subs
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .any(|s| s.name == name);
        if !subscribed {
            return Ok(());
        }
        let queue = self.queue()?;
        use std::sync::atomic::Ordering;
        let size = crate::vocab::text::json_len(&data);
        if self.queued_bytes.fetch_add(size, Ordering::SeqCst) + size > MAX_QUEUED_BYTES {
            self.queued_bytes.fetch_sub(size, Ordering::SeqCst);
            return Err(format!(
                "the events waiting for their handlers hold {} already; emit less",
                super::crossing::mib(MAX_QUEUED_BYTES)
            ));
        }
        let delivery = Delivery {
            name: name.to_string(),
            data,
            size,
            ctx,
        };
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        let sent = queue.try_send(delivery);
        if sent.is_err() {
            self.queued_bytes.fetch_sub(size, Ordering::SeqCst);
            self.delivered();
        }
        sent.map_err(|e| match e {
            mpsc::error::TrySendError::Full(_) => format!(
                "{MAX_QUEUED_EVENTS} events are waiting for their handlers already; emit less often"
            ),
            mpsc::error::TrySendError::Closed(_) => "mypi is shutting down".to_string(),
        })
    }

    /// One event is done with (delivered to all its handlers, or dropped).
    fn delivered(&self) {
        use std::sync::atomic::Ordering;
        if self.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.settled.notify_waiters();
        }
    }

    /// Waits, at most `max`, until every event emitted so far has reached its handlers (print
    /// mode before it exits: an event a command emitted is not lost).
    pub async fn drain(&self, max: Duration) {
        use std::sync::atomic::Ordering;
        let deadline = tokio::time::Instant::now() + max;
        loop {
            let settled = self.settled.notified();
            if self.in_flight.load(Ordering::SeqCst) == 0 {
                return;
            }
            if tokio::time::timeout_at(deadline, settled).await.is_err() {
                return;
            }
        }
    }

    /// The delivery queue, its dispatcher started on first use.
    fn queue(&self) -> Result<&mpsc::Sender<Delivery>, String> {
        if let Some(q) = self.queue.get() {
            return Ok(q);
        }
        let rt = self.runtime()?;
        let (tx, rx) = mpsc::channel(MAX_QUEUED_EVENTS);
        if self.queue.set(tx).is_ok() {
            rt.spawn(dispatch(self.target_self(), rx));
        }
        self.queue
            .get()
            .ok_or_else(|| "the event queue could not be set up".to_string())
    }

    fn target_self(&self) -> Weak<Background> {
        self.weak_self.clone()
    }

    fn runtime(&self) -> Result<&tokio::runtime::Handle, String> {
        self.runtime
            .as_ref()
            .ok_or_else(|| "there is no agent here to run it (mypi ext check)".to_string())
    }

    /// The subscribers of `name`, in registration order.
    fn subscribers(&self, name: &str) -> Vec<(Owner, Target)> {
        self.subs
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|s| s.name == name)
            .map(|s| (s.owner.clone(), s.target.clone()))
            .collect()
    }

    /// Whether `owner` may start one more timer or watch.
    pub fn check_room(&self, owner: &Owner) -> Result<(), String> {
        let n = self.tasks().iter().filter(|t| &t.owner == owner).count();
        if n >= MAX_TASKS_PER_EXTENSION {
            return Err(format!(
                "an extension may have {MAX_TASKS_PER_EXTENSION} timers and watches at once; \
                 remove one first"
            ));
        }
        Ok(())
    }

    /// Starts a timer or a watch that calls `target` in the context `session` gives.
    pub fn start(
        &self,
        id: u64,
        owner: Owner,
        trigger: Trigger,
        target: Target,
        session: SessionFn,
    ) -> Result<(), String> {
        let rt = self.runtime()?.clone();
        let stop = CancellationToken::new();
        let call = Caller {
            owner: owner.clone(),
            target,
            session,
            notice: self.notice.clone(),
        };
        match trigger {
            Trigger::Timer { ms, repeat } => {
                rt.spawn(timer(ms, repeat, call, stop.clone()));
            }
            Trigger::Watch { path } => {
                let (tx, rx) = mpsc::unbounded_channel();
                let watcher = watch::watch(&path, tx)?;
                rt.spawn(watch::run(watcher, rx, call, stop.clone()));
            }
        }
        self.tasks().push(Task { id, owner, stop });
        Ok(())
    }

    /// How many subscriptions, timers and watches `owner` has.
    pub fn count_owner(&self, owner: &Owner) -> usize {
        let subs = self
            .subs
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|s| &s.owner == owner)
            .count();
        subs + self.tasks().iter().filter(|t| &t.owner == owner).count()
    }

    /// Removes everything `owner` registered here; how many went.
    pub fn remove_owner(&self, owner: &Owner) -> usize {
        let mut subs = self.subs.write().unwrap_or_else(|p| p.into_inner());
        let before = subs.len();
        subs.retain(|s| &s.owner != owner);
        let mut removed = before - subs.len();
        drop(subs);
        self.tasks().retain(|t| {
            let gone = &t.owner == owner;
            if gone {
                t.stop.cancel();
                removed += 1;
            }
            !gone
        });
        removed
    }

    /// Stops every task (mypi leaves).
    pub fn stop_all(&self) {
        for t in self.tasks().drain(..) {
            t.stop.cancel();
        }
    }
}

impl Unregister for Background {
    fn unregister(&self, id: u64) -> bool {
        let mut subs = self.subs.write().unwrap_or_else(|p| p.into_inner());
        let before = subs.len();
        subs.retain(|s| s.id != id);
        let mut found = before != subs.len();
        drop(subs);
        self.tasks().retain(|t| {
            let gone = t.id == id;
            if gone {
                t.stop.cancel();
                found = true;
            }
            !gone
        });
        found
    }
}

/// The context a background call is made in (the session's, current when it fires).
pub type SessionFn = Arc<dyn Fn() -> Arc<RunContext> + Send + Sync>;

/// Calls one script function for a timer or a watch.
pub(super) struct Caller {
    owner: Owner,
    target: Target,
    session: SessionFn,
    notice: NoticeFn,
}

impl Caller {
    /// Calls the function with `args`; a failure is a notice naming `what`. Returns false
    /// when the caller should stop: [`MAX_FAILURES`] calls in a row failed, or the extension
    /// is disabled.
    pub(super) async fn call(&self, what: &str, args: Vec<Value>, failures: &mut u32) -> bool {
        let ctx = (self.session)();
        let worker = &self.target.worker;
        match worker
            .call(self.target.cb, args, ctx, worker.limits.budget)
            .await
        {
            Ok(_) => {
                *failures = 0;
                true
            }
            Err(e) => {
                *failures += 1;
                let stop = *failures >= MAX_FAILURES || worker.is_disabled();
                let then = if stop {
                    format!(" ({what} is stopped after {failures} failures in a row)")
                } else {
                    String::new()
                };
                (self.notice)(format!(
                    "{} failed in {what}: {}{then}",
                    self.owner, e.message
                ));
                !stop
            }
        }
    }
}

async fn timer(ms: u64, repeat: bool, call: Caller, stop: CancellationToken) {
    let period = Duration::from_millis(ms);
    let mut failures = 0;
    let mut next = tokio::time::Instant::now() + period;
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep_until(next) => {}
        }
        if !call.call("a timer", Vec::new(), &mut failures).await || !repeat || stop.is_cancelled()
        {
            return;
        }
        // A call that took longer than the period is not made up for: the next comes a
        // period after it ended.
        next = (next + period).max(tokio::time::Instant::now());
    }
}

/// Delivers queued events in order, one subscriber after another.
async fn dispatch(bg: Weak<Background>, mut rx: mpsc::Receiver<Delivery>) {
    while let Some(d) = rx.recv().await {
        let Some(bg) = bg.upgrade() else {
            return;
        };
        bg.queued_bytes
            .fetch_sub(d.size, std::sync::atomic::Ordering::SeqCst);
        for (owner, target) in bg.subscribers(&d.name) {
            let worker = &target.worker;
            let args = vec![d.data.clone()];
            if let Err(e) = worker
                .call(target.cb, args, d.ctx.clone(), worker.limits.budget)
                .await
            {
                (bg.notice)(format!(
                    "{owner} failed in its handler of the event '{}': {}",
                    d.name, e.message
                ));
            }
        }
        bg.delivered();
    }
}

/// The payload of a watch's call: the paths that changed.
pub(super) fn changed(paths: &[PathBuf]) -> Value {
    json!({
        "paths": paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
    })
}
