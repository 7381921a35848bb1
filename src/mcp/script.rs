//! `api.mcp.*` on the host side: a script's request ([`Request`]) served by the manager
//! ([`ScriptService`], the extension host's [`McpService`]),
//! returning plain data. A script's tool call passes the same `tool_call` / `tool_result`
//! hooks as the model's, under the same agent tool name, with `origin = {extension = NAME}`
//! in the event: a guard that blocks `mcp__fs__write_file` for the model blocks
//! `api.mcp.call("fs", "write_file", ...)` too.

use std::sync::Arc;

use serde_json::{json, Value};

use super::content;
use super::manager::Manager;
use crate::hooks::{CallAbout, EventKind, HookBus, HookEvent, Origin};
use crate::vocab::mcp::McpService;
use crate::vocab::run::RunContext;
use futures_util::future::BoxFuture;

pub use crate::vocab::mcp::McpRequest as Request;

/// The manager as scripts' [`McpService`]: their calls pass the hooks of `hooks`.
pub struct ScriptService {
    pub manager: Arc<Manager>,
    pub hooks: Arc<HookBus>,
}

impl McpService for ScriptService {
    fn serve(
        &self,
        request: Request,
        extension: &str,
        ctx: Arc<RunContext>,
    ) -> BoxFuture<'static, Result<Value, String>> {
        let (manager, hooks) = (self.manager.clone(), self.hooks.clone());
        let extension = extension.to_string();
        Box::pin(async move { serve(&manager, &hooks, request, &extension, &ctx).await })
    }
}

/// Serves `request` for extension `extension`, in the run `ctx`; the error is the message to
/// raise in the script.
pub async fn serve(
    manager: &Manager,
    hooks: &HookBus,
    request: Request,
    extension: &str,
    ctx: &Arc<RunContext>,
) -> Result<Value, String> {
    let fail = |e: super::McpError| e.to_string();
    match request {
        Request::Servers if manager.entries().is_empty() => Err(NONE.into()),
        Request::Servers => Ok(Value::Array(manager.status())),
        Request::AddServer { name, entry } => manager.add_server(&name, entry, extension),
        Request::Tools { server } => {
            let entry = manager.entry(&server).map_err(fail)?;
            let conn = manager.conn_of(&entry).await.map_err(fail)?;
            conn.tools_settled(super::conn::SETTLE_MAX).await;
            let one = |(t, agent): (Value, String)| {
                let name = t["name"].as_str().unwrap_or("");
                // A tool that needs MCP tasks is never offered (see `tasks.rs`).
                let exposure = match super::tasks::needs_tasks(&t) {
                    true => Some(crate::tools::Exposure::Hidden),
                    false => manager.exposure_of(&entry.config.name, name),
                };
                let annotations = t.get("annotations").cloned().unwrap_or(json!({}));
                json!({
                    "name": name,
                    "title": t.get("title").or(annotations.get("title")).cloned().unwrap_or(Value::Null),
                    "description": t.get("description").cloned().unwrap_or(json!("")),
                    "input_schema": t.get("inputSchema").cloned().unwrap_or(json!({})),
                    "annotations": annotations,
                    "agent_name": agent,
                    "exposure": exposure.unwrap_or_default().as_str(),
                })
            };
            Ok(Value::Array(
                conn.named_tools().into_iter().map(one).collect(),
            ))
        }
        Request::Call { server, tool, args } => {
            call(manager, hooks, &server, &tool, args, extension, ctx).await
        }
        Request::ReadResource { server, uri } => {
            let r = manager.read_resource(&server, &uri).await.map_err(fail)?;
            Ok(json!({
                "text": content::read_output(&uri, &r),
                "contents": r.get("contents").cloned().unwrap_or(json!([])),
            }))
        }
        Request::Prompt { server, name, args } => {
            let map = match args {
                Value::Object(m) => m
                    .into_iter()
                    .map(|(k, v)| match v {
                        Value::String(s) => (k, Value::String(s)),
                        other => (k, Value::String(other.to_string())),
                    })
                    .collect(),
                _ => serde_json::Map::new(),
            };
            let r = manager
                .get_prompt(&server, &name, map)
                .await
                .map_err(fail)?;
            Ok(json!({
                "text": super::registry::prompt_text(&r),
                "messages": r.get("messages").cloned().unwrap_or(json!([])),
            }))
        }
    }
}

