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

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
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

/// Polls `ready` for up to [`WINDOW`] (when a [`Slot`] is free), pausing a few times, then
/// yielding the CPU, between polls. `None` when nothing came: sleep on it then.
pub fn poll<T>(ready: impl FnMut() -> Option<T>) -> Option<T> {
    let _slot = Slot::take()?;
    poll_within(WINDOW, ready)
}

/// The loop of [`poll`], for up to `window`.
fn poll_within<T>(window: Duration, mut ready: impl FnMut() -> Option<T>) -> Option<T> {
    let start = Instant::now();
    let mut polls = 0u32;
    loop {
        if let Some(v) = ready() {
            return Some(v);
        }
        polls = polls.wrapping_add(1);
        if polls.is_multiple_of(YIELD_EVERY) {
            if start.elapsed() >= window {
                return None;
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
        let mut n = 0;
        assert_eq!(
            poll_within(WINDOW, || {
                n += 1;
                (n == 3).then_some(n)
            }),
            Some(3)
        );
        let start = Instant::now();
        assert_eq!(poll_within(WINDOW, || None::<()>), None);
        // The window is tens of µs; a busy machine may not run the thread for a while
        // between two polls, but a poll that never gave up would take forever.
        let took = start.elapsed();
        assert!(took < Duration::from_secs(1), "{took:?}");
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
}
