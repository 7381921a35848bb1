//! Line input on its own thread: rustyline with a history file and tab completion
//! ([`super::complete`]). The async side asks for a line and awaits the answer, so the runtime stays free
//! while the user types.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc as std_mpsc;
use std::sync::Arc;

use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::Editor;
use tokio::sync::{mpsc, oneshot};

use super::complete::SlashHelper;
use super::keys::{ReadResult, Stop};
use super::render::Printer;

/// Whether `line` asks to leave.
pub fn is_quit(line: &str) -> bool {
    matches!(line.trim(), "/quit" | "/exit" | "/q")
}

/// What the input thread is asked to do.
enum Request {
    /// Read a prompt line; the text already typed.
    Line(String, String),
    /// Ask a yes/no question (for `ctx.ui.confirm`) and send the answer back.
    /// A question: the prompt to show and where the line goes (`None`: no line came).
    Ask(String, oneshot::Sender<Option<String>>),
    /// Read keys while a prompt runs ([`super::keys`]), starting from the text already
    /// typed; give up when stopped.
    Keys(Arc<Stop>, String),
    /// Open the user's editor on the text (`ctx.ui.editor`) and send back what was saved.
    Edit(String, oneshot::Sender<Option<String>>),
}

/// Lines typed while a prompt ran and questions waiting for a line, under one lock so that a
/// line and a question arriving at once always meet.
#[derive(Default)]
struct Waiting {
    /// Lines not used yet, oldest first (the next question takes the first).
    lines: std::collections::VecDeque<String>,
    /// Questions asked while a line was being read, oldest first.
    questions: std::collections::VecDeque<oneshot::Sender<Option<String>>>,
}

type Shared = Arc<std::sync::Mutex<Waiting>>;

fn waiting(w: &Shared) -> std::sync::MutexGuard<'_, Waiting> {
    w.lock().unwrap_or_else(|p| p.into_inner())
}

/// [`Input::deliver`] with the lock held.
fn deliver_into(w: &mut Waiting, mut line: String) {
    // A question that timed out (or whose run ended) does not take the line.
    while let Some(tx) = w.questions.pop_front() {
        match tx.send(Some(line)) {
            Ok(()) => return,
            Err(back) => line = back.unwrap_or_default(),
        }
    }
    if !line.trim().is_empty() {
        w.lines.push_back(line);
    }
}

type StopSlot = Arc<std::sync::Mutex<Option<Arc<Stop>>>>;

fn lock_stop(s: &StopSlot) -> std::sync::MutexGuard<'_, Option<Arc<Stop>>> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

/// The input thread's handle.
pub struct Input {
    requests: std_mpsc::Sender<Request>,
    results: mpsc::UnboundedReceiver<ReadResult>,
    /// A line request is with the thread and its answer not taken yet.
    outstanding: Arc<AtomicBool>,
    /// Lines typed during runs and questions waiting for them.
    waiting: Shared,
    printer: Arc<Printer>,
    /// Standard input is a terminal (lines read while a prompt runs are read cooked there).
    terminal: bool,
    /// Ends the key read in progress, if any (shared with the editor, which needs the
    /// terminal).
    stop_keys: Arc<std::sync::Mutex<Option<Arc<Stop>>>>,
    /// A line begun during a run that ended: the next read starts with it.
    draft: Option<String>,
}

impl Input {
    /// Starts the thread. The printer gets rustyline's external printer when the terminal
    /// supports one.
    pub fn start(
        completer: SlashHelper,
        history: Option<PathBuf>,
        printer: Arc<Printer>,
    ) -> Result<Input, String> {
        // A lone Esc is the Esc key (not a Meta prefix for the next key) when nothing follows
        // it within the time a terminal takes to send the rest of a key's sequence.
        let config = rustyline::Config::builder()
            .keyseq_timeout(Some(super::keys::ESC_WAIT_MS as u16))
            .build();
        let mut editor: Editor<SlashHelper, DefaultHistory> =
            Editor::with_config(config).map_err(|e| format!("cannot start line editing: {e}"))?;
        editor.set_helper(Some(completer));
        let continued = bind_newlines(&mut editor);
        if let Some(path) = &history {
            let _ = editor.load_history(path);
        }
        if let Ok(ext) = editor.create_external_printer() {
            printer.set_external(Box::new(ext));
        }
        let (req_tx, req_rx) = std_mpsc::channel::<Request>();
        let (res_tx, res_rx) = mpsc::unbounded_channel();
        std::thread::Builder::new()
            .name("mypi-input".into())
            .spawn({
                let printer = printer.clone();
                move || read_loop(editor, history, printer, req_rx, res_tx, continued)
            })
            .map_err(|e| format!("cannot start the input thread: {e}"))?;
        Ok(Input {
            requests: req_tx,
            results: res_rx,
            outstanding: Arc::new(AtomicBool::new(false)),
            waiting: Shared::default(),
            printer,
            terminal: std::io::stdin().is_terminal(),
            stop_keys: Arc::default(),
            draft: None,
        })
    }

