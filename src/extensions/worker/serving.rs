//! The extension's thread: it builds the engine, runs the script's top level, then serves
//! jobs one at a time ([`serve`]); in a burst of jobs it polls for the next one before it
//! sleeps ([`handoff`]). An event its handlers rewrote is freed here, after the next answer
//! ([`Server::replaced`]), not by the caller.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::mpsc as std_mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::oneshot;

use super::{disabled, on_budget, Chain, Health, Job, DEEP_JOB};
use crate::extensions::api::{ApiLink, Engine, EngineFactory, EventView};
use crate::extensions::handoff::{self, Side, Sides};
use crate::extensions::script::{CallbackId, Limits, ScriptError};
use crate::hooks::{self, HookError, HookEvent, NoticeFn, Step};
use crate::vocab::owner::Owner;
use crate::vocab::run::RunContext;

/// The thread's body: the load, then the jobs.
///
/// The load runs on a stack the extension threads share ([`on_load_stack`]), so the thread's
/// own stack only ever holds this loop and the jobs; where it ran on the thread's own stack,
/// what it touched below the loop is given back at once ([`release_load_stack`]). The load
/// and each job run in frames of their own ([`load`], [`Server::serve`]), never inlined here:
/// the frame the thread idles in stays small (inlined, a job's handling made it 2.7 KiB).
///
/// [`on_load_stack`]: crate::extensions::thread::on_load_stack
/// [`release_load_stack`]: crate::extensions::thread::release_load_stack
pub(super) fn serve(
    factory: EngineFactory,
    link: Arc<ApiLink>,
    limits: Limits,
    jobs: std_mpsc::Receiver<Job>,
    loaded: oneshot::Sender<Result<Vec<PathBuf>, ScriptError>>,
    health: Arc<Health>,
) {
    let (shared, engine) =
        crate::extensions::thread::on_load_stack(|| load(factory, &link, limits, loaded, &health));
    let Some(engine) = engine else {
        return;
    };
    if !shared {
        crate::extensions::thread::release_load_stack();
    }
    let mut server = Server {
        engine,
        link,
        health,
        replaced: None,
    };
    // Whether the last job came within the window of the one before it ended.
    let (mut burst, mut ended) = (false, None::<Instant>);
    while let Some(job) = next_job(&jobs, burst, &server.health.sides, &mut server.replaced) {
        let started = Instant::now();
        // Where the job runs, for a caller that polls for its answer meanwhile.
        server.health.sides.note(Side::Server);
        burst = ended.is_some_and(|e| started.duration_since(e) < handoff::WINDOW);
        server.health.served.fetch_add(1, Ordering::SeqCst);
        server.serve(job, started);
        if started.elapsed() > DEEP_JOB {
            crate::extensions::thread::release_unused_stack();
        }
        server.health.stuck.store(false, Ordering::SeqCst);
        ended = Some(Instant::now());
    }
}

/// Builds the engine and runs the script's top level; sends the outcome to `loaded`. The
/// engine, if the script loaded.
#[inline(never)]
fn load(
    factory: EngineFactory,
    link: &Arc<ApiLink>,
    limits: Limits,
    loaded: oneshot::Sender<Result<Vec<PathBuf>, ScriptError>>,
    health: &Health,
) -> Option<Box<dyn Engine>> {
    // A conversion still running when the host gives up on its call stops there.
    crate::extensions::crossing::set_thread_abandoned(health.stuck.clone());
    let mut engine = match factory(link.clone(), limits) {
        Ok(engine) => engine,
        Err(e) => {
            health.loading.store(false, Ordering::SeqCst);
            let _ = loaded.send(Err(e));
            return None;
        }
    };
    let outcome = engine.load().map(|()| engine.required_files());
    link.meter().end();
    health.loading.store(false, Ordering::SeqCst);
    let ok = outcome.is_ok();
    let _ = loaded.send(outcome);
    ok.then_some(engine)
}

/// The thread's next job, `None` once the extension is dropped. In a `burst` it polls for up
/// to [`handoff::WINDOW`] before sleeping; it frees `replaced` before it sleeps.
fn next_job(
    jobs: &std_mpsc::Receiver<Job>,
    burst: bool,
    sides: &Sides,
    replaced: &mut Option<Arc<HookEvent>>,
) -> Option<Job> {
    if burst {
        if let Some(job) = handoff::poll(sides, Side::Server, || jobs.try_recv().ok()) {
            return Some(job);
        }
    }
    replaced.take();
    jobs.recv().ok()
}

