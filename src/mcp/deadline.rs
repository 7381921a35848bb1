//! The deadlines of one connection's requests, kept by one watcher task instead of a timer
//! per request.
//!
//! A tokio timer set while the runtime's timer driver sleeps with none earlier wakes the
//! driver's thread to re-arm it. A request that set its own timer therefore cost about one
//! extra thread wake-up in two: under strace, 5,000 `echo` calls through the manager made
//! 1,755 more `write`s (to the runtime's eventfd) and as many more `epoll_wait`s than rmcp's
//! bare call on the same connection; with the timer left out, the call took as long as the
//! bare one. Here a request only writes its start into a list under a lock (the counts are
//! then the bare call's); the watcher sleeps until the earliest deadline, and is woken only
//! when a request's deadline comes before the one it sleeps to (the first request after a
//! quiet spell, or a shorter timeout).
//!
//! With nothing running, the watcher stays armed one timeout ahead (the shortest one seen)
//! rather than not at all: a request that starts later ends later than that, so back-to-back
//! requests never wake it (disarmed, each request after an idle sweep woke it: a thread
//! hop per call when the server answers fast). Once a whole timeout has passed with no
//! request begun, the watcher disarms: an idle connection's watcher wakes at most twice
//! after its last request, then never (an idle mypi uses no CPU), and the first request
//! after such a quiet spell wakes it once.
//!
//! A progress notification from the server resets the timeout of every running request of
//! the connection (the SDK picks the progress tokens itself, so a request cannot tell its
//! own): a request's deadline is its timeout after its start or after the last progress,
//! whichever came later.
//!
//! While the server waits for the user (an elicitation is open, [`Deadlines::hold`]), no
//! request of the connection expires; once the last one is answered, every running request's
//! timeout starts again, as after progress. The user's reading and typing time is not the
//! server's. An elicitation is withdrawn once no request runs ([`Deadlines::none_running`]):
//! the call it was for was cancelled or is over.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// What the requests and the watcher share.
struct Shared {
    state: Mutex<State>,
    /// Wakes the watcher: a deadline came before the one it sleeps to.
    rearm: Notify,
    /// Wakes the requests whose deadline passed (each finds its own flag).
    expired: Notify,
    /// Wakes those waiting for no request to run ([`Deadlines::none_running`]).
    ended: Notify,
    /// When the last progress notification came: nanoseconds after `epoch` (0: none).
    progress: AtomicU64,
    epoch: Instant,
    /// Ends the watcher.
    stop: CancellationToken,
}

#[derive(Default)]
struct State {
    next_id: u64,
    /// The running requests (a handful: a linear scan is the fastest lookup).
    running: Vec<Running>,
    /// What the watcher sleeps until; `None` while it waits for the first request.
    armed: Option<Instant>,
    /// The shortest timeout of any request so far: how far ahead the watcher is armed when
    /// nothing runs.
    horizon: Option<Duration>,
    /// How many times a request woke the watcher.
    rearms: u64,
    /// How many times the watcher swept, and `next_id` at the last sweep (no request begun
    /// since: the connection is idle).
    sweeps: u64,
    swept_id: u64,
    /// How many holds are open (see [`Deadlines::hold`]): while any is, nothing expires.
    held: usize,
}

struct Running {
    id: u64,
    started: Instant,
    timeout: Duration,
    expired: bool,
}

/// The deadlines of one connection; dropping it ends its watcher.
pub(super) struct Deadlines {
    shared: Arc<Shared>,
}

impl Drop for Deadlines {
    fn drop(&mut self) {
        self.shared.stop.cancel();
    }
}

