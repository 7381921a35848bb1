//! Input while a prompt runs: the REPL keeps reading lines while the agent works. A line answers a pending `ctx.ui.confirm`
//! question first; `/quit` (`/exit`, `/q`) cancels the run and leaves; Ctrl-C at the line
//! editor cancels the run; any other line waits (a question asked later takes it as its
//! answer, as a line typed ahead on a terminal would be) and runs after, in order.
//! On a terminal the line is read the terminal's own way (the line editor would hold the
//! streamed text back), and Ctrl-C arrives as a signal.

use std::future::Future;

use super::input::{Input, ReadResult};
use super::render::Printer;
use crate::app::ui::AppUi;

/// What the user typed while prompts ran (the lines themselves wait in [`Input::hold`]).
#[derive(Default)]
pub struct During {
    /// Input ended (Ctrl-D, end of the pipe): leave once the held lines ran.
    pub eof: bool,
    /// `/quit` was typed during a run: leave once it ends.
    pub quit: bool,
}

/// Whether `line` asks to leave.
pub fn is_quit(line: &str) -> bool {
    matches!(line.trim(), "/quit" | "/exit" | "/q")
}

/// Runs `work` to its end while reading what the user types meanwhile into `during`.
pub async fn drive<T>(
    work: impl Future<Output = T>,
    input: &mut Input,
    during: &mut During,
    ui: &AppUi,
    printer: &Printer,
) -> T {
    tokio::pin!(work);
    loop {
        let reading = !during.eof && !during.quit;
        tokio::select! {
            biased;
            out = &mut work => {
                input.end_run();
                // A question of a call that ended (a cancelled run) must not eat the next line.
                input.refuse_pending();
                return out;
            }
            read = input.read_during_run(), if reading => match read {
                ReadResult::Line(line) => {
                    if is_quit(&line) {
                        during.quit = true;
                        printer.line("quitting: cancelling the running prompt…");
                        ui.current().cancel();
                        input.refuse_pending();
                    } else {
                        input.deliver(line);
                    }
                }
                ReadResult::Interrupted => {
                    let token = ui.current();
                    if !token.is_cancelled() {
                        printer.line("^C cancelling…");
                        token.cancel();
                    }
                }
                ReadResult::Eof => {
                    during.eof = true;
                    input.refuse_pending();
                }
                ReadResult::Nothing => {}
            },
        }
    }
}
