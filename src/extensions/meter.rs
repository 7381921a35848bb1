//! The clock of an extension's calls. One `Meter` per worker records, for the call running
//! on it now, when it started, its budget, and how long it has waited on host operations
//! (`api.exec`, `ctx.ui.confirm`, later MCP calls and child agents). Script time is the CPU
//! time the worker thread used in the call, host waits left out; it is what the CPU budget
//! counts (engines check it through a [`CallClock`]) and what the caller's watchdog reads to
//! tell a call stuck in native code from one that waits on the host. Every reading is taken
//! under one lock, so the watchdog never sees a host wait that ended but was not counted yet.
//!
//! CPU time, not wall time: on a busy machine a thread waits for a core, and a script that
//! needs a tenth of its budget must not be stopped for the time it was not running. The
//! thread's CPU clock costs a system call to read, so it is read only once the wall time
//! (never less) passes the budget, and a call's start reuses a reading less than
//! [`REUSE_READING`] old (a burst of short calls pays for one reading in many). A call blocked in native code uses no CPU: it still ends
//! once its wall time passes [`STUCK_FACTOR`] times its budget.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::platform::sys::ThreadClock;
use crate::vocab::run::RunContext;

/// A call whose wall time (host waits left out) passes this many times its budget is over it,
/// whatever CPU time it used: it is blocked, not slow.
pub const STUCK_FACTOR: u32 = 8;

/// What the worker is doing, as the caller's watchdog sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Watch {
    /// No script call is running (between calls, or queued work of the host).
    Idle,
    /// The running call waits on a host operation.
    Host,
    /// The running call is in script code and has used this much of its budget.
    Script { used: Duration, budget: Duration },
}

#[derive(Default)]
struct State {
    call: Option<Call>,
    /// The worker thread's CPU clock, once asked for (a meter serves one worker thread).
    clock: Option<ThreadClock>,
    /// The clock's last reading, and when it was taken.
    last: Option<(Instant, Duration)>,
}

/// How old a reading of the CPU clock may be to stand for a call's start: a burst of short
/// calls (a handler per streamed delta) then pays the system call once in many calls, and a
/// call is charged at most this much CPU time it did not use.
const REUSE_READING: Duration = Duration::from_micros(100);

struct Call {
    start: Instant,
    budget: Duration,
    host: Duration,
    /// When the current host wait began, and how many are nested.
    host_since: Option<Instant>,
    host_depth: u32,
    /// The worker thread's CPU clock and its reading at the start (`None`: not readable,
    /// and wall time counts).
    cpu: Option<(ThreadClock, Duration)>,
    /// CPU time the thread used in host waits, and its reading when the current one began.
    host_cpu: Duration,
    host_cpu_since: Option<Duration>,
}

impl Call {
    /// Wall time of the call, host waits left out.
    fn wall(&self, now: Instant) -> Duration {
        let waiting = self.host_since.map_or(Duration::ZERO, |s| now - s);
        (now - self.start).saturating_sub(self.host + waiting)
    }

    /// Script time: the wall time while it is within the budget (CPU time is never more);
    /// past it, the thread's CPU time, unless the wall time says the call is blocked.
    fn used(&self, now: Instant) -> Duration {
        let wall = self.wall(now);
        if wall <= self.budget || wall > self.budget * STUCK_FACTOR {
            return wall;
        }
        let Some((clock, start)) = self.cpu else {
            return wall;
        };
        let Some(cpu) = clock.read() else {
            return wall;
        };
        let waiting = self
            .host_cpu_since
            .map_or(Duration::ZERO, |s| cpu.saturating_sub(s));
        cpu.saturating_sub(start)
            .saturating_sub(self.host_cpu + waiting)
    }
}

/// The clock of one worker's calls.
#[derive(Default)]
pub struct Meter {
    state: Mutex<State>,
}

impl Meter {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A call with `budget`, made by `run` (whose cancellation stops it), starts now on the
    /// calling thread (the worker's).
    pub fn begin(self: &Arc<Self>, budget: Duration, run: Option<Arc<RunContext>>) -> CallClock {
        let start = Instant::now();
        let mut state = self.lock();
        if state.clock.is_none() {
            state.clock = ThreadClock::current();
        }
        let cpu = match (state.clock, state.last) {
            (Some(clock), Some((when, cpu))) if start - when < REUSE_READING => Some((clock, cpu)),
            (Some(clock), _) => clock.read().map(|cpu| {
                state.last = Some((start, cpu));
                (clock, cpu)
            }),
            (None, _) => None,
        };
        state.call = Some(Call {
            start,
            budget,
            host: Duration::ZERO,
            host_since: None,
            host_depth: 0,
            cpu,
            host_cpu: Duration::ZERO,
            host_cpu_since: None,
        });
        CallClock {
            meter: self.clone(),
            run,
        }
    }

