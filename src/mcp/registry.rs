//! What connected servers put into mypi's registries, with handles so that a withdrawn tool or
//! a failed server really goes: each server tool as the agent tool `mcp__<server>__<tool>`
//! (description and JSON Schema as the server gave them), each server prompt as the command
//! `/mcp__<server>__<prompt>`, and, once any server has resources, the tools
//! `list_mcp_resources`, `list_mcp_resource_templates` and `read_mcp_resource`. Each tool's
//! exposure (direct, deferred, hidden) is planned before it is registered (`exposure`).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, Weak};

use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::config::ServerConfig;
use super::conn::Conn;
use super::content;
use super::manager::{Manager, State};
pub use super::prompts::{prompt_args, prompt_text};
use crate::commands::{Action, CommandError, CommandHandler, CommandTable};
use crate::hooks::NoticeFn;
use crate::tools::{Tool, ToolContext, ToolRegistry};
use crate::vocab::owner::{next_id, Handle, Owner};
use crate::vocab::protocol::{ToolOutput, ToolSpec};
use crate::vocab::run::RunContext;

/// The registries MCP adds to, and what each server added.
pub struct Registry {
    tools: Arc<ToolRegistry>,
    commands: Arc<CommandTable>,
    notice: NoticeFn,
    handles: Mutex<HashMap<String, Vec<Handle>>>,
    resource_tools: Mutex<Vec<Handle>>,
    /// The tool schemas already said to be uncompilable (server key, tool, schema): one
    /// notice each, not one per install (cache, connect, re-list).
    bad_schemas: Mutex<HashSet<(String, String, String)>>,
    /// How each server's tools reach the model.
    pub exposures: super::exposure::Exposures,
}

fn owner(server: &str) -> Owner {
    Owner::new(format!("mcp:{server}"), 0)
}

impl Registry {
    pub fn new(tools: Arc<ToolRegistry>, commands: Arc<CommandTable>, notice: NoticeFn) -> Self {
        Registry {
            tools,
            commands,
            notice,
            handles: Mutex::default(),
            resource_tools: Mutex::default(),
            bad_schemas: Mutex::default(),
            exposures: Default::default(),
        }
    }

    /// Tells the user `text`.
    pub fn notice(&self, text: String) {
        (self.notice)(text);
    }

    /// Offers `tool_search` before any tool is known when `config` defers some by itself.
    pub fn offer_search_for(&self, config: &ServerConfig) {
        let e = &config.exposure;
        let deferred = Some(crate::tools::Exposure::Deferred);
        if e.server == deferred || e.tools.values().any(|x| Some(*x) == deferred) {
            self.exposures.offer_search(&self.tools);
        }
    }

    /// Sets what the tool registry waits for when a name is not there yet.
    pub fn set_late(&self, late: std::sync::Weak<dyn crate::tools::LateTools>) {
        self.tools.set_late(late);
    }

    /// Registers a connected server's tools and prompts (replacing what it had).
    /// The new tools are registered before the old ones go (registrations of one name
    /// stack), so a call made during a refresh always finds its tool.
    pub fn install(&self, m: &Manager, config: &ServerConfig, conn: &Conn) {
        self.install_lists(m, config, &conn.lists(), conn.has_resources);
    }

    /// Registers `lists` for `config`'s server (replacing what it had): a connected server's,
    /// or the cached ones of a server still starting.
    pub fn install_lists(
        &self,
        m: &Manager,
        config: &ServerConfig,
        lists: &super::conn::Lists,
        has_resources: bool,
    ) {
        let old = self
            .lock()
            .remove(&super::config::key(&config.name))
            .unwrap_or_default();
        let weak = m.weak();
        let mut handles = Vec::new();
        let names: Vec<&str> = lists
            .tools
            .iter()
            .map(|t| t["name"].as_str().unwrap_or(""))
            .collect();
        let agent_names = m.namer().names(&config.name, &names);
        // A tool that needs MCP tasks is not offered: it would always fail (`tasks.rs`).
        let tools: Vec<McpTool> = (lists.tools.iter().zip(agent_names))
            .filter(|(tool, _)| !super::tasks::needs_tasks(tool))
            .map(|(tool, agent_name)| McpTool::new(&config.name, tool, agent_name, weak.clone()))
            .collect();
        // Planned before they are registered: a request never offers them all meanwhile.
        let planned = tools.iter().map(McpTool::planned).collect();
        let planned = super::exposure::ServerTools {
            config: config.exposure.clone(),
            tools: planned,
        };
        let key = super::config::key(&config.name);
        self.exposures.update(&key, Some(planned), &self.tools);
        for t in tools {
            if !t.prevalidate {
                self.bad_schema(&config.name, &t);
            }
            handles.push(self.tools.register(owner(&config.name), Arc::new(t)).handle);
        }
        // Commands do not stack (a second one gets another name): the old ones go first.
        for h in old {
            h.remove();
        }
        let prompt_names: Vec<&str> = lists
            .prompts
            .iter()
            .map(|p| p["name"].as_str().unwrap_or(""))
            .collect();
        for (prompt, command) in lists
            .prompts
            .iter()
            .zip(m.namer().names(&config.name, &prompt_names))
        {
            let p = PromptCommand {
                server: config.name.clone(),
                prompt: prompt.clone(),
                manager: weak.clone(),
            };
            let description = prompt["description"].as_str().unwrap_or("an MCP prompt");
            let r = self.commands.register_action(
                next_id(),
                owner(&config.name),
                &command,
                &format!("[{}] {description}", config.name),
                Action::Prompt(Arc::new(p)),
            );
            handles.push(r.handle);
        }
        if has_resources {
            self.install_resource_tools(&weak);
        }
        self.lock()
            .insert(super::config::key(&config.name), handles);
    }

