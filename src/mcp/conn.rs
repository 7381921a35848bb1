//! One live connection to a server ([`Conn`]): starting it (a child process or Streamable
//! HTTP on mypi's own HTTP client), the handshake of either protocol generation, the lists
//! (tools, resources, templates, prompts, as protocol JSON), and requests with a timeout that
//! progress resets and that send `notifications/cancelled` when given up. A call that changed
//! the server's tools answers once their re-list is in place ([`Conn::tools_settled`]).
//! Nothing of the SDK leaves this file and `connect.rs`, `handler.rs`, `noticing.rs` and
//! `stdio.rs`.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, GetPromptRequestParams, ReadResourceRequestParams};
use rmcp::service::{RoleClient, RunningService};
use serde_json::Value;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::config::ServerConfig;
use super::connect::Process;
pub use super::connect::StartError;
use super::connect::{self, readable};
use super::deadline::Deadlines;
use super::handler::{Changes, Handler, LEGACY_VERSION};
use super::noticing::unerased;
use super::reports::Hooks;
use super::stdio::StderrTail;
use super::McpError;

/// How long a call's answer waits for the tool re-list that the call started (see
/// [`Conn::tools_settled`]).
pub const SETTLE_MAX: Duration = Duration::from_secs(5);
/// How long closing waits for a queued `notifications/cancelled` to be written.
const CANCEL_FLUSH: Duration = Duration::from_millis(50);
/// How long a closing stdio server (one not known to ignore the end of its stdin) has to exit
/// on it before SIGTERM. A server that exits on it ends the wait as it exits (most within a
/// few ms, longer on a busy machine), so the grace is generous: only a server still running
/// after all of it is remembered as one that ignores its stdin's end (see `cache.rs`). Many
/// (server-everything among them) never exit on it once a session ran; each costs the whole
/// grace once, then gets SIGTERM at once.
pub const EOF_GRACE: Duration = Duration::from_secs(1);
/// How long a server has to exit after SIGTERM before its process group is killed.
pub const TERM_GRACE: Duration = Duration::from_millis(100);

/// What a server offers, each item as its protocol JSON.
#[derive(Default, Clone)]
pub struct Lists {
    pub tools: Vec<Value>,
    pub resources: Vec<Value>,
    pub templates: Vec<Value>,
    pub prompts: Vec<Value>,
}

/// The lists, and the agent names of their tools (kept together, so that a script's call
/// looks its tool's name up without naming every tool).
#[derive(Default)]
struct Held {
    lists: Lists,
    /// One per tool of `lists.tools`, in order.
    agent_names: Vec<String>,
    /// The tools that can only be called as tasks (see `tasks.rs`).
    task_only: Vec<String>,
}

/// A connected server.
pub struct Conn {
    service: RunningService<RoleClient, Handler>,
    pub protocol: String,
    pub server_name: String,
    /// What the server said about using it (`instructions` of its `initialize` answer).
    pub instructions: Option<String>,
    lists: std::sync::RwLock<Held>,
    /// The server's name in the config (agent names are made from it, by `namer`).
    config_name: String,
    namer: Arc<super::naming::Namer>,
    pub has_resources: bool,
    pub has_prompts: bool,
    pub process: Mutex<Option<Process>>,
    pub stderr: StderrTail,
    pub changes: Arc<Changes>,
    /// Cancelled once the connection is known dead (transport closed, child exited).
    pub dead: CancellationToken,
    /// The running requests' deadlines (reset by the server's progress notifications).
    deadlines: Arc<Deadlines>,
    watchers: super::progress::Watchers,
    /// The count of tool-list changes ([`Changes::tools_announced`]) whose re-list is in
    /// place, in these lists and in the agent's registry ([`Conn::tools_relisted`]).
    tools_relisted: watch::Sender<u64>,
    /// A request was given up (its `notifications/cancelled` may still be queued).
    abandoned: std::sync::atomic::AtomicBool,
    /// mypi signs in to the server (OAuth): a refused token says what to run.
    oauth: bool,
    /// The tools' `execution`, which the SDK's lists drop.
    tasks: Arc<super::tasks::TaskTools>,
}

