//! [`Printer`]: the REPL's one way to the terminal. Lines go through rustyline's external
//! printer while a line is being edited (so they never garble what the user types) and
//! straight to stdout otherwise; streamed text comes whole lines at a time (the markdown
//! renderer commits rows, [`super::markdown`]).
//!
//! While a prompt runs it also owns the status block at the bottom of the screen, on a
//! terminal only: the last lines of a long tool's output, the spinner line (the model
//! thinks, a tool runs) and the line the user is typing meanwhile. Every line printed goes
//! above the block in one write (erase the block, the line, the block again), so nothing is
//! garbled and nothing flickers; each row of the block is cut to the width so its height is
//! known when it is erased.
//!
//! Every text that reaches it goes through [`crate::vocab::text::inert_sgr`] first (the one rule for
//! text mypi did not write itself: colours kept as plain SGR, every other control character
//! shown visibly), so the only other escape codes on the screen are the printer's own (the
//! block's erase codes), added after.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rustyline::ExternalPrinter;

use super::style::term_width;
use super::tool_lines::fit;
use crate::vocab::text::inert_sgr;

/// `text` as the printer may show it ([`crate::vocab::text::inert_sgr`], colours kept).
fn shown(text: &str) -> String {
    inert_sgr(text, true).into_owned()
}

/// Writes to the terminal, through the external printer while a line is being edited.
pub struct Printer {
    reading: AtomicBool,
    external: Mutex<Option<Box<dyn ExternalPrinter + Send>>>,
    state: Mutex<Block>,
    /// stdout is a terminal (the status block is drawn only there).
    terminal: bool,
}

/// The status block: what it shows and how many rows of it are on the screen.
#[derive(Default)]
struct Block {
    drawn: usize,
    tail: Vec<String>,
    spinner: Option<String>,
    draft: Option<String>,
    /// The extensions' status texts (`ctx.ui.set_status`), one row.
    ext_status: Option<String>,
}

impl Block {
    /// Escape codes that erase the block drawn, leaving the cursor where it began.
    fn erase(&mut self) -> String {
        let out = match self.drawn {
            0 => String::new(),
            1 => "\r\x1b[J".to_string(),
            n => format!("\r\x1b[{}A\x1b[J", n - 1),
        };
        self.drawn = 0;
        out
    }

    /// The block's rows, each cut to the width, the cursor left after the last.
    fn draw(&mut self) -> String {
        let width = term_width().saturating_sub(1).max(10);
        let mut rows: Vec<String> = self.ext_status.iter().map(|s| fit(s, width)).collect();
        rows.extend(self.tail.iter().cloned());
        rows.extend(self.spinner.iter().map(|s| fit(s, width)));
        if let Some(draft) = &self.draft {
            rows.push(draft_row(draft, width));
        }
        self.drawn = rows.len();
        rows.join("\r\n")
    }
}

/// `> text` as the user types it during a run, its end kept in view when it is long.
fn draft_row(draft: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    let flat = draft.replace('\n', "⏎");
    if unicode_width::UnicodeWidthStr::width(flat.as_str()) + 2 <= width {
        return format!("> {flat}");
    }
    let mut shown: Vec<char> = Vec::new();
    // `> ` and the `…` that says the start is cut off.
    let mut used = 3;
    for c in flat.chars().rev() {
        let w = c.width().unwrap_or(0);
        if used + w > width {
            shown.push('…');
            break;
        }
        used += w;
        shown.push(c);
    }
    format!("> {}", shown.into_iter().rev().collect::<String>())
}

impl Printer {
    pub fn new() -> Arc<Self> {
        Arc::new(Printer {
            reading: AtomicBool::new(false),
            external: Mutex::new(None),
            state: Mutex::default(),
            terminal: std::io::stdout().is_terminal(),
        })
    }

    pub fn set_external(&self, printer: Box<dyn ExternalPrinter + Send>) {
        *self.external.lock().unwrap_or_else(|p| p.into_inner()) = Some(printer);
    }

