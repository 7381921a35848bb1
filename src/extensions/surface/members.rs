//! The member table ([`MEMBERS`]): every member of the script API with what it does (its
//! act), its parameters and a one-line summary, and the record types its table parameters take.

use super::{
    agents, call, data, function, host, mcp, opt, req, skills, ui, Field, Member, Object, Ty,
};

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
const SKILL_FIELDS: &[Field] = &[
    req("name", Ty::Str),
    req("description", Ty::Str),
    req("path", Ty::Str),
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
    opt("thinking", Ty::Str),
];
/// `api.mcp.add_server`'s entry: a `.mcp.json` entry's fields.
const SERVER_FIELDS: &[Field] = &[
    req("name", Ty::Str),
    opt("command", Ty::Str),
    opt("args", Ty::StrList),
    opt("env", Ty::Table),
    opt("cwd", Ty::Str),
    opt("url", Ty::Str),
    opt("headers", Ty::Table),
    opt("type", Ty::Str),
    opt("timeout", Ty::Int),
    opt("protocol", Ty::Str),
    opt("exposure", Ty::Str),
    opt("tool_exposure", Ty::Table),
];
const AGENTS_OPTIONS: &[Field] = &[opt("concurrency", Ty::Int)];
const COMPLETE_FIELDS: &[Field] = &[
    opt("prompt", Ty::Str),
    opt("messages", Ty::Table),
    opt("system_prompt", Ty::Str),
    opt("model", Ty::Str),
    opt("provider", Ty::Str),
    opt("max_tokens", Ty::Int),
    opt("thinking", Ty::Str),
];

