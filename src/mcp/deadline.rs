//! The deadlines of one connection's requests: each request's own timer, reset by the
//! server's progress and held while the user answers it.
//!
//! A progress notification from the server resets the timeout of every running request of
//! the connection (the SDK picks the progress tokens itself, so a request cannot tell its
//! own): a request's deadline is its timeout after its start or after the last progress,
//! whichever came later. A request's timer sleeps to the deadline it knows of, then looks
//! again: progress meanwhile moves it on without waking anyone.
//!
//! While the server waits for the user (an elicitation is open, [`Deadlines::hold`]), no
//! request of the connection expires; once the last one is answered, every running request's
//! timeout starts again, as after progress. The user's reading and typing time is not the
//! server's. An elicitation is withdrawn once no request runs ([`Deadlines::none_running`]):
//! the call it was for was cancelled or is over.
//!
//! (Issue 39 measured a single watcher task for all of a connection's deadlines against a
//! timer per request: the tool call's latency moved by less than the noise, so the plain
//! timer stayed; benches/README.md.)

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// What the requests share.
struct Shared {
    state: Mutex<State>,
    /// Wakes the held timers: the last hold ended.
    released: Notify,
    /// Wakes those waiting for no request to run ([`Deadlines::none_running`]).
    ended: Notify,
    /// When the last progress notification (or the end of a hold) came: nanoseconds after
    /// `epoch` (0: none).
    progress: AtomicU64,
    epoch: Instant,
}

#[derive(Default)]
struct State {
    /// How many requests are running.
    running: usize,
    /// How many holds are open (see [`Deadlines::hold`]): while any is, nothing expires.
    held: usize,
}

/// The deadlines of one connection.
pub(super) struct Deadlines {
    shared: Shared,
}

impl Deadlines {
    /// The deadlines of a new connection.
    pub fn new() -> Arc<Deadlines> {
        Arc::new(Deadlines {
            shared: Shared {
                state: Mutex::new(State::default()),
                released: Notify::new(),
                ended: Notify::new(),
                progress: AtomicU64::new(0),
                epoch: Instant::now(),
            },
        })
    }

    /// A progress notification came: every running request's timeout starts again.
    pub fn progressed(&self) {
        mark_progress(&self.shared);
    }

    /// Holds every deadline until the returned guard is dropped (the user is answering the
    /// server); then every running request's timeout starts again.
    pub fn hold(&self) -> Hold<'_> {
        self.shared.lock().held += 1;
        Hold {
            shared: &self.shared,
        }
    }

    /// Whether any request is running.
    pub fn any_running(&self) -> bool {
        self.shared.lock().running > 0
    }

    /// Resolves once no request of the connection is running (at once when none is): an
    /// elicitation is for a call of ours, and nobody waits for its answer after that.
    pub async fn none_running(&self) {
        loop {
            let woken = self.shared.ended.notified();
            tokio::pin!(woken);
            // Listening before looking: the last request ending between the two is not missed.
            woken.as_mut().enable();
            if !self.any_running() {
                return;
            }
            woken.await;
        }
    }

    /// Registers a request of `timeout`; the guard ends it, its [`Guard::expired`] resolves
    /// once its deadline has passed.
    pub fn begin(&self, timeout: Duration) -> Guard<'_> {
        self.shared.lock().running += 1;
        Guard {
            shared: &self.shared,
            started: Instant::now(),
            timeout,
        }
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The last progress (or end of a hold), if any.
    fn progress(&self) -> Option<Instant> {
        match self.progress.load(Ordering::Acquire) {
            0 => None,
            ns => Some(self.epoch + Duration::from_nanos(ns)),
        }
    }
}

/// One running request; dropping it ends it.
pub(super) struct Guard<'a> {
    shared: &'a Shared,
    started: Instant,
    timeout: Duration,
}

