//! The app's side of MCP: reading the configured files once the trust gate has decided,
//! starting the manager in the background (start-up never waits for a server), `/mcp` and
//! `mypi mcp list`, the short wait of a prompt for servers still connecting (`mcp::waiting`), and elicitation
//! asked on the REPL (`elicit.rs`).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures_util::future::BoxFuture;

use serde_json::Value;

use super::App;
use crate::mcp::config::Servers;
use crate::mcp::{Elicitation, Hooks, Manager, Registry, CONNECT_WAIT};
use crate::vocab::mcp::{McpRequest, McpService};
use crate::vocab::run::RunContext;

/// What serves scripts' `api.mcp.*`, built with the app and bound to the servers once they
/// start: MCP waits for the trust gate's answer, which the REPL asks after the app (and its
/// extensions) are built. Until then, or when MCP is off, a request gets the reason.
#[derive(Default)]
pub struct McpSlot {
    service: OnceLock<Arc<dyn McpService>>,
    /// MCP turned off, and by what.
    off: OnceLock<String>,
}

impl McpService for McpSlot {
    fn serve(
        &self,
        request: McpRequest,
        extension: &str,
        ctx: Arc<RunContext>,
    ) -> BoxFuture<'static, Result<Value, String>> {
        match self.service.get() {
            Some(service) => service.serve(request, extension, ctx),
            None => {
                let why = self.off.get().cloned();
                let why = why.unwrap_or_else(|| crate::extensions::registrar::NO_MCP.into());
                Box::pin(async move { Err(why) })
            }
        }
    }
}

impl App {
    /// Reads the MCP files and starts connecting every enabled server; returns at once.
    /// Problems with the files are notices; the other servers still start. Unless MCP is off,
    /// the manager is made even with no server, for those scripts add (`api.mcp.add_server`).
    pub fn start_mcp(&mut self) {
        if let Some(by) = &self.config.mcp_off {
            let _ = self.scripts_mcp.off.set(turned_off(by));
        }
        let given = std::mem::take(&mut self.given_mcp);
        let off = self.config.mcp_off.is_some();
        // On with no server configured, the manager is still made: scripts may add servers.
        if off || self.mcp.is_some() {
            return;
        }
        let project = self.config.project_mcp.as_deref();
        let mut servers =
            Servers::load(&self.config.mcp_files, project, &|k| std::env::var(k).ok());
        for server in given.into_iter().filter(|_| !off) {
            let name = crate::mcp::config::key(&server.name);
            servers
                .servers
                .retain(|s| crate::mcp::config::key(&s.name) != name);
            servers.servers.push(server);
        }
        let notice = self.extensions.context().notice.clone();
        for p in &servers.problems {
            notice(format!("MCP config: {p}"));
        }
        let hooks = self.mcp_hooks();
        let registry = Registry::new(self.tools.clone(), self.commands.clone(), notice);
        let (tools, bytes) = self.config.mcp_direct;
        (registry.exposures).set_budget(crate::mcp::exposure::Budget { tools, bytes });
        let manager = Manager::new(servers.servers, self.config.cwd.clone(), hooks, registry);
        if let Some(home) = &self.config.home {
            manager.use_cache(cache_dir(home));
        }
        manager.start();
        let _ = self
            .scripts_mcp
            .service
            .set(Arc::new(crate::mcp::script::ScriptService {
                manager: manager.clone(),
                hooks: self.hooks.clone(),
            }));
        // The servers' instructions reach the model once they are connected.
        self.agent.sections.push(manager.clone());
        self.mcp = Some(manager);
    }

    /// What connections report: progress lines and elicitation on the REPL (in `mypi acp`,
    /// elicitation is declined with a notice), logs to `.agents/logs/mcp.log`.
    fn mcp_hooks(&self) -> Hooks {
        let mut hooks = Hooks::quiet();
        hooks.log_file = Some(self.config.cwd.join(".agents").join("logs").join("mcp.log"));
        hooks.auth = super::mcp_login::context(self.config.home.as_deref());
        if self.config.mode == crate::config::Mode::Repl {
            let notice = self.extensions.context().notice.clone();
            hooks.progress = Arc::new(move |line: &str| notice(line.to_string()));
            let ui = self.ui.clone();
            hooks.elicit = Arc::new(move |server: &str, request: &Elicitation| {
                let (ui, server, request) = (ui.clone(), server.to_string(), request.clone());
                Box::pin(async move { super::elicit::ask(ui.as_ref(), &server, &request).await })
            });
        }
        if self.config.mode == crate::config::Mode::Acp {
            // An editor cannot be asked for a form (ACP has no request for text): declined,
            // and the editor is told.
            let notice = self.extensions.context().notice.clone();
            hooks.elicit = Arc::new(move |server: &str, request: &Elicitation| {
                notice(format!(
                    "the MCP server {server} asked for input ({}); an editor cannot be asked for a form over the Agent Client Protocol, so it was declined",
                    crate::vocab::text::truncate_middle(&request.message, 200)
                ));
                Box::pin(async { crate::mcp::Elicited::Decline })
            });
        }
        hooks
    }

