//! The front ends: the interactive REPL ([`run_repl`]) and print mode ([`run_print`]).
//! Both hand each line to [`App::handle_line`]; they differ in how they render and in how a
//! prompt is cancelled (Ctrl-C in the REPL cancels the running prompt and keeps mypi open).

pub mod complete;
mod during;
mod editor;
pub mod input;
mod keys;
pub mod markdown;
pub mod piped;
pub mod printer;
pub mod render;
mod screen;
pub mod spinner;
pub mod style;
pub mod tool_lines;

use std::sync::Arc;

use crate::app::ui::AppUi;
use crate::app::{App, AppError, LineOutcome};
use crate::config::Mode;
use during::{drive, During, Front};
use input::{Input, ReadResult};
use render::{stderr_line, HumanSink, JsonSink, PrintSink, Printer};

/// Runs one prompt (or command) and prints the answer. Returns the exit code.
pub async fn run_print(mut app: App) -> i32 {
    let (prompt, json) = match &app.config.mode {
        Mode::Print { prompt, json } => (prompt.clone(), *json),
        Mode::Repl => (None, false),
    };
    let mut piped = String::new();
    let stdin = match prompt {
        // The prompt itself comes from standard input: wait for it however long it takes.
        None => piped::Stdin::Ready,
        Some(_) => piped::stdin_state(piped::PIPE_GRACE),
    };
    match stdin {
        piped::Stdin::None => {}
        piped::Stdin::Silent { waited } => stderr_line(&format!(
            "mypi: standard input is open but sent nothing in {} s; going on without it \
             (close it, or pipe the text in before mypi starts)",
            waited.as_secs()
        )),
        piped::Stdin::Ready => match piped::read_stdin() {
            Ok(text) => piped = text,
            Err(e) => {
                stderr_line(&format!("mypi: {e}"));
                return 1;
            }
        },
    }
    let prompt = match prompt {
        // A slash command or a shell escape (`!cmd`) is not given the piped text.
        Some(p) if p.trim_start().starts_with(['/', '!']) => p,
        Some(p) => piped::with_piped(&p, &piped),
        None => piped,
    };
    if prompt.trim().is_empty() {
        stderr_line("mypi: the prompt is empty; pass -p \"PROMPT\" or pipe it on standard input");
        return 2;
    }
    if app.config.resume.as_deref() == Some("") {
        stderr_line("mypi: -r without an ID asks which session, which needs the REPL; with -p give the ID (`mypi sessions` lists them)");
        return 2;
    }
    // From here on only mypi writes to stdout, and nothing reads stdin.
    if let Err(e) = crate::stdio::isolate() {
        stderr_line(&format!("mypi: cannot set up standard output: {e}"));
        return 1;
    }
    if let crate::app::Gate::Closed { why } = app.project_gate() {
        stderr_line(&format!("mypi: {why}"));
        app.close_project();
    }
    app.start_mcp();
    for s in app.load_extensions().await {
        if let Some(e) = &s.error {
            app.extensions.context().notice.as_ref()(format!(
                "extension {} failed to load: {e}",
                s.name
            ));
        }
    }
    if let Err(e) = app.after_extensions() {
        stderr_line(&format!("mypi: {e}"));
        app.shutdown().await;
        return e.exit_code();
    }
    app.start().await;
    let cancel = app.ui.new_prompt();
    let sink: &dyn crate::agent::EventSink = if json { &JsonSink } else { &PrintSink };
    if json {
        sink.emit(app.session_event());
    }
    let mut code = match app.handle_line(prompt.trim_end(), sink, &cancel).await {
        Ok(LineOutcome::Ran(outcome)) => {
            // Whoever reads the answer should know it is the offline model's echo.
            if let (Some(hint), false) = (app.faux_hint(), json) {
                stderr_line(&format!("mypi: {hint}"));
            }
            answer(json, &outcome.text)
        }
        Ok(LineOutcome::Output(text)) => answer(json, &text),
        Ok(LineOutcome::Quit) => 0,
        Err(e) => failed(&e),
    };
    // Events a command emitted reach their handlers, and the messages a command or a
    // handler queued run, before mypi exits.
    app.extensions
        .context()
        .background
        .drain(crate::extensions::background::DRAIN_AT_EXIT)
        .await;
    if code == 0 {
        code = match app.run_queued(sink, &cancel).await {
            Some(Ok(outcome)) => answer(json, &outcome.text),
            Some(Err(e)) => failed(&e),
            None => 0,
        };
    }
    app.shutdown().await;
    code
}

/// Prints an answer (not in JSON mode, where the events carry it; nothing for an empty
/// one); exit code 0.
fn answer(json: bool, text: &str) -> i32 {
    if !json && !text.is_empty() {
        print_answer(text);
    }
    0
}

/// Reports a failure on stderr; its exit code.
fn failed(e: &AppError) -> i32 {
    stderr_line(&format!("mypi: {e}"));
    e.exit_code()
}

/// Prints the answer and a newline. A reader that went away (`mypi -p ... | head -c1`) is
/// not an error worth a panic: the write error is ignored.
fn print_answer(text: &str) {
    crate::stdio::out_line(text);
}

