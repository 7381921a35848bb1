//! The front ends: the interactive REPL ([`run_repl`], here), print mode ([`run_print`],
//! in `print.rs`) and `mypi acp` ([`run_acp`], in `acp/`: an editor drives mypi over the
//! Agent Client Protocol).
//! All three hand each line to [`App::handle_line`]; they differ in how they render and in how a
//! prompt is cancelled (Ctrl-C in the REPL cancels the running prompt and keeps mypi open).

mod acp;
pub mod cli;
pub mod complete;
mod during;
mod editor;
pub mod input;
mod keys;
pub mod markdown;
pub mod piped;
mod print;
pub mod printer;
pub mod render;
mod screen;
pub mod spinner;
pub mod style;
mod summary;
mod thoughts;
pub mod tool_lines;

use std::sync::Arc;

use crate::app::ui::AppUi;
use crate::app::{App, AppError, LineOutcome, QuitSource};
use crate::vocab::run::queue::Queues;
pub use acp::run_acp;
use during::{drive, During, Front};
use input::Input;
use keys::ReadResult;
pub use print::run_print;
use render::{stderr_line, HumanSink, Printer};

/// The interactive loop. Returns the exit code.
pub async fn run_repl(mut app: App, printer: Arc<Printer>) -> i32 {
    let input = match Input::start(completer(&app), app.config.history_file(), printer.clone()) {
        Ok(input) => input,
        Err(e) => {
            stderr_line(&format!("mypi: {e}"));
            return 1;
        }
    };
    if !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        // `echo hi | mypi`: it works (each line is a prompt, then mypi leaves), and says how
        // to get just the answer.
        stderr_line(
            "mypi: standard input is not a terminal: each line read from it runs as a prompt; \
             `mypi -p` runs one prompt and prints only its answer",
        );
    }
    greet(&app, &printer);
    if let Err(code) = start(&mut app, &input, &printer).await {
        return code;
    }
    let style = style::Style::detect();
    let shared = Shared {
        ui: app.ui.clone(),
        queues: app.queues.clone(),
        printer: printer.clone(),
        style,
    };
    watch_ctrl_c(printer.clone(), app.ui.clone());
    let mut repl = Repl {
        sink: HumanSink::new(printer, style, app.extensions.context().renderers.clone()),
        control: app.extensions.context().control.clone(),
        app,
        input,
        shared,
        typed: During::default(),
        interrupted_once: false,
    };
    repl.run().await;
    repl.farewell();
    repl.app.shutdown().await;
    0
}

/// Tab completion: commands, paths, the arguments of `/reload` and `/model`, and the names
/// after `/skill:`.
fn completer(app: &App) -> complete::SlashHelper {
    let (extensions, models) = (app.extensions.clone(), app.models.clone());
    let skills = app.extensions.context().skills.clone();
    let configured = app.configured_models();
    complete::SlashHelper {
        commands: app.commands.clone(),
        cwd: app.config.cwd.clone(),
        args: Arc::new(move |name: &str| match name {
            "reload" => extensions.summaries().into_iter().map(|s| s.name).collect(),
            "thinking" => std::iter::once("show")
                .chain(crate::vocab::thinking::LEVELS)
                .map(String::from)
                .collect(),
            complete::SKILLS => skills.skills().into_iter().map(|s| s.name).collect(),
            "model" => {
                let mut names = models.lock().map(|m| m.clone()).unwrap_or_default();
                for c in &configured {
                    if !names.contains(c) {
                        names.push(c.clone());
                    }
                }
                names
            }
            _ => Vec::new(),
        }),
        colour: style::Style::detect().colour(),
    }
}

/// The banner, and the recap of a resumed session.
fn greet(app: &App, printer: &Printer) {
    printer.line(&format!(
        "mypi {} — {} ({}) — /help for commands, Ctrl-D to leave",
        env!("CARGO_PKG_VERSION"),
        app.agent.provider().model(),
        app.config.provider_name
    ));
    if let Some(hint) = app.faux_hint() {
        printer.line(hint);
    }
    if app.resumed {
        printer.line(&format!("Resumed session {}.", app.agent.session_id()));
        let recap = app.recap();
        if !recap.is_empty() {
            printer.line(&recap);
        }
    }
}

