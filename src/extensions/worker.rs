//! One worker thread per extension, seen from the async side (the thread's own side is
//! `worker/serving.rs`). The thread builds the engine, runs the script's top level, then
//! serves jobs one at a time: a single callback (a tool, a command), or the whole chain of
//! the extension's handlers for one event (one round trip however many handlers it has).
//!
//! The async side sends a job and awaits the reply. It polls for the reply for a few tens of
//! µs when the thread's last job was that short ([`handoff`]); otherwise, and past that, it
//! sleeps. A watchdog reads the worker's [`Meter`](super::meter::Meter): a call whose script
//! time (wall time minus host waits) passes its budget plus [`GRACE`] is stuck in native
//! code, so the caller gives up and the extension is marked busy until its thread answers
//! again (disabled after [`MAX_STRIKES`] failures in a row). A call waiting on the host
//! (`api.exec`, `ctx.ui.confirm`, ...) is never given up on, however long it waits.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;

use super::api::{ApiLink, EngineFactory};
use super::handoff::{self, Last, Side, Sides};
use super::meter::Watch;
use super::script::{CallbackId, ErrorKind, Limits, ScriptError};
use crate::hooks::{self, Emitted, HookError, HookEvent, NoticeFn, Step};
use crate::vocab::owner::Owner;
use crate::vocab::run::RunContext;

mod serving;

/// Extra wall-clock time past the budget before the host gives up on a call.
pub const GRACE: Duration = Duration::from_millis(500);
/// Calls in a row that fail on their budget (or are given up) before the extension is
/// disabled.
pub const MAX_STRIKES: u32 = 3;

/// The handlers of one extension for one event, run in order with the chaining rules. The
/// event is shared with the caller (which needs it back if the worker never answers) and
/// copied only when a handler rewrites it.
pub struct Chain {
    pub callbacks: Vec<CallbackId>,
    pub event: Arc<HookEvent>,
    pub owner: Owner,
    pub notice: NoticeFn,
}

enum Job {
    Call {
        cb: CallbackId,
        args: Vec<Value>,
        ctx: Arc<RunContext>,
        budget: Duration,
        reply: oneshot::Sender<Result<Value, ScriptError>>,
    },
    Chain {
        chain: Chain,
        ctx: Arc<RunContext>,
        budget: Duration,
        reply: oneshot::Sender<(Arc<HookEvent>, Option<String>)>,
    },
    State {
        reply: oneshot::Sender<(Value, Vec<String>)>,
    },
    SetState {
        state: Value,
        reply: oneshot::Sender<Result<(), ScriptError>>,
    },
}

/// Resolves with the outcome of the script's top level: the module files it loaded, or why
/// it failed.
pub type LoadReceiver = oneshot::Receiver<Result<Vec<PathBuf>, ScriptError>>;

/// How waiting for the thread ended.
pub enum Waited<T> {
    Answer(T),
    /// The running call passed its budget plus the grace period (this long) in script time.
    TimedOut(Duration),
    /// The thread dropped the reply (it stopped).
    Gone,
    /// The run that made the call was cancelled and the script did not stop by itself in
    /// [`CANCEL_GRACE`] (it is stuck in native code): the caller stops waiting.
    Cancelled,
}

/// A job this long may have gone deep into the stack: its unused pages are given back.
const DEEP_JOB: Duration = Duration::from_millis(50);

/// How long a call of a cancelled run may take to stop by itself before its caller stops
/// waiting (the budget hook ends a script within a few thousand instructions).
const CANCEL_GRACE: Duration = Duration::from_millis(500);

/// Whether the extension can take calls; shared by the async side and the thread.
#[derive(Default)]
struct Health {
    /// Set when the host gave up on a call; cleared when the thread finishes a job.
    stuck: Arc<AtomicBool>,
    strikes: AtomicU32,
    disabled: AtomicBool,
    /// Jobs the thread has taken.
    served: AtomicU64,
    /// The script's top level has not returned yet.
    loading: AtomicBool,
    /// How long the thread took over its last job (whether a caller polls for the reply).
    service: Last,
    /// Where the caller and the thread last ran (how either polls: [`handoff::Sides`]).
    sides: Sides,
}