    /// Whether rustyline is editing a line right now (the status block is erased first).
    pub fn set_reading(&self, reading: bool) {
        if reading {
            let mut block = self.block();
            let mut out = block.erase();
            // The status texts stay in view: above the prompt.
            if let (Some(status), true) = (&block.ext_status, self.terminal) {
                out.push_str(&fit(status, term_width().saturating_sub(1).max(10)));
                out.push('\n');
            }
            write_raw(&out);
        }
        self.reading.store(reading, Ordering::SeqCst);
    }

    /// The extensions' status line changed: it is redrawn in the block, printed above the
    /// prompt while a line is edited, or (off a terminal) printed as a line.
    pub fn set_ext_status(&self, status: Option<String>) {
        let status = status.as_deref().map(shown);
        if !self.terminal {
            self.block().ext_status = status.clone();
            self.line(&match status {
                Some(s) => format!("status: {s}"),
                None => "status cleared".to_string(),
            });
            return;
        }
        if self.reading.load(Ordering::SeqCst) {
            self.block().ext_status = status.clone();
            if let Some(s) = status {
                let _ = self.emit_external(s);
            }
            return;
        }
        self.redraw(|b| b.ext_status = status);
    }

    fn block(&self) -> std::sync::MutexGuard<'_, Block> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
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

    /// Changes the block and draws it again (not while a line is being edited, nor off a
    /// terminal).
    fn redraw(&self, change: impl FnOnce(&mut Block)) {
        let mut block = self.block();
        change(&mut block);
        if !self.terminal || self.reading.load(Ordering::SeqCst) {
            return;
        }
        let mut out = block.erase();
        out.push_str(&block.draw());
        write_raw(&out);
    }

    /// Shows `text` as the spinner line, with `tail` (rows already cut to the width: a long
    /// tool's last output) above it.
    pub fn status(&self, text: &str, tail: &[String]) {
        self.redraw(|b| {
            b.spinner = Some(shown(text));
            b.tail = tail.iter().map(|t| shown(t)).collect();
        });
    }

    /// Takes the spinner line and the output tail away.
    pub fn clear_status(&self) {
        self.redraw(|b| {
            b.spinner = None;
            b.tail.clear();
        });
    }

    /// Shows what the user is typing during a run (`None`: nothing).
    pub fn set_draft(&self, draft: Option<String>) {
        self.redraw(|b| b.draft = draft.filter(|d| !d.is_empty()).map(|d| shown(&d)));
    }

    /// Prints whole lines of text mypi did not colour: every control character in it, escape
    /// sequences included, is shown visibly ([`crate::vocab::text::inert()`]).
    pub fn line(&self, text: &str) {
        self.write_line(crate::vocab::text::inert(text).into_owned());
    }

    /// Prints whole lines that mypi coloured itself, their foreign parts already made inert:
    /// plain SGR colours are kept, anything else is shown visibly.
    pub fn styled(&self, text: &str) {
        self.write_line(shown(text));
    }

    fn write_line(&self, text: String) {
        let mut block = self.block();
        let Err(text) = self.emit_external(text) else {
            return;
        };
        let mut out = block.erase();
        out.push_str(&text);
        out.push('\n');
        if self.terminal && !self.reading.load(Ordering::SeqCst) {
            out.push_str(&block.draw());
        }
        write_raw(&out);
    }
}

/// One write to stdout, flushed; a closed stdout is ignored.
pub(super) fn write_raw(text: &str) {
    if text.is_empty() {
        return;
    }
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_is_erased_by_its_own_height() {
        let mut b = Block {
            tail: vec!["a".into(), "b".into()],
            spinner: Some("⠋ running".into()),
            draft: Some("next".into()),
            ..Block::default()
        };
        assert_eq!(b.draw(), "a\r\nb\r\n⠋ running\r\n> next");
        assert_eq!(b.erase(), "\r\x1b[3A\x1b[J");
        assert_eq!(b.erase(), "", "nothing drawn, nothing erased");
    }

    #[test]
    fn a_long_draft_keeps_its_end_in_view() {
        let row = draft_row(&"x".repeat(50), 20);
        assert!(row.starts_with("> …") && row.ends_with("xxx"), "{row}");
        assert!(unicode_width::UnicodeWidthStr::width(row.as_str()) <= 20);
    }
}
