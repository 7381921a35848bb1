//! Notices that repeat, from any source (a hook's result fields, a failing handler, an
//! extension's `api.notify` in a loop, a reload): a burst of notices of one kind is said in a
//! few lines, however long it is.
//!
//! Two notices are of one kind when they have the same *shape*: the same text once every
//! quoted part ('x1', "a", `b`) and every number is set aside. In a burst (notices of the
//! kind less than [`QUIET`] apart) the first one is passed on at once, and so are up to
//! [`SHOWN`] more that name other things (they differ in a quoted part: the same complaint
//! about another field) or up to [`SHOWN_COUNTED`] more that differ in numbers alone (a
//! script counting); the rest are only counted, and the count is said once when the burst
//! is over: at [`Repeats::flush`] (the end of a run or a line), or by a helper thread after
//! [`QUIET`] without one of that kind (a burst that goes on says its count so far every
//! [`COUNT_EVERY`]). A handler returning 5,000 unknown fields is four lines and
//! "… 4,996 more like: …"; one failing on every streamed delta is one line and
//! "… 6,310 more: …".

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::NoticeFn;

/// How many kinds are tracked in a burst; notices of further kinds are only counted.
const TRACKED: usize = 256;
/// How many notices of one kind naming other things a burst shows before it only counts.
const SHOWN: u32 = 3;
/// How many notices of one kind differing in numbers alone a burst shows before it only
/// counts.
const SHOWN_COUNTED: u32 = 50;
/// A burst of a kind is over after this long without a notice of that kind.
pub const QUIET: Duration = Duration::from_millis(500);
/// A burst that goes on (a script notifying without end) says its count this often.
pub const COUNT_EVERY: Duration = Duration::from_secs(5);

pub struct Repeats {
    inner: NoticeFn,
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    /// Shape -> the burst of that kind.
    kinds: HashMap<String, Burst>,
    /// Notices of kinds past [`TRACKED`], only counted.
    untracked: u64,
    /// Whether the helper thread that ends quiet bursts runs.
    helper: bool,
}

struct Burst {
    first: String,
    /// Notices shown besides the first.
    shown: u32,
    /// Notices counted and not shown.
    more: u64,
    /// Whether every counted notice was the first one again.
    identical: bool,
    last: Instant,
    /// When the count was last said (or the burst began).
    said: Instant,
}

impl Burst {
    fn new(first: String, now: Instant) -> Burst {
        Burst {
            first,
            shown: 0,
            more: 0,
            identical: true,
            last: now,
            said: now,
        }
    }

    /// What is said when the burst is over (nothing when nothing was only counted).
    fn summary(&self) -> Option<String> {
        let n = thousands(self.more);
        match (self.more, self.identical) {
            (0, _) => None,
            (_, true) => Some(format!("… {n} more: {}", self.first)),
            (_, false) => Some(format!("… {n} more like: {}", self.first)),
        }
    }
}

impl Repeats {
    pub fn new(inner: NoticeFn) -> Self {
        Repeats {
            inner,
            state: Arc::new(Mutex::new(State::default())),
        }
    }

    /// A notice function that goes through `repeats`.
    pub fn counting(repeats: &Arc<Repeats>) -> NoticeFn {
        let repeats = repeats.clone();
        Arc::new(move |m| repeats.notice(m))
    }