    /// Before `prompt`: waits briefly for servers still connecting whose tools are not known
    /// from the cache and that it may need (see `mcp::waiting`), and names once each one it
    /// goes on without.
    pub(super) async fn wait_for_mcp(&self, prompt: &str) {
        let Some(m) = &self.mcp else { return };
        let passed = m.settle_for_prompt(prompt).await;
        if passed.is_empty() {
            return;
        }
        let then = if self.config.mode == crate::config::Mode::Repl {
            format!(
                "its tools are offered once it is ready, and a call of one waits for it (at \
                 most {} s)",
                CONNECT_WAIT.as_secs()
            )
        } else {
            // A one-shot run is likely over before the server is ready, and so is the next.
            "this run goes on without its tools; `mypi mcp list` waits for it and keeps its \
             tools for the next runs"
                .into()
        };
        (self.extensions.context().notice)(format!(
            "not waiting for MCP server{} {}: still connecting; {then}",
            if passed.len() == 1 { "" } else { "s" },
            passed.join(", "),
        ));
    }

    /// `/mcp login NAME` (the browser opened, the URL said, then the server connected again)
    /// and `/mcp logout NAME` (the token deleted, the server connected again without it).
    async fn mcp_login(&self, m: &Manager, verb: &str, name: &str) -> Result<String, String> {
        let ctx = super::mcp_login::context(self.config.home.as_deref())
            .ok_or("HOME is not set: tokens are kept under it")?;
        let entry = m.entry(name).map_err(|e| e.to_string())?;
        let done = match verb {
            "login" => {
                let notice = self.extensions.context().notice.clone();
                let say = Arc::new(move |line: &str| notice(line.to_string()));
                let cancel = tokio_util::sync::CancellationToken::new();
                super::mcp_login::login(&entry.config, &ctx, say, cancel).await?
            }
            _ => super::mcp_login::logout(&entry.config.name, &ctx)?,
        };
        m.reconnect(name).await.map_err(|e| e.to_string())?;
        let key = crate::mcp::config::key(name);
        let one: Vec<Value> = m
            .status()
            .into_iter()
            .filter(|s| crate::mcp::config::key(s["name"].as_str().unwrap_or("")) == key)
            .collect();
        Ok(format!("{done}\n{}", status_text(&one)))
    }

    /// `/mcp` (the servers), `/mcp reconnect NAME`, `/mcp login NAME`, `/mcp logout NAME`.
    pub(super) async fn mcp_command(&self, args: &str) -> Result<String, String> {
        let Some(m) = &self.mcp else {
            return Ok(match &self.config.mcp_off {
                Some(by) => turned_off(by),
                None => NONE_CONFIGURED.into(),
            });
        };
        let mut words = args.split_whitespace();
        match (words.next(), words.next()) {
            (None, _) if m.entries().is_empty() => Ok(NONE_CONFIGURED.into()),
            (None, _) => {
                // One look is all print mode gets: let the servers settle first.
                if self.config.mode != crate::config::Mode::Repl {
                    m.wait_connecting(CONNECT_WAIT).await;
                }
                Ok(status_text(&m.status()))
            }
            (Some("reconnect"), Some(name)) => {
                m.reconnect(name).await.map_err(|e| e.to_string())?;
                let status = m.status();
                let key = crate::mcp::config::key(name);
                let one: Vec<Value> = status
                    .into_iter()
                    .filter(|s| crate::mcp::config::key(s["name"].as_str().unwrap_or("")) == key)
                    .collect();
                Ok(status_text(&one))
            }
            (Some(verb @ ("login" | "logout")), Some(name)) => self.mcp_login(m, verb, name).await,
            _ => {
                Err("usage: /mcp, /mcp reconnect NAME, /mcp login NAME or /mcp logout NAME".into())
            }
        }
    }

    /// Closes every MCP connection (stdin, a grace, then the process groups).
    pub(super) async fn shutdown_mcp(&self) {
        if let Some(m) = &self.mcp {
            m.shutdown().await;
        }
        crate::mcp::spill::remove();
    }
}