    /// Whether standard input is a terminal (where keys during a run are read one by one).
    pub fn on_terminal(&self) -> bool {
        self.terminal
    }

    /// A line typed while a prompt runs (see [`Input::end_run`]). On a terminal keys are
    /// read one by one and shown in the status block ([`super::keys`]), so nothing typed is
    /// echoed into the reply and the line editor does not hold back streamed text.
    pub async fn read_during_run(&mut self) -> ReadResult {
        // Under the lock a question takes to choose its way (see `asker_with`): it sees the
        // read outstanding, or its own request goes first.
        let shared = self.waiting.clone();
        let held = waiting(&shared);
        if !self.outstanding.load(Ordering::SeqCst) {
            let initial = self.draft.take().unwrap_or_default();
            let request = match (self.terminal, Stop::new()) {
                (true, Ok(stop)) => {
                    let stop = Arc::new(stop);
                    *lock_stop(&self.stop_keys) = Some(stop.clone());
                    Request::Keys(stop, initial)
                }
                _ => Request::Line(String::new(), initial),
            };
            self.outstanding.store(true, Ordering::SeqCst);
            if self.requests.send(request).is_err() {
                self.outstanding.store(false, Ordering::SeqCst);
                return ReadResult::Eof;
            }
        }
        drop(held);
        match self.take_result(true).await {
            ReadResult::Draft(text) => {
                // Begun during the last run: the next read goes on with it.
                self.keep_draft(text);
                ReadResult::Nothing
            }
            r => r,
        }
    }

    /// Puts `text` in the line the next prompt starts with, after what is there already.
    pub fn keep_draft(&mut self, text: String) {
        self.draft = Some(match self.draft.take() {
            Some(before) if !before.is_empty() => format!("{before}\n{text}"),
            _ => text,
        });
    }

    /// The run ended: a terminal read started for it gives up (what was typed without Enter
    /// stays for the line editor).
    pub fn end_run(&mut self) {
        if let Some(stop) = lock_stop(&self.stop_keys).take() {
            stop.stop();
        }
    }

    /// The input thread's next result; `during`: it is read for a running prompt.
    async fn take_result(&mut self, during: bool) -> ReadResult {
        let result = self.results.recv().await.unwrap_or(ReadResult::Eof);
        let mut w = waiting(&self.waiting);
        self.outstanding.store(false, Ordering::SeqCst);
        // Off a terminal a line typed during a run answers a question or waits its turn:
        // it is handed on under the same lock, so a question asked just now cannot miss it.
        if let (false, ReadResult::Line(line)) = (self.terminal, &result) {
            if during && !is_quit(line) {
                deliver_into(&mut w, line.clone());
                return ReadResult::Nothing;
            }
        }
        result
    }

    /// A line typed while a prompt ran: it answers the oldest waiting question (an empty one
    /// says no), or waits for the next question or the next prompt (an empty one is dropped).
    pub fn deliver(&self, line: String) {
        deliver_into(&mut waiting(&self.waiting), line);
    }

    /// Whether a question waits for the next line.
    pub fn has_question(&self) -> bool {
        let mut w = waiting(&self.waiting);
        w.questions.retain(|tx| !tx.is_closed());
        !w.questions.is_empty()
    }

    /// The oldest line typed ahead.
    pub fn take_held(&self) -> Option<String> {
        waiting(&self.waiting).lines.pop_front()
    }

    /// Answers every waiting question with no (input ended, or the run that asked ended).
    pub fn refuse_pending(&self) {
        let questions = std::mem::take(&mut waiting(&self.waiting).questions);
        for tx in questions {
            let _ = tx.send(None);
        }
    }

    /// The next line. Cancel-safe: a request stays outstanding until its answer is taken.
    pub async fn read(&mut self, prompt: &str) -> ReadResult {
        loop {
            let shared = self.waiting.clone();
            let held = waiting(&shared);
            if !self.outstanding.load(Ordering::SeqCst) {
                self.outstanding.store(true, Ordering::SeqCst);
                let initial = self.draft.take().unwrap_or_default();
                if self
                    .requests
                    .send(Request::Line(prompt.to_string(), initial))
                    .is_err()
                {
                    self.outstanding.store(false, Ordering::SeqCst);
                    return ReadResult::Eof;
                }
            }
            drop(held);
            match self.take_result(false).await {
                // A read of the last run gave up: now read with the editor.
                ReadResult::Nothing => continue,
                ReadResult::Draft(text) => {
                    self.keep_draft(text);
                    continue;
                }
                r => return r,
            }
        }
    }

