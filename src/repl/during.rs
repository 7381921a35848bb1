//! Input while a prompt runs: the REPL keeps reading while the agent works. A line answers a
//! pending `ctx.ui.confirm` question first; `/quit` (`/exit`, `/q`) cancels the run and
//! leaves; Ctrl-C or Esc cancels the run.
//!
//! On a terminal ([`super::keys`]: nothing typed is echoed into the reply) Enter queues the
//! line as a steering message (the model sees it after the tool calls under way, or it runs
//! next), Alt+Enter as a follow-up (it runs when the agent is done), each shown as queued; a
//! slash command or a shell escape (`!cmd`) waits and runs after the run. Off a terminal (a
//! pipe, a script) every line waits and runs after, in order (a question asked later takes
//! it as its answer).

use std::future::Future;

use super::input::{is_quit, Input};
use super::keys::ReadResult;
use super::render::Printer;
use super::style::{Role, Style};
use crate::app::ui::AppUi;
use crate::vocab::run::queue::{Delivery, Queues};

/// What the user typed while prompts ran (the lines themselves wait in the [`Input`], for
/// [`Input::take_held`]).
#[derive(Default)]
pub struct During {
    /// Input ended (Ctrl-D, end of the pipe): leave once the held lines ran.
    pub eof: bool,
    /// `/quit` was typed during a run: leave once it ends.
    pub quit: bool,
}

/// What the REPL works with while a run goes on.
pub struct Front<'a> {
    pub ui: &'a AppUi,
    pub printer: &'a Printer,
    pub queues: &'a Queues,
    pub style: Style,
}

impl Front<'_> {
    fn cancel(&self, how: &str) {
        let token = self.ui.current();
        if !token.is_cancelled() {
            self.printer.line(&format!("{how} cancelling…"));
            token.cancel();
        }
    }

    /// Queues a line typed on the terminal during a run, and says so.
    fn queue(&self, line: String, delivery: Delivery) {
        let what = match delivery {
            Delivery::Steer => "steering",
            Delivery::FollowUp => "follow-up",
        };
        let shown = crate::vocab::text::inert(&line.replace('\n', " ⏎ ")).into_owned();
        let said = match self.queues.push(line, delivery) {
            Ok(()) => self
                .style
                .paint(Role::Dim, &format!("» queued as {what}: {shown}")),
            Err(e) => self.style.paint(
                Role::Error,
                &format!("not queued: the {} queue is full ({})", e.queue, e.what),
            ),
        };
        self.printer.styled(&said);
    }
}

/// Runs `work` to its end while reading what the user types meanwhile into `during`.
pub async fn drive<T>(
    work: impl Future<Output = T>,
    input: &mut Input,
    during: &mut During,
    front: &Front<'_>,
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
                ReadResult::Line(line) if is_quit(&line) => {
                    during.quit = true;
                    front.printer.line("quitting: cancelling the running prompt…");
                    front.ui.current().cancel();
                    input.refuse_pending();
                }
                ReadResult::Line(line) => {
                    let steer = input.on_terminal()
                        && !input.has_question()
                        && !line.trim().is_empty()
                        && !line.trim_start().starts_with(['/', '!']);
                    if steer {
                        front.queue(line, Delivery::Steer);
                    } else {
                        input.deliver(line);
                    }
                }
                ReadResult::FollowUp(line) if !line.trim().is_empty() => {
                    front.queue(line, Delivery::FollowUp);
                }
                ReadResult::Interrupted => front.cancel("^C"),
                ReadResult::Cancel => front.cancel("Esc:"),
                ReadResult::Eof => {
                    during.eof = true;
                    input.refuse_pending();
                }
                ReadResult::Nothing | ReadResult::FollowUp(_) | ReadResult::Draft(_) => {}
            },
        }
    }
}
