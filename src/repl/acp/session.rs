//! The editor's sessions on one connection. Each is an [`App`] of its own (its own
//! configuration resolved for the session's folder, extensions, MCP servers and session
//! file: the same files the REPL writes, so `mypi --resume` opens an editor's session and
//! `session/load` a REPL's) run by a task of its own, which takes one prompt at a time; the
//! table here finds a session's task and the cancellation token of the prompt it runs.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    FileSystemCapabilities, McpServer, PromptRequest, PromptResponse, SessionId, SessionUpdate,
    StopReason,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, ErrorCode};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::prompt::{from_blocks, Prompt};
use super::updates::AcpSink;
use crate::agent::AgentError;
use crate::app::{App, AppError, LineOutcome};
use crate::config::{extflags::Given, Config, Overrides};

/// How long a cancelled prompt may take to stop before it is answered `cancelled` anyway
/// (the run goes on stopping; the session takes no prompt until it has).
const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_millis(800);

/// A prompt for a session's task.
struct Job {
    prompt: Prompt,
    cancel: CancellationToken,
    responder: Responder<PromptResponse>,
}

/// A session as the table knows it.
struct Handle {
    jobs: mpsc::UnboundedSender<Job>,
    /// The running prompt's token.
    running: Arc<Mutex<Option<CancellationToken>>>,
    cwd: PathBuf,
}

/// Every session of the connection.
pub struct Sessions {
    overrides: Overrides,
    ext_flags: Vec<Given>,
    table: Mutex<HashMap<SessionId, Handle>>,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// Numbers the sessions of `--no-session`, which have no id of their own.
    unnamed: std::sync::atomic::AtomicU64,
    /// What the editor's `initialize` offered of its files.
    client_fs: Mutex<FileSystemCapabilities>,
}

/// An error the editor reads: `code` and a message written for the user.
pub fn error(code: ErrorCode, message: impl Into<String>) -> Error {
    Error::new(code, message.into())
}

impl Sessions {
    pub fn new(overrides: Overrides, ext_flags: Vec<Given>) -> Sessions {
        Sessions {
            overrides,
            ext_flags,
            table: Mutex::default(),
            tasks: Mutex::default(),
            unnamed: Default::default(),
            client_fs: Mutex::default(),
        }
    }

    /// What the editor offers of its files (its `initialize`): the sessions opened from now
    /// on read and write through them.
    pub fn set_client_fs(&self, fs: FileSystemCapabilities) {
        *self.client_fs.lock().unwrap_or_else(|p| p.into_inner()) = fs;
    }