    /// Passes `message` on, or counts it when its burst already showed enough of its kind.
    pub fn notice(&self, message: String) {
        let now = Instant::now();
        let kind = shape(&message);
        let mut out = Vec::new();
        {
            let mut state = lock(&self.state);
            let tracked = state.kinds.len();
            match state.kinds.get_mut(&kind) {
                Some(burst) if now.duration_since(burst.last) < QUIET => {
                    burst.last = now;
                    let limit = if quoted(&message) == quoted(&burst.first) {
                        SHOWN_COUNTED
                    } else {
                        SHOWN
                    };
                    if message != burst.first && burst.shown < limit {
                        burst.shown += 1;
                        out.push(message);
                    } else {
                        burst.identical &= message == burst.first;
                        burst.more += 1;
                        self.start_helper(&mut state);
                    }
                }
                Some(burst) => {
                    out.extend(burst.summary());
                    *burst = Burst::new(message.clone(), now);
                    out.push(message);
                }
                None if tracked < TRACKED => {
                    state.kinds.insert(kind, Burst::new(message.clone(), now));
                    out.push(message);
                }
                None => {
                    state.untracked += 1;
                    self.start_helper(&mut state);
                }
            }
        }
        out.into_iter().for_each(|m| (self.inner)(m));
    }

    /// Says the count of every burst, and forgets them all.
    pub fn flush(&self) {
        let lines = take_over(&mut lock(&self.state), None);
        lines.into_iter().for_each(|m| (self.inner)(m));
    }

    /// Starts the thread that says the counts of bursts gone quiet, unless it runs.
    fn start_helper(&self, state: &mut State) {
        if state.helper {
            return;
        }
        let (shared, inner) = (self.state.clone(), self.inner.clone());
        let started = std::thread::Builder::new()
            .name("mypi-notices".into())
            .spawn(move || loop {
                std::thread::sleep(QUIET / 2);
                let (lines, done) = {
                    let mut state = lock(&shared);
                    let lines = take_over(&mut state, Some(Instant::now()));
                    let done = state.untracked == 0 && state.kinds.values().all(|b| b.more == 0);
                    if done {
                        state.helper = false;
                    }
                    (lines, done)
                };
                lines.into_iter().for_each(|m| inner(m));
                if done {
                    return;
                }
            });
        // Without the thread the counts are said at the next flush.
        state.helper = started.is_ok();
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

/// Ends the bursts that are over (all of them, or at `now` those gone quiet) and returns
/// their counts, in the order of their first notices.
fn take_over(state: &mut State, now: Option<Instant>) -> Vec<String> {
    let over = |b: &Burst| now.is_none_or(|t| t.duration_since(b.last) >= QUIET);
    let keys: Vec<String> = state
        .kinds
        .iter()
        .filter(|(_, b)| over(b))
        .map(|(k, _)| k.clone())
        .collect();
    let mut ended: Vec<Burst> = keys.iter().filter_map(|k| state.kinds.remove(k)).collect();
    ended.sort_by(|a, b| a.first.cmp(&b.first));
    let mut lines: Vec<String> = ended.iter().filter_map(Burst::summary).collect();
    if let Some(now) = now {
        // Bursts that go on say their count so far, and go on counting.
        for burst in state.kinds.values_mut() {
            if now.duration_since(burst.said) >= COUNT_EVERY {
                lines.extend(burst.summary());
                (burst.more, burst.identical, burst.said) = (0, true, now);
            }
        }
    }
    if now.is_none() || state.kinds.is_empty() {
        let n = std::mem::take(&mut state.untracked);
        if n > 0 {
            lines.push(format!("… {} more notices of other kinds", thousands(n)));
        }
    }
    lines
}

/// The kind of a notice: its text with every quoted part and every number set aside.
fn shape(message: &str) -> String {
    split(message).0
}

/// The quoted parts of a notice (the names it gives), one after the other.
fn quoted(message: &str) -> String {
    split(message).1
}

/// A notice's text with every quoted part and every number set aside, and its quoted parts.
fn split(message: &str) -> (String, String) {
    let mut out = String::with_capacity(message.len());
    let mut names = String::new();
    let mut quote: Option<char> = None;
    let mut in_number = false;
    for c in message.chars() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
                out.push(c);
                names.push('\0');
            } else {
                names.push(c);
            }
            continue;
        }
        if c.is_ascii_digit() {
            if !in_number {
                out.push('#');
            }
            in_number = true;
            continue;
        }
        in_number = false;
        out.push(c);
        if matches!(c, '\'' | '"' | '`') {
            quote = Some(c);
        }
    }
    (out, names)
}

