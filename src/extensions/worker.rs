//! One worker thread per extension. The thread builds the engine, runs the script's top level,
//! then serves calls one at a time. The async side sends a call and waits with a wall-clock
//! deadline (the budget plus a grace period plus time the script spent waiting on the host),
//! so a call stuck inside native code is given up without stalling the agent: the extension is
//! marked busy until its thread answers again, and disabled after repeated failures.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::oneshot;

use super::api::{ApiLink, CallCtx, CallbackId, EngineFactory, ErrorKind, Limits, ScriptError};

/// Extra wall-clock time past the budget before the host gives up on a call.
pub const GRACE: Duration = Duration::from_millis(500);
/// Calls in a row that fail on their budget (or are given up) before the extension is
/// disabled.
pub const MAX_STRIKES: u32 = 3;
/// Stack of a worker thread: deep native recursion must hit Lua's limits, not the guard page.
const STACK_BYTES: usize = 8 * 1024 * 1024;

enum Job {
    Call {
        cb: CallbackId,
        args: Vec<Value>,
        ctx: CallCtx,
        budget: Duration,
        reply: oneshot::Sender<Result<Value, ScriptError>>,
    },
    State {
        reply: oneshot::Sender<Value>,
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
    /// The deadline passed.
    TimedOut,
    /// The thread dropped the reply (it stopped).
    Gone,
}

/// The async side of an extension's thread.
pub struct Worker {
    pub name: String,
    jobs: std_mpsc::Sender<Job>,
    /// Set when the host gave up on a call; cleared when the thread finishes a job.
    stuck: Arc<AtomicBool>,
    strikes: AtomicU32,
    disabled: AtomicBool,
    /// Calls sent and still waited for by their caller (within their own deadline).
    in_flight: AtomicU32,
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
        let stuck = Arc::new(AtomicBool::new(false));
        let worker = Arc::new(Worker {
            name: name.clone(),
            jobs: jobs_tx,
            stuck: stuck.clone(),
            strikes: AtomicU32::new(0),
            disabled: AtomicBool::new(false),
            in_flight: AtomicU32::new(0),
            link: OnceLock::new(),
            limits,
        });
        let link = make_link(&worker);
        let _ = worker.link.set(link.clone());
        let (load_tx, load_rx) = oneshot::channel();
        let spawned = std::thread::Builder::new()
            .name(format!("ext:{name}"))
            .stack_size(STACK_BYTES)
            .spawn(move || serve(factory, link, limits, jobs_rx, load_tx, stuck));
        if let Err(e) = spawned {
            let (tx, rx) = oneshot::channel();
            let _ = tx.send(Err(ScriptError::new(
                ErrorKind::Unavailable,
                format!("cannot start a thread for {name}: {e}"),
            )));
            return (worker, rx);
        }
        (worker, load_rx)
    }

    pub fn link(&self) -> Option<&Arc<ApiLink>> {
        self.link.get()
    }

    pub fn is_busy(&self) -> bool {
        self.stuck.load(Ordering::SeqCst)
    }

    pub fn is_disabled(&self) -> bool {
        self.disabled.load(Ordering::SeqCst)
    }

    /// Waits for a reply with the call deadline.
    pub async fn wait<T>(&self, rx: &mut oneshot::Receiver<T>, budget: Duration) -> Waited<T> {
        let start = Instant::now();
        loop {
            let host = self.link().map(|l| l.host_time()).unwrap_or_default();
            let deadline = start + budget + GRACE + host;
            match tokio::time::timeout_at(deadline.into(), &mut *rx).await {
                Ok(Ok(v)) => return Waited::Answer(v),
                Ok(Err(_)) => return Waited::Gone,
                Err(_) => {
                    let link = self.link();
                    let waiting_on_host = link.is_some_and(|l| l.in_host_op());
                    let host_grew = link.is_some_and(|l| l.host_time() > host);
                    if !(waiting_on_host || host_grew) {
                        return Waited::TimedOut;
                    }
                }
            }
        }
    }

