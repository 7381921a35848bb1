//! The [`Manager`]: one entry per configured server, each connecting in the background on
//! its own task, its state for `/mcp`, and every request the rest of mypi makes (tool calls,
//! resource reads, prompts) routed to the right connection. A server whose process died is
//! started again on its next use, once; after that it stays failed until `/mcp reconnect`.
//! Each connected server's tools, prompts and (for all servers together) the resource tools
//! are registered by [`super::registry`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::cache;
use super::config::{ServerConfig, Transport};
use super::conn::{Conn, StartError};
use super::registry::Registry;
use super::reports::Hooks;
use waiting::CONNECT_WAIT;

mod adding;
pub mod waiting;
use super::McpError;

/// Delays before the second and third attempt to reach an HTTP server that failed to start
/// with a transient error (a 5xx, a refused connection).
const HTTP_RETRIES: [Duration; 2] = [Duration::from_millis(250), Duration::from_secs(1)];
/// Where one server stands.
#[derive(Clone)]
pub enum State {
    Disabled,
    Connecting,
    Connected(Arc<Conn>),
    Failed { error: String, stderr: String },
}

/// One configured server.
pub struct Entry {
    pub config: ServerConfig,
    state: Mutex<State>,
    /// Bumped at every state change (waiters watch it).
    pub(super) changed: watch::Sender<u64>,
    /// Whether the one automatic restart after a crash was used.
    restarted: AtomicBool,
    /// Whether its tools are known from the cache while it starts (a prompt need not wait).
    pub(super) cached: AtomicBool,
    /// Whether the user was told that a prompt went on without it (told once).
    pub(super) passed_over: AtomicBool,
    /// Whether the user was told that a call waits for it (told once).
    pub(super) waited_for: AtomicBool,
    /// Until when calls wait for it while it connects: set by the first call that waits,
    /// so the calls after it wait no longer than that one.
    pub(super) wait_until: std::sync::OnceLock<tokio::time::Instant>,
}

impl Entry {
    fn new(config: ServerConfig) -> Arc<Entry> {
        let state = if config.enabled {
            State::Connecting
        } else {
            State::Disabled
        };
        Arc::new(Entry {
            config,
            state: Mutex::new(state),
            changed: watch::channel(0).0,
            restarted: AtomicBool::new(false),
            cached: AtomicBool::new(false),
            passed_over: AtomicBool::new(false),
            waited_for: AtomicBool::new(false),
            wait_until: std::sync::OnceLock::new(),
        })
    }

    pub fn state(&self) -> State {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn set(&self, state: State) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = state;
        self.changed.send_modify(|n| *n += 1);
    }
}

/// Every MCP server of the session.
pub struct Manager {
    /// The configured servers, then those scripts added (`adding.rs`).
    entries: std::sync::RwLock<Vec<Arc<Entry>>>,
    cwd: std::path::PathBuf,
    hooks: Hooks,
    registry: Registry,
    /// The agent names of every server's tools and prompts.
    namer: Arc<super::naming::Namer>,
    /// Where the lists of the last connection are kept (see `cache.rs`).
    cache: std::sync::OnceLock<std::path::PathBuf>,
    /// When [`Manager::start`] ran (a prompt's wait is counted from it).
    started: std::sync::OnceLock<tokio::time::Instant>,
    weak: Weak<Manager>,
}

impl Manager {
    /// A manager for `servers` (nothing starts until [`Manager::start`]).
    pub fn new(
        servers: Vec<ServerConfig>,
        cwd: std::path::PathBuf,
        hooks: Hooks,
        registry: Registry,
    ) -> Arc<Manager> {
        let namer = Arc::new(super::naming::Namer::new(
            servers.iter().map(|s| s.name.as_str()),
        ));
        Arc::new_cyclic(|weak| Manager {
            namer,
            entries: std::sync::RwLock::new(servers.into_iter().map(Entry::new).collect()),
            cwd,
            hooks,
            registry,
            cache: std::sync::OnceLock::new(),
            started: std::sync::OnceLock::new(),
            weak: weak.clone(),
        })
    }