impl Deadlines {
    /// The deadlines, and their watcher started on the current runtime.
    pub fn start() -> Arc<Deadlines> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            rearm: Notify::new(),
            expired: Notify::new(),
            ended: Notify::new(),
            progress: AtomicU64::new(0),
            epoch: Instant::now(),
            stop: CancellationToken::new(),
        });
        tokio::spawn(watch(shared.clone()));
        Arc::new(Deadlines { shared })
    }

    /// A progress notification came: every running request's timeout starts again.
    pub fn progressed(&self) {
        mark_progress(&self.shared);
    }

    /// Holds every deadline until the returned guard is dropped (the user is answering the
    /// server); then every running request's timeout starts again.
    pub fn hold(&self) -> Hold<'_> {
        let mut state = self.shared.state.lock().unwrap_or_else(|p| p.into_inner());
        state.held += 1;
        Hold {
            shared: &self.shared,
        }
    }

    /// Whether any request is running.
    pub fn any_running(&self) -> bool {
        let state = self.shared.state.lock().unwrap_or_else(|p| p.into_inner());
        !state.running.is_empty()
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
        let s = &self.shared;
        let started = Instant::now();
        let mut state = s.state.lock().unwrap_or_else(|p| p.into_inner());
        let id = state.next_id;
        state.next_id += 1;
        state.running.push(Running {
            id,
            started,
            timeout,
            expired: false,
        });
        state.horizon = Some(state.horizon.map_or(timeout, |h| h.min(timeout)));
        // A timeout too long for the clock never ends.
        if let Some(deadline) = started.checked_add(timeout) {
            if state.armed.is_none_or(|armed| deadline < armed) {
                state.armed = Some(deadline);
                state.rearms += 1;
                s.rearm.notify_one();
            }
        }
        Guard { shared: s, id }
    }
}

/// One running request; dropping it removes it.
pub(super) struct Guard<'a> {
    shared: &'a Shared,
    id: u64,
}

impl Guard<'_> {
    /// Resolves once the watcher has found this request's deadline passed.
    pub async fn expired(&self) {
        loop {
            let woken = self.shared.expired.notified();
            tokio::pin!(woken);
            // Listening before looking: an expiry between the two is not missed.
            woken.as_mut().enable();
            if self.is_expired() {
                return;
            }
            woken.await;
        }
    }

    fn is_expired(&self) -> bool {
        let state = self.shared.state.lock().unwrap_or_else(|p| p.into_inner());
        state.running.iter().any(|r| r.id == self.id && r.expired)
    }
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        let mut state = self.shared.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = state.running.iter().position(|r| r.id == self.id) {
            state.running.swap_remove(i);
        }
        if state.running.is_empty() {
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
        let mut state = s.state.lock().unwrap_or_else(|p| p.into_inner());
        state.held = state.held.saturating_sub(1);
        if state.held == 0 {
            // As after progress: the timeouts start again now, and the watcher sweeps anew.
            mark_progress(s);
            state.armed = None;
            s.rearm.notify_one();
        }
    }
}

/// Records a progress (or the end of a hold) now: every running request's timeout starts
/// again.
fn mark_progress(s: &Shared) {
    let at = s.epoch.elapsed().as_nanos().clamp(1, u64::MAX as u128) as u64;
    s.progress.store(at, Ordering::Release);
}

/// The watcher: marks the requests whose deadline passed, then sleeps until the earliest
/// deadline left (or, with none, until a request comes).
async fn watch(s: Arc<Shared>) {
    let mut slept = false;
    loop {
        let rearm = s.rearm.notified();
        tokio::pin!(rearm);
        rearm.as_mut().enable();
        let next = sweep(&s, slept);
        slept = tokio::select! {
            _ = s.stop.cancelled() => return,
            _ = &mut rearm => false,
            _ = sleep_until(next) => true,
        };
    }
}

