//! The clock of an extension's calls. One `Meter` per worker records, for the call running
//! on it now, when it started, its budget, and how long it has waited on host operations
//! (`api.exec`, `ctx.ui.confirm`, later MCP calls and child agents). Script time is the call's
//! wall time minus host time; it is what the CPU budget counts (engines check it through a
//! [`CallClock`]) and what the caller's watchdog reads to tell a call stuck in native code
//! from one that waits on the host. Every reading is taken under one lock, so the watchdog
//! never sees a host wait that ended but was not counted yet.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::run::RunContext;

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
}

struct Call {
    start: Instant,
    budget: Duration,
    host: Duration,
    /// When the current host wait began, and how many are nested.
    host_since: Option<Instant>,
    host_depth: u32,
}

impl Call {
    fn used(&self, now: Instant) -> Duration {
        let waiting = self.host_since.map_or(Duration::ZERO, |s| now - s);
        (now - self.start).saturating_sub(self.host + waiting)
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

    /// A call with `budget`, made by `run` (whose cancellation stops it), starts now.
    pub fn begin(self: &Arc<Self>, budget: Duration, run: Option<Arc<RunContext>>) -> CallClock {
        self.lock().call = Some(Call {
            start: Instant::now(),
            budget,
            host: Duration::ZERO,
            host_since: None,
            host_depth: 0,
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
        std::thread::sleep(Duration::from_millis(60));
        assert!(clock.exceeded(Duration::from_millis(50)));
        assert!(
            matches!(meter.watch(), Watch::Script { used, .. } if used >= Duration::from_millis(60))
        );
        meter.end();
        assert_eq!(meter.watch(), Watch::Idle);
    }
}