    /// A function that asks the user a yes/no question on this terminal; its future resolves
    /// with the answer (false when the input thread is gone).
    pub fn confirmer(&self) -> crate::app::ui::ConfirmFn {
        let ask = self.asker_with(" [y/N]");
        Box::new(move |question: &str| {
            let line = ask(question);
            Box::pin(async move { line.await.is_some_and(|l| is_yes(&l)) })
        })
    }

    /// A function that opens the user's editor: on a terminal the input thread runs it (a key
    /// read of a running prompt gives the terminal up first and starts again after); off a
    /// terminal it runs without one (stdin and stdout closed).
    pub fn editor(&self) -> crate::app::ui::EditFn {
        let requests = std::sync::Mutex::new(self.requests.clone());
        let (stop, terminal) = (self.stop_keys.clone(), self.terminal);
        Box::new(move |initial: &str| {
            let initial = initial.to_string();
            if !terminal {
                return Box::pin(async move {
                    tokio::task::spawn_blocking(move || super::editor::edit(&initial, false))
                        .await
                        .ok()
                        .flatten()
                });
            }
            let (tx, rx) = oneshot::channel();
            let sent = requests
                .lock()
                .map(|r| r.send(Request::Edit(initial, tx)).is_ok())
                .unwrap_or(false);
            if let Some(s) = lock_stop(&stop).as_ref() {
                s.stop();
            }
            Box::pin(async move {
                if sent {
                    rx.await.ok().flatten()
                } else {
                    None
                }
            })
        })
    }

    /// A function that asks the user for a line on this terminal; its future resolves with
    /// the line (`None` when the input thread is gone or input ended).
    pub fn asker(&self) -> crate::app::ui::AskFn {
        self.asker_with("")
    }

    /// While a line is being read already (a prompt runs and input is read meanwhile), the
    /// question is printed and the next line answers it ([`Input::deliver`]); a line typed
    /// ahead answers it at once.
    fn asker_with(&self, suffix: &'static str) -> crate::app::ui::AskFn {
        let requests = std::sync::Mutex::new(self.requests.clone());
        let (outstanding, shared, printer, terminal) = (
            self.outstanding.clone(),
            self.waiting.clone(),
            self.printer.clone(),
            self.terminal,
        );
        Box::new(move |question: &str| {
            let (tx, rx) = oneshot::channel();
            let mut w = waiting(&shared);
            let sent = if let Some(line) = w.lines.pop_front() {
                // Typed ahead, before the question came: that line is the answer.
                printer.line(&format!("{question}{suffix} {}", line.trim()));
                let _ = tx.send(Some(line));
                true
            } else if outstanding.load(Ordering::SeqCst) {
                printer.line(&format!("{question}{suffix}"));
                w.questions.push_back(tx);
                true
            } else {
                // The lock stays held until the request is sent, so that no read of a
                // running prompt gets in first and takes the answer as a line.
                // Off a terminal the line editor shows no prompt: the question is a line.
                let prompt = if terminal {
                    format!("{question}{suffix} ")
                } else {
                    printer.line(&format!("{question}{suffix}"));
                    String::new()
                };
                requests
                    .lock()
                    .map(|r| r.send(Request::Ask(prompt, tx)).is_ok())
                    .unwrap_or(false)
            };
            Box::pin(async move {
                if sent {
                    rx.await.ok().flatten()
                } else {
                    None
                }
            })
        })
    }
}

/// Multi-line prompts: Alt+Enter (and Shift+Enter where the terminal tells it apart) adds
/// a newline; so does Enter right after a `\` at the end of the line, and that `\` is taken
/// out when the prompt is sent. A bracketed paste goes in whole, newlines and all
/// (rustyline's own handling). Returns the count of `\` + Enter continuations made.
fn bind_newlines(editor: &mut Editor<SlashHelper, DefaultHistory>) -> Arc<AtomicUsize> {
    use rustyline::{Cmd, EventHandler, KeyCode, KeyEvent, Modifiers};
    for mods in [Modifiers::ALT, Modifiers::SHIFT] {
        editor.bind_sequence(KeyEvent(KeyCode::Enter, mods), Cmd::Newline);
    }
    // Esc at the prompt does nothing (it cancels a running prompt, read elsewhere).
    editor.bind_sequence(KeyEvent(KeyCode::Esc, Modifiers::NONE), Cmd::Noop);
    let continued = Arc::new(AtomicUsize::new(0));
    editor.bind_sequence(
        KeyEvent(KeyCode::Enter, Modifiers::NONE),
        EventHandler::Conditional(Box::new(BackslashEnter(continued.clone()))),
    );
    continued
}

/// Enter after a trailing `\`: a newline, and editing goes on.
struct BackslashEnter(Arc<AtomicUsize>);