    /// Opens a session in `cwd`: a new one, or the one `load` names (its conversation sent
    /// to the editor as updates first). Returns its id, and its sink, to be released once
    /// the editor has the id.
    pub async fn open(
        &self,
        cwd: PathBuf,
        load: Option<String>,
        servers: &[McpServer],
        connection: ConnectionTo<Client>,
    ) -> Result<(SessionId, Arc<AcpSink>), Error> {
        let mut overrides = self.overrides.clone();
        overrides.continue_session = false;
        if load.is_some() && overrides.no_session {
            let why = "mypi acp runs with --no-session: there are no sessions to load";
            return Err(error(ErrorCode::INVALID_PARAMS, why));
        }
        overrides.resume = load.clone();
        if let Some(id) = &load {
            if self.find(&SessionId::new(id.as_str())).is_some() {
                let why = format!("session {id} is already open on this connection");
                return Err(error(ErrorCode::INVALID_PARAMS, why));
            }
        }
        let mut config = Config::resolve(&overrides, &|k| std::env::var(k).ok(), cwd)
            .map_err(|e| error(ErrorCode::INVALID_PARAMS, e.to_string()))?;
        config.ext_flags = self.ext_flags.clone();
        let cwd = config.cwd.clone();
        let (mut app, sink) = self.build(config, connection)?;
        let id = match app.agent.session_id() {
            "" => format!(
                "unsaved-{}",
                self.unnamed
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                    + 1
            ),
            id => id.to_string(),
        };
        let id = SessionId::new(id);
        sink.set_session(id.clone());
        let notice = app.extensions.context().notice.clone();
        let (given, refused) = super::servers::from_editor(servers);
        app.given_mcp = given;
        refused.into_iter().for_each(|line| notice(line));
        if let Err(e) =
            crate::repl::print::start_app(&mut app, &|line| notice(line.to_string())).await
        {
            app.shutdown().await;
            return Err(error(ErrorCode::INTERNAL_ERROR, e.to_string()));
        }
        // Extensions reload on save, as in the REPL; what a reload says reaches the editor.
        if let Some(problem) = app.watch_extensions() {
            notice(problem);
        }
        if load.is_some() {
            for update in super::updates::replay(app.agent.messages(), &cwd) {
                sink.send_now(update);
            }
        }
        let commands = super::updates::commands(&app.commands);
        sink.send(commands.clone());
        let (jobs, rx) = mpsc::unbounded_channel();
        let running = Arc::new(Mutex::new(None));
        let served = Served {
            app,
            sink: sink.clone(),
            running: running.clone(),
            commands,
        };
        let task = tokio::spawn(serve(served, rx));
        self.tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(task);
        let handle = Handle { jobs, running, cwd };
        self.table
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id.clone(), handle);
        Ok((id, sink))
    }

    /// A session's app and sink: its dialogs asked of the editor, its file tools through
    /// the editor's buffers when the editor offered them.
    fn build(
        &self,
        config: Config,
        connection: ConnectionTo<Client>,
    ) -> Result<(App, Arc<AcpSink>), Error> {
        let sink = Arc::new(AcpSink::new(connection, config.cwd.clone()));
        let fs = self
            .client_fs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let files = super::files::EditorFiles::offered(&fs, sink.clone());
        if let Some(files) = &files {
            let written: Arc<dyn super::updates::Written> = files.clone();
            sink.set_files(&written);
        }
        let files = files.map(|f| f as Arc<dyn crate::tools::files::TextFiles>);
        let app = App::build_through(config, sink.clone(), files).map_err(|e| {
            let code = match e {
                AppError::Usage(_) => ErrorCode::RESOURCE_NOT_FOUND,
                _ => ErrorCode::INTERNAL_ERROR,
            };
            error(code, e.to_string())
        })?;
        app.ui
            .set_front(Arc::new(super::asks::EditorUi::new(sink.clone())));
        Ok((app, sink))
    }

    /// Whether the session is open, and its folder.
    fn find(&self, id: &SessionId) -> Option<PathBuf> {
        let table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        table.get(id).map(|h| h.cwd.clone())
    }

    /// Hands a prompt to its session's task; answers it at once with an error for a session
    /// that is not open, one that runs a prompt already, or a prompt mypi cannot take.
    pub fn prompt(&self, request: PromptRequest, responder: Responder<PromptResponse>) {
        let job = match self.job(&request) {
            Ok(job) => job,
            Err(e) => return answer_with(responder, Err(e)),
        };
        let (prompt, cancel, sender) = job;
        if let Err(refused) = sender.send(Job {
            prompt,
            cancel,
            responder,
        }) {
            self.cancel(&request.session_id);
            let why = error(ErrorCode::INTERNAL_ERROR, "the session has stopped");
            answer_with(refused.0.responder, Err(why));
        }
    }

    /// The prompt of `request`, the token it runs with (now the session's running one), and
    /// where its session takes it.
    fn job(
        &self,
        request: &PromptRequest,
    ) -> Result<(Prompt, CancellationToken, mpsc::UnboundedSender<Job>), Error> {
        let table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        let Some(handle) = table.get(&request.session_id) else {
            let why = format!(
                "no session {} on this connection (open one with session/new or session/load)",
                request.session_id
            );
            return Err(error(ErrorCode::RESOURCE_NOT_FOUND, why)
                .data(serde_json::json!({"sessionId": request.session_id})));
        };
        let prompt = from_blocks(&request.prompt, &handle.cwd)
            .map_err(|e| error(ErrorCode::INVALID_PARAMS, e))?;
        let mut running = handle.running.lock().unwrap_or_else(|p| p.into_inner());
        if running.is_some() {
            let why = "this session is running a prompt; wait for its answer or cancel it (session/cancel)";
            return Err(error(ErrorCode::INVALID_REQUEST, why));
        }
        let cancel = CancellationToken::new();
        *running = Some(cancel.clone());
        Ok((prompt, cancel, handle.jobs.clone()))
    }

    /// Cancels the session's running prompt, if it runs one.
    pub fn cancel(&self, id: &SessionId) {
        let table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        match table.get(id) {
            Some(handle) => {
                if let Some(token) = &*handle.running.lock().unwrap_or_else(|p| p.into_inner()) {
                    token.cancel();
                }
            }
            None => super::say(&format!(
                "session/cancel for session {id}, which is not open"
            )),
        }
    }

    /// The connection closed: every running prompt is cancelled and every session shut down
    /// (waiting a few seconds at most).
    pub async fn close_all(&self) {
        let handles: Vec<Handle> = {
            let mut table = self.table.lock().unwrap_or_else(|p| p.into_inner());
            table.drain().map(|(_, h)| h).collect()
        };
        for handle in handles {
            if let Some(token) = &*handle.running.lock().unwrap_or_else(|p| p.into_inner()) {
                token.cancel();
            }
        }
        let tasks = std::mem::take(&mut *self.tasks.lock().unwrap_or_else(|p| p.into_inner()));
        let all = futures_util::future::join_all(tasks);
        let _ = tokio::time::timeout(std::time::Duration::from_secs(3), all).await;
    }
}

