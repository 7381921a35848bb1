//! A call of a function member ([`call`]): its arguments checked against its row's
//! parameters (`checked`), then its row's act run. The acts of the registrations (`api.on`,
//! `api.tool`, ...), of messages and processes, and of `ctx`'s run members are here.

use std::sync::Arc;

use serde_json::{json, Value as Json};

use super::{checked, Arg, Call, Member, Ret, Shape};
use crate::extensions::api::{ApiLink, ToolDef};
use crate::extensions::script::CallbackId;
use crate::hooks::EventKind;
use crate::vocab::run::RunContext;

/// Calls function member `member` with `values` for the extension behind `link`; `ctx` is
/// the context the call was made in (for `ctx.*` members). The error is the message to raise
/// at the script's line; the engine then forgets the callbacks the arguments hold.
pub fn call(
    link: &ApiLink,
    member: &'static Member,
    values: Vec<Arg>,
    ctx: Option<&Arc<RunContext>>,
) -> Result<Ret, String> {
    let Shape::Function(_, act) = member.shape else {
        return Err(format!("{} is not a function", member.full_name()));
    };
    let args = checked(member, values)?;
    let what = args.what.clone();
    let mut call = Call { link, args, ctx };
    // An error that names its member already (`api.tool 'x': ...`) is raised as it is.
    act(&mut call).map_err(|e| match e.starts_with(&what) {
        true => e,
        false => format!("{what}: {e}"),
    })
}

/// `api.on(event, handler)`.
pub(super) fn on(c: &mut Call<'_>) -> Result<Ret, String> {
    let event = c.args.take("event").text();
    let cb = c.args.take("handler").callback();
    if EventKind::parse(&event).is_none() {
        let names: Vec<&str> = EventKind::ALL.iter().map(|k| k.name()).collect();
        return Err(format!(
            "unknown event '{event}'; the events are: {}",
            names.join(", ")
        ));
    }
    let id = c.link.on(&event, cb)?;
    Ok(Ret::Handle { id, cb })
}

/// `api.tool{...}`.
pub(super) fn tool(c: &mut Call<'_>) -> Result<Ret, String> {
    let (def, cb) = tool_def(c.args.take("definition"))?;
    let id = c.link.tool(def, cb)?;
    Ok(Ret::Handle { id, cb })
}

/// `api.command(name, handler, description?)`.
pub(super) fn command(c: &mut Call<'_>) -> Result<Ret, String> {
    let name = c.args.take("name").text();
    let cb = c.args.take("handler").callback();
    let description = c.args.take("description").opt_text().unwrap_or_default();
    let id = c.link.command(&name, &description, cb)?;
    Ok(Ret::Handle { id, cb })
}

/// `api.send_message(text, {deliver_as?})`.
pub(super) fn send_message(c: &mut Call<'_>) -> Result<Ret, String> {
    let text = c.args.take("text").text();
    let deliver_as = c
        .args
        .take("options")
        .field("deliver_as")
        .and_then(Arg::opt_text);
    c.link.send_message(&text, deliver_as.as_deref())?;
    Ok(Ret::Nil)
}

/// `api.read_dir(path)`.
pub(super) fn read_dir(c: &mut Call<'_>) -> Result<Ret, String> {
    c.link
        .read_dir(&c.args.take("path").text())
        .map(|names| Ret::Data(json!(names)))
}

/// `api.log(message)`.
pub(super) fn log(c: &mut Call<'_>) -> Result<Ret, String> {
    c.link.log(&c.args.take("message").display());
    Ok(Ret::Nil)
}

/// `api.notify(message)` and `ctx.ui.notify(message)`.
pub(super) fn notify(c: &mut Call<'_>) -> Result<Ret, String> {
    c.link.notify(&c.args.take("message").display());
    Ok(Ret::Nil)
}

/// `ctx.progress(message)` and `ctx.update(message)`: nothing outside a run.
pub(super) fn progress(c: &mut Call<'_>) -> Result<Ret, String> {
    if let Some(ctx) = c.ctx {
        let message = c.args.take("message").display();
        ctx.report(crate::vocab::run::UpdateKind::Progress, &message);
    }
    Ok(Ret::Nil)
}

/// `ctx.abort()`: cancels the run that made the call (or the one running now).
pub(super) fn abort(c: &mut Call<'_>) -> Result<Ret, String> {
    if let Some(ctx) = c.ctx.cloned().or_else(|| c.link.current()) {
        ctx.cancel.cancel();
    }
    Ok(Ret::Nil)
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
pub(super) fn renderer(c: &mut Call<'_>) -> Result<Ret, String> {
    let (link, args) = (c.link, &mut c.args);
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

/// `api.exec(cmd, args?, {timeout_ms?, cwd?}) -> {code, stdout, stderr, timed_out}`.
pub(super) fn exec(c: &mut Call<'_>) -> Result<Ret, String> {
    let (link, args) = (c.link, &mut c.args);
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