impl Conn {
    /// Starts the server and does the handshake within the entry's timeout.
    pub async fn start(
        config: &ServerConfig,
        cwd: &Path,
        hooks: Hooks,
        namer: Arc<super::naming::Namer>,
    ) -> Result<Conn, StartError> {
        let deadlines = Deadlines::new();
        let changes = Arc::new(Changes::default());
        let tasks = Arc::new(super::tasks::TaskTools::default());
        let watchers = super::progress::Watched::new(&config.name, &hooks);
        let progress = Arc::new(super::progress::Progress {
            server: config.name.clone(),
            hooks: hooks.clone(),
            deadlines: deadlines.clone(),
            watchers: watchers.clone(),
        });
        let handler = Handler {
            server: config.name.clone(),
            cwd: cwd.to_path_buf(),
            hooks: hooks.clone(),
            changes: changes.clone(),
            deadlines: deadlines.clone(),
            progress,
            tasks: tasks.clone(),
        };
        let (service, process, stderr) = connect::handshake(config, cwd, &hooks, handler).await?;
        // A cached list would hide a dead server behind stale data.
        service
            .peer()
            .set_response_cache_config(rmcp::ClientCacheConfig::disabled())
            .await;
        let info = service.peer_info();
        let info = serde_json::to_value(info.as_deref()).unwrap_or_default();
        let caps = &info["capabilities"];
        let conn = Conn {
            protocol: info["protocolVersion"]
                .as_str()
                .unwrap_or(LEGACY_VERSION)
                .to_string(),
            server_name: info["serverInfo"]["name"].as_str().unwrap_or("").into(),
            instructions: info["instructions"]
                .as_str()
                .map(str::trim)
                .filter(|i| !i.is_empty())
                .map(String::from),
            has_resources: caps.get("resources").is_some_and(|v| !v.is_null()),
            has_prompts: caps.get("prompts").is_some_and(|v| !v.is_null()),
            service,
            lists: Default::default(),
            config_name: config.name.clone(),
            namer,
            process: Mutex::new(process),
            stderr,
            changes,
            dead: CancellationToken::new(),
            deadlines,
            watchers,
            tools_relisted: watch::channel(0).0,
            abandoned: Default::default(),
            tasks,
            oauth: connect::uses_oauth(config, &hooks),
        };
        if let Some(p) = conn.process_exited() {
            let dead = conn.dead.clone();
            tokio::spawn(async move {
                p.cancelled().await;
                dead.cancel();
            });
        }
        conn.refresh_all(config.timeout)
            .await
            .map_err(|e| StartError {
                message: connect::login_instead(config, &hooks, &e.to_string())
                    .unwrap_or_else(|| e.to_string()),
                stderr: conn.stderr.tail(5),
                transient: false,
            })?;
        Ok(conn)
    }

    /// Lists everything again (start, or a `list_changed` of each kind).
    pub async fn refresh_all(&self, timeout: Duration) -> Result<(), McpError> {
        // The four lists (tools, resources, templates, prompts) are asked for at once: one
        // round trip at start.
        let resources = async {
            if self.has_resources {
                self.list_resources(timeout).await
            } else {
                Ok(Default::default())
            }
        };
        let prompts = async {
            if self.has_prompts {
                self.list_prompts(timeout).await
            } else {
                Ok(Vec::new())
            }
        };
        let (tools, resources, prompts) =
            tokio::join!(self.list_tools(timeout), resources, prompts);
        let (resources, templates) = resources?;
        let (tools, prompts) = (tools?, prompts?);
        let mut held = self.lists.write().unwrap_or_else(|p| p.into_inner());
        (held.lists.resources, held.lists.templates) = (resources, templates);
        held.lists.prompts = prompts;
        self.set_tools(&mut held, tools);
        Ok(())
    }

    /// Lists again only what changed (tools first: a withdrawn tool must go quickly).
    pub async fn refresh(
        &self,
        tools: bool,
        resources: bool,
        prompts: bool,
        timeout: Duration,
    ) -> Result<(), McpError> {
        if tools {
            let t = self.list_tools(timeout).await?;
            self.set_tools(
                &mut self.lists.write().unwrap_or_else(|p| p.into_inner()),
                t,
            );
        }
        if resources && self.has_resources {
            let (r, t) = self.list_resources(timeout).await?;
            let mut held = self.lists.write().unwrap_or_else(|p| p.into_inner());
            (held.lists.resources, held.lists.templates) = (r, t);
        }
        if prompts && self.has_prompts {
            let p = self.list_prompts(timeout).await?;
            self.lists
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .lists
                .prompts = p;
        }
        Ok(())
    }