impl rustyline::ConditionalEventHandler for BackslashEnter {
    fn handle(
        &self,
        _: &rustyline::Event,
        _: rustyline::RepeatCount,
        _: bool,
        ctx: &rustyline::EventContext,
    ) -> Option<rustyline::Cmd> {
        let line = ctx.line();
        let continues = ctx.pos() == line.len() && line.ends_with('\\');
        continues.then(|| {
            self.0.fetch_add(1, Ordering::SeqCst);
            rustyline::Cmd::Newline
        })
    }
}

/// The prompt as sent: when it was continued with `\` + Enter, each `\` before a newline goes.
fn joined(line: String, continued: &AtomicUsize) -> String {
    if continued.swap(0, Ordering::SeqCst) == 0 {
        return line;
    }
    line.replace("\\\n", "\n")
}

/// Whether an answer means yes.
fn is_yes(line: &str) -> bool {
    matches!(line.trim(), "y" | "Y" | "yes" | "Yes")
}

fn read_loop(
    mut editor: Editor<SlashHelper, DefaultHistory>,
    history: Option<PathBuf>,
    printer: Arc<Printer>,
    requests: std_mpsc::Receiver<Request>,
    results: mpsc::UnboundedSender<ReadResult>,
    continued: Arc<AtomicUsize>,
) {
    let terminal = std::io::stdin().is_terminal();
    // What the next read takes first: a line typed as the answer to a question that had
    // timed out meanwhile, then the bytes the key reader read past the end of a line.
    let mut ahead = Ahead::default();
    while let Ok(request) = requests.recv() {
        let (prompt, mut initial) = match request {
            Request::Line(prompt, initial) => (prompt, initial),
            Request::Keys(stop, initial) => {
                if !initial.is_empty() {
                    printer.set_draft(Some(initial.clone()));
                }
                let result = super::keys::read_keys(&stop, &initial, &printer, &mut ahead.bytes);
                let eof = result == ReadResult::Eof;
                if results.send(result).is_err() || eof {
                    return;
                }
                continue;
            }
            Request::Ask(prompt, answer) => {
                if answer.is_closed() {
                    continue;
                }
                let line = match ahead.line(&prompt, &printer) {
                    Some(line) => Ok(line),
                    None => {
                        printer.set_reading(true);
                        let line = editor.readline(&*crate::vocab::text::inert(&prompt));
                        printer.set_reading(false);
                        line
                    }
                };
                if let Err(Some(line)) = answer.send(line.ok()) {
                    // The question timed out while it was answered: the line is the user's
                    // next prompt, not lost.
                    printer.line("(that question had timed out: the line goes to the prompt)");
                    ahead.lines.push_back(line);
                }
                continue;
            }
            Request::Edit(initial, answer) => {
                let _ = answer.send(super::editor::edit(&initial, true));
                continue;
            }
        };
        let line = match ahead.line(&prompt, &printer) {
            Some(line) => Ok(line),
            None => {
                initial.push_str(&super::keys::typed_draft(&mut ahead.bytes));
                printer.set_reading(true);
                let prompt = crate::vocab::text::inert_sgr(&prompt, true);
                let line = editor
                    .readline_with_initial(&*prompt, (&initial, ""))
                    .map(|l| joined(l, &continued));
                printer.set_reading(false);
                line
            }
        };
        let result = match line {
            Ok(line) => {
                if terminal {
                    super::keys::quiet();
                }
                remember(&mut editor, history.as_deref(), &line);
                ReadResult::Line(line)
            }
            Err(ReadlineError::Interrupted) => ReadResult::Interrupted,
            Err(_) => ReadResult::Eof,
        };
        let eof = result == ReadResult::Eof;
        if results.send(result).is_err() || eof {
            return;
        }
    }
}

/// What was typed ahead of the next read.
#[derive(Default)]
struct Ahead {
    /// Whole lines (an answer to a question that had timed out).
    lines: std::collections::VecDeque<String>,
    /// Bytes the key reader read past the end of a line.
    bytes: Vec<u8>,
}

impl Ahead {
    /// A whole line typed ahead, if there is one: it is the next line, shown after `prompt`
    /// as if typed there.
    fn line(&mut self, prompt: &str, printer: &Printer) -> Option<String> {
        let line = self
            .lines
            .pop_front()
            .or_else(|| super::keys::typed_line(&mut self.bytes))?;
        let shown = crate::vocab::text::inert(&line).replace('\n', " ⏎ ");
        printer.styled(&format!(
            "{}{shown}",
            crate::vocab::text::inert_sgr(prompt, true)
        ));
        Some(line)
    }
}

/// Adds a line to the history (and its file).
fn remember(editor: &mut Editor<SlashHelper, DefaultHistory>, file: Option<&Path>, line: &str) {
    if line.trim().is_empty() {
        return;
    }
    let _ = editor.add_history_entry(line);
    if let Some(path) = file {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = editor.append_history(path);
    }
}