/// Where each server's lists of its last connection are kept (see `mcp::cache`).
fn cache_dir(home: &std::path::Path) -> std::path::PathBuf {
    home.join(".agents").join("cache").join("mcp")
}

/// What `/mcp` and `mypi mcp list` say when no server is configured.
const NONE_CONFIGURED: &str =
    "no MCP servers are configured (.mcp.json, ~/.agents/mcp.json, --mcp-config FILE)";

/// What `/mcp` and `mypi mcp list` say when MCP is switched off, and by what.
fn turned_off(by: &str) -> String {
    format!("MCP is turned off by {by}: no MCP server is started")
}

/// One line per server, as `/mcp` and `mypi mcp list` show them.
pub fn status_text(status: &[Value]) -> String {
    let mut lines = Vec::new();
    for s in status {
        let name = s["name"].as_str().unwrap_or("");
        let line = match s["state"].as_str().unwrap_or("") {
            "connected" => {
                let count = |key: &str, noun: &str| {
                    crate::vocab::text::plural(s[key].as_u64().unwrap_or(0), noun)
                };
                let mut tools = count("tools", "tool");
                for kind in ["deferred", "hidden", "code"] {
                    let n = s[kind].as_u64().unwrap_or(0);
                    if n > 0 {
                        let kind = if kind == "code" {
                            "for code only"
                        } else {
                            kind
                        };
                        tools.push_str(&format!(" ({n} {kind})"));
                    }
                }
                let tasks = s["need_tasks"].as_u64().unwrap_or(0);
                if tasks > 0 {
                    tools.push_str(&format!(
                        " ({tasks} not offered: MCP tasks needed and not supported yet)"
                    ));
                }
                format!(
                    "{name}: connected ({}, protocol {}, {tools}, {}, {})",
                    s["transport"].as_str().unwrap_or(""),
                    s["protocol"].as_str().unwrap_or(""),
                    count("resources", "resource"),
                    count("prompts", "prompt")
                )
            }
            "failed"
                if s["error"]
                    .as_str()
                    .is_some_and(|e| e.starts_with("needs login")) =>
            {
                format!("{name}: {}", s["error"].as_str().unwrap_or(""))
            }
            "failed" => {
                let mut l = format!("{name}: failed: {}", s["error"].as_str().unwrap_or(""));
                let stderr = s["stderr"].as_str().unwrap_or("");
                if !stderr.is_empty() {
                    for e in stderr.lines() {
                        l.push_str(&format!("\n    {e}"));
                    }
                }
                l
            }
            other => format!("{name}: {other}"),
        };
        lines.push(line);
    }
    lines.join("\n")
}

/// `mypi mcp list`: connects to every server of `files` and prints their states; exit 1 if
/// an enabled server failed or a file or entry was unusable, 2 if a file or entry was
/// unusable and no server was left. With MCP turned off (`off` says by what) it says so.
pub async fn list(
    files: &[std::path::PathBuf],
    project: Option<&std::path::Path>,
    cwd: std::path::PathBuf,
    home: Option<&std::path::Path>,
    off: Option<&str>,
) -> (String, i32) {
    if let Some(by) = off {
        return (turned_off(by), 0);
    }
    let servers = Servers::load(files, project, &|k| std::env::var(k).ok());
    let mut out: Vec<String> = servers
        .problems
        .iter()
        .map(|p| format!("config problem: {p}"))
        .collect();
    if servers.servers.is_empty() {
        out.push(NONE_CONFIGURED.into());
        let code = if servers.problems.is_empty() { 0 } else { 2 };
        return (out.join("\n"), code);
    }
    let registry = Registry::new(
        crate::tools::ToolRegistry::new(),
        crate::commands::CommandTable::with_builtins(),
        Arc::new(|_| {}),
    );
    let mut hooks = Hooks::quiet();
    hooks.auth = super::mcp_login::context(home);
    let m = Manager::new(servers.servers, cwd, hooks, registry);
    // What it lists is kept: the next prompt finds a slow server's tools in the cache.
    if let Some(home) = home {
        m.use_cache(cache_dir(home));
    }
    m.start();
    let longest = m
        .entries()
        .iter()
        .map(|e| e.config.timeout)
        .max()
        .unwrap_or(CONNECT_WAIT);
    m.wait_connecting(longest + Duration::from_secs(2)).await;
    let status = m.status();
    let failed = status.iter().any(|s| s["state"] == "failed") || !servers.problems.is_empty();
    out.push(status_text(&status));
    m.shutdown().await;
    (out.join("\n"), i32::from(failed))
}