/// Every member scripts can reach, in both languages.
pub const MEMBERS: &[Member] = &[
    function(
        Object::Api,
        "on", call::on,
        &[req("event", Ty::Str), req("handler", Ty::Func)],
        "subscribe to an event; returns a handle",
    ),
    function(
        Object::Api,
        "tool", call::tool,
        &[req("definition", Ty::Record(TOOL_FIELDS))],
        "register a tool for the model; returns a handle",
    ),
    function(
        Object::Api,
        "command", call::command,
        &[
            req("name", Ty::Str),
            req("handler", Ty::Func),
            opt("description", Ty::Str),
        ],
        "register a slash command; returns a handle",
    ),
    function(
        Object::Api,
        "renderer", call::renderer,
        &[
            req("tool", Ty::Str),
            req("renderer", Ty::Record(RENDERER_FIELDS)),
        ],
        "print a tool's call and result lines your way (REPL); returns a handle",
    ),
    function(
        Object::Api,
        "send_message", call::send_message,
        &[
            req("text", Ty::Str),
            opt("options", Ty::Record(SEND_FIELDS)),
        ],
        "queue a user message (steer or follow_up)",
    ),
    function(
        Object::Api,
        "exec", call::exec,
        &[
            req("command", Ty::Str),
            opt("arguments", Ty::StrList),
            opt("options", Ty::Record(EXEC_FIELDS)),
        ],
        "run a program without a shell",
    ),
    function(
        Object::Mcp,
        "servers", mcp::servers,
        &[],
        "the MCP servers and their states",
    ),
    function(
        Object::Mcp,
        "tools", mcp::tools,
        &[req("server", Ty::Str)],
        "a server's tools",
    ),
    function(
        Object::Mcp,
        "call", mcp::call,
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
        "call_tool", mcp::call,
        &[
            req("server", Ty::Str),
            req("tool", Ty::Str),
            opt("arguments", Ty::Table),
        ],
        "the same as api.mcp.call (the name Rhai can use)",
    ),
    function(
        Object::Mcp,
        "read_resource", mcp::read_resource,
        &[req("server", Ty::Str), req("uri", Ty::Str)],
        "read a server's resource",
    ),
    function(
        Object::Mcp,
        "prompt", mcp::prompt,
        &[
            req("server", Ty::Str),
            req("name", Ty::Str),
            opt("arguments", Ty::Table),
        ],
        "get a server's prompt as text",
    ),
    function(
        Object::Mcp,
        "add_server", mcp::add_server,
        &[req("server", Ty::Record(SERVER_FIELDS))],
        "add an MCP server for this session (a configured one of the same name wins)",
    ),
    function(
        Object::Api,
        "read_dir", call::read_dir,
        &[req("path", Ty::Str)],
        "the names in a folder, sorted (folders end in /)",
    ),
    function(
        Object::Api,
        "run_agent", agents::run_agent,
        &[req("agent", Ty::Record(AGENT_FIELDS))],
        "run a child agent -> {text, turns, usage, error?}",
    ),
    function(
        Object::Api,
        "run_agents", agents::run_agents,
        &[
            req("agents", Ty::Table),
            opt("options", Ty::Record(AGENTS_OPTIONS)),
        ],
        "run several child agents at once -> their outcomes in order",
    ),
    function(
        Object::Api,
        "complete", agents::complete,
        &[req("request", Ty::Record(COMPLETE_FIELDS))],
        "one model call without tools -> {text, usage}",
    ),
    function(
        Object::Api,
        "log", call::log,
        &[req("message", Ty::Any)],
        "a debug line (MYPI_LOG=1)",
    ),
    function(
        Object::Api,
        "notify", call::notify,
        &[req("message", Ty::Any)],
        "a line shown to the user",
    ),
    function(
        Object::Api,
        "append_entry", host::append_entry,
        &[req("kind", Ty::Str), opt("data", Ty::Any)],
        "keep data in the session file (never sent to the model)",
    ),
    function(
        Object::Api,
        "tools", host::tools,
        &[],
        "the tools: {name, description, owner, active}",
    ),
    function(
        Object::Api,
        "set_active_tools", host::set_active_tools,
        &[opt("names", Ty::StrList)],
        "offer the model only these tools (nil: all)",
    ),
    function(
        Object::Api,
        "commands", host::commands,
        &[],
        "the slash commands: {name, description, owner}",
    ),
    function(
        Object::Api,
        "skills", skills::skills,
        &[],
        "the skills the model is told about: {name, description, path, source, listed}",
    ),
    function(
        Object::Api,
        "skill", skills::skill,
        &[req("definition", Ty::Record(SKILL_FIELDS))],
        "add a skill (a SKILL.md the model may read); returns a handle",
    ),
    function(
        Object::Api,
        "timer", host::timer,
        &[
            req("ms", Ty::Int),
            req("handler", Ty::Func),
            opt("options", Ty::Record(TIMER_FIELDS)),
        ],
        "call a function after ms (again and again with repeat); returns a handle",
    ),
    function(
        Object::Api,
        "watch", host::watch,
        &[req("path", Ty::Str), req("handler", Ty::Func)],
        "call a function when a file or folder changes; returns a handle",
    ),
    function(
        Object::Events,
        "on", host::events_on,
        &[req("name", Ty::Str), req("handler", Ty::Func)],
        "handle an event other extensions emit; returns a handle",
    ),
    function(
        Object::Events,
        "emit", host::events_emit,
        &[req("name", Ty::Str), opt("data", Ty::Any)],
        "send an event to the extensions that handle it (without waiting)",
    ),
    function(
        Object::Api,
        "builtin_tool", host::builtin_tool,
        &[req("name", Ty::Str)],
        "a built-in tool, to wrap in an override: {name, description, parameters, execute}",
    ),
    function(
        Object::Builtin,
        "execute", host::builtin_execute,
        &[req("tool", Ty::Str), opt("arguments", Ty::Table)],
        "run the built-in tool with these arguments -> {content, is_error}",
    ),
    function(
        Object::Api,
        "project_trusted", host::project_trusted,
        &[],
        "whether the project folder is trusted (its own extensions, MCP servers and agent files load)",
    ),
    function(
        Object::Api,
        "set_model", host::set_model,
        &[
            req("model", Ty::Str),
            opt("options", Ty::Record(MODEL_FIELDS)),
        ],
        "switch the model (and provider) once the call has ended",
    ),
    function(
        Object::Api,
        "set_thinking", host::set_thinking,
        &[req("level", Ty::Str)],
        "set the thinking level (off, minimal, low, medium or high) once the call has ended",
    ),
    function(
        Object::Api,
        "provider", host::provider,
        &[req("definition", Ty::Record(PROVIDER_FIELDS))],
        "register a provider for /model and --provider",
    ),
    function(
        Object::Api,
        "flag", host::flag,
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
    data(Object::Api, "version", "mypi's version, e.g. \"0.1.0\""),
    data(Object::Ctx, "cwd", "the working folder"),
    data(Object::Ctx, "mode", "repl, print, json or acp"),
    data(Object::Ctx, "session_id", "the run's session"),
    data(Object::Ctx, "model", "the model in use"),
    data(
        Object::Ctx,
        "thinking",
        "the thinking level: off, minimal, low, medium or high",
    ),
    data(
        Object::Ctx,
        "depth",
        "0 for the user's agent, 1+ in a child",
    ),
    function(
        Object::Ctx,
        "abort", call::abort,
        &[],
        "cancel the run that made the call",
    ),
    function(
        Object::Ctx,
        "progress", call::progress,
        &[req("message", Ty::Any)],
        "report the running tool call's progress (nothing outside a tool)",
    ),
    function(
        Object::Ctx,
        "update", call::progress,
        &[req("message", Ty::Any)],
        "the same as ctx.progress",
    ),
    function(
        Object::Ctx,
        "is_idle", host::is_idle,
        &[],
        "whether the user's agent is not running",
    ),
    function(
        Object::Ctx,
        "shutdown", host::shutdown,
        &[],
        "leave mypi once the agent is idle",
    ),
    function(
        Object::Ctx,
        "reload", host::reload,
        &[],
        "reload every extension once the call has ended",
    ),
    function(
        Object::Ctx,
        "new_session", host::new_session,
        &[],
        "start a new session once the agent is idle",
    ),
    function(
        Object::Ctx,
        "system_prompt", host::system_prompt,
        &[],
        "the system prompt in effect",
    ),
    function(
        Object::Ctx,
        "context_usage", host::context_usage,
        &[],
        "-> {tokens, window, percent}",
    ),
    function(
        Object::Session,
        "entries", host::entries,
        &[],
        "the session's entries in order",
    ),
    function(Object::Session, "name", host::session_name, &[], "the session's name, or nil"),
    function(
        Object::Session,
        "set_name", host::set_name,
        &[req("name", Ty::Str)],
        "name the session (shown by /session and /resume)",
    ),
    function(
        Object::Ui,
        "confirm", ui::confirm,
        &[
            req("question", Ty::Str),
            opt("opts", Ty::Record(SELECT_FIELDS)),
        ],
        "ask yes/no (the REPL's line; an editor's permission request)",
    ),
    function(
        Object::Ui,
        "select", ui::select,
        &[
            req("title", Ty::Str),
            req("options", Ty::StrList),
            opt("opts", Ty::Record(SELECT_FIELDS)),
        ],
        "choices (numbered on the REPL; an editor's permission request) -> the chosen option or nil",
    ),
    function(
        Object::Ui,
        "input", ui::input,
        &[
            req("prompt", Ty::Str),
            opt("options", Ty::Record(INPUT_FIELDS)),
        ],
        "ask for a line -> the text, the default, or nil",
    ),
    function(
        Object::Ui,
        "editor", ui::editor,
        &[opt("initial", Ty::Str)],
        "edit text in $VISUAL / $EDITOR -> the text saved or nil",
    ),
    function(
        Object::Ui,
        "set_status", ui::set_status,
        &[req("key", Ty::Str), opt("text", Ty::Str)],
        "show a short status text above the prompt (nil clears it)",
    ),
    function(
        Object::Ui,
        "set_plan", ui::set_plan,
        &[req("entries", Ty::Table)],
        "show the plan: a list of {content, status?, priority?} (an editor's plan; a checklist on the REPL)",
    ),
    function(
        Object::Ui,
        "set_title", ui::set_title,
        &[req("text", Ty::Str)],
        "set the terminal's title",
    ),
    function(
        Object::Ui,
        "notify", call::notify,
        &[req("message", Ty::Any)],
        "a line shown to the user",
    ),
];