    /// Calls callback `cb` with `args` on the extension's thread.
    pub async fn call(
        &self,
        cb: CallbackId,
        args: Vec<Value>,
        ctx: CallCtx,
        budget: Duration,
    ) -> Result<Value, ScriptError> {
        if self.is_disabled() {
            return Err(ScriptError::new(
                ErrorKind::Unavailable,
                format!(
                    "{} is disabled after {MAX_STRIKES} calls in a row failed on their time \
                     budget; fix the script and reload it",
                    self.name
                ),
            ));
        }
        if self.is_busy() {
            return Err(ScriptError::new(
                ErrorKind::Unavailable,
                format!(
                    "{} is busy: an earlier call is still stuck in native code",
                    self.name
                ),
            ));
        }
        let (reply, mut rx) = oneshot::channel();
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
        let waited = {
            // Counted until the wait ends, also when the caller drops this future.
            let _in_flight = InFlight::enter(&self.in_flight);
            match spin_for_reply(&mut rx) {
                Some(result) => Waited::Answer(result),
                None => self.wait(&mut rx, budget).await,
            }
        };
        let result = match waited {
            Waited::Answer(r) => r,
            Waited::TimedOut => {
                self.stuck.store(true, Ordering::SeqCst);
                Err(ScriptError::new(
                    ErrorKind::Unavailable,
                    format!(
                        "{} did not answer within {:.1} s (stuck in native code?); it is \
                         marked busy until it does",
                        self.name,
                        (budget + GRACE).as_secs_f64()
                    ),
                ))
            }
            Waited::Gone => Err(self.gone()),
        };
        self.count(&result);
        result
    }

    fn count(&self, result: &Result<Value, ScriptError>) {
        match result {
            Err(e) if matches!(e.kind, ErrorKind::Budget | ErrorKind::Unavailable) => {
                if self.strikes.fetch_add(1, Ordering::SeqCst) + 1 >= MAX_STRIKES {
                    self.disabled.store(true, Ordering::SeqCst);
                }
            }
            _ => self.strikes.store(0, Ordering::SeqCst),
        }
    }

    /// `api.state` as the script holds it now (`{}` when the thread does not answer). The
    /// request queues behind calls already running (a tool may have a budget longer than the
    /// default), so the wait goes on while such a call is still being waited for.
    pub async fn state(&self) -> Value {
        let (reply, mut rx) = oneshot::channel();
        if self.jobs.send(Job::State { reply }).is_err() {
            return Value::Object(Default::default());
        }
        loop {
            match self.wait(&mut rx, self.limits.budget).await {
                Waited::Answer(v) => return v,
                Waited::TimedOut if self.in_flight.load(Ordering::SeqCst) > 0 => continue,
                _ => return Value::Object(Default::default()),
            }
        }
    }

    /// Replaces `api.state` (a reload hands over what the old version left).
    pub async fn set_state(&self, state: Value) -> Result<(), ScriptError> {
        let (reply, mut rx) = oneshot::channel();
        if self.jobs.send(Job::SetState { state, reply }).is_err() {
            return Err(self.gone());
        }
        match self.wait(&mut rx, self.limits.budget).await {
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

/// How long a caller spins for the reply before awaiting it. Most script calls finish in a
/// few microseconds, and waking the async runtime would cost more than the call.
const SPIN: Duration = Duration::from_micros(40);

/// A reply that arrives within [`SPIN`], without going through the async runtime.
fn spin_for_reply<T>(rx: &mut oneshot::Receiver<T>) -> Option<T> {
    let start = Instant::now();
    while start.elapsed() < SPIN {
        match rx.try_recv() {
            Ok(v) => return Some(v),
            Err(oneshot::error::TryRecvError::Empty) => std::hint::spin_loop(),
            Err(oneshot::error::TryRecvError::Closed) => return None,
        }
    }
    None
}

/// Counts one call in [`Worker::in_flight`] while alive.
struct InFlight<'a>(&'a AtomicU32);

impl<'a> InFlight<'a> {
    fn enter(count: &'a AtomicU32) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        InFlight(count)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

fn serve(
    factory: EngineFactory,
    link: Arc<ApiLink>,
    limits: Limits,
    jobs: std_mpsc::Receiver<Job>,
    loaded: oneshot::Sender<Result<Vec<PathBuf>, ScriptError>>,
    stuck: Arc<AtomicBool>,
) {
    let mut engine = match factory(link, limits) {
        Ok(engine) => engine,
        Err(e) => {
            let _ = loaded.send(Err(e));
            return;
        }
    };
    let outcome = engine.load().map(|()| engine.required_files());
    let ok = outcome.is_ok();
    let _ = loaded.send(outcome);
    if !ok {
        return;
    }
    while let Ok(job) = jobs.recv() {
        match job {
            Job::Call {
                cb,
                args,
                ctx,
                budget,
                reply,
            } => {
                let result = engine.call(cb, args, &ctx, budget);
                stuck.store(false, Ordering::SeqCst);
                let _ = reply.send(result);
            }
            Job::State { reply } => {
                let _ = reply.send(engine.state());
            }
            Job::SetState { state, reply } => {
                let _ = reply.send(engine.set_state(state));
            }
        }
    }
}
