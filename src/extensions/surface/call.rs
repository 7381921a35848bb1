//! What the function members of the script API do ([`call`]): each checks its arguments
//! against its parameters (`checked`), then acts through the extension's [`ApiLink`].

use std::sync::Arc;

use serde_json::{json, Value as Json};

use super::{checked, Arg, Args, Member, Object, Ret};
use crate::extensions::api::{ApiLink, ToolDef};
use crate::extensions::script::CallbackId;
use crate::hooks::EventKind;
use crate::vocab::run::RunContext;

/// Whether `member` asks the user or the app (a dialog, leaving, reloading): refused while
/// extensions are only checked (the members that run a process, a model or an MCP call are
/// refused by [`ApiLink`] once their arguments are read).
fn acts(member: &Member) -> bool {
    match member.object {
        Object::Ui => matches!(member.name, "confirm" | "select" | "input" | "editor"),
        Object::Ctx => matches!(member.name, "shutdown" | "reload" | "new_session"),
        _ => false,
    }
}

/// Calls function member `member` with `values` for the extension behind `link`; `ctx` is
/// the context the call was made in (for `ctx.*` members). The error is the message to raise
/// at the script's line; the engine then forgets the callbacks the arguments hold.
pub fn call(
    link: &ApiLink,
    member: &'static Member,
    values: Vec<Arg>,
    ctx: Option<&Arc<RunContext>>,
) -> Result<Ret, String> {
    let mut args = checked(member, values)?;
    let what = args.what.clone();
    let fail = |e: String| format!("{what}: {e}");
    if acts(member) && link.host().checking {
        return Err(fail(crate::extensions::services::CHECKING.to_string()));
    }
    match (member.object, member.name) {
        (Object::Api, "on") => {
            let event = args.take("event").text();
            let cb = args.take("handler").callback();
            if EventKind::parse(&event).is_none() {
                let names: Vec<&str> = EventKind::ALL.iter().map(|k| k.name()).collect();
                return Err(fail(format!(
                    "unknown event '{event}'; the events are: {}",
                    names.join(", ")
                )));
            }
            let id = link.on(&event, cb).map_err(fail)?;
            Ok(Ret::Handle { id, cb })
        }
        (Object::Api, "tool") => {
            let (def, cb) = tool_def(args.take("definition"))?;
            let id = link.tool(def, cb).map_err(fail)?;
            Ok(Ret::Handle { id, cb })
        }
        (Object::Api, "command") => {
            let name = args.take("name").text();
            let cb = args.take("handler").callback();
            let description = args.take("description").opt_text().unwrap_or_default();
            let id = link.command(&name, &description, cb).map_err(fail)?;
            Ok(Ret::Handle { id, cb })
        }
        (Object::Api, "renderer") => renderer(link, &mut args).map_err(fail),
        (Object::Api, "skills" | "skill") => {
            super::skills::call(link, member.name, &mut args).map_err(fail)
        }
        (Object::Api, "send_message") => {
            let text = args.take("text").text();
            let deliver_as = args
                .take("options")
                .field("deliver_as")
                .and_then(Arg::opt_text);
            link.send_message(&text, deliver_as.as_deref())
                .map_err(fail)?;
            Ok(Ret::Nil)
        }
        (Object::Api, "exec") => exec(link, &mut args).map_err(fail),
        (Object::Api, "read_dir") => link
            .read_dir(&args.take("path").text())
            .map(|names| Ret::Data(json!(names)))
            .map_err(fail),
        (Object::Api, "run_agent") => super::agents::run_agent(link, &mut args).map_err(fail),
        (Object::Api, "run_agents") => super::agents::run_agents(link, &mut args).map_err(fail),
        (Object::Api, "complete") => super::agents::complete(link, &mut args).map_err(fail),
        (Object::Mcp, _) => mcp(link, member.name, &mut args).map_err(fail),
        (Object::Api, "log") => {
            link.log(&args.take("message").display());
            Ok(Ret::Nil)
        }
        (Object::Api | Object::Ui, "notify") => {
            link.notify(&args.take("message").display());
            Ok(Ret::Nil)
        }
        (Object::Ui, _) => ui(link, member.name, &mut args, ctx).map_err(fail),
        (Object::Ctx, "progress" | "update") => {
            if let Some(ctx) = ctx {
                let message = args.take("message").display();
                ctx.report(crate::vocab::run::UpdateKind::Progress, &message);
            }
            Ok(Ret::Nil)
        }
        (Object::Ctx, "abort") => {
            if let Some(ctx) = ctx.cloned().or_else(|| link.current()) {
                ctx.cancel.cancel();
            }
            Ok(Ret::Nil)
        }
        _ => super::host::call(link, member, &mut args, ctx).map_err(fail),
    }
}