    /// The running call ended.
    pub fn end(&self) {
        self.lock().call = None;
    }

    /// Script time of the running call so far.
    pub fn used(&self) -> Duration {
        self.lock()
            .call
            .as_ref()
            .map_or(Duration::ZERO, |c| c.used(Instant::now()))
    }

    /// What the worker is doing now.
    pub fn watch(&self) -> Watch {
        match &self.lock().call {
            None => Watch::Idle,
            Some(c) if c.host_depth > 0 => Watch::Host,
            Some(c) => Watch::Script {
                used: c.used(Instant::now()),
                budget: c.budget,
            },
        }
    }

    /// Marks a host wait until the guard is dropped; its time does not count as script time.
    pub fn host(&self) -> HostWait<'_> {
        if let Some(c) = self.lock().call.as_mut() {
            if c.host_depth == 0 {
                c.host_since = Some(Instant::now());
                c.host_cpu_since = c.cpu.and_then(|(clock, _)| clock.read());
            }
            c.host_depth += 1;
        }
        HostWait(self)
    }
}

/// A host wait in progress (see [`Meter::host`]).
pub struct HostWait<'a>(&'a Meter);

impl Drop for HostWait<'_> {
    fn drop(&mut self) {
        if let Some(c) = self.0.lock().call.as_mut() {
            c.host_depth = c.host_depth.saturating_sub(1);
            if c.host_depth == 0 {
                if let Some(since) = c.host_since.take() {
                    c.host += since.elapsed();
                }
                let now = c.cpu.and_then(|(clock, _)| clock.read());
                if let (Some(since), Some(now)) = (c.host_cpu_since.take(), now) {
                    c.host_cpu += now.saturating_sub(since);
                }
            }
        }
    }
}

/// An engine's view of the running call's clock, and of its run's cancellation (a script
/// call of a cancelled run stops at the next check, like one over its budget).
#[derive(Clone)]
pub struct CallClock {
    meter: Arc<Meter>,
    /// The run that made the call (held rather than a clone of its token: cloning a token
    /// locks its node, which the caller's thread touches at the same time).
    run: Option<Arc<RunContext>>,
}

impl CallClock {
    /// Script time used so far (host waits left out).
    pub fn used(&self) -> Duration {
        self.meter.used()
    }

    pub fn exceeded(&self, budget: Duration) -> bool {
        self.used() > budget
    }

    /// Whether the run that made the call was cancelled.
    pub fn cancelled(&self) -> bool {
        self.run.as_ref().is_some_and(|r| r.cancel.is_cancelled())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_waits_do_not_count_as_script_time() {
        let meter = Arc::new(Meter::default());
        assert_eq!(meter.watch(), Watch::Idle);
        let clock = meter.begin(Duration::from_millis(50), None);
        {
            let _wait = meter.host();
            assert_eq!(meter.watch(), Watch::Host);
            std::thread::sleep(Duration::from_millis(80));
        }
        assert!(
            !clock.exceeded(Duration::from_millis(50)),
            "{:?}",
            clock.used()
        );
        // Script time is CPU time: 60 ms of work is over a 50 ms budget (however long it
        // takes on a busy machine).
        let clock_id = ThreadClock::current().unwrap();
        let before = clock_id.read().unwrap();
        while clock_id.read().unwrap() - before < Duration::from_millis(60) {
            std::hint::black_box(0u64);
        }
        assert!(clock.exceeded(Duration::from_millis(50)));
        assert!(
            matches!(meter.watch(), Watch::Script { used, .. } if used >= Duration::from_millis(60))
        );
        meter.end();
        assert_eq!(meter.watch(), Watch::Idle);
    }

    #[test]
    fn time_the_thread_does_not_run_is_not_script_time_until_it_looks_blocked() {
        // Sleeping stands for waiting for a core on a busy machine.
        let meter = Arc::new(Meter::default());
        let budget = Duration::from_millis(50);
        let clock = meter.begin(budget, None);
        std::thread::sleep(budget * 2);
        assert!(!clock.exceeded(budget), "{:?}", clock.used());
        std::thread::sleep(budget * STUCK_FACTOR);
        assert!(clock.exceeded(budget), "blocked for {:?}", clock.used());
        meter.end();
    }
}