impl Health {
    /// Counts a call's outcome: budget failures and give-ups in a row disable the extension.
    fn count(&self, failed_on_budget: bool) {
        if failed_on_budget {
            if self.strikes.fetch_add(1, Ordering::SeqCst) + 1 >= MAX_STRIKES {
                self.disabled.store(true, Ordering::SeqCst);
            }
        } else {
            self.strikes.store(0, Ordering::SeqCst);
        }
    }
}

/// Why a disabled extension takes no calls.
fn disabled(name: &str) -> String {
    format!(
        "{name} is disabled after {MAX_STRIKES} calls in a row failed on their time budget; \
         fix the script and reload it"
    )
}

fn on_budget(result: &Result<Value, ScriptError>) -> bool {
    matches!(result, Err(e) if matches!(e.kind, ErrorKind::Budget | ErrorKind::Unavailable))
}

/// The async side of an extension's thread.
pub struct Worker {
    pub name: String,
    /// Unique per worker (a run records the workers waiting up its chain by it).
    pub id: u64,
    jobs: std_mpsc::Sender<Job>,
    health: Arc<Health>,
    /// The extension's link; its meter is the clock the watchdog reads.
    link: OnceLock<Arc<ApiLink>>,
    pub limits: Limits,
}

impl Worker {
    /// Starts the thread. `make_link` builds the extension's link once the worker exists (the
    /// link's registrar needs the worker to route calls back). Resolves the returned receiver
    /// with the outcome of the script's top level.
    pub fn spawn(
        name: String,
        limits: Limits,
        factory: EngineFactory,
        make_link: impl FnOnce(&Arc<Worker>) -> Arc<ApiLink>,
    ) -> (Arc<Worker>, LoadReceiver) {
        let (jobs_tx, jobs_rx) = std_mpsc::channel();
        let health = Arc::new(Health::default());
        health.loading.store(true, Ordering::SeqCst);
        let worker = Arc::new(Worker {
            name: name.clone(),
            id: crate::vocab::owner::next_id(),
            jobs: jobs_tx,
            health: health.clone(),
            link: OnceLock::new(),
            limits,
        });
        let link = make_link(&worker);
        let _ = worker.link.set(link.clone());
        let (load_tx, load_rx) = oneshot::channel();
        let spawned = super::thread::spawn(format!("ext:{name}"), move || {
            serving::serve(factory, link, limits, jobs_rx, load_tx, health)
        });
        if let Err(e) = spawned {
            worker.health.loading.store(false, Ordering::SeqCst);
            return (
                worker,
                failed_load(format!("cannot start a thread for {name}: {e}")),
            );
        }
        (worker, load_rx)
    }

    /// A worker that never started, whose load fails with `message`.
    pub fn not_started(
        name: String,
        limits: Limits,
        message: String,
    ) -> (Arc<Worker>, LoadReceiver) {
        let (jobs, _) = std_mpsc::channel();
        let worker = Arc::new(Worker {
            name,
            id: crate::vocab::owner::next_id(),
            jobs,
            health: Arc::new(Health::default()),
            link: OnceLock::new(),
            limits,
        });
        (worker, failed_load(message))
    }

    /// The script's file, as its errors name it.
    pub fn path(&self) -> String {
        match self.link.get() {
            Some(link) => link.info.path.display().to_string(),
            None => self.name.clone(),
        }
    }

    /// Whether the script's top level is still running (a load given up on may still be).
    pub fn is_loading(&self) -> bool {
        self.health.loading.load(Ordering::SeqCst)
    }

    pub fn link(&self) -> Option<&Arc<ApiLink>> {
        self.link.get()
    }

    pub fn is_busy(&self) -> bool {
        self.health.stuck.load(Ordering::SeqCst)
    }