    /// Keeps each server's lists in `dir` and offers the cached ones while it starts.
    pub fn use_cache(&self, dir: std::path::PathBuf) {
        let _ = self.cache.set(dir);
    }

    /// Starts connecting every enabled server, each on its own task; returns at once. A
    /// server with cached lists has its tools offered meanwhile (they are in place before its
    /// connection starts, so the fresh lists, or their withdrawal, always come after them).
    pub fn start(&self) {
        let _ = self.started.set(tokio::time::Instant::now());
        let late: Weak<dyn crate::tools::LateTools> = self.weak.clone();
        self.registry.set_late(late);
        for entry in self.entries().into_iter().filter(|e| e.config.enabled) {
            self.registry.offer_search_for(&entry.config);
            if let Some(cached) = self.cache.get().and_then(|d| cache::load(d, &entry.config)) {
                self.registry.install_lists(
                    self,
                    &entry.config,
                    &cached.lists,
                    cached.has_resources,
                );
                entry.cached.store(true, Ordering::Release);
            }
            self.spawn_connect(entry);
        }
    }

    /// When [`Manager::start`] ran.
    pub fn started(&self) -> Option<tokio::time::Instant> {
        self.started.get().copied()
    }

    /// Every server, in order (a copy: scripts may add servers meanwhile).
    pub fn entries(&self) -> Vec<Arc<Entry>> {
        self.entries
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// How `server`'s tool `tool` reaches the model, once its tools are registered.
    pub fn exposure_of(&self, server: &str, tool: &str) -> Option<crate::tools::Exposure> {
        (self.registry.exposures).of(&super::config::key(server), tool)
    }

    /// A weak reference for what the manager registers (tools hold it, not the manager).
    pub fn weak(&self) -> Weak<Manager> {
        self.weak.clone()
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// What names the servers' tools and prompts.
    pub fn namer(&self) -> &super::naming::Namer {
        &self.namer
    }

    fn spawn_connect(&self, entry: Arc<Entry>) {
        let weak = self.weak.clone();
        tokio::spawn(async move {
            if let Some(m) = weak.upgrade() {
                m.connect(&entry).await;
            }
        });
    }

    /// Connects one server (with the HTTP retries) and registers what it offers.
    async fn connect(&self, entry: &Arc<Entry>) -> State {
        entry.set(State::Connecting);
        let http = matches!(entry.config.transport, Transport::Http { .. });
        let mut delays = HTTP_RETRIES.iter();
        let result = loop {
            match Conn::start(
                &entry.config,
                &self.cwd,
                self.hooks.clone(),
                self.namer.clone(),
            )
            .await
            {
                Ok(conn) => break Ok(conn),
                Err(e) if http && e.transient => match delays.next() {
                    Some(d) => tokio::time::sleep(*d).await,
                    None => break Err(e),
                },
                Err(e) => break Err(e),
            }
        };
        let state = match result {
            Ok(conn) => {
                let conn = Arc::new(conn);
                self.registry.install(self, &entry.config, &conn);
                self.watch(entry.clone(), conn.clone());
                State::Connected(conn)
            }
            Err(StartError {
                message, stderr, ..
            }) => {
                // Cached tools of a server that did not come up are withdrawn.
                self.registry.uninstall(&entry.config.name);
                // Said once a connection: nothing opens a browser unasked (see `auth`).
                if message.starts_with("needs login") {
                    let name = &entry.config.name;
                    self.registry
                        .notice(format!("MCP server '{name}' is skipped: {message}"));
                }
                State::Failed {
                    error: message,
                    stderr,
                }
            }
        };
        entry.set(state.clone());
        // Kept once the server is usable (a call waiting for it need not wait for this too).
        if let (State::Connected(conn), Some(dir)) = (&state, self.cache.get()) {
            cache::save(dir, &entry.config, &conn.lists(), conn.has_resources);
        }
        state
    }

    /// Follows a connection: re-lists on `list_changed`, and marks the server failed when
    /// its transport closes.
    fn watch(&self, entry: Arc<Entry>, conn: Arc<Conn>) {
        let weak = self.weak.clone();
        tokio::spawn(async move {
            loop {
                let dead = conn.dead.clone();
                tokio::select! {
                    _ = conn.changes.notify.notified() => {}
                    _ = dead.cancelled() => break,
                }
                let Some(m) = weak.upgrade() else { return };
                m.registry.refresh(&m, &entry.config, &conn).await;
            }
            // The tools stay registered: the next call starts the server again (once), or
            // says why it cannot, which tells the model more than a tool that vanished.
            let error = CLOSED;
            if matches!(entry.state(), State::Connected(ref c) if Arc::ptr_eq(c, &conn)) {
                entry.set(State::Failed {
                    error: error.into(),
                    stderr: conn.stderr.tail(5),
                });
                // Its last words may still be on their way through the stderr pipe.
                conn.stderr.settled(Duration::from_millis(500)).await;
                if matches!(entry.state(), State::Failed { error: ref e, .. } if e == error) {
                    entry.set(State::Failed {
                        error: error.into(),
                        stderr: conn.stderr.tail(5),
                    });
                }
            }
        });
    }

    /// The entry named `server` (`-` and `_` the same).
    pub fn entry(&self, server: &str) -> Result<Arc<Entry>, McpError> {
        let entries = self.entries();
        entries
            .iter()
            .find(|e| super::config::same_server(&e.config.name, server))
            .cloned()
            .ok_or_else(|| {
                let names: Vec<&str> = entries.iter().map(|e| e.config.name.as_str()).collect();
                McpError::NoServer {
                    name: server.to_string(),
                    known: if names.is_empty() {
                        "none are configured".into()
                    } else {
                        format!("the servers are: {}", names.join(", "))
                    },
                }
            })
    }

    /// The live connection of `server`: waits while it connects; starts it again once after
    /// a crash.
    pub async fn conn(&self, server: &str) -> Result<Arc<Conn>, McpError> {
        self.conn_of(&self.entry(server)?).await
    }

    /// [`Manager::conn`] for an entry looked up already.
    pub(super) async fn conn_of(&self, entry: &Arc<Entry>) -> Result<Arc<Conn>, McpError> {
        // The common case first, without a subscription.
        if let State::Connected(c) = &*entry.state.lock().unwrap_or_else(|p| p.into_inner()) {
            if c.alive() {
                return Ok(c.clone());
            }
        }
        let mut rx = entry.changed.subscribe();
        let mut deadline = None;
        loop {
            match entry.state() {
                State::Connected(c) if c.alive() => return Ok(c),
                State::Disabled => {
                    return Err(McpError::Unavailable {
                        server: entry.config.name.clone(),
                        why: "it is disabled (\"enabled\": false)".into(),
                    })
                }
                State::Connecting => {
                    let deadline = *deadline.get_or_insert_with(|| {
                        self.registry.notice(format!(
                            "waiting for MCP server {} (still connecting; at most {} s)",
                            entry.config.name,
                            CONNECT_WAIT.as_secs()
                        ));
                        tokio::time::Instant::now() + CONNECT_WAIT
                    });
                    if tokio::time::timeout_at(deadline, rx.changed())
                        .await
                        .is_err()
                    {
                        return Err(McpError::Unavailable {
                            server: entry.config.name.clone(),
                            why: format!(
                                "it is still connecting after {} s; try again later, or see /mcp",
                                CONNECT_WAIT.as_secs()
                            ),
                        });
                    }
                }
                State::Connected(_) | State::Failed { .. }
                    if !entry.restarted.swap(true, Ordering::AcqRel) =>
                {
                    // `install` replaces the old tools when the restart works; when it fails
                    // they stay, and a call says why the server is not available. Boxed: the
                    // start's future is tens of KiB, and every call's future would carry it.
                    Box::pin(self.connect(entry)).await;
                }
                State::Connected(_) => {
                    return Err(McpError::Unavailable {
                        server: entry.config.name.clone(),
                        why: "its connection closed; /mcp reconnect starts it again".into(),
                    })
                }
                State::Failed { error, .. } => {
                    return Err(McpError::Unavailable {
                        server: entry.config.name.clone(),
                        why: format!("{error}; /mcp reconnect tries again"),
                    })
                }
            }
        }
    }

    /// Calls `tool` of `server`; the result as protocol JSON.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        args: Value,
        cancel: &CancellationToken,
    ) -> Result<Value, McpError> {
        self.call_tool_reporting(server, tool, args, cancel, None)
            .await
    }

    /// [`Manager::call_tool`], with the server's progress notifications passed to `report`
    /// while the call runs.
    pub async fn call_tool_reporting(
        &self,
        server: &str,
        tool: &str,
        args: Value,
        cancel: &CancellationToken,
        report: Option<crate::vocab::run::Reporter>,
    ) -> Result<Value, McpError> {
        let entry = self.entry(server)?;
        let conn = self.conn_of(&entry).await?;
        conn.call_tool(tool, args, entry.config.timeout, cancel, report)
            .await
    }

    /// Reads a resource (retried once after a transport error: a read changes nothing).
    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<Value, McpError> {
        let entry = self.entry(server)?;
        let timeout = entry.config.timeout;
        let conn = self.conn_of(&entry).await?;
        // On the heap: a request's future is large (serde_json's maps keep their order, which
        // the protocol crate of `mypi acp` asks for), and this one may be sent twice.
        match Box::pin(conn.read_resource(uri, timeout)).await {
            Err(McpError::Transport(_)) => {
                let conn = self.conn_of(&entry).await?;
                Box::pin(conn.read_resource(uri, timeout)).await
            }
            other => other,
        }
    }

    /// Gets a prompt with its arguments.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        args: serde_json::Map<String, Value>,
    ) -> Result<Value, McpError> {
        let entry = self.entry(server)?;
        let conn = self.conn_of(&entry).await?;
        // On the heap, as `read_resource`'s.
        Box::pin(conn.get_prompt(name, args, entry.config.timeout)).await
    }

