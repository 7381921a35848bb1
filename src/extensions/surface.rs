//! The script API, defined once. Every member of `api`, `api.mcp`, `ctx` and `ctx.ui` is a
//! [`Member`]
//! here: its name, its parameters and their types, and a one-line summary; the functions'
//! validation, error texts and effects live here too ([`call`]). The Lua and Rhai engines only
//! convert their values into [`Arg`]s as a member's [`Ty`]s ask (keeping script functions as
//! callbacks), call [`call`], and convert the [`Ret`] back. So both languages accept the same
//! arguments and fail with the same messages; the reference (`stdlib/README.md`) and the LuaLS
//! stubs are checked against [`MEMBERS`]. What each function does is in `surface/call.rs`; the
//! argument values and their check are in `surface/args.rs`.

mod agents;
mod args;
mod call;
mod host;
mod providers;

use serde_json::{json, Value as Json};

use super::api::ExtensionInfo;
use crate::run::RunContext;

use args::{checked, Args};
pub use args::{Arg, Ret};
pub use call::call;

/// Where a member lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Object {
    Api,
    Ctx,
    /// `ctx.ui`.
    Ui,
    /// `api.mcp`.
    Mcp,
    /// `ctx.session`.
    Session,
    /// `api.events`.
    Events,
    /// What `api.builtin_tool(name)` returns.
    Builtin,
}

impl Object {
    pub fn prefix(self) -> &'static str {
        match self {
            Object::Api => "api",
            Object::Ctx => "ctx",
            Object::Ui => "ctx.ui",
            Object::Mcp => "api.mcp",
            Object::Session => "ctx.session",
            Object::Events => "api.events",
            Object::Builtin => "api.builtin_tool(name)",
        }
    }
}

/// The type a parameter (or a field of a table parameter) takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ty {
    /// A string (numbers are taken as their text).
    Str,
    /// A script function, kept as a callback.
    Func,
    Int,
    Bool,
    /// Plain data (a table / map, converted to JSON).
    Table,
    /// A list of strings (numbers are taken as their text).
    StrList,
    /// Anything; shown as text.
    Any,
    /// A table with these fields.
    Record(&'static [Field]),
}

/// A parameter, or a field of a [`Ty::Record`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Field {
    pub name: &'static str,
    pub ty: Ty,
    pub required: bool,
}

const fn req(name: &'static str, ty: Ty) -> Field {
    Field {
        name,
        ty,
        required: true,
    }
}

const fn opt(name: &'static str, ty: Ty) -> Field {
    Field {
        name,
        ty,
        required: false,
    }
}

/// What a member is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    Function(&'static [Field]),
    /// A data field the engine holds (`api.state`, `ctx.cwd`, ...).
    Data,
}

/// One member of the script API.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Member {
    pub object: Object,
    pub name: &'static str,
    pub shape: Shape,
    pub summary: &'static str,
}

impl Member {
    /// `api.on`, `ctx.ui.confirm`.
    pub fn full_name(&self) -> String {
        format!("{}.{}", self.object.prefix(), self.name)
    }

    pub fn params(&self) -> &'static [Field] {
        match self.shape {
            Shape::Function(params) => params,
            Shape::Data => &[],
        }
    }
}

const TOOL_FIELDS: &[Field] = &[
    req("name", Ty::Str),
    opt("description", Ty::Str),
    opt("parameters", Ty::Table),
    req("execute", Ty::Func),
    opt("parallel_safe", Ty::Bool),
    opt("timeout_ms", Ty::Int),
];
/// `api.renderer`'s functions: both optional, at least one given (checked in `call.rs`).
const RENDERER_FIELDS: &[Field] = &[opt("call", Ty::Func), opt("result", Ty::Func)];
const SEND_FIELDS: &[Field] = &[opt("deliver_as", Ty::Str)];
const TIMER_FIELDS: &[Field] = &[opt("repeat", Ty::Bool)];
const MODEL_FIELDS: &[Field] = &[opt("provider", Ty::Str)];
const FLAG_FIELDS: &[Field] = &[
    req("name", Ty::Str),
    req("type", Ty::Str),
    opt("default", Ty::Any),
    opt("description", Ty::Str),
];
const PROVIDER_FIELDS: &[Field] = &[
    req("name", Ty::Str),
    req("api", Ty::Str),
    opt("base_url", Ty::Str),
    opt("api_key_env", Ty::Str),
    opt("models", Ty::Table),
];
const SELECT_FIELDS: &[Field] = &[opt("timeout_ms", Ty::Int)];
const INPUT_FIELDS: &[Field] = &[opt("default", Ty::Str), opt("timeout_ms", Ty::Int)];
const EXEC_FIELDS: &[Field] = &[opt("timeout_ms", Ty::Int), opt("cwd", Ty::Str)];
const AGENT_FIELDS: &[Field] = &[
    req("task", Ty::Str),
    opt("name", Ty::Str),
    opt("system_prompt", Ty::Str),
    opt("tools", Ty::StrList),
    opt("model", Ty::Str),
    opt("provider", Ty::Str),
    opt("max_turns", Ty::Int),
];
const AGENTS_OPTIONS: &[Field] = &[opt("concurrency", Ty::Int)];
const COMPLETE_FIELDS: &[Field] = &[
    opt("prompt", Ty::Str),
    opt("messages", Ty::Table),
    opt("system_prompt", Ty::Str),
    opt("model", Ty::Str),
    opt("provider", Ty::Str),
    opt("max_tokens", Ty::Int),
];