    /// Stores a new tool list with its agent names.
    fn set_tools(&self, held: &mut Held, tools: Vec<Value>) {
        let names: Vec<&str> = tools
            .iter()
            .map(|t| t["name"].as_str().unwrap_or(""))
            .collect();
        held.agent_names = self.namer.names(&self.config_name, &names);
        held.task_only = (tools.iter())
            .filter(|t| super::tasks::needs_tasks(t))
            .filter_map(|t| t["name"].as_str().map(String::from))
            .collect();
        held.lists.tools = tools;
    }

    /// What the server offers now.
    pub fn lists(&self) -> Lists {
        self.lists
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .lists
            .clone()
    }

    /// The tools with their agent names, in list order (a copy).
    pub fn named_tools(&self) -> Vec<(Value, String)> {
        let held = self.lists.read().unwrap_or_else(|p| p.into_inner());
        let tools = held.lists.tools.iter().cloned();
        tools.zip(held.agent_names.iter().cloned()).collect()
    }

    /// How many of its tools can only be called as tasks (not offered: see `tasks.rs`).
    pub fn task_only(&self) -> usize {
        let held = self.lists.read().unwrap_or_else(|p| p.into_inner());
        held.task_only.len()
    }

    /// How many tools, resources and prompts the server offers (read in place).
    pub fn counts(&self) -> (usize, usize, usize) {
        let lists = &self.lists.read().unwrap_or_else(|p| p.into_inner()).lists;
        (
            lists.tools.len(),
            lists.resources.len(),
            lists.prompts.len(),
        )
    }

    /// One tool by its server-side name, read in place (a call must not copy every list):
    /// its agent name and annotations, or the names of all tools when there is no such tool.
    pub fn tool(&self, name: &str) -> Result<(String, Option<Value>), Vec<String>> {
        let held = self.lists.read().unwrap_or_else(|p| p.into_inner());
        let tools = &held.lists.tools;
        match tools
            .iter()
            .zip(&held.agent_names)
            .find(|(t, _)| t["name"] == name)
        {
            Some((t, agent)) => Ok((agent.clone(), t.get("annotations").cloned())),
            None => Err(tools
                .iter()
                .map(|t| t["name"].as_str().unwrap_or("").to_string())
                .collect()),
        }
    }

    fn process_exited(&self) -> Option<CancellationToken> {
        self.process
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(|p| p.exited.clone())
    }

    /// The tools, each as its protocol JSON.
    pub async fn list_tools(&self, timeout: Duration) -> Result<Vec<Value>, McpError> {
        let peer = self.service.peer();
        let tools = self.bounded(timeout, peer.list_all_tools()).await?;
        let mut tools: Vec<Value> = tools
            .iter()
            .filter_map(|t| serde_json::to_value(t).ok())
            .collect();
        self.tasks.mark(&mut tools);
        Ok(tools)
    }

    /// The resources and resource templates.
    pub async fn list_resources(
        &self,
        timeout: Duration,
    ) -> Result<(Vec<Value>, Vec<Value>), McpError> {
        let peer = self.service.peer();
        // Both at once (one round trip); templates are optional even for servers with
        // resources.
        let (r, t) = tokio::join!(
            self.bounded(timeout, peer.list_all_resources()),
            self.bounded(timeout, peer.list_all_resource_templates()),
        );
        Ok((as_json(&r?), as_json(&t.unwrap_or_default())))
    }

    pub async fn list_prompts(&self, timeout: Duration) -> Result<Vec<Value>, McpError> {
        let peer = self.service.peer();
        let p = self.bounded(timeout, peer.list_all_prompts()).await?;
        Ok(p.iter()
            .filter_map(|x| serde_json::to_value(x).ok())
            .collect())
    }