    /// Starts `server` again (closing the old connection first); a disabled entry stays
    /// unstarted, and the error says where to enable it.
    pub async fn reconnect(&self, server: &str) -> Result<State, McpError> {
        let entry = self.entry(server)?;
        if !entry.config.enabled {
            return Err(McpError::Unavailable {
                server: entry.config.name.clone(),
                why: format!(
                    "it is disabled in {} (\"enabled\": false); set \"enabled\": true in \
                     its entry (or remove that line) and start mypi again",
                    entry.config.source.display()
                ),
            });
        }
        if let State::Connected(c) = entry.state() {
            self.registry.uninstall(&entry.config.name);
            self.close(&entry, &c).await;
        }
        entry.restarted.store(false, Ordering::Release);
        // On the heap: a handshake's future is ~65 KiB (the SDK's service and transports),
        // and held inline it made the future of every line that can reconnect that large.
        Ok(Box::pin(self.connect(&entry)).await)
    }

    /// Closes every connection: stdin first, a short grace, SIGTERM, a short grace, then
    /// each process group is killed (see [`Conn::close`]). (`process::kill_all` covers the
    /// exit paths that cannot wait for this.)
    pub async fn shutdown(&self) {
        let entries = self.entries();
        let mut closing = Vec::new();
        for entry in &entries {
            if let State::Connected(c) = entry.state() {
                closing.push(async move { self.close(entry, &c).await });
            }
        }
        futures_util::future::join_all(closing).await;
    }

