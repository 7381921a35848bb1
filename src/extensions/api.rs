//! The engine-neutral surface scripts see. An [`ApiLink`] belongs to one loaded extension:
//! the Lua and Rhai engines turn each `api.*` / `ctx.*` call into a call on it, and it turns
//! them into registrations in the Rust registries (owned by the extension), queue pushes,
//! processes and notices. The [`Engine`] trait is what the host asks of an engine: load the
//! script, call a registered callback, report `api.state`.
//!
//! Values cross the boundary as JSON (`serde_json::Value`): engines convert their own values
//! to and from it.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::files::{list_folder, read_text, Listing};
use super::meter::{CallClock, Meter};
use super::tape::{with_tape, Tape};
use crate::hooks::LazyField;
use crate::vocab::owner::{Handle, Owner};
use crate::vocab::run::RunContext;

pub use super::registrar::{Registrar, Services, ToolDef};
use super::script::{CallbackId, ExecResult, ExtensionInfo, Limits, ScriptError};

/// What an engine does, on its worker thread.
pub trait Engine {
    /// Runs the script's top level. Registrations made meanwhile go through the link.
    fn load(&mut self) -> Result<(), ScriptError>;

    /// Calls callback `cb` with `args` (the event, a tool's arguments, a command's text) and
    /// `ctx`, within `budget`. Returns the script's return value as JSON (`Null` for nothing).
    /// A callback that was removed (its handle's `remove()` ran) answers `Null`.
    fn call(
        &mut self,
        cb: CallbackId,
        args: &[Value],
        ctx: &Arc<RunContext>,
        budget: Duration,
    ) -> Result<Value, ScriptError>;

    /// Calls handler `cb` with the event of `view` (by default its whole payload as JSON;
    /// an engine may hand `message_update`'s `text` over to be read on demand, see
    /// [`EventView::build`]). The handlers of one chain get the same view until one
    /// rewrites the event: an engine may build its value once per view ([`EventView::id`])
    /// and drop it at [`Engine::end_event`].
    fn call_event(
        &mut self,
        cb: CallbackId,
        view: &EventView,
        ctx: &Arc<RunContext>,
        budget: Duration,
    ) -> Result<Value, ScriptError> {
        self.call(cb, &[view.event.to_value()], ctx, budget)
    }

    /// The chain of handlers for one event ended: what was built for its views can go.
    fn end_event(&mut self) {}

    /// `api.state` as plain data, to carry over a reload, and the fields left out because
    /// they are past the host's limits (each as "api.state.NAME is not kept: why").
    fn state(&mut self) -> (Value, Vec<String>);

    /// Replaces the contents of `api.state` (in place: scripts may hold a reference to it)
    /// with what the previous version left after its `session_shutdown`.
    fn set_state(&mut self, state: Value) -> Result<(), ScriptError>;

    /// Files the script loaded as modules (`require` / `import`), for the reload watcher.
    fn required_files(&self) -> Vec<PathBuf> {
        Vec::new()
    }
}

/// An event as the handlers of one chain see it, until one of them rewrites it.
#[derive(Clone, Copy)]
pub struct EventView<'a> {
    /// Unique in the process: a new view (a rewritten event, another event) has a new id.
    pub id: u64,
    pub event: &'a crate::hooks::HookEvent,
}

impl EventView<'_> {
    /// An id for a new view.
    pub fn next_id() -> u64 {
        crate::vocab::owner::next_id()
    }

    /// An engine's value of the payload, and the field to hand over on its own
    /// (`message_update`'s `text`, `agent_end`'s `messages`) ([`HookEvent::script_parts`](crate::hooks::HookEvent::script_parts)): built from
    /// the payload's tape (no JSON tree in between), or from its JSON when it has no tape.
    pub(super) fn build<R>(
        &self,
        from_tape: impl FnOnce(&Tape) -> R,
        from_json: impl FnOnce(&Value) -> R,
    ) -> (R, Option<LazyField>) {
        let (payload, lazy) = self.event.script_parts();
        (engine_value(&payload, from_tape, from_json), lazy)
    }
}