/// Everything between the banner and the first prompt: the dialogs wired to the line
/// editor, the trust gate, MCP servers started, extensions loaded and watched. The exit code
/// when mypi cannot go on.
async fn start(app: &mut App, input: &Input, printer: &Arc<Printer>) -> Result<(), i32> {
    app.ui.set_confirm(input.confirmer());
    app.ui.set_ask(input.asker());
    app.ui.set_edit(input.editor());
    app.extensions
        .context()
        .control
        .set_screen(Arc::new(screen::ReplScreen::new(printer.clone())));
    ask_trust(app, printer).await;
    app.start_mcp();
    for s in app.load_extensions().await {
        printer.line(&format!("  ext {}", s.line()));
    }
    let pending = app.config.provider_pending;
    if let Err(e) = app.after_extensions() {
        stderr_line(&format!("mypi: {e}"));
        app.shutdown().await;
        return Err(e.exit_code());
    }
    if pending {
        printer.line(&format!(
            "Model: {} ({}, from an extension)",
            app.config.model, app.config.provider_name
        ));
    }
    if let Some(problem) = app.watch_extensions() {
        printer.line(&format!("! {problem}"));
    }
    app.start().await;
    Ok(())
}

/// What the screen side of a running line needs (see [`Front`]).
struct Shared {
    ui: Arc<AppUi>,
    printer: Arc<Printer>,
    queues: Arc<Queues>,
    style: style::Style,
}

impl Shared {
    fn front(&self) -> Front<'_> {
        Front {
            ui: &self.ui,
            printer: &self.printer,
            queues: &self.queues,
            style: self.style,
        }
    }
}

/// What the prompt gave: a line to run, nothing (ask again), or the end.
enum Next {
    Line(String),
    Again,
    Leave,
}

/// The REPL between its start and its end.
struct Repl {
    app: App,
    input: Input,
    shared: Shared,
    sink: HumanSink,
    control: Arc<crate::agent::control::Control>,
    /// What was typed while a line ran (a quit, the end of the input).
    typed: During,
    /// Ctrl-C at an empty prompt once: a second one leaves.
    interrupted_once: bool,
}

impl Repl {
    async fn run(&mut self) {
        if self.app.config.resume.as_deref() == Some("") {
            // `mypi -r`: choose the session first.
            let cancel = self.app.ui.new_prompt();
            let result = self.app.handle_line("/resume", &self.sink, &cancel).await;
            show(&self.shared.printer, result);
        }
        while self.run_queued().await {
            match self.next_line().await {
                Next::Line(line) => {
                    if !self.run_line(&line).await {
                        break;
                    }
                }
                Next::Again => {}
                Next::Leave => break,
            }
        }
    }

    /// Runs whatever extensions queued (while idle, or during the last line); false when
    /// mypi is to leave.
    async fn run_queued(&mut self) -> bool {
        let cancel = self.app.ui.new_prompt();
        let work = self.app.run_queued(&self.sink, &cancel);
        let front = self.shared.front();
        if let Some(result) = drive(work, &mut self.input, &mut self.typed, &front).await {
            show(&self.shared.printer, result.map(LineOutcome::Ran));
        }
        if cancel.is_cancelled() {
            self.put_back_queued();
        }
        !(self.typed.quit || self.app.quitting)
    }

    /// Waits for the next line (or for queued messages, or for a script's screen request).
    async fn next_line(&mut self) -> Next {
        let read = match self.input.take_held() {
            Some(held) => ReadResult::Line(held),
            None if self.typed.eof => {
                // The input ended during a run: mypi cannot stay, but extensions hear of it.
                let _ = self.app.may_quit(QuitSource::Eof, false).await;
                return Next::Leave;
            }
            None => tokio::select! {
                r = self.input.read("> ") => r,
                _ = self.shared.queues.wait() => return Next::Again,
                _ = self.control.wait() => {
                    self.app.after_line(&self.sink).await;
                    return Next::Again;
                }
            },
        };
        match read {
            ReadResult::Interrupted if self.interrupted_once => Next::Leave,
            ReadResult::Interrupted => {
                let hint = "(press Ctrl-C again or Ctrl-D to quit)";
                let style = self.shared.style;
                self.shared
                    .printer
                    .styled(&style.paint(style::Role::Dim, hint));
                self.interrupted_once = true;
                Next::Again
            }
            ReadResult::Line(l) if l.trim().is_empty() => Next::Again,
            ReadResult::Line(l) => {
                self.interrupted_once = false;
                Next::Line(l)
            }
            ReadResult::Nothing
            | ReadResult::FollowUp(_)
            | ReadResult::Cancel
            | ReadResult::Draft(_) => Next::Again,
            ReadResult::Eof => {
                let tty = std::io::IsTerminal::is_terminal(&std::io::stdin());
                match self.app.may_quit(QuitSource::Eof, tty).await {
                    Ok(()) => Next::Leave,
                    Err(stay) => {
                        self.shared.printer.line(&stay);
                        Next::Again
                    }
                }
            }
        }
    }