/// What a session's task owns.
struct Served {
    app: App,
    sink: Arc<AcpSink>,
    /// The running prompt's token, shared with the table.
    running: Arc<Mutex<Option<CancellationToken>>>,
    /// The commands the editor was told of last.
    commands: SessionUpdate,
}

/// A session's task: runs its prompts one at a time until the table lets it go; after each,
/// the editor hears of the commands when they changed (a reload, an MCP server's prompts).
async fn serve(mut s: Served, mut jobs: mpsc::UnboundedReceiver<Job>) {
    while let Some(Job {
        prompt,
        cancel,
        responder,
    }) = jobs.recv().await
    {
        s.app.attached = prompt.attached;
        s.app.attached_images = prompt.images;
        s.sink.set_window(s.app.agent.context_window);
        {
            let mut run = Box::pin(run_prompt(&mut s.app, &prompt.text, &s.sink, &cancel));
            let late = async {
                cancel.cancelled().await;
                tokio::time::sleep(CANCEL_GRACE).await;
            };
            tokio::select! {
                answer = &mut run => answer_with(responder, answer),
                () = late => {
                    answer_with(responder, Ok(StopReason::Cancelled));
                    let _ = run.await;
                }
            }
        }
        *s.running.lock().unwrap_or_else(|p| p.into_inner()) = None;
        let commands = super::updates::commands(&s.app.commands);
        if commands != s.commands {
            s.sink.send(commands.clone());
            s.commands = commands;
        }
    }
    s.app.shutdown().await;
}

fn answer_with(responder: Responder<PromptResponse>, answer: Result<StopReason, Error>) {
    let sent = match answer {
        Ok(reason) => responder.respond(PromptResponse::new(reason)),
        Err(e) => responder.respond_with_error(e),
    };
    if let Err(e) = sent {
        super::say(&format!("cannot answer a prompt: {e}"));
    }
}

/// Runs one prompt (and what extensions queued after it); why it stopped.
async fn run_prompt(
    app: &mut App,
    text: &str,
    sink: &Arc<AcpSink>,
    cancel: &CancellationToken,
) -> Result<StopReason, Error> {
    let sink: &dyn crate::agent::EventSink = &**sink;
    let mut outcome = app.handle_line(text, sink, cancel).await;
    if outcome.is_ok() && !cancel.is_cancelled() {
        if let Some(queued) = Box::pin(app.run_queued(sink, cancel)).await {
            outcome = queued.map(LineOutcome::Ran);
        }
    }
    if cancel.is_cancelled() {
        return Ok(StopReason::Cancelled);
    }
    match outcome {
        Ok(LineOutcome::Ran(run)) if run.blocked.is_some() => {
            let reason = run.blocked.unwrap_or_default();
            let message = format!("a handler refused the prompt: {reason}");
            sink.emit(crate::vocab::protocol::AgentEvent::Notice { message });
            Ok(StopReason::Refusal)
        }
        Ok(_) => Ok(StopReason::EndTurn),
        Err(AppError::Agent(AgentError::TooManyTurns(_))) => Ok(StopReason::MaxTurnRequests),
        Err(AppError::Agent(AgentError::Cancelled)) => Ok(StopReason::Cancelled),
        Err(e @ (AppError::Command(_) | AppError::Usage(_))) => {
            Err(error(ErrorCode::INVALID_PARAMS, e.to_string()))
        }
        Err(e) => Err(error(ErrorCode::INTERNAL_ERROR, e.to_string())),
    }
}
