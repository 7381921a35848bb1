//! Print mode (`mypi -p`): one prompt or command, its answer on stdout, then exit. The
//! prompt may come from the argument, from standard input, or both; messages that a command
//! or a handler queued run before mypi exits.

use crate::app::{App, AppError, LineOutcome};
use crate::config::Mode;

use super::piped;
use super::render::{stderr_line, JsonSink, PrintSink};

/// Runs one prompt (or command) and prints the answer. Returns the exit code.
pub async fn run_print(mut app: App) -> i32 {
    let (prompt, json) = match &app.config.mode {
        Mode::Print { prompt, json } => (prompt.clone(), *json),
        Mode::Repl | Mode::Acp => (None, false),
    };
    let prompt = match prompt_text(prompt) {
        Ok(p) => p,
        Err(code) => return code,
    };
    if app.config.resume.as_deref() == Some("") {
        stderr_line("mypi: -r without an ID asks which session, which needs the REPL; with -p give the ID (`mypi sessions` lists them)");
        return 2;
    }
    if let Err(code) = start(&mut app).await {
        return code;
    }
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

/// The prompt to run: the argument, with what was piped on standard input (a command gets
/// none of it), or the piped text alone. The exit code when there is none.
fn prompt_text(prompt: Option<String>) -> Result<String, i32> {
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
                return Err(1);
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
        return Err(2);
    }
    Ok(prompt)
}

/// Everything before the prompt runs: stdout kept for mypi, then [`start_app`]. The exit
/// code when mypi cannot go on.
async fn start(app: &mut App) -> Result<(), i32> {
    // From here on only mypi writes to stdout, and nothing reads stdin.
    if let Err(e) = crate::platform::stdio::isolate() {
        stderr_line(&format!("mypi: cannot set up standard output: {e}"));
        return Err(1);
    }
    if let Err(e) = start_app(app, &|line| stderr_line(&format!("mypi: {line}"))).await {
        stderr_line(&format!("mypi: {e}"));
        app.shutdown().await;
        return Err(e.exit_code());
    }
    Ok(())
}

/// What print mode and each `mypi acp` session do before their first prompt: the trust
/// gate (`say` tells why the project's code is skipped), MCP servers started, extensions
/// loaded, the session started, and what `session_start` handlers asked done.
pub(super) async fn start_app(app: &mut App, say: &(dyn Fn(&str) + Sync)) -> Result<(), AppError> {
    if let crate::app::Gate::Closed { why } = app.project_gate() {
        say(&why);
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
    app.after_extensions()?;
    app.start().await;
    // What `session_start` handlers asked (`api.set_model`) applies to this run's prompt.
    let notice = app.extensions.context().notice.clone();
    for line in app.apply_requests().await {
        notice(line);
    }
    Ok(())
}

/// Prints an answer and a newline (not in JSON mode, where the events carry it; nothing for
/// an empty one); exit code 0. A reader that went away (`mypi -p ... | head -c1`) is not an
/// error worth a panic: the write error is ignored.
fn answer(json: bool, text: &str) -> i32 {
    if !json && !text.is_empty() {
        super::render::stdout_line(text);
    }
    0
}

/// Reports a failure on stderr; its exit code.
fn failed(e: &AppError) -> i32 {
    stderr_line(&format!("mypi: {e}"));
    e.exit_code()
}