impl Guard<'_> {
    /// Resolves once this request's deadline has passed with no hold open.
    pub async fn expired(&self) {
        loop {
            let released = self.shared.released.notified();
            tokio::pin!(released);
            // Listening before looking: a hold ending between the two is not missed.
            released.as_mut().enable();
            match self.deadline() {
                // Held: nothing expires until the hold ends.
                Err(()) => released.await,
                Ok(Some(at)) if at <= Instant::now() => return,
                Ok(Some(at)) => tokio::time::sleep_until(at.into()).await,
                // A timeout too long for the clock never ends.
                Ok(None) => std::future::pending().await,
            }
        }
    }

    /// This request's deadline as things stand; `Err` while a hold is open.
    fn deadline(&self) -> Result<Option<Instant>, ()> {
        if self.shared.lock().held > 0 {
            return Err(());
        }
        let from = self
            .shared
            .progress()
            .map_or(self.started, |p| p.max(self.started));
        Ok(from.checked_add(self.timeout))
    }

    #[cfg(test)]
    fn is_expired(&self) -> bool {
        matches!(self.deadline(), Ok(Some(at)) if at <= Instant::now())
    }
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.running = state.running.saturating_sub(1);
        if state.running == 0 {
            self.shared.ended.notify_waiters();
        }
    }
}

/// An open hold on a connection's deadlines ([`Deadlines::hold`]).
pub(super) struct Hold<'a> {
    shared: &'a Shared,
}

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        let s = self.shared;
        let mut state = s.lock();
        state.held = state.held.saturating_sub(1);
        if state.held == 0 {
            // As after progress: the timeouts start again now.
            mark_progress(s);
            s.released.notify_waiters();
        }
    }
}

/// Records a progress (or the end of a hold) now: every running request's timeout starts
/// again.
fn mark_progress(s: &Shared) {
    let at = s.epoch.elapsed().as_nanos().clamp(1, u64::MAX as u128) as u64;
    s.progress.store(at, Ordering::Release);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_request_expires_at_its_deadline_and_not_before() {
        let d = Deadlines::new();
        let start = Instant::now();
        let guard = d.begin(Duration::from_millis(150));
        guard.expired().await;
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(150), "{took:?}");
        assert!(took < Duration::from_millis(1500), "{took:?}");
    }

    #[tokio::test]
    async fn a_shorter_timeout_after_a_longer_one_is_kept_too() {
        let d = Deadlines::new();
        let long = d.begin(Duration::from_secs(60));
        let start = Instant::now();
        d.begin(Duration::from_millis(100)).expired().await;
        assert!(start.elapsed() < Duration::from_secs(5));
        assert!(!long.is_expired());
    }

    #[tokio::test]
    async fn progress_moves_every_running_deadline() {
        let d = Deadlines::new();
        let start = Instant::now();
        let first = d.begin(Duration::from_millis(300));
        let second = d.begin(Duration::from_millis(300));
        let beat = async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            d.progressed();
        };
        tokio::join!(beat, first.expired(), second.expired());
        // 300 ms after the beat, not after the start.
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(400), "{took:?}");
        assert!(took < Duration::from_secs(5), "{took:?}");
    }

    #[tokio::test]
    async fn a_hold_keeps_requests_from_expiring_and_its_end_starts_them_again() {
        let d = Deadlines::new();
        let start = Instant::now();
        let guard = d.begin(Duration::from_millis(200));
        let hold = d.hold();
        // A second request begun during the hold does not expire either.
        let second = d.begin(Duration::from_millis(50));
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(!guard.is_expired() && !second.is_expired());
        drop(hold);
        let released = Instant::now();
        tokio::join!(guard.expired(), second.expired());
        let after = released.elapsed();
        assert!(after >= Duration::from_millis(200), "{after:?}");
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[tokio::test]
    async fn an_ended_request_is_forgotten() {
        let d = Deadlines::new();
        drop(d.begin(Duration::from_millis(10)));
        let kept = d.begin(Duration::from_secs(60));
        assert!(d.any_running());
        drop(kept);
        assert!(!d.any_running());
        // Resolves at once with nothing running.
        d.none_running().await;
    }
}