/// An engine's value of `value`: built from its tape (no JSON tree in between), or from its
/// JSON when it has no tape.
pub(super) fn engine_value<T: serde::Serialize + ?Sized, R>(
    value: &T,
    from_tape: impl FnOnce(&Tape) -> R,
    from_json: impl FnOnce(&Value) -> R,
) -> R {
    with_tape(value, from_tape)
        .unwrap_or_else(|| from_json(&serde_json::to_value(value).unwrap_or(Value::Null)))
}

/// Builds an engine on its worker thread.
pub type EngineFactory =
    fn(link: Arc<ApiLink>, limits: Limits) -> Result<Box<dyn Engine>, ScriptError>;

/// What an extension's link reaches the host through (see [`Registrar`], [`Services`]).
pub struct LinkHost {
    pub registrar: Arc<dyn Registrar>,
    pub services: Arc<dyn Services>,
    pub context: Arc<super::services::HostContext>,
}

impl LinkHost {
    /// A host whose registrar also serves the requests (the extension host's, a test's).
    pub fn of<T: Registrar + Services + 'static>(
        both: Arc<T>,
        context: Arc<super::services::HostContext>,
    ) -> Self {
        LinkHost {
            registrar: both.clone(),
            services: both,
            context,
        }
    }
}

/// One extension's link to the host.
pub struct ApiLink {
    pub info: ExtensionInfo,
    pub owner: Owner,
    pub(super) registrar: Arc<dyn Registrar>,
    pub(super) services: Arc<dyn Services>,
    /// What all extensions share (registries, session, the app's control).
    host: Arc<super::services::HostContext>,
    initial_state: Value,
    handles: Mutex<Vec<(u64, Handle)>>,
    /// The clock of the running call (shared with the worker's watchdog).
    meter: Arc<Meter>,
    /// The async runtime host operations run on (none in engine tests: a private one then).
    runtime: Option<tokio::runtime::Handle>,
    /// The context of the call running now.
    current: Mutex<Option<Arc<RunContext>>>,
}

impl ApiLink {
    pub fn new(info: ExtensionInfo, owner: Owner, host: LinkHost, initial_state: Value) -> Self {
        ApiLink {
            info,
            owner,
            registrar: host.registrar,
            services: host.services,
            host: host.context,
            initial_state,
            handles: Mutex::new(Vec::new()),
            meter: Arc::new(Meter::default()),
            runtime: tokio::runtime::Handle::try_current().ok(),
            current: Mutex::new(None),
        }
    }

    /// `api.state` as the previous version of this extension left it (`{}` at first load).
    pub fn initial_state(&self) -> Value {
        self.initial_state.clone()
    }

    /// The clock of this extension's calls.
    pub fn meter(&self) -> &Arc<Meter> {
        &self.meter
    }

    fn keep(&self, handle: Handle) -> u64 {
        let id = handle.id();
        self.handles
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((id, handle));
        id
    }

    /// `api.on(event, handler)`: returns a handle id for `remove`.
    pub fn on(&self, event: &str, cb: CallbackId) -> Result<u64, String> {
        let handle = self.registrar.on(&self.owner, event, cb)?;
        Ok(self.keep(handle))
    }

    /// `api.tool{...}`.
    pub fn tool(&self, def: ToolDef, cb: CallbackId) -> Result<u64, String> {
        let handle = self.registrar.tool(&self.owner, def, cb)?;
        Ok(self.keep(handle))
    }

    /// `api.command(name, handler, description?)`.
    pub fn command(&self, name: &str, description: &str, cb: CallbackId) -> Result<u64, String> {
        let handle = self.registrar.command(&self.owner, name, description, cb)?;
        Ok(self.keep(handle))
    }

    /// `api.events.on`, `api.timer`, `api.watch`.
    pub fn background(
        &self,
        what: super::registrar::Background,
        cb: CallbackId,
    ) -> Result<u64, String> {
        let handle = self.registrar.background(&self.owner, what, cb)?;
        Ok(self.keep(handle))
    }

    /// `api.renderer(tool, {call?, result?})`.
    pub fn renderer(
        &self,
        tool: &str,
        call: Option<CallbackId>,
        result: Option<CallbackId>,
    ) -> Result<u64, String> {
        let handle = self.registrar.renderer(&self.owner, tool, call, result)?;
        Ok(self.keep(handle))
    }

