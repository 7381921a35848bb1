//! The REPL's [`Screen`]: where the status texts of extensions (`ctx.ui.set_status`) and the
//! terminal title (`ctx.ui.set_title`) go. On a terminal the status line is a row of the
//! printer's status block during a run and is printed above the prompt when one is shown
//! (the line editor redraws the half-typed line below it); off a terminal each change is one
//! line `status: …`. The title is an OSC 0 sequence, written only when stdout is a terminal.

use std::io::IsTerminal;
use std::sync::Arc;

use super::printer::Printer;
use crate::agent::control::Screen;

pub struct ReplScreen {
    printer: Arc<Printer>,
    terminal: bool,
}

impl ReplScreen {
    pub fn new(printer: Arc<Printer>) -> Self {
        ReplScreen {
            printer,
            terminal: std::io::stdout().is_terminal(),
        }
    }
}

impl Screen for ReplScreen {
    fn status(&self, line: Option<String>) {
        self.printer.set_ext_status(line);
    }

    fn title(&self, text: &str) {
        if self.terminal {
            // The title is mypi's own escape code; its text is inert (no BEL or ESC ends it).
            let text = crate::vocab::text::inert(text);
            super::printer::write_raw(&format!("\x1b]0;{text}\x07"));
        }
    }
}