    /// Closes one connection, with the end-of-input grace unless its server was seen not to
    /// use it (and learns whether it does).
    async fn close(&self, entry: &Entry, conn: &Conn) {
        let dir = self.cache.get();
        let grace = dir.is_none_or(|d| cache::eof_grace_worth(d, &entry.config));
        if let (Some(dir), Some(exited)) = (dir, conn.close(grace).await) {
            cache::remember_eof(dir, &entry.config, exited);
        }
    }

    /// Every server's state, as `/mcp`, `mypi mcp list` and `api.mcp.servers()` show it.
    pub fn status(&self) -> Vec<Value> {
        let entries = self.entries();
        let mut all: Vec<Value> = entries.iter().map(|e| status_of(e)).collect();
        for (v, e) in all.iter_mut().zip(&entries) {
            if v["state"] == "connected" {
                let [_, deferred, hidden, code] = self.registry.exposures.counts(&key_of(e));
                v["deferred"] = json!(deferred);
                v["hidden"] = json!(hidden);
                v["code"] = json!(code);
            }
        }
        all
    }
}

fn key_of(e: &Entry) -> String {
    super::config::key(&e.config.name)
}

/// Why a server that was connected is not any more.
const CLOSED: &str = "the server closed the connection (it exited or crashed)";

fn status_of(e: &Entry) -> Value {
    let mut v = json!({"name": e.config.name});
    let transport = match &e.config.transport {
        Transport::Stdio { .. } => "stdio",
        Transport::Http { sse: true, .. } => "sse",
        Transport::Http { .. } => "http",
    };
    v["transport"] = json!(transport);
    match e.state() {
        State::Disabled => v["state"] = json!("disabled"),
        State::Connecting => v["state"] = json!("connecting"),
        // Dead, and the watcher has not said so yet: what it is about to say.
        State::Connected(c) if !c.alive() => {
            v["state"] = json!("failed");
            v["error"] = json!(CLOSED);
            v["stderr"] = json!(c.stderr.tail(5));
        }
        State::Connected(c) => {
            let (tools, resources, prompts) = c.counts();
            v["state"] = json!("connected");
            v["protocol"] = json!(c.protocol);
            v["tools"] = json!(tools);
            v["need_tasks"] = json!(c.task_only());
            v["resources"] = json!(resources);
            v["prompts"] = json!(prompts);
        }
        State::Failed { error, stderr } => {
            v["state"] = json!("failed");
            v["error"] = json!(error.lines().next().unwrap_or(""));
            v["stderr"] = json!(stderr);
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A request's future is part of every caller's future (a tool call's, a script's
    /// `api.mcp.call`'s): the rare start of a server stays boxed out of it. A start inline
    /// made each call's future 41 KiB, and a call through the manager 30-45 µs slower than
    /// one on its connection.
    #[test]
    fn request_futures_stay_small() {
        let registry = Registry::new(
            crate::tools::ToolRegistry::new(),
            crate::commands::CommandTable::with_builtins(),
            Arc::new(|_| {}),
        );
        let m = Manager::new(Vec::new(), std::env::temp_dir(), Hooks::quiet(), registry);
        let cancel = CancellationToken::new();
        let sizes = [
            (
                "call_tool",
                std::mem::size_of_val(&m.call_tool("s", "t", json!({}), &cancel)),
            ),
            (
                "read_resource",
                std::mem::size_of_val(&m.read_resource("s", "u")),
            ),
            (
                "get_prompt",
                std::mem::size_of_val(&m.get_prompt("s", "p", Default::default())),
            ),
            ("conn", std::mem::size_of_val(&m.conn("s"))),
        ];
        for (what, size) in sizes {
            println!("{what}: {size} bytes");
            assert!(size < 16 * 1024, "{what}'s future takes {size} bytes");
        }
    }
}