    /// `api.skill{name, description, path}`.
    pub fn skill(&self, skill: crate::config::sources::catalog::Skill) -> Result<u64, String> {
        let handle = self.registrar.skill(&self.owner, skill)?;
        Ok(self.keep(handle))
    }

    /// `handle:remove()`: false when it was already removed.
    pub fn remove(&self, id: u64) -> bool {
        let mut handles = self.handles.lock().unwrap_or_else(|p| p.into_inner());
        match handles.iter().position(|(h, _)| *h == id) {
            Some(i) => handles.remove(i).1.remove() || self.registrar.unstage(id),
            None => false,
        }
    }

    /// `api.send_message(text, {deliver_as = ...})`; `deliver_as` defaults to `"steer"`. The
    /// message goes to the queues of the run that made the call (the session's when idle).
    pub fn send_message(&self, text: &str, deliver_as: Option<&str>) -> Result<(), String> {
        let queues = self.current().map(|c| c.queues.clone());
        self.services
            .send_message(text, deliver_as.unwrap_or("steer"), queues)
    }

    /// `api.log(msg)`: a debug line (shown with `MYPI_LOG=1`).
    pub fn log(&self, msg: &str) {
        self.services.log(&format!("[{}] {msg}", self.info.name));
    }

    /// `api.notify(msg)` / `ctx.ui.notify(msg)`: a line shown to the user.
    pub fn notify(&self, msg: &str) {
        self.services.notify(&format!("[{}] {msg}", self.info.name));
    }

    /// The context of the running call (set by the worker around each call).
    pub fn current(&self) -> Option<Arc<RunContext>> {
        self.current
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Sets (or clears) the context of the running call.
    pub fn set_current(&self, ctx: Option<Arc<RunContext>>) {
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) = ctx;
    }

    /// `ctx.abort()`: cancels the run that made the call.
    pub fn abort(&self) {
        if let Some(ctx) = self.current() {
            ctx.cancel.cancel();
        }
    }

    /// `api.exec(cmd, args, {timeout_ms?, cwd?})`: runs a process without a shell, in its own
    /// process group, until it ends, times out or the run is cancelled. The wait does not
    /// count against the call's budget.
    pub fn exec(
        &self,
        cmd: &str,
        args: &[String],
        timeout_ms: Option<u64>,
        cwd: Option<&str>,
    ) -> Result<ExecResult, String> {
        self.not_checking()?;
        let dir = match cwd {
            Some(c) => self.services.cwd().join(c),
            None => self.services.cwd(),
        };
        let cancel = self.current().map(|c| c.cancel.clone()).unwrap_or_default();
        let run = super::exec::run(cmd.to_string(), args.to_vec(), timeout_ms, dir, cancel);
        self.host_wait(run)?
    }

    /// `api.mcp.*`: one request to the MCP servers, waited for without spinning and outside
    /// the call's budget; the error is the message to raise (the server's, or why not).
    pub fn mcp(&self, request: crate::vocab::mcp::McpRequest) -> Result<Value, String> {
        use crate::vocab::mcp::McpRequest as Request;
        if !matches!(request, Request::Servers | Request::Tools { .. }) {
            self.not_checking()?;
        }
        let asked = self.services.mcp(&self.info.name, request, self.current());
        let cancel = self.current().map(|c| c.cancel.clone()).unwrap_or_default();
        self.host_wait(async move {
            tokio::select! {
                r = asked => r,
                _ = cancel.cancelled() => Err("the run was cancelled".to_string()),
            }
        })?
    }

    /// `api.run_agent` / `api.run_agents`: waits (outside the call's budget) for the
    /// children; they stop with the run that made the call.
    pub fn run_agents(
        &self,
        specs: Vec<crate::agent::child::ChildSpec>,
        concurrency: usize,
    ) -> Result<Vec<crate::vocab::protocol::ChildOutcome>, String> {
        self.not_checking()?;
        let asked = self.services.run_agents(specs, concurrency, self.current());
        self.host_wait(asked)?
    }

    /// `api.complete`: one model call, waited for outside the call's budget.
    pub fn complete(
        &self,
        request: crate::agent::child::CompleteRequest,
    ) -> Result<crate::agent::child::Completion, String> {
        self.not_checking()?;
        let asked = self.services.complete(request, self.current());
        self.host_wait(asked)?
    }

