//! Short hand-offs between the agent and an extension's thread without a wake-up.
//!
//! Waking a sleeping thread costs this kind of machine (2 virtual CPUs) 15-40 µs, far more
//! than a typical handler (1-5 µs). So where the next message is likely to come within
//! [`WINDOW`], the waiting side polls for it instead of sleeping, for at most that long:
//!
//! - the caller waits for a reply that way when the extension's previous job took less than
//!   [`WINDOW`] (a handler that waits on the host, or a long one, is slept on at once);
//! - an extension's thread waits for its next job that way when the previous job came within
//!   [`WINDOW`] of the one before it (a burst: a tool batch, a stream of deltas); an
//!   extension called now and then sleeps between calls.
//!
//! The poll is bounded, gives the CPU to any other runnable thread every few polls
//! (`sched_yield` every [`YIELD_EVERY`] polls, pause instructions between), and at most one
//! thread per CPU polls at a time ([`Slot`]), so a waiting thread never keeps a core from a
//! thread with work: past the window, or with no slot free, it sleeps as before.
//!
//! Polling pays only where the two sides run on two CPUs: on one, a poll only delays the
//! thread it waits for, which runs once the poller yields. Two threads that hand off to each
//! other without sleeping can stay on one CPU for a whole burst while the other is idle
//! (neither sleeps, so no wake-up places either on the idle CPU, and the system's balancer
//! leaves a thread that ran a moment ago where it is). So each side notes the CPU it runs on
//! ([`Sides`]), and a side that shares the other's yields at every poll instead of every
//! [`YIELD_EVERY`]: one call through the host on one CPU takes 6.7 µs instead of 8.3
//! (3.6 on two; benches/README, eleventh pass). Moving the server to the other CPU would
//! give 3.6 there too, and was tried: where that CPU is busy, each yield then hands it to
//! the busy thread for a whole time slice, and calls took 4 ms.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The longest a side polls before it sleeps.
pub const WINDOW: Duration = Duration::from_micros(50);

/// Threads polling now, process-wide.
static POLLING: AtomicUsize = AtomicUsize::new(0);

/// How many threads may poll at once: one per CPU (the caller and the extension's thread
/// of a burst), none on a single CPU, where the other side cannot run while one polls.
fn max_polling() -> usize {
    static MAX: OnceLock<usize> = OnceLock::new();
    *MAX.get_or_init(
        || match std::thread::available_parallelism().map(|n| n.get()) {
            Ok(n) if n >= 2 => n,
            _ => 0,
        },
    )
}

/// The right to poll, held while polling.
struct Slot(());

impl Slot {
    /// A slot, if fewer than [`max_polling`] threads poll now.
    fn take() -> Option<Slot> {
        let max = max_polling();
        POLLING
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| Slot(()))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        POLLING.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The two sides of one hand-off: the caller, and the thread that serves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Caller = 0,
    Server = 1,
}

/// Where each side of one hand-off last ran, as far as it said ([`Sides::note`]).
#[derive(Debug)]
pub struct Sides([AtomicU32; 2]);

/// No CPU known.
const NOWHERE: u32 = u32::MAX;

impl Default for Sides {
    fn default() -> Self {
        Sides([AtomicU32::new(NOWHERE), AtomicU32::new(NOWHERE)])
    }
}

impl Sides {
    /// Records the CPU `me` runs on now; whether the other side last ran there too.
    pub fn note(&self, me: Side) -> bool {
        let Some(cpu) = crate::platform::sys::current_cpu() else {
            return false;
        };
        self.0[me as usize].store(cpu, Ordering::Relaxed);
        self.0[1 - me as usize].load(Ordering::Relaxed) == cpu
    }
}

/// Polls `ready` for up to [`WINDOW`] (when a [`Slot`] is free), pausing a few times, then
/// yielding the CPU, between polls; yielding it at every poll while the other side last ran
/// on this side's CPU. `None` when nothing came: sleep on it then.
pub fn poll<T>(sides: &Sides, me: Side, ready: impl FnMut() -> Option<T>) -> Option<T> {
    let _slot = Slot::take()?;
    poll_within(WINDOW, || sides.note(me), ready)
}