    /// `tools/call`: the result as protocol JSON. The timeout is reset by each progress
    /// notification, which also goes to `report` while the call runs; giving up (timeout or
    /// `cancel`) sends `notifications/cancelled`.
    pub async fn call_tool(
        &self,
        tool: &str,
        args: Value,
        timeout: Duration,
        cancel: &CancellationToken,
        report: Option<crate::vocab::run::Reporter>,
    ) -> Result<Value, McpError> {
        let arguments = match args {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => {
                return Err(McpError::Call(format!(
                    "the arguments must be an object, not {other}"
                )))
            }
        };
        let refused = {
            let held = self.lists.read().unwrap_or_else(|p| p.into_inner());
            held.task_only.iter().any(|t| t == tool)
        };
        if refused {
            return Err(McpError::Call(super::tasks::refusal(tool)));
        }
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = arguments;
        let peer = self.service.peer();
        let call = async {
            let asked = params.clone();
            match super::progress::call_tool(peer, asked, &self.watchers, report).await? {
                Some(result) => Ok(result),
                // The server asks for input (SEP-2322): the SDK drives the rounds, each
                // with the state the server gave.
                None => self.service.call_tool(params).await,
            }
        };
        let result = self.with_progress(call, timeout, cancel).await?;
        // A call that changed the tools (server-side `list_changed` before its answer)
        // answers once the new list is in place: the next call, the model's next turn or a
        // script's next lookup see it.
        self.tools_settled(SETTLE_MAX.min(timeout)).await;
        Ok(serde_json::to_value(result).unwrap_or_default())
    }

    /// rmcp's `tools/call` and nothing of mypi's around it (no timeout, progress, settle or
    /// conversion beyond JSON): the same-connection baseline of `cargo bench --bench mcp`.
    /// The agent never calls it.
    #[doc(hidden)]
    pub async fn call_tool_bare(&self, tool: &str, args: Value) -> Result<Value, McpError> {
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = args.as_object().cloned();
        let result = self.service.call_tool(params).await;
        let result = result.map_err(|e| self.service_error(e))?;
        Ok(serde_json::to_value(result).unwrap_or_default())
    }

    /// The re-list for the tool-list changes counted up to `announced` is in place.
    pub fn tools_relisted(&self, announced: u64) {
        self.tools_relisted.send_if_modified(|done| {
            let newer = announced > *done;
            if newer {
                *done = announced;
            }
            newer
        });
    }

    /// Lists the tools again as if the server had said they changed (the server's refresh
    /// task does it, as for a real change), and waits for that re-list at most `max`: a
    /// script named a tool the last list lacks, which the server may have added without
    /// saying so (yet).
    pub async fn relist_tools(&self, max: Duration) {
        self.changes.announce_tools();
        self.tools_settled(max).await;
    }

    /// Waits, at most `max` and only while the connection lives, until every tool-list change
    /// announced so far is re-listed (at once when none is pending). A re-list not done by
    /// then is waited for by nobody else: a server that never answers it delays one call.
    pub async fn tools_settled(&self, max: Duration) {
        let announced = self.changes.tools_announced.load(Ordering::Acquire);
        if *self.tools_relisted.borrow() >= announced {
            return;
        }
        let mut done = self.tools_relisted.subscribe();
        tokio::select! {
            r = tokio::time::timeout(max, done.wait_for(|d| *d >= announced)) => {
                if r.is_err() {
                    self.tools_relisted(announced);
                }
            }
            _ = self.dead.cancelled() => {}
        }
    }

    /// `resources/read`: the result as protocol JSON.
    pub async fn read_resource(&self, uri: &str, timeout: Duration) -> Result<Value, McpError> {
        let params = ReadResourceRequestParams::new(uri.to_string());
        let r = self
            .bounded(timeout, self.service.read_resource(params))
            .await?;
        Ok(serde_json::to_value(r).unwrap_or_default())
    }

    /// `prompts/get`: the result as protocol JSON.
    pub async fn get_prompt(
        &self,
        name: &str,
        args: serde_json::Map<String, Value>,
        timeout: Duration,
    ) -> Result<Value, McpError> {
        // Always an object, `{}` when empty: servers built on the TypeScript SDK refuse a
        // `prompts/get` without `arguments`.
        let mut params = GetPromptRequestParams::new(name.to_string());
        params.arguments = Some(args);
        let r = self
            .bounded(timeout, self.service.get_prompt(params))
            .await?;
        Ok(serde_json::to_value(r).unwrap_or_default())
    }