const fn function(
    object: Object,
    name: &'static str,
    params: &'static [Field],
    summary: &'static str,
) -> Member {
    Member {
        object,
        name,
        shape: Shape::Function(params),
        summary,
    }
}

const fn data(object: Object, name: &'static str, summary: &'static str) -> Member {
    Member {
        object,
        name,
        shape: Shape::Data,
        summary,
    }
}

/// Every member scripts can reach, in both languages.
pub const MEMBERS: &[Member] = &[
    function(
        Object::Api,
        "on",
        &[req("event", Ty::Str), req("handler", Ty::Func)],
        "subscribe to an event; returns a handle",
    ),
    function(
        Object::Api,
        "tool",
        &[req("definition", Ty::Record(TOOL_FIELDS))],
        "register a tool for the model; returns a handle",
    ),
    function(
        Object::Api,
        "command",
        &[
            req("name", Ty::Str),
            req("handler", Ty::Func),
            opt("description", Ty::Str),
        ],
        "register a slash command; returns a handle",
    ),
    function(
        Object::Api,
        "renderer",
        &[
            req("tool", Ty::Str),
            req("renderer", Ty::Record(RENDERER_FIELDS)),
        ],
        "print a tool's call and result lines your way (REPL); returns a handle",
    ),
    function(
        Object::Api,
        "send_message",
        &[
            req("text", Ty::Str),
            opt("options", Ty::Record(SEND_FIELDS)),
        ],
        "queue a user message (steer or follow_up)",
    ),
    function(
        Object::Api,
        "exec",
        &[
            req("command", Ty::Str),
            opt("arguments", Ty::StrList),
            opt("options", Ty::Record(EXEC_FIELDS)),
        ],
        "run a program without a shell",
    ),
    function(
        Object::Mcp,
        "servers",
        &[],
        "the MCP servers and their states",
    ),
    function(
        Object::Mcp,
        "tools",
        &[req("server", Ty::Str)],
        "a server's tools",
    ),
    function(
        Object::Mcp,
        "call",
        &[
            req("server", Ty::Str),
            req("tool", Ty::Str),
            opt("arguments", Ty::Table),
        ],
        "call a server's tool (through the tool hooks)",
    ),
    // Rhai reserves `x.call(...)` for function pointers: there this is the way to call.
    function(
        Object::Mcp,
        "call_tool",
        &[
            req("server", Ty::Str),
            req("tool", Ty::Str),
            opt("arguments", Ty::Table),
        ],
        "the same as api.mcp.call (the name Rhai can use)",
    ),
    function(
        Object::Mcp,
        "read_resource",
        &[req("server", Ty::Str), req("uri", Ty::Str)],
        "read a server's resource",
    ),
    function(
        Object::Mcp,
        "prompt",
        &[
            req("server", Ty::Str),
            req("name", Ty::Str),
            opt("arguments", Ty::Table),
        ],
        "get a server's prompt as text",
    ),
    function(
        Object::Api,
        "read_dir",
        &[req("path", Ty::Str)],
        "the names in a folder, sorted (folders end in /)",
    ),
    function(
        Object::Api,
        "run_agent",
        &[req("agent", Ty::Record(AGENT_FIELDS))],
        "run a child agent -> {text, turns, usage, error?}",
    ),
    function(
        Object::Api,
        "run_agents",
        &[
            req("agents", Ty::Table),
            opt("options", Ty::Record(AGENTS_OPTIONS)),
        ],
        "run several child agents at once -> their outcomes in order",
    ),
    function(
        Object::Api,
        "complete",
        &[req("request", Ty::Record(COMPLETE_FIELDS))],
        "one model call without tools -> {text, usage}",
    ),
    function(
        Object::Api,
        "log",
        &[req("message", Ty::Any)],
        "a debug line (MYPI_LOG=1)",
    ),
    function(
        Object::Api,
        "notify",
        &[req("message", Ty::Any)],
        "a line shown to the user",
    ),
    function(
        Object::Api,
        "append_entry",
        &[req("kind", Ty::Str), opt("data", Ty::Any)],
        "keep data in the session file (never sent to the model)",
    ),
    function(
        Object::Api,
        "tools",
        &[],
        "the tools: {name, description, owner, active}",
    ),
    function(
        Object::Api,
        "set_active_tools",
        &[opt("names", Ty::StrList)],
        "offer the model only these tools (nil: all)",
    ),
    function(
        Object::Api,
        "commands",
        &[],
        "the slash commands: {name, description, owner}",
    ),
    function(
        Object::Api,
        "timer",
        &[
            req("ms", Ty::Int),
            req("handler", Ty::Func),
            opt("options", Ty::Record(TIMER_FIELDS)),
        ],
        "call a function after ms (again and again with repeat); returns a handle",
    ),
    function(
        Object::Api,
        "watch",
        &[req("path", Ty::Str), req("handler", Ty::Func)],
        "call a function when a file or folder changes; returns a handle",
    ),
    function(
        Object::Events,
        "on",
        &[req("name", Ty::Str), req("handler", Ty::Func)],
        "handle an event other extensions emit; returns a handle",
    ),
    function(
        Object::Events,
        "emit",
        &[req("name", Ty::Str), opt("data", Ty::Any)],
        "send an event to the extensions that handle it (without waiting)",
    ),
    function(
        Object::Api,
        "builtin_tool",
        &[req("name", Ty::Str)],
        "a built-in tool, to wrap in an override: {name, description, parameters, execute}",
    ),
    function(
        Object::Builtin,
        "execute",
        &[req("tool", Ty::Str), opt("arguments", Ty::Table)],
        "run the built-in tool with these arguments -> {content, is_error}",
    ),
    function(
        Object::Api,
        "set_model",
        &[
            req("model", Ty::Str),
            opt("options", Ty::Record(MODEL_FIELDS)),
        ],
        "switch the model (and provider) once the call has ended",
    ),
    function(
        Object::Api,
        "provider",
        &[req("definition", Ty::Record(PROVIDER_FIELDS))],
        "register a provider for /model and --provider",
    ),
    function(
        Object::Api,
        "flag",
        &[req("definition", Ty::Record(FLAG_FIELDS))],
        "declare a command-line option --NAME for this extension",
    ),
    data(
        Object::Api,
        "flags",
        "the values of the declared options (api.flags.NAME)",
    ),
    data(Object::Api, "state", "plain data kept across hot reloads"),
    data(Object::Api, "extension", "{name, path, language}"),
    data(Object::Ctx, "cwd", "the working folder"),
    data(Object::Ctx, "mode", "repl, print or json"),
    data(Object::Ctx, "session_id", "the run's session"),
    data(Object::Ctx, "model", "the model in use"),
    data(
        Object::Ctx,
        "depth",
        "0 for the user's agent, 1+ in a child",
    ),
    function(
        Object::Ctx,
        "abort",
        &[],
        "cancel the run that made the call",
    ),
    function(
        Object::Ctx,
        "progress",
        &[req("message", Ty::Any)],
        "report the running tool call's progress (nothing outside a tool)",
    ),
    function(
        Object::Ctx,
        "update",
        &[req("message", Ty::Any)],
        "the same as ctx.progress",
    ),
    function(
        Object::Ctx,
        "is_idle",
        &[],
        "whether the user's agent is not running",
    ),
    function(
        Object::Ctx,
        "shutdown",
        &[],
        "leave mypi once the agent is idle",
    ),
    function(
        Object::Ctx,
        "reload",
        &[],
        "reload every extension once the call has ended",
    ),
    function(
        Object::Ctx,
        "new_session",
        &[],
        "start a new session once the agent is idle",
    ),
    function(
        Object::Ctx,
        "system_prompt",
        &[],
        "the system prompt in effect",
    ),
    function(
        Object::Ctx,
        "context_usage",
        &[],
        "-> {tokens, window, percent}",
    ),
    function(
        Object::Session,
        "entries",
        &[],
        "the session's entries in order",
    ),
    function(Object::Session, "name", &[], "the session's name, or nil"),
    function(
        Object::Session,
        "set_name",
        &[req("name", Ty::Str)],
        "name the session (shown by /session and /resume)",
    ),
    function(
        Object::Ui,
        "confirm",
        &[req("question", Ty::Str)],
        "ask yes/no on the REPL",
    ),
    function(
        Object::Ui,
        "select",
        &[
            req("title", Ty::Str),
            req("options", Ty::StrList),
            opt("opts", Ty::Record(SELECT_FIELDS)),
        ],
        "numbered choices on the REPL -> the chosen option or nil",
    ),
    function(
        Object::Ui,
        "input",
        &[
            req("prompt", Ty::Str),
            opt("options", Ty::Record(INPUT_FIELDS)),
        ],
        "ask for a line -> the text, the default, or nil",
    ),
    function(
        Object::Ui,
        "editor",
        &[opt("initial", Ty::Str)],
        "edit text in $VISUAL / $EDITOR -> the text saved or nil",
    ),
    function(
        Object::Ui,
        "set_status",
        &[req("key", Ty::Str), opt("text", Ty::Str)],
        "show a short status text above the prompt (nil clears it)",
    ),
    function(
        Object::Ui,
        "set_title",
        &[req("text", Ty::Str)],
        "set the terminal's title",
    ),
    function(
        Object::Ui,
        "notify",
        &[req("message", Ty::Any)],
        "a line shown to the user",
    ),
];

