//! What the function members of the script API do ([`call`]): each checks its arguments
//! against its parameters (`checked`), then acts through the extension's [`ApiLink`].

use std::sync::Arc;

use serde_json::{json, Value as Json};

use super::{checked, Arg, Args, Member, Object, Ret};
use crate::extensions::api::{ApiLink, CallbackId, ToolDef};
use crate::hooks::EventKind;
use crate::run::RunContext;

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
    match (member.object, member.name) {
        (Object::Api, "on") => {
            let event = text(args.take("event"));
            let cb = callback(args.take("handler"));
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
            let name = text(args.take("name"));
            let cb = callback(args.take("handler"));
            let description = opt_text(args.take("description")).unwrap_or_default();
            let id = link.command(&name, &description, cb).map_err(fail)?;
            Ok(Ret::Handle { id, cb })
        }
        (Object::Api, "renderer") => renderer(link, &mut args).map_err(fail),
        (Object::Api, "send_message") => {
            let text = text(args.take("text"));
            let deliver_as = field(args.take("options"), "deliver_as").and_then(opt_text);
            link.send_message(&text, deliver_as.as_deref())
                .map_err(fail)?;
            Ok(Ret::Nil)
        }
        (Object::Api, "exec") => exec(link, &mut args).map_err(fail),
        (Object::Api, "read_dir") => link
            .read_dir(&text(args.take("path")))
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
        (Object::Ui, _) => ui(link, member.name, &mut args).map_err(fail),
        (Object::Ctx, "progress" | "update") => {
            if let Some(ctx) = ctx {
                let message = args.take("message").display();
                ctx.report(crate::run::UpdateKind::Progress, &message);
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
fn ui(link: &ApiLink, name: &str, args: &mut Args<'_>) -> Result<Ret, String> {
    match name {
        "confirm" => {
            let question = text(args.take("question"));
            let timeout = timeout_ms(args.take("opts"))?;
            Ok(Ret::Bool(link.confirm_within(&question, timeout)))
        }
        "select" => {
            let title = text(args.take("title"));
            let options = strings(args.take("options"));
            let timeout = timeout_ms(args.take("opts"))?;
            Ok(opt_string(link.select(&title, &options, timeout)))
        }
        "input" => {
            let prompt = text(args.take("prompt"));
            let options = args.take("options");
            let default = field(options.clone(), "default").and_then(opt_text);
            let timeout = timeout_ms(options)?;
            Ok(opt_string(link.input(&prompt, default, timeout)))
        }
        "editor" => Ok(opt_string(link.editor(&text(args.take("initial"))))),
        "set_status" => {
            let key = format!("{}\u{0}{}", link.info.name, text(args.take("key")));
            let value = opt_text(args.take("text"));
            link.host()
                .control
                .set_status(&key, value.as_deref())
                .map(|()| Ret::Nil)
        }
        "set_title" => {
            link.host().control.set_title(&text(args.take("text")));
            Ok(Ret::Nil)
        }
        _ => Err("is not a function".into()),
    }
}

fn text(arg: Arg) -> String {
    opt_text(arg).unwrap_or_default()
}

fn opt_text(arg: Arg) -> Option<String> {
    match arg {
        Arg::Str(s) => Some(s),
        Arg::Int(i) => Some(i.to_string()),
        Arg::Num(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A list of strings argument.
fn strings(arg: Arg) -> Vec<String> {
    match arg {
        Arg::Data(Json::Array(items)) => items
            .into_iter()
            .map(|v| match v {
                Json::String(s) => s,
                other => other.to_string(),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// `{timeout_ms = N}` of a dialog: none, or a positive duration.
fn timeout_ms(options: Arg) -> Result<Option<std::time::Duration>, String> {
    match field(options, "timeout_ms").and_then(int) {
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

fn callback(arg: Arg) -> CallbackId {
    match arg {
        Arg::Func(cb) => cb,
        _ => 0,
    }
}

fn opt_callback(arg: Arg) -> Option<CallbackId> {
    match arg {
        Arg::Func(cb) => Some(cb),
        _ => None,
    }
}

fn int(arg: Arg) -> Option<i64> {
    match arg {
        Arg::Int(i) => Some(i),
        Arg::Num(n) if n.fract() == 0.0 => Some(n as i64),
        _ => None,
    }
}

/// Field `name` of a record argument.
fn field(arg: Arg, name: &str) -> Option<Arg> {
    match arg {
        Arg::Record(fields) => fields.into_iter().find(|(k, _)| k == name).map(|(_, v)| v),
        _ => None,
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
    let name = text(take_field(&mut fields, "name"));
    let cb = callback(take_field(&mut fields, "execute"));
    let fail = |e: String| format!("api.tool '{name}': {e}");
    // Left out or empty: the tool takes no arguments.
    let parameters = match take_field(&mut fields, "parameters") {
        Arg::Data(mut schema) if schema.as_object().is_some_and(|o| !o.is_empty()) => {
            fix_schema_arrays(&mut schema);
            schema
        }
        _ => json!({"type": "object", "properties": {}}),
    };
    let timeout_ms = match int(take_field(&mut fields, "timeout_ms")) {
        Some(ms) if ms > 0 => Some(ms as u64),
        Some(_) => return Err(fail("'timeout_ms' must be a positive integer".into())),
        None => None,
    };
    let def = ToolDef {
        description: opt_text(take_field(&mut fields, "description")).unwrap_or_default(),
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
    let tool = text(args.take("tool"));
    let renderer = args.take("renderer");
    let call = field(renderer.clone(), "call").and_then(opt_callback);
    let result = field(renderer, "result").and_then(opt_callback);
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
    use crate::mcp::script::Request;
    // An empty Lua table may arrive as `[]`: no arguments.
    let data = |arg: Arg| match arg {
        Arg::Data(v @ Json::Object(_)) => v,
        _ => json!({}),
    };
    let request = match name {
        "servers" => Request::Servers,
        "tools" => Request::Tools {
            server: text(args.take("server")),
        },
        "call" | "call_tool" => Request::Call {
            server: text(args.take("server")),
            tool: text(args.take("tool")),
            args: data(args.take("arguments")),
        },
        "read_resource" => Request::ReadResource {
            server: text(args.take("server")),
            uri: text(args.take("uri")),
        },
        _ => Request::Prompt {
            server: text(args.take("server")),
            name: text(args.take("name")),
            args: data(args.take("arguments")),
        },
    };
    link.mcp(request).map(Ret::Data)
}

/// `api.exec(cmd, args?, {timeout_ms?, cwd?}) -> {code, stdout, stderr, timed_out}`.
fn exec(link: &ApiLink, args: &mut Args<'_>) -> Result<Ret, String> {
    let cmd = text(args.take("command"));
    let argv: Vec<String> = match args.take("arguments") {
        Arg::Data(Json::Array(items)) => items
            .into_iter()
            .map(|v| match v {
                Json::String(s) => s,
                other => other.to_string(),
            })
            .collect(),
        _ => Vec::new(),
    };
    let options = args.take("options");
    let timeout_ms = match field(options.clone(), "timeout_ms").and_then(int) {
        Some(ms) if ms < 0 => return Err("'timeout_ms' must not be negative".into()),
        other => other.map(|ms| ms as u64),
    };
    let cwd = field(options, "cwd").and_then(opt_text);
    let r = link.exec(&cmd, &argv, timeout_ms, cwd.as_deref())?;
    Ok(Ret::Data(json!({
        "code": r.code,
        "stdout": r.stdout,
        "stderr": r.stderr,
        "timed_out": r.timed_out,
    })))
}