    /// Removes everything `server` registered.
    pub fn uninstall(&self, server: &str) {
        let key = super::config::key(server);
        if let Some(handles) = self.lock().remove(&key) {
            for h in handles {
                h.remove();
            }
        }
        self.exposures.update(&key, None, &self.tools);
    }

    /// Re-lists what a server said changed and registers the new lists.
    pub async fn refresh(&self, m: &Manager, config: &ServerConfig, conn: &Conn) {
        let changes = &conn.changes;
        let tools = changes.tools.swap(false, Ordering::AcqRel);
        // Read after taking the flag: it counts every change this re-list includes.
        let announced = changes.tools_announced.load(Ordering::Acquire);
        let resources = changes.resources.swap(false, Ordering::AcqRel);
        let prompts = changes.prompts.swap(false, Ordering::AcqRel);
        if !(tools || resources || prompts) {
            return;
        }
        match conn
            .refresh(tools, resources, prompts, config.timeout)
            .await
        {
            Ok(()) => self.install(m, config, conn),
            // Closing, or gone: the manager reports the server as failed.
            Err(_) if !conn.alive() => {}
            Err(e) => (self.notice)(format!(
                "[mcp {}] could not list what changed: {e}",
                config.name
            )),
        }
        // Done, listed or not: nobody waits for a list that is not coming.
        if tools {
            conn.tools_relisted(announced);
        }
    }

    /// Says that `t`'s schema cannot be compiled, once per server, tool and schema.
    fn bad_schema(&self, server: &str, t: &McpTool) {
        let seen = (
            super::config::key(server),
            t.tool.clone(),
            t.spec.parameters.to_string(),
        );
        let new = self
            .bad_schemas
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(seen);
        if new {
            (self.notice)(format!(
                "[mcp {server}] the schema of tool '{}' cannot be compiled here: it is sent as \
                 given and calls are not checked against it",
                t.tool
            ));
        }
    }