    /// `api.builtin_tool(name).execute(args)`: runs the built-in tool (its arguments checked
    /// against its schema) in the context of the running call, waiting outside the budget.
    pub fn run_builtin(
        &self,
        name: &str,
        args: Value,
    ) -> Result<crate::vocab::protocol::ToolOutput, String> {
        self.not_checking()?;
        let host = self.host();
        let entry = host
            .tools
            .builtin(name)
            .ok_or_else(|| format!("there is no built-in tool '{name}'"))?;
        entry
            .validate(&args)
            .map_err(|e| format!("invalid arguments for {name}: {e}"))?;
        let ctx = self.current().unwrap_or_else(|| host.session());
        self.host_wait(entry.tool.call(args, ctx))
    }

    /// What all extensions share (registries, session, the app's control).
    pub fn host(&self) -> Arc<super::services::HostContext> {
        self.host.clone()
    }

    /// Refuses a host operation while extensions are only checked (`mypi ext check`).
    fn not_checking(&self) -> Result<(), String> {
        match self.host().checking {
            true => Err(super::services::CHECKING.to_string()),
            false => Ok(()),
        }
    }

    /// The working folder (relative paths of `read_file`, `exec` and the like are against it).
    pub fn cwd(&self) -> PathBuf {
        self.services.cwd()
    }

    /// Where `path` points: a leading `~/` is the home folder, a relative path is against
    /// the working folder (as `api.read_dir` and Lua's `fs` read paths).
    pub fn resolve(&self, path: &str) -> PathBuf {
        match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
            (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
            _ => self.services.cwd().join(path),
        }
    }

    /// Reads a file (Rhai's `read_file`); relative paths are against the working folder. Only
    /// regular files (a FIFO would block the call), and at most `max` bytes.
    pub fn read_file(&self, path: &str, max: usize) -> Result<String, String> {
        read_text(&self.services.cwd().join(path), max)
    }

    /// The text of the file at `path` (Lua's `fs.read`), as [`ApiLink::read_file`] reads it.
    pub fn read_path(&self, path: &Path, max: usize) -> Result<String, String> {
        read_text(path, max)
    }

    /// `api.read_dir(path)`: the names in a folder, sorted, folders with a trailing `/`
    /// (hidden ones included); a folder that does not exist has none. A leading `~/` is the
    /// home folder; relative paths are against the working folder. At most
    /// [`MAX_DIR_ENTRIES`](super::script::MAX_DIR_ENTRIES) names.
    pub fn read_dir(&self, path: &str) -> Result<Vec<String>, String> {
        list_folder(&self.resolve(path), Listing::Marked)
    }

    /// Rhai's `list_dir(path)`: the plain names in a folder (relative to the working
    /// folder), sorted; a folder that cannot be read, or does not exist, is an error. At
    /// most [`MAX_DIR_ENTRIES`](super::script::MAX_DIR_ENTRIES) names, as for [`ApiLink::read_dir`].
    pub fn list_dir(&self, path: &str) -> Result<Vec<String>, String> {
        list_folder(&self.services.cwd().join(path), Listing::Plain)
    }

    /// Writes a file (Rhai's `write_file`), creating parent folders.
    pub fn write_file(&self, path: &str, content: &str) -> Result<(), String> {
        self.write_path(&self.services.cwd().join(path), content)
    }

    /// Writes the file at `path` (Lua's `fs.write`) as [`ApiLink::write_file`] does.
    pub fn write_path(&self, p: &Path, content: &str) -> Result<(), String> {
        self.not_checking()?;
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        std::fs::write(p, content).map_err(|e| format!("cannot write {}: {e}", p.display()))
    }

    /// Starts the budget clock of a call (engines check it from their instruction hook or
    /// progress callback).
    pub fn start_call(&self, budget: Duration) -> CallClock {
        self.meter.begin(budget, self.current())
    }

    /// Waits on the worker thread for a host operation, without spinning and without the
    /// wait counting as script time.
    pub(super) fn host_wait<F: Future>(&self, fut: F) -> Result<F::Output, String> {
        let _wait = self.meter.host();
        match &self.runtime {
            Some(rt) => Ok(rt.block_on(fut)),
            None => tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map(|rt| rt.block_on(fut))
                .map_err(|e| format!("cannot wait for the host: {e}")),
        }
    }
}
