//! The acts of `api.mcp`: each builds an [`McpRequest`] and hands back the server's answer
//! as plain data, or raises its message.

use serde_json::{json, Value as Json};

use super::{Arg, Call, Ret};
use crate::vocab::mcp::McpRequest;

/// Arguments as a JSON object; an empty Lua table may arrive as `[]`: no arguments.
fn object(arg: Arg) -> Json {
    match arg {
        Arg::Data(v @ Json::Object(_)) => v,
        _ => json!({}),
    }
}

fn ask(c: &Call<'_>, request: McpRequest) -> Result<Ret, String> {
    c.link.mcp(request).map(Ret::Data)
}

/// `api.mcp.servers()`.
pub(super) fn servers(c: &mut Call<'_>) -> Result<Ret, String> {
    ask(c, McpRequest::Servers)
}

/// `api.mcp.tools(server)`.
pub(super) fn tools(c: &mut Call<'_>) -> Result<Ret, String> {
    let server = c.args.take("server").text();
    ask(c, McpRequest::Tools { server })
}

/// `api.mcp.call(server, tool, arguments?)` and its older name `call_tool`.
pub(super) fn call(c: &mut Call<'_>) -> Result<Ret, String> {
    let request = McpRequest::Call {
        server: c.args.take("server").text(),
        tool: c.args.take("tool").text(),
        args: object(c.args.take("arguments")),
    };
    ask(c, request)
}

/// `api.mcp.read_resource(server, uri)`.
pub(super) fn read_resource(c: &mut Call<'_>) -> Result<Ret, String> {
    let request = McpRequest::ReadResource {
        server: c.args.take("server").text(),
        uri: c.args.take("uri").text(),
    };
    ask(c, request)
}

/// `api.mcp.prompt(server, name, arguments?)`.
pub(super) fn prompt(c: &mut Call<'_>) -> Result<Ret, String> {
    let request = McpRequest::Prompt {
        server: c.args.take("server").text(),
        name: c.args.take("name").text(),
        args: object(c.args.take("arguments")),
    };
    ask(c, request)
}

/// `api.mcp.add_server{name, command | url, args?, env?, headers?, exposure?, ...}`: the
/// fields as a `.mcp.json` entry has them (`tool_exposure` is its `toolExposure`).
pub(super) fn add_server(c: &mut Call<'_>) -> Result<Ret, String> {
    let mut entry = c.args.take("server").into_json();
    if let Some(m) = entry.as_object_mut() {
        m.retain(|_, v| !v.is_null());
    }
    let name = entry
        .as_object_mut()
        .and_then(|m| m.remove("name"))
        .and_then(|n| n.as_str().map(str::to_string))
        .unwrap_or_default();
    if let Some(m) = entry.as_object_mut() {
        if let Some(t) = m.remove("tool_exposure") {
            m.insert("toolExposure".into(), t);
        }
    }
    ask(c, McpRequest::AddServer { name, entry })
}