    fn install_resource_tools(&self, weak: &Weak<Manager>) {
        let mut installed = self
            .resource_tools
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if !installed.is_empty() {
            return;
        }
        for kind in [
            ResourceKind::List,
            ResourceKind::Templates,
            ResourceKind::Read,
        ] {
            let t = ResourceTool::new(kind, weak.clone());
            installed.push(
                self.tools
                    .register(Owner::new("mcp", 0), Arc::new(t))
                    .handle,
            );
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<Handle>>> {
        self.handles.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A server's tool as an agent tool.
struct McpTool {
    spec: ToolSpec,
    server: String,
    tool: String,
    hints: Option<Value>,
    prevalidate: bool,
    manager: Weak<Manager>,
    /// Its exposure, as `exposure::plan` decides it.
    exposure: Arc<AtomicU8>,
}

impl McpTool {
    fn new(server: &str, tool: &Value, agent_name: String, manager: Weak<Manager>) -> Self {
        let schema = tool
            .get("inputSchema")
            .cloned()
            .unwrap_or(json!({"type": "object"}));
        let prevalidate = jsonschema::validator_for(&schema).is_ok();
        McpTool {
            spec: ToolSpec {
                name: agent_name,
                description: tool["description"].as_str().unwrap_or("").to_string(),
                parameters: schema,
            },
            server: server.to_string(),
            tool: tool["name"].as_str().unwrap_or("").to_string(),
            hints: tool.get("annotations").filter(|a| a.is_object()).cloned(),
            prevalidate,
            manager,
            exposure: Arc::default(),
        }
    }

    /// The tool as the exposure plan sees it.
    fn planned(&self) -> super::exposure::Planned {
        super::exposure::Planned {
            tool: self.tool.clone(),
            bytes: serde_json::to_string(&self.spec).map_or(0, |s| s.len()),
            slot: self.exposure.clone(),
        }
    }
}

impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    fn hints(&self) -> Option<&Value> {
        self.hints.as_ref()
    }

    fn prevalidate(&self) -> bool {
        self.prevalidate
    }

    fn exposure(&self) -> crate::tools::Exposure {
        crate::tools::Exposure::from_u8(self.exposure.load(Ordering::Acquire))
    }

    fn server(&self) -> Option<&str> {
        Some(&self.server)
    }

    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, ToolOutput> {
        let (manager, server, tool) =
            (self.manager.clone(), self.server.clone(), self.tool.clone());
        let name = self.spec.name.clone();
        Box::pin(async move {
            let Some(m) = manager.upgrade() else {
                return ToolOutput::error("MCP is shut down");
            };
            let report = ctx.reporter();
            match m
                .call_tool_reporting(&server, &tool, args, &ctx.cancel, report)
                .await
            {
                Ok(result) => content::tool_output(&name, &result),
                Err(e) => ToolOutput::error(format!("mcp server '{server}': {e}")),
            }
        })
    }
}

/// The names of the resource tools (see [`ResourceTool`]).
pub const RESOURCE_TOOLS: [&str; 3] = [
    "list_mcp_resources",
    "list_mcp_resource_templates",
    "read_mcp_resource",
];

#[derive(Clone, Copy)]
enum ResourceKind {
    List,
    Templates,
    Read,
}

/// The resource tools the model gets when a server has resources.
struct ResourceTool {
    spec: ToolSpec,
    kind: ResourceKind,
    manager: Weak<Manager>,
}

impl ResourceTool {
    fn new(kind: ResourceKind, manager: Weak<Manager>) -> Self {
        let server = json!({"type": "string", "description": "the MCP server (default: all)"});
        let (name, description, parameters) = match kind {
            ResourceKind::List => (
                RESOURCE_TOOLS[0],
                "List the resources MCP servers offer (uri, name, type).",
                json!({"type": "object", "properties": {"server": server}}),
            ),
            ResourceKind::Templates => (
                RESOURCE_TOOLS[1],
                "List the resource templates (URI patterns) MCP servers offer.",
                json!({"type": "object", "properties": {"server": server}}),
            ),
            ResourceKind::Read => (
                RESOURCE_TOOLS[2],
                "Read one resource of an MCP server by its URI.",
                json!({"type": "object", "properties": {
                    "server": {"type": "string", "description": "the MCP server"},
                    "uri": {"type": "string", "description": "the resource's URI"}
                }, "required": ["server", "uri"]}),
            ),
        };
        ResourceTool {
            spec: ToolSpec {
                name: name.into(),
                description: description.into(),
                parameters,
            },
            kind,
            manager,
        }
    }
}

impl Tool for ResourceTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    fn call(&self, args: Value, _ctx: ToolContext) -> BoxFuture<'static, ToolOutput> {
        let (manager, kind) = (self.manager.clone(), self.kind);
        Box::pin(async move {
            let Some(m) = manager.upgrade() else {
                return ToolOutput::error("MCP is shut down");
            };
            let server = args["server"].as_str().map(str::to_string);
            match kind {
                ResourceKind::List | ResourceKind::Templates => {
                    let templates = matches!(kind, ResourceKind::Templates);
                    listing(&m, server.as_deref(), templates).await
                }
                ResourceKind::Read => {
                    let (server, uri) = (
                        server.unwrap_or_default(),
                        args["uri"].as_str().unwrap_or(""),
                    );
                    match m.read_resource(&server, uri).await {
                        Ok(r) => content::read_tool_output(uri, &r),
                        Err(e) => ToolOutput::error(format!("mcp server '{server}': {e}")),
                    }
                }
            }
        })
    }
}

/// The resources (or templates) of one server or all, as JSON text. A server still
/// connecting (its tools offered from the cache) is waited for, as a call of its tools would.
async fn listing(m: &Manager, server: Option<&str>, templates: bool) -> ToolOutput {
    if let Some(s) = server {
        if let Err(e) = m.entry(s) {
            return ToolOutput::error(e.to_string());
        }
    }
    let mut out = Vec::new();
    for e in m.entries() {
        if server.is_some_and(|s| !super::config::same_server(s, &e.config.name)) {
            continue;
        }
        let conn = match e.state() {
            State::Connected(c) => c,
            State::Connecting => match m.conn_of(&e).await {
                Ok(c) => c,
                Err(_) => continue,
            },
            State::Disabled | State::Failed { .. } => continue,
        };
        let lists = conn.lists();
        let items = if templates {
            lists.templates
        } else {
            lists.resources
        };
        for mut item in items {
            item["server"] = json!(e.config.name);
            out.push(item);
        }
    }
    ToolOutput::ok(content::limit(
        "resources",
        serde_json::to_string_pretty(&out).unwrap_or_default(),
    ))
}

/// A server prompt as a slash command whose result becomes the user's message.
struct PromptCommand {
    server: String,
    prompt: Value,
    manager: Weak<Manager>,
}

impl CommandHandler for PromptCommand {
    fn call(
        &self,
        args: &str,
        _ctx: &Arc<RunContext>,
    ) -> BoxFuture<'static, Result<String, CommandError>> {
        let (manager, server, prompt) = (
            self.manager.clone(),
            self.server.clone(),
            self.prompt.clone(),
        );
        let args = args.to_string();
        Box::pin(async move {
            let m = manager
                .upgrade()
                .ok_or(CommandError("MCP is shut down".into()))?;
            let map = prompt_args(&prompt, &args).map_err(CommandError)?;
            let name = prompt["name"].as_str().unwrap_or("");
            let r = m
                .get_prompt(&server, name, map)
                .await
                .map_err(|e| CommandError(format!("mcp server '{server}': {e}")))?;
            Ok(prompt_text(&r))
        })
    }
}