    pub fn is_disabled(&self) -> bool {
        self.health.disabled.load(Ordering::SeqCst)
    }

    /// How many jobs the thread has taken (a chain of handlers is one job).
    pub fn jobs_served(&self) -> u64 {
        self.health.served.load(Ordering::SeqCst)
    }

    /// Waits for a reply. When the thread's last job was short, it first polls for up to
    /// [`handoff::WINDOW`]; then it sleeps until the reply comes or until the running call
    /// could have used up its budget plus [`GRACE`], and reads the meter again.
    pub async fn wait<T>(&self, rx: &mut oneshot::Receiver<T>) -> Waited<T> {
        if self.health.service.short() {
            use oneshot::error::TryRecvError;
            let polled = handoff::poll(&self.health.sides, Side::Caller, || match rx.try_recv() {
                Ok(v) => Some(Waited::Answer(v)),
                Err(TryRecvError::Closed) => Some(Waited::Gone),
                Err(TryRecvError::Empty) => None,
            });
            if let Some(waited) = polled {
                return waited;
            }
        }
        loop {
            let watch = self.link().map_or(Watch::Idle, |l| l.meter().watch());
            let wait = match watch {
                Watch::Idle | Watch::Host => self.limits.budget + GRACE,
                Watch::Script { used, budget } => match (budget + GRACE).checked_sub(used) {
                    Some(left) if !left.is_zero() => left,
                    _ => return Waited::TimedOut(budget + GRACE),
                },
            };
            match tokio::time::timeout(wait, &mut *rx).await {
                Ok(Ok(v)) => return Waited::Answer(v),
                Ok(Err(_)) => return Waited::Gone,
                Err(_) => continue,
            }
        }
    }

