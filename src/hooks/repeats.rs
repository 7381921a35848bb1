//! Reports that repeat: the first of each message is passed on at once, later identical ones
//! are only counted, and [`Repeats::flush`] (at the end of a run) reports each count once as
//! "… 6,310 more: message". A handler that fails on every streamed delta is one line, not
//! thousands.

use std::collections::HashMap;
use std::sync::Mutex;

use super::NoticeFn;

/// How many distinct messages are tracked; past that, messages are passed on as they come.
const TRACKED: usize = 256;

pub struct Repeats {
    inner: NoticeFn,
    /// Message -> how many times it came again since it was first reported.
    seen: Mutex<HashMap<String, u64>>,
}

impl Repeats {
    pub fn new(inner: NoticeFn) -> Self {
        Repeats {
            inner,
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// Reports `message` unless it was reported since the last flush.
    pub fn notice(&self, message: String) {
        {
            let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(n) = seen.get_mut(&message) {
                *n += 1;
                return;
            }
            if seen.len() < TRACKED {
                seen.insert(message.clone(), 0);
            }
        }
        (self.inner)(message);
    }

    /// Reports how often each message came again, and forgets them all.
    pub fn flush(&self) {
        let seen = std::mem::take(&mut *self.seen.lock().unwrap_or_else(|p| p.into_inner()));
        let mut repeated: Vec<(String, u64)> = seen.into_iter().filter(|(_, n)| *n > 0).collect();
        repeated.sort();
        for (message, n) in repeated {
            (self.inner)(format!("… {} more: {message}", thousands(n)));
        }
    }
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

    #[test]
    fn repeats_are_counted_and_reported_once_at_flush() {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        let r = Repeats::new(Arc::new(move |m| sink.lock().unwrap().push(m)));
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
}