/// Marks what is overdue (and wakes those requests); the earliest deadline left, which the
/// watcher is then armed to. `slept`: the watcher woke at the time it was armed to.
fn sweep(s: &Shared, slept: bool) -> Option<Instant> {
    let now = Instant::now();
    let progress = match s.progress.load(Ordering::Acquire) {
        0 => None,
        ns => Some(s.epoch + Duration::from_nanos(ns)),
    };
    let mut state = s.state.lock().unwrap_or_else(|p| p.into_inner());
    if state.held > 0 {
        // Nothing expires; the end of the hold wakes the watcher.
        state.armed = None;
        return None;
    }
    let mut next: Option<Instant> = None;
    let mut any = false;
    for r in state.running.iter_mut().filter(|r| !r.expired) {
        let from = progress.map_or(r.started, |p| p.max(r.started));
        let Some(deadline) = from.checked_add(r.timeout) else {
            continue;
        };
        if deadline <= now {
            r.expired = true;
            any = true;
        } else if next.is_none_or(|n| deadline < n) {
            next = Some(deadline);
        }
    }
    // Nothing running: armed one timeout ahead, unless the watcher slept a whole timeout
    // and nothing began meanwhile (see the module doc).
    let idle = slept && state.running.is_empty() && state.next_id == state.swept_id;
    state.sweeps += 1;
    state.swept_id = state.next_id;
    let ahead = state.horizon.and_then(|h| now.checked_add(h));
    let next = next.or(if idle { None } else { ahead });
    state.armed = next;
    drop(state);
    if any {
        s.expired.notify_waiters();
    }
    next
}

/// Sleeps until `at`; forever without one.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_request_expires_at_its_deadline_and_not_before() {
        let d = Deadlines::start();
        let start = Instant::now();
        let guard = d.begin(Duration::from_millis(150));
        guard.expired().await;
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(150), "{took:?}");
        assert!(took < Duration::from_millis(1500), "{took:?}");
    }

    #[tokio::test]
    async fn a_shorter_timeout_after_a_longer_one_is_kept_too() {
        let d = Deadlines::start();
        let long = d.begin(Duration::from_secs(60));
        let start = Instant::now();
        d.begin(Duration::from_millis(100)).expired().await;
        assert!(start.elapsed() < Duration::from_secs(5));
        assert!(!long.is_expired());
    }

    #[tokio::test]
    async fn progress_moves_every_running_deadline() {
        let d = Deadlines::start();
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
    async fn back_to_back_requests_wake_the_watcher_once() {
        let d = Deadlines::start();
        for _ in 0..50 {
            drop(d.begin(Duration::from_secs(60)));
            // Time for the watcher to sweep an empty list.
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        assert_eq!(d.shared.state.lock().unwrap().rearms, 1);
        // A shorter timeout still wakes it, and still ends on time.
        let start = Instant::now();
        d.begin(Duration::from_millis(100)).expired().await;
        assert!(start.elapsed() < Duration::from_secs(5));
        assert_eq!(d.shared.state.lock().unwrap().rearms, 2);
    }

    #[tokio::test]
    async fn an_idle_connections_watcher_sleeps_for_good_and_wakes_for_the_next_request() {
        let d = Deadlines::start();
        drop(d.begin(Duration::from_millis(40)));
        tokio::time::sleep(Duration::from_millis(300)).await;
        let sweeps = d.shared.state.lock().unwrap().sweeps;
        assert!(sweeps <= 4, "{sweeps} sweeps");
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(
            d.shared.state.lock().unwrap().sweeps,
            sweeps,
            "woke while idle"
        );
        let start = Instant::now();
        d.begin(Duration::from_millis(40)).expired().await;
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[tokio::test]
    async fn a_hold_keeps_requests_from_expiring_and_its_end_starts_them_again() {
        let d = Deadlines::start();
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
        let d = Deadlines::start();
        drop(d.begin(Duration::from_millis(10)));
        let kept = d.begin(Duration::from_secs(60));
        tokio::time::sleep(Duration::from_millis(50)).await;
        let state = d.shared.state.lock().unwrap();
        assert_eq!(state.running.len(), 1);
        assert_eq!(state.running[0].id, kept.id);
    }
}