/// What `api.mcp.servers()` says while no server is configured or added.
const NONE: &str =
    "no MCP servers are configured (.mcp.json, ~/.agents/mcp.json, --mcp-config FILE)";

/// A server's tool as a script's call finds it.
struct Found {
    entry: Arc<super::manager::Entry>,
    conn: Arc<super::conn::Conn>,
    /// Its agent name (what the hooks see).
    name: String,
    hints: Option<Value>,
}

/// Finds `tool` of `server` (waiting for the server; listing its tools again when the last
/// list lacks it, since a server may add one without a word).
async fn find(manager: &Manager, server: &str, tool: &str) -> Result<Found, String> {
    let entry = manager.entry(server).map_err(|e| e.to_string())?;
    let conn = manager
        .conn_of(&entry)
        .await
        .map_err(|e| format!("mcp server '{server}': {e}"))?;
    let found = match conn.tool(tool) {
        Ok(found) => Ok(found),
        Err(_) => {
            conn.relist_tools(entry.config.timeout).await;
            conn.tool(tool)
        }
    };
    let (name, hints) = found.map_err(|names| {
        format!(
            "mcp server '{}' has no tool '{tool}'; its tools are: {}",
            entry.config.name,
            names.join(", ")
        )
    })?;
    Ok(Found {
        entry,
        conn,
        name,
        hints,
    })
}

/// A script's tool call through the hooks.
async fn call(
    manager: &Manager,
    hooks: &HookBus,
    server: &str,
    tool: &str,
    mut args: Value,
    extension: &str,
    ctx: &Arc<RunContext>,
) -> Result<Value, String> {
    let fail = |e: super::McpError| format!("mcp server '{server}': {e}");
    let Found {
        entry,
        conn,
        name,
        hints,
    } = find(manager, server, tool).await?;
    let about = CallAbout {
        hints,
        origin: Some(Origin {
            extension: extension.to_string(),
        }),
        parent_tool_call_id: None,
    };
    let id = format!("ext_{}", crate::vocab::owner::next_id());
    if hooks.has(EventKind::ToolCall) {
        let event = HookEvent::ToolCall {
            id: id.clone(),
            name: name.clone(),
            args,
            about: about.clone(),
        };
        let out = hooks.emit(event, ctx).await;
        args = match out.event {
            HookEvent::ToolCall { args, .. } => args,
            _ => Value::Null,
        };
        if let Some(reason) = out.blocked {
            return Err(format!("blocked: {reason}"));
        }
    }
    let kept = hooks.has(EventKind::ToolResult).then(|| args.clone());
    let result = conn
        .call_tool(
            tool,
            args,
            entry.config.timeout,
            &ctx.cancel,
            ctx.reporter(),
        )
        .await
        .map_err(fail)?;
    let mut output = content::tool_output(&name, &result);
    if let Some(args) = kept {
        let event = HookEvent::ToolResult {
            id,
            name,
            args,
            result: output.content.clone(),
            is_error: output.is_error,
            details: None,
            about,
        };
        if let HookEvent::ToolResult { result, .. } = hooks.emit(event, ctx).await.event {
            output.content = content::limit("result", result);
        }
    }
    if output.is_error {
        return Err(format!("mcp server '{server}': {}", output.content));
    }
    Ok(json!({
        "text": output.content,
        "content": result.get("content").cloned().unwrap_or(json!([])),
        "structured": result.get("structuredContent").cloned().unwrap_or(Value::Null),
        "is_error": false,
    }))
}