/// The interactive loop. Returns the exit code.
pub async fn run_repl(mut app: App, printer: Arc<Printer>) -> i32 {
    let (extensions, models) = (app.extensions.clone(), app.models.clone());
    let configured = app.configured_models();
    let completer = complete::SlashHelper {
        commands: app.commands.clone(),
        cwd: app.config.cwd.clone(),
        args: Arc::new(move |name: &str| match name {
            "reload" => extensions.summaries().into_iter().map(|s| s.name).collect(),
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
    };
    let mut input = match Input::start(completer, app.config.history_file(), printer.clone()) {
        Ok(input) => input,
        Err(e) => {
            stderr_line(&format!("mypi: {e}"));
            return 1;
        }
    };
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
    app.ui.set_confirm(input.confirmer());
    app.ui.set_ask(input.asker());
    app.ui.set_edit(input.editor());
    app.extensions
        .context()
        .control
        .set_screen(Arc::new(screen::ReplScreen::new(printer.clone())));
    ask_trust(&mut app, &printer).await;
    app.start_mcp();
    for s in app.load_extensions().await {
        printer.line(&format!("  ext {}", s.line()));
    }
    let pending = app.config.provider_pending;
    if let Err(e) = app.after_extensions() {
        stderr_line(&format!("mypi: {e}"));
        app.shutdown().await;
        return e.exit_code();
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
    let style = style::Style::detect();
    let sink = HumanSink::new(printer.clone(), style);
    let queues = app.queues.clone();
    let control = app.extensions.context().control.clone();
    watch_ctrl_c(printer.clone(), app.ui.clone());
    let ui = app.ui.clone();
    let front = Front {
        ui: &ui,
        printer: &printer,
        queues: &queues,
        style,
    };
    let mut typed = During::default();
    let mut interrupted_once = false;
    if app.config.resume.as_deref() == Some("") {
        // `mypi -r`: choose the session first.
        let cancel = app.ui.new_prompt();
        let result = app.handle_line("/resume", &sink, &cancel).await;
        show(&printer, result);
    }
    loop {
        // Whatever extensions queued (while idle, or during the last line) runs first.
        let cancel = app.ui.new_prompt();
        let queued = drive(
            app.run_queued(&sink, &cancel),
            &mut input,
            &mut typed,
            &front,
        )
        .await;
        if let Some(result) = queued {
            show(&printer, result.map(LineOutcome::Ran));
        }
        if typed.quit || app.quitting {
            break;
        }
        let line = match input.take_held() {
            Some(held) => ReadResult::Line(held),
            None if typed.eof => {
                // The input ended during a run: mypi cannot stay, but extensions hear of it.
                let _ = app.may_quit(crate::app::QuitSource::Eof, false).await;
                break;
            }
            None => tokio::select! {
                r = input.read("> ") => r,
                _ = queues.wait() => continue,
                _ = control.wait() => {
                    app.after_line(&sink).await;
                    continue;
                }
            },
        };
        let line = match line {
            ReadResult::Interrupted if interrupted_once => break,
            ReadResult::Interrupted => {
                // Ctrl-C at an empty prompt: a second one leaves.
                printer
                    .line(&style.paint(style::Role::Dim, "(press Ctrl-C again or Ctrl-D to quit)"));
                interrupted_once = true;
                continue;
            }
            ReadResult::Line(l) if l.trim().is_empty() => continue,
            ReadResult::Line(l) => l,
            ReadResult::Nothing
            | ReadResult::FollowUp(_)
            | ReadResult::Cancel
            | ReadResult::Draft(_) => continue,
            ReadResult::Eof => {
                let tty = std::io::IsTerminal::is_terminal(&std::io::stdin());
                match app.may_quit(crate::app::QuitSource::Eof, tty).await {
                    Ok(()) => break,
                    Err(stay) => {
                        printer.line(&stay);
                        continue;
                    }
                }
            }
        };
        interrupted_once = false;
        let cancel = app.ui.new_prompt();
        let started = std::time::Instant::now();
        let work = app.handle_line(&line, &sink, &cancel);
        let result = drive(work, &mut input, &mut typed, &front).await;
        if matches!(result, Ok(LineOutcome::Quit)) || typed.quit || app.quitting {
            break;
        }
        if let Ok(LineOutcome::Ran(outcome)) = &result {
            if outcome.turns > 0 {
                let summary = render::run_summary(
                    app.agent.provider().model(),
                    outcome.usage,
                    app.agent.usage(),
                    started.elapsed(),
                );
                printer.line(&style.paint(style::Role::Dim, &summary));
            }
        }
        show(&printer, result);
    }
    if let Some(writer) = app.agent.session() {
        printer.line(&style.paint(
            style::Role::Dim,
            &format!(
                "session {} saved; resume it here with: mypi --continue",
                writer.id()
            ),
        ));
    }
    app.shutdown().await;
    0
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
                "This folder has its own extensions or MCP servers. They run as you and can run any command:",
            );
            for f in &files {
                printer.line(&format!("  {f}"));
            }
            let question = format!(
                "Trust {} and load them? (remembered; `mypi trust --revoke` undoes it)",
                folder.display()
            );
            let yes = crate::ui::Ui::confirm(app.ui.as_ref(), &question).await;
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