/// `ctx.ui.*` (but `notify`): the dialogs and the screen.
fn ui(
    link: &ApiLink,
    name: &str,
    args: &mut Args<'_>,
    ctx: Option<&Arc<RunContext>>,
) -> Result<Ret, String> {
    match name {
        "confirm" => {
            let question = args.take("question").text();
            let timeout = timeout_ms(args.take("opts"))?;
            Ok(Ret::Bool(link.confirm_within(&question, timeout)))
        }
        "select" => {
            let title = args.take("title").text();
            let options = args.take("options").strings().unwrap_or_default();
            let timeout = timeout_ms(args.take("opts"))?;
            Ok(opt_string(link.select(&title, &options, timeout)))
        }
        "input" => {
            let prompt = args.take("prompt").text();
            let options = args.take("options");
            let default = options.clone().field("default").and_then(Arg::opt_text);
            let timeout = timeout_ms(options)?;
            Ok(opt_string(link.input(&prompt, default, timeout)))
        }
        "editor" => Ok(opt_string(link.editor(&args.take("initial").text()))),
        "set_status" => {
            let key = crate::agent::control::status_key(&link.info.name, &args.take("key").text());
            let value = args.take("text").opt_text();
            link.host()
                .control
                .set_status(&key, value.as_deref())
                .map(|()| Ret::Nil)
        }
        "set_plan" => {
            let entries = args.take("entries").into_json();
            let entries = crate::vocab::protocol::PlanEntry::list(&entries)?;
            let event = crate::vocab::protocol::AgentEvent::Plan { entries };
            link.host().control.show(event, ctx.map(|c| &**c));
            Ok(Ret::Nil)
        }
        "set_title" => {
            link.host().control.set_title(&args.take("text").text());
            Ok(Ret::Nil)
        }
        _ => Err("is not a function".into()),
    }
}

/// `{timeout_ms = N}` of a dialog: none, or a positive duration.
fn timeout_ms(options: Arg) -> Result<Option<std::time::Duration>, String> {
    match options.field("timeout_ms").and_then(Arg::int) {
        None => Ok(None),
        Some(ms) if ms > 0 => Ok(Some(std::time::Duration::from_millis(ms as u64))),
        Some(_) => Err("'timeout_ms' must be a positive integer".into()),
    }
}

fn opt_string(s: Option<String>) -> Ret {
    match s {
        Some(s) => Ret::Data(Json::String(s)),
        None => Ret::Nil,
    }
}

/// Takes field `name` out of a record's fields.
fn take_field(fields: &mut Vec<(String, Arg)>, name: &str) -> Arg {
    match fields.iter().position(|(k, _)| k == name) {
        Some(i) => fields.remove(i).1,
        None => Arg::Nil,
    }
}

/// `api.tool{...}` as a [`ToolDef`] and its `execute` callback.
fn tool_def(arg: Arg) -> Result<(ToolDef, CallbackId), String> {
    let Arg::Record(mut fields) = arg else {
        return Err("api.tool: the definition must be a table".into());
    };
    let name = take_field(&mut fields, "name").text();
    let cb = take_field(&mut fields, "execute").callback();
    let fail = |e: String| format!("api.tool '{name}': {e}");
    // Left out or empty: the tool takes no arguments.
    let parameters = match take_field(&mut fields, "parameters") {
        Arg::Data(mut schema) if schema.as_object().is_some_and(|o| !o.is_empty()) => {
            fix_schema_arrays(&mut schema);
            schema
        }
        _ => json!({"type": "object", "properties": {}}),
    };
    let timeout_ms = match take_field(&mut fields, "timeout_ms").int() {
        Some(ms) if ms > 0 => Some(ms as u64),
        Some(_) => return Err(fail("'timeout_ms' must be a positive integer".into())),
        None => None,
    };
    let def = ToolDef {
        description: take_field(&mut fields, "description")
            .opt_text()
            .unwrap_or_default(),
        parallel_safe: matches!(take_field(&mut fields, "parallel_safe"), Arg::Bool(true)),
        parameters,
        timeout_ms,
        name: name.clone(),
    };
    check_tool(&def).map_err(fail)?;
    Ok((def, cb))
}

