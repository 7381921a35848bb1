//! The streamed text on its way past `message_update` handlers: deltas that come within
//! [`COALESCE`] of the previous hand-over are held back (not shown, not kept) and handed to
//! the handlers together, as one `delta`, when the window has passed (at the next delta or
//! by a timer), before any other stream event, or when the stream ends.
//!
//! Handing one delta to a script's handler is a round trip to the extension's thread: tens of
//! µs of CPU, ten times what streaming the delta costs without a handler. A model streams a
//! few dozen deltas a second, each handed over on its own; a fast local server (or a burst
//! after a stall) streams thousands, and those are handed over a few hundred times a second at
//! most. The contract is unchanged: the handlers see every piece of text before the user does
//! and before it is kept, and a `block` cuts the reply there.

use std::pin::Pin;
use std::time::{Duration, Instant};

use tokio::time::Sleep;

use crate::hooks::SharedText;

/// How long after a hand-over the next delta waits, gathering the ones after it. About the
/// time a terminal takes to show one frame: the text shows no later than the eye would see it.
pub const COALESCE: Duration = Duration::from_millis(4);

/// The text held back from the handlers, and the reply so far as they see it.
pub(super) struct Held {
    /// Deltas since the last hand-over.
    pending: String,
    /// The reply so far (the buffer `message_update`'s `text` shares).
    pub so_far: SharedText,
    /// When the last hand-over ended.
    last: Option<Instant>,
    /// Fires when the window of the held deltas has passed.
    timer: Pin<Box<Sleep>>,
    armed: bool,
}

impl Held {
    pub fn new() -> Self {
        Held {
            pending: String::new(),
            so_far: SharedText::new(),
            last: None,
            timer: Box::pin(tokio::time::sleep(Duration::ZERO)),
            armed: false,
        }
    }

    /// Holds `delta`; true when the window has passed and what is held goes to the handlers
    /// now (otherwise the timer is armed for it).
    pub fn push(&mut self, delta: &str) -> bool {
        self.pending.push_str(delta);
        let due = self.last.is_none_or(|t| t.elapsed() >= COALESCE);
        if !due && !self.armed {
            if let Some(last) = self.last {
                self.timer.as_mut().reset((last + COALESCE).into());
                self.armed = true;
            }
        }
        due
    }

    /// Whether deltas are held.
    pub fn is_holding(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The held deltas as one, to hand over (empty when none are held).
    pub fn take(&mut self) -> String {
        self.armed = false;
        std::mem::take(&mut self.pending)
    }

    /// Marks the end of a hand-over: the next window starts now.
    pub fn handed_over(&mut self) {
        self.last = Some(Instant::now());
    }

    /// Resolves when the held deltas are due; never when nothing is held.
    pub async fn due(&mut self) {
        if self.armed {
            self.timer.as_mut().await;
        } else {
            std::future::pending::<()>().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_first_delta_goes_at_once_and_the_next_ones_wait_for_the_window() {
        let mut held = Held::new();
        assert!(held.push("a"), "nothing was handed over yet");
        assert_eq!(held.take(), "a");
        held.handed_over();
        assert!(!held.push("b"));
        assert!(!held.push("c"));
        assert!(held.is_holding());
        let start = Instant::now();
        held.due().await;
        assert!(start.elapsed() >= COALESCE / 2, "{:?}", start.elapsed());
        assert_eq!(held.take(), "bc");
        assert!(!held.is_holding());
        held.handed_over();
        std::thread::sleep(COALESCE);
        assert!(held.push("d"), "a delta after the window goes at once");
    }
}