    /// Like [`Worker::wait`], but once `cancel` fires the call has [`CANCEL_GRACE`] to end; a
    /// call that does not (stuck in native code) is left behind and the extension marked busy
    /// until its thread answers, without a strike: Ctrl-C ends a prompt whatever the script
    /// is stuck in.
    async fn wait_cancellable<T>(
        &self,
        rx: &mut oneshot::Receiver<T>,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Waited<T> {
        tokio::select! {
            biased;
            w = self.wait(rx) => return w,
            _ = cancel.cancelled() => {}
        }
        match tokio::time::timeout(CANCEL_GRACE, self.wait(rx)).await {
            Ok(w) => w,
            Err(_) => {
                self.health.stuck.store(true, Ordering::SeqCst);
                Waited::Cancelled
            }
        }
    }

    fn cancelled(&self) -> ScriptError {
        ScriptError::new(
            ErrorKind::Unavailable,
            format!(
                "{}: stopped: the run was cancelled (the extension is busy until its call returns)",
                self.name
            ),
        )
    }

    /// Why the extension cannot take a call now, if it cannot.
    fn refuse(&self) -> Option<ScriptError> {
        if self.is_disabled() {
            return Some(ScriptError::new(
                ErrorKind::Unavailable,
                disabled(&self.name),
            ));
        }
        self.is_busy().then(|| {
            ScriptError::new(
                ErrorKind::Unavailable,
                format!(
                    "{} is busy: an earlier call is still stuck in native code",
                    self.name
                ),
            )
        })
    }

    fn gave_up(&self, after: Duration) -> ScriptError {
        self.health.stuck.store(true, Ordering::SeqCst);
        self.health.count(true);
        ScriptError::new(
            ErrorKind::Unavailable,
            format!(
                "{} did not answer within {:.1} s (stuck in native code?); it is marked busy \
                 until it does",
                self.name,
                after.as_secs_f64()
            ),
        )
    }

    /// Calls callback `cb` with `args` on the extension's thread.
    pub async fn call(
        &self,
        cb: CallbackId,
        args: Vec<Value>,
        ctx: Arc<RunContext>,
        budget: Duration,
    ) -> Result<Value, ScriptError> {
        if let Some(e) = self.refuse() {
            return Err(e);
        }
        let (reply, mut rx) = oneshot::channel();
        let cancel = ctx.cancel.clone();
        let job = Job::Call {
            cb,
            args,
            ctx,
            budget,
            reply,
        };
        if self.jobs.send(job).is_err() {
            return Err(self.gone());
        }
        match self.wait_cancellable(&mut rx, &cancel).await {
            Waited::Answer(r) => r,
            Waited::TimedOut(after) => Err(self.gave_up(after)),
            Waited::Gone => Err(self.gone()),
            Waited::Cancelled => Err(self.cancelled()),
        }
    }

    /// Runs the extension's handlers for one event in one round trip.
    pub async fn chain(&self, chain: Chain, ctx: Arc<RunContext>) -> Emitted {
        if let Some(e) = self.refuse() {
            return refused(chain, e);
        }
        let (reply, mut rx) = oneshot::channel();
        let (owner, notice, event) = (
            chain.owner.clone(),
            chain.notice.clone(),
            chain.event.clone(),
        );
        let cancel = ctx.cancel.clone();
        let job = Job::Chain {
            chain,
            ctx,
            budget: self.limits.budget,
            reply,
        };
        let failure = if self.jobs.send(job).is_err() {
            self.gone()
        } else {
            match self.wait_cancellable(&mut rx, &cancel).await {
                Waited::Answer((out, blocked)) => {
                    drop(event);
                    return Emitted {
                        event: Arc::unwrap_or_clone(out),
                        blocked,
                    };
                }
                Waited::TimedOut(after) => self.gave_up(after),
                Waited::Gone => self.gone(),
                Waited::Cancelled => self.cancelled(),
            }
        };
        refused_parts(Arc::unwrap_or_clone(event), &owner, &notice, failure)
    }

    /// `api.state` as the script holds it now (`{}` when the thread does not answer), and
    /// the fields left out of it ([`Engine::state`](super::api::Engine::state)). The request
    /// queues behind calls already running, however long they wait on the host.
    pub async fn state(&self) -> (Value, Vec<String>) {
        let empty = || (Value::Object(Default::default()), Vec::new());
        let (reply, mut rx) = oneshot::channel();
        if self.jobs.send(Job::State { reply }).is_err() {
            return empty();
        }
        match self.wait(&mut rx).await {
            Waited::Answer(v) => v,
            _ => empty(),
        }
    }

    /// Replaces `api.state` (a reload hands over what the old version left).
    pub async fn set_state(&self, state: Value) -> Result<(), ScriptError> {
        let (reply, mut rx) = oneshot::channel();
        if self.jobs.send(Job::SetState { state, reply }).is_err() {
            return Err(self.gone());
        }
        match self.wait(&mut rx).await {
            Waited::Answer(r) => r,
            _ => Err(self.gone()),
        }
    }

    fn gone(&self) -> ScriptError {
        ScriptError::new(
            ErrorKind::Unavailable,
            format!("{} is not running (its thread stopped)", self.name),
        )
    }
}

/// A load outcome that is already there: the failure `message`.
fn failed_load(message: String) -> LoadReceiver {
    let (tx, rx) = oneshot::channel();
    let _ = tx.send(Err(ScriptError::new(ErrorKind::Unavailable, message)));
    rx
}

/// A chain that could not run: the failure counts as each handler's (so a `tool_call` guard
/// that cannot run blocks the call).
fn refused(chain: Chain, e: ScriptError) -> Emitted {
    refused_parts(
        Arc::unwrap_or_clone(chain.event),
        &chain.owner,
        &chain.notice,
        e,
    )
}

fn refused_parts(
    mut event: HookEvent,
    owner: &Owner,
    notice: &NoticeFn,
    e: ScriptError,
) -> Emitted {
    let blocked =
        match hooks::apply_outcome(&mut event, owner, Err(HookError::new(e.message)), notice) {
            Step::Blocked(reason) => Some(reason),
            _ => None,
        };
    Emitted { event, blocked }
}