/// `6310` -> `"6,310"`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    fn collecting() -> (Arc<Mutex<Vec<String>>>, Repeats) {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        let r = Repeats::new(Arc::new(move |m| sink.lock().unwrap().push(m)));
        (lines, r)
    }

    #[test]
    fn repeats_are_counted_and_reported_once_at_flush() {
        let (lines, r) = collecting();
        for _ in 0..6311 {
            r.notice("a failed".into());
            r.notice("b failed".into());
        }
        r.notice("c once".into());
        r.flush();
        r.notice("a failed".into());
        assert_eq!(
            *lines.lock().unwrap(),
            vec![
                "a failed",
                "b failed",
                "c once",
                "… 6,310 more: a failed",
                "… 6,310 more: b failed",
                "a failed"
            ]
        );
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000_000), "1,000,000");
    }

    #[test]
    fn notices_of_one_shape_show_a_few_then_a_count() {
        let (lines, r) = collecting();
        for i in 1..=5000 {
            r.notice(format!(
                "e: result field 'x{i}' is not used by input; ignored"
            ));
        }
        r.notice("line 12 of 'f.lua' failed".into());
        r.notice("line 13 of 'g.lua' failed".into());
        r.flush();
        assert_eq!(
            *lines.lock().unwrap(),
            vec![
                "e: result field 'x1' is not used by input; ignored",
                "e: result field 'x2' is not used by input; ignored",
                "e: result field 'x3' is not used by input; ignored",
                "e: result field 'x4' is not used by input; ignored",
                "line 12 of 'f.lua' failed",
                "line 13 of 'g.lua' failed",
                "… 4,996 more like: e: result field 'x1' is not used by input; ignored",
            ]
        );
        assert_eq!(quoted("a 'b' 12 'c'"), "b\0c\0");
        // A script counting: notices differing in numbers alone show longer.
        let (lines, r) = collecting();
        (1..=100).for_each(|i| r.notice(format!("step {i} of 100")));
        r.flush();
        let lines = lines.lock().unwrap();
        assert_eq!(lines.len(), 1 + SHOWN_COUNTED as usize + 1);
        assert_eq!(lines.last().unwrap(), "… 49 more like: step 1 of 100");
        assert_eq!(shape("a 'it''s' 12 and \"q"), "a '''' # and \"");
    }

    #[test]
    fn a_burst_gone_quiet_says_its_count_and_a_later_notice_shows_again() {
        let (lines, r) = collecting();
        for _ in 0..10 {
            r.notice("again".into());
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while lines.lock().unwrap().len() < 2 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        r.notice("again".into());
        assert_eq!(
            *lines.lock().unwrap(),
            vec!["again", "… 9 more: again", "again"]
        );
        let (lines, r) = collecting();
        for i in 0..(TRACKED + 7) {
            r.notice(format!("kind {}", "z".repeat(i)));
        }
        r.flush();
        let lines = lines.lock().unwrap();
        assert_eq!(lines.len(), TRACKED + 1);
        assert_eq!(lines[TRACKED], "… 7 more notices of other kinds");
    }

    #[test]
    fn a_burst_that_goes_on_says_its_count_every_while() {
        let now = Instant::now();
        let mut burst = Burst::new("again".into(), now);
        (burst.more, burst.said) = (7, now);
        let mut state = State::default();
        state.kinds.insert(shape("again"), burst);
        // Still going (a notice just came), and its count was said long ago.
        let later = now + COUNT_EVERY;
        state.kinds.values_mut().for_each(|b| b.last = later);
        assert_eq!(take_over(&mut state, Some(later)), vec!["… 7 more: again"]);
        let burst = &state.kinds[&shape("again")];
        assert_eq!((burst.more, burst.said), (0, later), "it goes on counting");
        assert!(take_over(&mut state, Some(later)).is_empty());
    }
}