    /// Runs a typed line and shows how it went; false when mypi is to leave.
    async fn run_line(&mut self, line: &str) -> bool {
        let cancel = self.app.ui.new_prompt();
        let started = std::time::Instant::now();
        // On the heap: a line's future is large (a debug build's worker stack is 2 MiB).
        let work = Box::pin(self.app.handle_line(line, &self.sink, &cancel));
        let front = self.shared.front();
        let result = drive(work, &mut self.input, &mut self.typed, &front).await;
        if matches!(result, Ok(LineOutcome::Quit)) || self.typed.quit || self.app.quitting {
            return false;
        }
        if cancel.is_cancelled() {
            self.put_back_queued();
        }
        if let Ok(LineOutcome::Ran(outcome)) = &result {
            if outcome.turns > 0 {
                let summary = summary::run_summary(
                    self.app.agent.provider().model(),
                    outcome.usage,
                    &outcome.spent,
                    self.app.agent.usage(),
                    started.elapsed(),
                );
                let style = self.shared.style;
                self.shared
                    .printer
                    .styled(&style.paint(style::Role::Dim, &summary));
            }
        }
        show(&self.shared.printer, result);
        // A run's transient copies of the conversation (requests, events to scripts) are
        // as long as the session: give the pages they left free back before idling.
        crate::platform::sys::release_free_memory();
        true
    }

    /// A cancelled run stops what was queued behind it too: the queued messages go back to
    /// the prompt as its text, to send again, change or drop (as pi does).
    fn put_back_queued(&mut self) {
        let queued = self.shared.queues.take_all();
        if queued.is_empty() {
            return;
        }
        let n = queued.len();
        let what = if n == 1 { "message" } else { "messages" };
        let line = format!("» {n} queued {what} put back at the prompt");
        let style = self.shared.style;
        self.shared
            .printer
            .styled(&style.paint(style::Role::Dim, &line));
        self.input.keep_draft(queued.join("\n"));
    }

    /// Says where the session was saved.
    fn farewell(&self) {
        if let Some(writer) = self.app.agent.session() {
            let saved = format!(
                "session {} saved; resume it here with: mypi --continue",
                writer.id()
            );
            let style = self.shared.style;
            self.shared
                .printer
                .styled(&style.paint(style::Role::Dim, &saved));
        }
    }
}

/// Applies the trust gate: asks once for a folder never answered (showing what would load).
async fn ask_trust(app: &mut App, printer: &Printer) {
    use crate::app::Gate;
    match app.project_gate() {
        Gate::Open => {}
        Gate::Closed { why } => {
            printer.line(&format!("! {why}"));
            app.close_project();
        }
        Gate::Ask { folder, files } => {
            printer.line(
                "This folder has its own extensions, MCP servers, agents, skills or prompt files; they act as you (scripts and servers can run any command):",
            );
            for f in &files {
                printer.line(&format!("  {f}"));
            }
            let question = format!(
                "Trust {} and load them? (remembered; `mypi trust --revoke` undoes it)",
                folder.display()
            );
            let yes = crate::vocab::ui::Ui::confirm(app.ui.as_ref(), &question).await;
            if let Some(problem) = app.remember_trust(&folder, yes) {
                printer.line(&format!("! {problem}"));
            }
            if !yes {
                printer.line(&format!(
                    "! project extensions not loaded; `mypi trust {}` trusts the folder later",
                    folder.display()
                ));
                app.close_project();
            }
        }
    }
}

/// Prints what the sink did not: a blocked input's answer, an error that is not the agent's
/// (the agent's errors were reported as events).
fn show(printer: &Printer, result: Result<LineOutcome, AppError>) {
    match result {
        Ok(LineOutcome::Ran(outcome)) if outcome.turns == 0 && outcome.blocked.is_some() => {
            printer.line(&outcome.text)
        }
        Ok(_) | Err(AppError::Agent(_)) => {}
        Err(e) => printer.line(&format!("error: {e}")),
    }
}

/// Ctrl-C outside line editing (while a prompt runs) cancels the current prompt and keeps
/// mypi open; at the prompt rustyline sees it as a key instead.
fn watch_ctrl_c(printer: Arc<Printer>, ui: Arc<AppUi>) {
    tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            let token = ui.current();
            if !token.is_cancelled() {
                printer.line("^C cancelling…");
                token.cancel();
            }
        }
    });
}
