//! [`Printer`]: the REPL's one way to the terminal. Lines go through rustyline's external
//! printer while a line is being edited (so they never garble what the user types) and
//! straight to stdout otherwise; streamed text comes whole lines at a time (the markdown
//! renderer commits rows, [`super::markdown`]). It also owns the
//! status line (the spinner while the model thinks or a tool runs): drawn in place on the
//! last line, erased before anything else is printed.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rustyline::ExternalPrinter;

/// Writes to the terminal, through the external printer while a line is being edited.
#[derive(Default)]
pub struct Printer {
    reading: AtomicBool,
    external: Mutex<Option<Box<dyn ExternalPrinter + Send>>>,
    state: Mutex<Partial>,
}

#[derive(Default)]
struct Partial {
    /// Whether a status line is drawn on the last line now.
    status: bool,
}

impl Printer {
    pub fn new() -> Arc<Self> {
        Arc::new(Printer::default())
    }

    pub fn set_external(&self, printer: Box<dyn ExternalPrinter + Send>) {
        *self.external.lock().unwrap_or_else(|p| p.into_inner()) = Some(printer);
    }

    /// Whether rustyline is editing a line right now.
    pub fn set_reading(&self, reading: bool) {
        self.reading.store(reading, Ordering::SeqCst);
    }

    fn emit_external(&self, text: String) -> Result<(), String> {
        let mut ext = self.external.lock().unwrap_or_else(|p| p.into_inner());
        match ext.as_mut() {
            Some(p) if self.reading.load(Ordering::SeqCst) => {
                p.print(text).map_err(|e| e.to_string())
            }
            _ => Err(text),
        }
    }

    /// Draws `text` as the status line, in place (nothing while a line is being edited or
    /// streamed text is mid-line).
    pub fn status(&self, text: &str) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if self.reading.load(Ordering::SeqCst) {
            return;
        }
        let mut out = std::io::stdout().lock();
        let _ = write!(out, "\r{text}\x1b[K");
        let _ = out.flush();
        state.status = true;
    }

    /// Erases the status line, if one is drawn.
    pub fn clear_status(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        clear(&mut state);
    }

    /// Prints whole lines.
    pub fn line(&self, text: &str) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        clear(&mut state);
        if let Err(text) = self.emit_external(text.to_string()) {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{text}");
            let _ = out.flush();
        }
    }
}

/// Erases a drawn status line (the cursor goes back to the start of the empty line).
fn clear(state: &mut Partial) {
    if state.status {
        let mut out = std::io::stdout().lock();
        let _ = write!(out, "\r\x1b[K");
        let _ = out.flush();
        state.status = false;
    }
}
