//! The status line while the REPL waits: `⠋ thinking… 1.2 s · Ctrl-C to cancel` until the
//! model's first output, `⠋ running bash… 3.0 s · Ctrl-C to cancel` while a tool runs, and
//! above it, once a tool has run for [`TAIL_AFTER`], the last lines of its output or its
//! latest progress message ([`Spinner::set_tail`]). Drawn by a thread that sleeps on a
//! condition variable between frames (ten a second, nothing at all while idle) and only on a
//! terminal; [`Spinner::stop`] erases it at once.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::printer::Printer;

const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const TICK: Duration = Duration::from_millis(100);

/// How long a tool runs before its output tail is shown (quick tools show none).
pub const TAIL_AFTER: Duration = Duration::from_secs(2);

#[derive(Default)]
struct State {
    /// What is being waited for, and since when; `None` while idle.
    current: Option<(String, Instant)>,
    /// Rows to show above the spinner line once [`TAIL_AFTER`] has passed.
    tail: Vec<String>,
    /// Bumped on every start and stop, so a frame drawn late is not drawn at all.
    generation: u64,
    quit: bool,
}

/// The status line's drawing thread.
pub struct Spinner {
    shared: Arc<(Mutex<State>, Condvar)>,
    enabled: bool,
    /// Whether a status is up: every streamed delta asks to stop, and most find nothing to
    /// stop without taking the lock.
    active: AtomicBool,
}

impl Spinner {
    /// A spinner drawing through `printer`, enabled only when stdout is a terminal.
    pub fn new(printer: Arc<Printer>) -> Spinner {
        let enabled = std::io::stdout().is_terminal();
        let shared: Arc<(Mutex<State>, Condvar)> = Arc::default();
        if enabled {
            let s = shared.clone();
            let spawned = std::thread::Builder::new()
                .name("mypi-spinner".into())
                .spawn(move || draw_loop(&s, &printer));
            if spawned.is_err() {
                return Spinner {
                    shared,
                    enabled: false,
                    active: AtomicBool::new(false),
                };
            }
        }
        Spinner {
            shared,
            enabled,
            active: AtomicBool::new(false),
        }
    }

    /// Shows `label` (`thinking`, `running bash`) from now on, with the time since `since`.
    pub fn start(&self, label: &str) {
        if !self.enabled {
            return;
        }
        let (lock, cv) = &*self.shared;
        let mut st = lock.lock().unwrap_or_else(|p| p.into_inner());
        self.active.store(true, Ordering::SeqCst);
        st.current = Some((label.to_string(), Instant::now()));
        st.tail.clear();
        st.generation += 1;
        cv.notify_all();
    }

    /// Rows (cut to the width) shown above the spinner line once the wait is long.
    pub fn set_tail(&self, rows: Vec<String>) {
        if !self.enabled {
            return;
        }
        let (lock, _) = &*self.shared;
        lock.lock().unwrap_or_else(|p| p.into_inner()).tail = rows;
    }

    /// Stops and erases the status line.
    pub fn stop(&self, printer: &Printer) {
        if !self.enabled || !self.active.swap(false, Ordering::SeqCst) {
            return;
        }
        let (lock, cv) = &*self.shared;
        let mut st = lock.lock().unwrap_or_else(|p| p.into_inner());
        st.tail.clear();
        if st.current.take().is_some() {
            st.generation += 1;
            cv.notify_all();
            // Under the spinner's lock, as the drawing is: a frame cannot land after this.
            printer.clear_status();
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        let (lock, cv) = &*self.shared;
        lock.lock().unwrap_or_else(|p| p.into_inner()).quit = true;
        cv.notify_all();
    }
}

fn draw_loop(shared: &(Mutex<State>, Condvar), printer: &Printer) {
    let (lock, cv) = shared;
    let mut frame = 0usize;
    let mut st = lock.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        if st.quit {
            return;
        }
        let Some((label, since)) = st.current.clone() else {
            st = cv.wait(st).unwrap_or_else(|p| p.into_inner());
            continue;
        };
        let generation = st.generation;
        drop(st);
        let text = format!(
            "{} {label}… {:.1} s · Ctrl-C to cancel",
            FRAMES[frame % FRAMES.len()],
            since.elapsed().as_secs_f64()
        );
        frame += 1;
        st = lock.lock().unwrap_or_else(|p| p.into_inner());
        if st.generation == generation && st.current.is_some() {
            let tail: &[String] = if since.elapsed() >= TAIL_AFTER {
                &st.tail
            } else {
                &[]
            };
            // Lock order: the spinner's, then the printer's (the printer never takes ours).
            printer.status(&text, tail);
        }
        if st.generation == generation {
            st = cv
                .wait_timeout(st, TICK)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}
