//! The shell escape: a line `!cmd` runs `cmd` with `sh -c` in the working folder and shows
//! its output, and the command with its output goes to the model with the next prompt;
//! `!!cmd` runs and shows it without keeping anything. The command runs as the bash tool's
//! do ([`crate::tools::bash::run_shell`]): its own process group, stdin closed, the same
//! timeout and output cap, killed when the line is cancelled (Ctrl-C). A failing command is
//! not an error of mypi: its status line says how it ended.
//!
//! The `user_shell` event comes first: a handler may block the command (`block`, `reason`),
//! run another instead (`updated_command`, which the output is then attributed to), or give
//! the output itself (`updated_output`: nothing runs).

use std::collections::VecDeque;
use std::sync::Arc;

use super::{App, AppError, LineOutcome};
use crate::agent::EventSink;
use crate::hooks::{EventKind, HookEvent};
use crate::tools::bash::{run_shell, DEFAULT_TIMEOUT};
use crate::tools::MAX_OUTPUT_BYTES;
use crate::vocab::protocol::AgentEvent;
use crate::vocab::run::RunContext;
use crate::vocab::text::truncate_middle;

/// The shell `!cmd` runs with.
const SHELL: &str = "sh";

/// Most bytes of kept shell context in all: past it the oldest commands are left out.
pub const MAX_CONTEXT_BYTES: usize = 2 * MAX_OUTPUT_BYTES;

/// A shell escape line: the command (trimmed) and whether its output is kept for the next
/// prompt (`!cmd`: yes, `!!cmd`: no). `None` when the line is not one.
pub fn parse(line: &str) -> Option<(&str, bool)> {
    let rest = line.trim_start().strip_prefix('!')?;
    Some(match rest.strip_prefix('!') {
        Some(command) => (command.trim(), false),
        None => (rest.trim(), true),
    })
}

/// What `!cmd` kept for the next prompt: one block per command, oldest first, at most
/// [`MAX_CONTEXT_BYTES`] in all.
#[derive(Debug, Default)]
pub struct ShellContext {
    blocks: VecDeque<String>,
    bytes: usize,
    /// Commands left out to stay under the limit.
    dropped: usize,
}