/// The thread's side: the engine and what each job needs around it.
struct Server {
    engine: Box<dyn Engine>,
    link: Arc<ApiLink>,
    health: Arc<Health>,
    /// The event of the last chain whose handlers rewrote it, as the caller sent it. Held
    /// until after the next answer (or until the thread sleeps) so that this thread, not
    /// the caller, frees it: by then the caller has let go of its reference, and the frees
    /// (a whole conversation, for a `context` rewrite) run here while the caller goes on
    /// instead of on the caller's path. About 1.5 µs of a small handler call.
    replaced: Option<Arc<HookEvent>>,
}

impl Server {
    /// One job (in a frame of its own: see [`serve`]).
    #[inline(never)]
    fn serve(&mut self, job: Job, started: Instant) {
        match job {
            Job::Call {
                cb,
                args,
                ctx,
                budget,
                reply,
            } => {
                let result = self.call(cb, &args, &ctx, budget);
                self.answer(started, reply, result);
            }
            Job::Chain {
                chain,
                ctx,
                budget,
                reply,
            } => {
                let Chain {
                    callbacks,
                    event,
                    owner,
                    notice,
                } = chain;
                let sent = event.clone();
                let emitted = self.run_chain(&callbacks, event, (&owner, &notice), &ctx, budget);
                // An event sent back is let go before the answer: held, it would make the
                // caller copy it. The one held before is freed after the answer, and so is
                // what else the job brought: the caller does not wait for that.
                let rewritten = !Arc::ptr_eq(&sent, &emitted.0);
                let before = std::mem::replace(&mut self.replaced, rewritten.then_some(sent));
                self.answer(started, reply, emitted);
                self.engine.end_event();
                drop((before, callbacks, owner, notice));
            }
            Job::State { reply } => {
                let state = self.engine.state();
                self.answer(started, reply, state);
            }
            Job::SetState { state, reply } => {
                let done = self.engine.set_state(state);
                self.answer(started, reply, done);
            }
        }
    }

    /// Sends a job's answer. The job's service time (whether its caller polls next time) is
    /// taken before the send: waking a caller that slept is no part of the job, and counted
    /// in, it would keep a caller that slept once sleeping.
    fn answer<T>(&self, started: Instant, reply: oneshot::Sender<T>, value: T) {
        self.health.service.set(started.elapsed());
        let _ = reply.send(value);
    }

    /// One callback, with the run's context current and its outcome counted.
    fn call(
        &mut self,
        cb: CallbackId,
        args: &[Value],
        ctx: &Arc<RunContext>,
        budget: Duration,
    ) -> Result<Value, ScriptError> {
        self.around(ctx, |engine| engine.call(cb, args, ctx, budget))
    }

    /// Runs `f` on the engine with `ctx` as the current run; counts the outcome.
    fn around(
        &mut self,
        ctx: &Arc<RunContext>,
        f: impl FnOnce(&mut dyn Engine) -> Result<Value, ScriptError>,
    ) -> Result<Value, ScriptError> {
        self.link.set_current(Some(ctx.clone()));
        let result = f(self.engine.as_mut());
        self.link.meter().end();
        self.link.set_current(None);
        self.health.count(on_budget(&result));
        result
    }

    /// The handlers in order, each seeing the event as the ones before left it, up to the
    /// end of the chain or its first block; the rules are [`hooks::apply_outcome`]'s, the
    /// same as for handlers of the core. The engine's view of the event stays until
    /// [`Engine::end_event`].
    fn run_chain(
        &mut self,
        callbacks: &[CallbackId],
        mut event: Arc<HookEvent>,
        (owner, notice): (&Owner, &NoticeFn),
        ctx: &Arc<RunContext>,
        budget: Duration,
    ) -> (Arc<HookEvent>, Option<String>) {
        // The id of the script's view of the event, new only when a handler changed it.
        let mut view = None;
        for &cb in callbacks {
            let outcome = if self.health.disabled.load(Ordering::SeqCst) {
                Err(HookError::new(disabled(&self.link.info.name)))
            } else {
                let view = EventView {
                    id: *view.get_or_insert_with(EventView::next_id),
                    event: &event,
                };
                let called = self.around(ctx, |engine| engine.call_event(cb, &view, ctx, budget));
                match called {
                    Ok(Value::Null) => continue,
                    Ok(v) => Ok(Some(v)),
                    Err(e) => Err(HookError::new(e.message)),
                }
            };
            match hooks::apply_outcome_shared(&mut event, owner, outcome, notice) {
                Step::Unchanged => {}
                Step::Changed => view = None,
                Step::Blocked(reason) => return (event, Some(reason)),
            }
        }
        (event, None)
    }
}
