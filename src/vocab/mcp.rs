//! What scripts may ask of the MCP servers (`api.mcp.*`), as a request ([`McpRequest`]) and
//! the service that answers it ([`McpService`]). The extension host holds the service as a
//! value the wiring hands it; the MCP host implements it. Neither knows the other's types.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::vocab::run::RunContext;

/// What a script asked of the MCP servers.
#[derive(Debug, Clone, PartialEq)]
pub enum McpRequest {
    /// `api.mcp.servers()`: every server and its state.
    Servers,
    /// `api.mcp.tools(server)`.
    Tools { server: String },
    /// `api.mcp.call(server, tool, args)`.
    Call {
        server: String,
        tool: String,
        args: Value,
    },
    /// `api.mcp.read_resource(server, uri)`.
    ReadResource { server: String, uri: String },
    /// `api.mcp.add_server{name, ...}`: the fields of a `.mcp.json` entry besides `name`.
    AddServer { name: String, entry: Value },
    /// `api.mcp.prompt(server, name, args)`.
    Prompt {
        server: String,
        name: String,
        args: Value,
    },
}

/// No MCP servers to ask: every request gets the reason (MCP turned off, none configured,
/// or no agent at all).
pub struct Unavailable(pub String);

impl McpService for Unavailable {
    fn serve(
        &self,
        _request: McpRequest,
        _extension: &str,
        _ctx: Arc<RunContext>,
    ) -> BoxFuture<'static, Result<Value, String>> {
        let why = self.0.clone();
        Box::pin(async move { Err(why) })
    }
}

/// Answers scripts' MCP requests.
pub trait McpService: Send + Sync {
    /// Serves `request` for extension `extension`, in the run `ctx`: plain data, or the
    /// message to raise in the script.
    fn serve(
        &self,
        request: McpRequest,
        extension: &str,
        ctx: Arc<RunContext>,
    ) -> BoxFuture<'static, Result<Value, String>>;
}