/// The loop of [`poll`], for up to `window`; `together` says whether the other side shares
/// this one's CPU (asked first and then every [`YIELD_EVERY`] polls).
fn poll_within<T>(
    window: Duration,
    mut together: impl FnMut() -> bool,
    mut ready: impl FnMut() -> Option<T>,
) -> Option<T> {
    let start = Instant::now();
    let mut polls = 0u32;
    let mut shared = together();
    loop {
        if let Some(v) = ready() {
            return Some(v);
        }
        polls = polls.wrapping_add(1);
        let due = polls.is_multiple_of(YIELD_EVERY);
        if shared || due {
            if start.elapsed() >= window {
                return None;
            }
            if due {
                shared = together();
            }
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Polls between looks at the clock and yields of the CPU (each costs a µs or more here,
/// longer than the hand-off it would delay).
const YIELD_EVERY: u32 = 32;

/// A duration seen last, shared between threads (ns; starts as "long").
pub struct Last(AtomicU64);

impl Default for Last {
    fn default() -> Self {
        Last(AtomicU64::new(u64::MAX))
    }
}

impl Last {
    pub fn set(&self, d: Duration) {
        self.0
            .store(d.as_nanos().min(u64::MAX as u128) as u64, Ordering::Relaxed);
    }

    /// Whether the last one was within [`WINDOW`].
    pub fn short(&self) -> bool {
        self.0.load(Ordering::Relaxed) < WINDOW.as_nanos() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_returns_what_comes_and_gives_up_after_the_window() {
        // Both ways: spinning between yields, and yielding at every poll.
        for shared in [false, true] {
            let mut n = 0;
            let got = poll_within(
                Duration::from_secs(60),
                || shared,
                || {
                    n += 1;
                    (n == 40).then_some(n)
                },
            );
            assert_eq!(got, Some(40), "shared: {shared}");
            let start = Instant::now();
            assert_eq!(poll_within(WINDOW, || shared, || None::<()>), None);
            // The window is tens of µs; a busy machine may not run the thread for a while
            // between two polls, but a poll that never gave up would take forever.
            let took = start.elapsed();
            assert!(took < Duration::from_secs(1), "{took:?}");
        }
    }

    #[test]
    fn a_side_sharing_the_others_cpu_yields_at_every_poll() {
        // With no window left, a poll gives up at its first yield: after one look when it
        // shares the CPU, after a run of [`YIELD_EVERY`] spins when it does not.
        for (shared, looks) in [(true, 1), (false, YIELD_EVERY)] {
            let mut n = 0;
            let got = poll_within(
                Duration::ZERO,
                || shared,
                || {
                    n += 1;
                    None::<()>
                },
            );
            assert_eq!((got, n), (None, looks), "shared: {shared}");
        }
    }

    #[test]
    fn together_is_asked_first_and_between_runs_of_polls() {
        let mut asked = 0;
        let mut n = 0;
        let got = poll_within(
            Duration::from_secs(60),
            || {
                asked += 1;
                false
            },
            || {
                n += 1;
                (n == 3 * YIELD_EVERY + 1).then_some(())
            },
        );
        assert_eq!(got, Some(()));
        assert_eq!(asked, 4, "once at the start, once per {YIELD_EVERY} polls");
    }

    #[test]
    fn slots_are_bounded() {
        // Other tests may hold slots meanwhile: only the bound is certain.
        let held: Vec<Slot> = std::iter::from_fn(Slot::take).take(64).collect();
        assert!(held.len() <= max_polling(), "{}", held.len());
    }

    #[test]
    fn last_is_long_until_set() {
        let last = Last::default();
        assert!(!last.short());
        last.set(Duration::from_micros(3));
        assert!(last.short());
        last.set(Duration::from_millis(3));
        assert!(!last.short());
    }

    #[test]
    fn sides_together_only_on_one_cpu() {
        let sides = Sides::default();
        // The other side has not said where it runs.
        assert!(!sides.note(Side::Server));
        assert_ne!(
            sides.0[Side::Server as usize].load(Ordering::Relaxed),
            NOWHERE
        );
        sides.0[Side::Caller as usize].store(NOWHERE - 1, Ordering::Relaxed);
        assert!(!sides.note(Side::Server));
        // Both sides noted from this thread: together, unless the system moved the thread
        // between the two notes (so a few tries).
        assert!((0..5).any(|_| {
            sides.note(Side::Caller);
            sides.note(Side::Server)
        }));
    }
}
