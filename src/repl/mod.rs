//! The front ends: the interactive REPL ([`run_repl`]) and print mode ([`run_print`]).
//! Both hand each line to [`App::handle_line`]; they differ in how they render and in how a
//! prompt is cancelled (Ctrl-C in the REPL cancels the running prompt and keeps mypi open).

pub mod input;
pub mod render;

use std::io::Read;
use std::sync::Arc;

use crate::app::{App, AppError, LineOutcome};
use crate::cancel::CancelToken;
use crate::config::Mode;
use input::{Input, ReadResult};
use render::{HumanSink, JsonSink, PrintSink, Printer};

/// Runs one prompt (or command) and prints the answer. Returns the exit code.
pub async fn run_print(mut app: App) -> i32 {
    let (prompt, json) = match &app.config.mode {
        Mode::Print { prompt, json } => (prompt.clone(), *json),
        Mode::Repl => (None, false),
    };
    let prompt = match prompt {
        Some(p) => p,
        None => {
            let mut text = String::new();
            if let Err(e) = std::io::stdin().read_to_string(&mut text) {
                eprintln!("mypi: cannot read the prompt from standard input: {e}");
                return 1;
            }
            text
        }
    };
    if prompt.trim().is_empty() {
        eprintln!("mypi: the prompt is empty; pass -p \"PROMPT\" or pipe it on standard input");
        return 2;
    }
    app.start().await;
    let cancel = CancelToken::new();
    let result = if json {
        app.handle_line(prompt.trim_end(), &JsonSink, &cancel).await
    } else {
        app.handle_line(prompt.trim_end(), &PrintSink, &cancel)
            .await
    };
    app.shutdown().await;
    match result {
        Ok(LineOutcome::Ran(outcome)) => {
            if !json {
                print_answer(&outcome.text);
            }
            0
        }
        Ok(LineOutcome::Output(text)) => {
            if !json {
                print_answer(&text);
            }
            0
        }
        Ok(LineOutcome::Quit) => 0,
        Err(e) => {
            eprintln!("mypi: {e}");
            e.exit_code()
        }
    }
}

/// Prints the answer and a newline. A reader that went away (`mypi -p ... | head -c1`) is
/// not an error worth a panic: the write error is ignored.
fn print_answer(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}").and_then(|_| out.flush());
}

/// The interactive loop. Returns the exit code.
pub async fn run_repl(mut app: App, printer: Arc<Printer>) -> i32 {
    let mut input = match Input::start(
        app.commands.clone(),
        app.config.history_file(),
        printer.clone(),
    ) {
        Ok(input) => input,
        Err(e) => {
            eprintln!("mypi: {e}");
            return 1;
        }
    };
    let provider = app.agent.provider().clone();
    printer.line(&format!(
        "mypi {} — {} ({}) — /help for commands, Ctrl-D to leave",
        env!("CARGO_PKG_VERSION"),
        provider.model(),
        provider.name()
    ));
    if let Some(hint) = app.faux_hint() {
        printer.line(hint);
    }
    app.start().await;
    let sink = HumanSink {
        printer: printer.clone(),
    };
    let queues = app.queues.clone();
    loop {
        let line = tokio::select! {
            r = input.read("> ") => r,
            _ = queues.wait() => match queues.next_idle_prompt() {
                Some(p) => ReadResult::Line(p),
                None => continue,
            },
        };
        let line = match line {
            ReadResult::Line(l) if l.trim().is_empty() => continue,
            ReadResult::Line(l) => l,
            ReadResult::Interrupted => continue,
            ReadResult::Eof => break,
        };
        match run_line(&mut app, &line, &sink).await {
            Ok(LineOutcome::Quit) => break,
            Ok(LineOutcome::Ran(outcome)) if outcome.turns == 0 && outcome.blocked.is_some() => {
                printer.line(&outcome.text)
            }
            Ok(_) => {}
            Err(AppError::Agent(_)) => {}
            Err(e) => printer.line(&format!("error: {e}")),
        }
    }
    app.shutdown().await;
    0
}

/// Runs a line; Ctrl-C while it runs cancels it.
async fn run_line(app: &mut App, line: &str, sink: &HumanSink) -> Result<LineOutcome, AppError> {
    let cancel = CancelToken::new();
    let run = app.handle_line(line, sink, &cancel);
    tokio::pin!(run);
    loop {
        tokio::select! {
            r = &mut run => return r,
            _ = tokio::signal::ctrl_c() => {
                sink.printer.line("^C cancelling…");
                cancel.cancel();
            }
        }
    }
}