impl ShellContext {
    /// Keeps `command` and its `output` (cut in the middle to [`MAX_OUTPUT_BYTES`]).
    pub fn push(&mut self, command: &str, output: &str) {
        let block = block(command, &truncate_middle(output, MAX_OUTPUT_BYTES));
        self.bytes += block.len();
        self.blocks.push_back(block);
        while self.bytes > MAX_CONTEXT_BYTES && self.blocks.len() > 1 {
            if let Some(old) = self.blocks.pop_front() {
                self.bytes -= old.len();
                self.dropped += 1;
            }
        }
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// Forgets what was kept (`/new`).
    pub fn clear(&mut self) {
        *self = ShellContext::default();
    }

    /// `prompt` with what was kept before it; nothing is kept afterwards.
    pub fn take_into(&mut self, prompt: &str) -> String {
        if self.is_empty() {
            return prompt.to_string();
        }
        let mut out = String::new();
        if self.dropped > 0 {
            let what = match self.dropped {
                1 => "1 earlier shell command was".to_string(),
                n => format!("{n} earlier shell commands were"),
            };
            out.push_str(&format!(
                "[{what} left out here: the output was too long]\n\n"
            ));
        }
        for block in std::mem::take(&mut self.blocks) {
            out.push_str(&block);
            out.push_str("\n\n");
        }
        out.push_str(prompt);
        self.clear();
        out
    }
}

/// One command and its output as the model reads it: a fenced block, the command on its
/// first line after `$ `, the fence longer than any run of backticks inside.
fn block(command: &str, output: &str) -> String {
    let body = format!("$ {command}\n{output}");
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    let newline = if body.ends_with('\n') { "" } else { "\n" };
    format!("The user ran this command in the shell:\n{fence}\n{body}{newline}{fence}")
}

impl App {
    /// Runs a shell escape line: `command`, kept for the next prompt when `keep`.
    pub(super) async fn shell(
        &mut self,
        command: &str,
        keep: bool,
        sink: &dyn EventSink,
        ctx: &Arc<RunContext>,
    ) -> Result<LineOutcome, AppError> {
        if command.is_empty() {
            return Err(AppError::Command(
                "nothing to run: write the command after the `!` (`!ls`; `!!ls` runs it \
                 without giving its output to the model)"
                    .to_string(),
            ));
        }
        let mut command = command.to_string();
        let mut given = None;
        if self.hooks.has(EventKind::UserShell) {
            let event = HookEvent::UserShell {
                command: command.clone(),
                add_to_context: keep,
                output: None,
            };
            let emitted = self.hooks.emit(event, ctx).await;
            if let Some(reason) = emitted.blocked {
                return Err(AppError::Command(format!(
                    "the command was not run: {reason}"
                )));
            }
            if let HookEvent::UserShell {
                command: rewritten,
                output,
                ..
            } = emitted.event
            {
                if rewritten != command {
                    sink.emit(AgentEvent::Notice {
                        message: format!("an extension changed the command to: {rewritten}"),
                    });
                }
                command = rewritten;
                given = output;
            }
        }
        let (text, finished) = match given {
            Some(output) => {
                sink.emit(AgentEvent::Notice {
                    message: "an extension gave the output; the command was not run".to_string(),
                });
                (truncate_middle(&output, MAX_OUTPUT_BYTES), true)
            }
            None => {
                let out = run_shell(SHELL, &command, DEFAULT_TIMEOUT, ctx).await;
                (out.content, !ctx.cancel.is_cancelled())
            }
        };
        // A command the user cancelled is not worth the model's attention.
        if keep && finished {
            self.shell_context.push(&command, &text);
        }
        sink.emit(AgentEvent::Command {
            name: if keep { "!" } else { "!!" }.to_string(),
            output: text.clone(),
        });
        Ok(LineOutcome::Output(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_parsed() {
        assert_eq!(parse("!ls -l"), Some(("ls -l", true)));
        assert_eq!(parse("  !! git status "), Some(("git status", false)));
        assert_eq!(parse("!"), Some(("", true)));
        assert_eq!(parse("!!"), Some(("", false)));
        assert_eq!(parse("hello !ls"), None);
        assert_eq!(parse("/help"), None);
    }

    #[test]
    fn the_kept_commands_go_before_the_prompt_in_order_then_are_gone() {
        let mut c = ShellContext::default();
        assert_eq!(c.take_into("hi"), "hi");
        c.push("echo a", "a\nexit code: 0");
        c.push("false", "exit code: 1");
        assert_eq!(
            c.take_into("why?"),
            "The user ran this command in the shell:\n```\n$ echo a\na\nexit code: 0\n```\n\n\
             The user ran this command in the shell:\n```\n$ false\nexit code: 1\n```\n\nwhy?"
        );
        assert!(c.is_empty());
        assert_eq!(c.take_into("again"), "again");
    }

    #[test]
    fn the_fence_is_longer_than_any_backticks_inside() {
        let b = block("cat notes.md", "```rust\nfn main() {}\n````\n");
        assert!(b.contains("\n`````\n$ cat notes.md\n"), "{b}");
        assert!(b.ends_with("````\n`````"), "{b}");
    }

    #[test]
    fn long_output_is_cut_and_the_oldest_commands_make_room() {
        let mut c = ShellContext::default();
        c.push("seq", &"x".repeat(MAX_OUTPUT_BYTES * 3));
        assert!(c.bytes < MAX_OUTPUT_BYTES + 200, "{}", c.bytes);
        c.push("two", &"y".repeat(30 * 1024));
        assert_eq!(c.blocks.len(), 2);
        c.push("three", &"z".repeat(30 * 1024));
        assert!(c.bytes <= MAX_CONTEXT_BYTES, "{}", c.bytes);
        let text = c.take_into("p");
        assert!(text.starts_with(
            "[1 earlier shell command was left out here: the output was too long]\n\n"
        ));
        assert!(!text.contains("$ seq"));
        assert!(text.contains("$ two") && text.contains("$ three"));
        c.push("four", "ok");
        assert!(!c.take_into("p").contains("left out"));
    }
}