    /// Waits for `fut` at most `timeout` (reset by progress), or until the connection dies.
    /// Giving up drops `fut`, which sends `notifications/cancelled` for its request.
    async fn with_progress<T>(
        &self,
        fut: impl std::future::Future<Output = Result<T, rmcp::ServiceError>>,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<T, McpError> {
        let deadline = self.deadlines.begin(timeout);
        let gave_up = |e: McpError| {
            self.abandoned
                .store(true, std::sync::atomic::Ordering::Release);
            Err(e)
        };
        tokio::select! {
            r = fut => r.map_err(|e| self.service_error(e)),
            _ = deadline.expired() => gave_up(McpError::Timeout(timeout)),
            _ = cancel.cancelled() => gave_up(McpError::Cancelled),
            _ = self.dead.cancelled() => Err(self.closed()),
        }
    }

    /// Waits for `fut` at most `timeout`, or until the connection dies.
    async fn bounded<T>(
        &self,
        timeout: Duration,
        fut: impl std::future::Future<Output = Result<T, rmcp::ServiceError>>,
    ) -> Result<T, McpError> {
        self.with_progress(fut, timeout, &CancellationToken::new())
            .await
    }

    fn service_error(&self, e: rmcp::ServiceError) -> McpError {
        match e {
            rmcp::ServiceError::McpError(data) => McpError::Server(data.message.to_string()),
            rmcp::ServiceError::TransportClosed => {
                self.dead.cancel();
                self.closed()
            }
            rmcp::ServiceError::Timeout { timeout } => McpError::Timeout(timeout),
            rmcp::ServiceError::TransportSend(e) => {
                let refused = self
                    .oauth
                    .then(|| super::auth::refused(&self.config_name, unerased(&e)));
                if let Some(why) = refused.flatten() {
                    return McpError::Transport(why);
                }
                let text = readable(unerased(&e));
                if text.contains("closed") {
                    self.dead.cancel();
                }
                McpError::Transport(text)
            }
            other => McpError::Server(other.to_string()),
        }
    }

    fn closed(&self) -> McpError {
        McpError::Closed(self.stderr.tail(5))
    }

    /// Whether the connection still works (the transport has not closed).
    pub fn alive(&self) -> bool {
        !self.dead.is_cancelled() && !self.service.peer().is_transport_closed()
    }

    /// Closes the connection: stdin first (the server's signal to exit); a server still
    /// running after [`EOF_GRACE`] (or at once, without `eof_grace`) gets SIGTERM, and after
    /// [`TERM_GRACE`] more the whole process group is killed (always, so that nothing the
    /// server started is left). Says, when it gave the grace, whether the server used it.
    pub async fn close(&self, eof_grace: bool) -> Option<bool> {
        if self.abandoned.load(std::sync::atomic::Ordering::Acquire) {
            // The cancellation of a given-up request is queued when its future is dropped;
            // let the connection write it before the connection goes.
            tokio::time::sleep(CANCEL_FLUSH).await;
        }
        self.dead.cancel();
        self.service.cancellation_token().cancel();
        let process = self
            .process
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let mut p = process?;
        let grace = if eof_grace { EOF_GRACE } else { Duration::ZERO };
        let exited = tokio::time::timeout(grace, p.exited.cancelled())
            .await
            .is_ok();
        if !exited {
            p.group.terminate();
            let _ = tokio::time::timeout(TERM_GRACE, p.exited.cancelled()).await;
        }
        p.group.kill();
        eof_grace.then_some(exited)
    }

    /// The process group of a stdio server (for the exit paths that run no async code).
    pub fn pgid(&self) -> Option<i32> {
        self.process
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(|p| p.pgid)
    }
}

fn as_json<T: serde::Serialize>(items: &[T]) -> Vec<Value> {
    items
        .iter()
        .filter_map(|x| serde_json::to_value(x).ok())
        .collect()
}