/// The member `name` of `object`.
pub fn member(object: Object, name: &str) -> Option<&'static Member> {
    MEMBERS
        .iter()
        .find(|m| m.object == object && m.name == name)
}

/// `api.extension`.
pub fn extension_value(info: &ExtensionInfo) -> Json {
    json!({
        "name": info.name,
        "path": info.path.display().to_string(),
        "language": info.language.name(),
    })
}

/// The data fields of `ctx` for a run.
pub fn ctx_fields(ctx: &RunContext) -> [(&'static str, Json); 5] {
    [
        ("cwd", json!(ctx.cwd.display().to_string())),
        ("mode", json!(ctx.mode.name())),
        ("session_id", json!(ctx.session_id)),
        ("model", json!(ctx.model)),
        ("depth", json!(ctx.depth)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on() -> &'static Member {
        member(Object::Api, "on").unwrap()
    }

    #[test]
    fn arguments_are_checked_with_one_wording() {
        let e = checked(on(), vec![Arg::Str("input".into())]).err().unwrap();
        assert_eq!(e, "api.on: the handler (a function) is missing");
        let e = checked(on(), vec![Arg::Str("input".into()), Arg::Int(3)])
            .err()
            .unwrap();
        assert_eq!(e, "api.on: the handler must be a function, not a number");
        let e = checked(on(), vec![Arg::Nil, Arg::Nil, Arg::Nil])
            .err()
            .unwrap();
        assert_eq!(e, "api.on takes 2 arguments (event, handler), got 3");
        let tool = member(Object::Api, "tool").unwrap();
        let e = checked(
            tool,
            vec![Arg::Record(vec![("name".into(), Arg::Str("t".into()))])],
        )
        .err()
        .unwrap();
        assert_eq!(e, "api.tool: 'execute' (a function) is required");
        let e = checked(
            tool,
            vec![Arg::Record(vec![("nmae".into(), Arg::Str("t".into()))])],
        )
        .err()
        .unwrap();
        assert!(
            e.contains("unknown field 'nmae'; the fields are name, "),
            "{e}"
        );
    }

    #[test]
    fn every_function_member_is_dispatched() {
        // Called with no arguments, each function member either runs (it needs none) or
        // names its first missing argument; none falls through to "is not a function".
        let dir = crate::testutil::TempDir::new("surface");
        let info = ExtensionInfo {
            name: "t".into(),
            path: dir.0.join("t.lua"),
            language: crate::extensions::api::Language::Lua,
            root: dir.0.clone(),
            embedded: None,
        };
        let registrar = crate::extensions::registrar::Recording::new(dir.0.clone());
        let owner = crate::owner::Owner::new("t", 1);
        let link = crate::extensions::api::ApiLink::new(info, owner, registrar, json!({}));
        let ctx = crate::testutil::run_ctx(&dir.0);
        for m in MEMBERS
            .iter()
            .filter(|m| matches!(m.shape, Shape::Function(_)))
        {
            let out = call(&link, m, Vec::new(), Some(&ctx));
            match m.params().iter().find(|p| p.required) {
                Some(p) => {
                    let e = out.expect_err(&m.full_name());
                    assert!(e.contains(&format!("the {} (", p.name)), "{e}");
                }
                // Without MCP servers, api.mcp.servers() says so.
                None if m.object == Object::Mcp => {
                    let e = out.expect_err(&m.full_name());
                    assert!(e.contains("no MCP servers are configured"), "{e}");
                }
                None => assert!(out.is_ok(), "{}: {out:?}", m.full_name()),
            }
        }
        assert!(ctx.cancel.is_cancelled(), "ctx.abort() cancelled the run");
    }
}