/// Checks a tool definition before it is offered to the model.
fn check_tool(def: &ToolDef) -> Result<(), String> {
    if def.name.is_empty()
        || !def
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err("the name must be letters, digits, '_' or '-'".into());
    }
    if def.parameters.get("type").and_then(Json::as_str) != Some("object") {
        return Err("parameters must be a JSON Schema object with type = \"object\"".into());
    }
    jsonschema::validator_for(&def.parameters)
        .map(|_| ())
        .map_err(|e| format!("parameters are not a valid JSON Schema: {e}"))
}

/// In a JSON Schema, keywords that hold arrays (`required`, `enum`, ...) written as empty
/// tables came out as `{}` (Lua cannot tell an empty list from an empty map): make them `[]`.
fn fix_schema_arrays(v: &mut Json) {
    const ARRAYS: [&str; 6] = ["required", "enum", "anyOf", "oneOf", "allOf", "prefixItems"];
    match v {
        Json::Object(map) => {
            for (k, item) in map.iter_mut() {
                if ARRAYS.contains(&k.as_str()) && item.as_object().is_some_and(|o| o.is_empty()) {
                    *item = Json::Array(Vec::new());
                } else {
                    fix_schema_arrays(item);
                }
            }
        }
        Json::Array(items) => items.iter_mut().for_each(fix_schema_arrays),
        _ => {}
    }
}

/// `api.renderer(tool, {call?, result?})`: at least one function; the handle forgets both.
fn renderer(link: &ApiLink, args: &mut Args<'_>) -> Result<Ret, String> {
    let tool = args.take("tool").text();
    let renderer = args.take("renderer");
    let call = renderer.clone().field("call").and_then(Arg::opt_callback);
    let result = renderer.field("result").and_then(Arg::opt_callback);
    if tool.is_empty() {
        return Err("the tool's name is empty".into());
    }
    if call.is_none() && result.is_none() {
        return Err("the renderer needs a 'call' or a 'result' function (or both)".into());
    }
    let id = link.renderer(&tool, call, result)?;
    let cbs = call.into_iter().chain(result).collect();
    Ok(Ret::Handles { id, cbs })
}

/// `api.mcp.*`: plain data back, or the server's message raised.
fn mcp(link: &ApiLink, name: &str, args: &mut Args<'_>) -> Result<Ret, String> {
    use crate::vocab::mcp::McpRequest as Request;
    // An empty Lua table may arrive as `[]`: no arguments.
    let data = |arg: Arg| match arg {
        Arg::Data(v @ Json::Object(_)) => v,
        _ => json!({}),
    };
    let request = match name {
        "servers" => Request::Servers,
        "tools" => Request::Tools {
            server: args.take("server").text(),
        },
        "call" | "call_tool" => Request::Call {
            server: args.take("server").text(),
            tool: args.take("tool").text(),
            args: data(args.take("arguments")),
        },
        "read_resource" => Request::ReadResource {
            server: args.take("server").text(),
            uri: args.take("uri").text(),
        },
        _ => Request::Prompt {
            server: args.take("server").text(),
            name: args.take("name").text(),
            args: data(args.take("arguments")),
        },
    };
    link.mcp(request).map(Ret::Data)
}

/// `api.exec(cmd, args?, {timeout_ms?, cwd?}) -> {code, stdout, stderr, timed_out}`.
fn exec(link: &ApiLink, args: &mut Args<'_>) -> Result<Ret, String> {
    let cmd = args.take("command").text();
    let argv = args.take("arguments").strings().unwrap_or_default();
    let options = args.take("options");
    let timeout_ms = match options.clone().field("timeout_ms").and_then(Arg::int) {
        Some(ms) if ms < 0 => return Err("'timeout_ms' must not be negative".into()),
        other => other.map(|ms| ms as u64),
    };
    let cwd = options.field("cwd").and_then(Arg::opt_text);
    let r = link.exec(&cmd, &argv, timeout_ms, cwd.as_deref())?;
    Ok(Ret::Data(json!({
        "code": r.code,
        "stdout": r.stdout,
        "stderr": r.stderr,
        "timed_out": r.timed_out,
    })))
}
