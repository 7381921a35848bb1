//! The members that reach the app rather than a registry of one extension: the host control
//! of `ctx` (`is_idle`, `shutdown`, `reload`, `new_session`, `system_prompt`,
//! `context_usage`), the session (`ctx.session.*`, `api.append_entry`) and the tools and
//! commands as data (`api.tools`, `api.set_active_tools`, `api.commands`), and what calls a
//! script outside any run (`api.events.*`, `api.timer`, `api.watch`). Requests that
//! change the app are carried out once the call that made them has ended (see
//! `control.rs`).

use std::io::{BufRead, BufReader};
use std::sync::Arc;

use serde_json::{json, Value as Json};

use super::{Arg, Args, Member, Object, Ret};
use crate::agent::control::{Pending, Request, MAX_ENTRY_BYTES, MAX_NAME_BYTES};
use crate::extensions::api::ApiLink;
use crate::extensions::background::{MAX_EVENT_NAME, MAX_TIMER_MS, MIN_REPEAT_MS};
use crate::extensions::registrar::Background;
use crate::vocab::run::RunContext;

/// A member that returns nothing.
fn nil(done: Result<(), String>) -> Result<Ret, String> {
    done.map(|()| Ret::Nil)
}

/// Calls the member; the error is the message to raise (without the member's name).
pub(super) fn call(
    link: &ApiLink,
    member: &'static Member,
    args: &mut Args<'_>,
    ctx: Option<&Arc<RunContext>>,
) -> Result<Ret, String> {
    match (member.object, member.name) {
        (Object::Ctx | Object::Session, _) | (Object::Api, "append_entry" | "project_trusted") => {
            control_member(link, member, args)
        }
        (Object::Api, "timer" | "watch") | (Object::Events, _) => {
            background_member(link, member, args, ctx)
        }
        _ => registry_member(link, member, args),
    }
}

/// `ctx`'s host control, `ctx.session.*` and `api.append_entry`.
fn control_member(
    link: &ApiLink,
    member: &'static Member,
    args: &mut Args<'_>,
) -> Result<Ret, String> {
    let host = link.host();
    let control = &host.control;
    match (member.object, member.name) {
        (Object::Ctx, "is_idle") => Ok(Ret::Bool(control.is_idle())),
        (Object::Api, "project_trusted") => Ok(Ret::Bool(control.project_trusted())),
        (Object::Ctx, "shutdown") => nil(control.request(Request::Shutdown)),
        (Object::Ctx, "reload") => nil(control.request(Request::Reload)),
        (Object::Ctx, "new_session") => nil(control.request(Request::NewSession)),
        (Object::Ctx, "system_prompt") => Ok(Ret::Data(json!(control.system_prompt()))),
        (Object::Ctx, "context_usage") => Ok(Ret::Data(json!(control.context_usage()))),
        (Object::Session, "entries") => entries(link).map(Ret::Data),
        (Object::Session, "name") => Ok(Ret::Data(
            control.session_name().map_or(Json::Null, Json::String),
        )),
        (Object::Session, "set_name") => {
            // A name is kept in the session file: its control characters are dropped (they
            // would only be shown as `^[` wherever the name is printed).
            let text = args.take("name").text();
            let kept = text.replace(|c: char| c.is_control() && !matches!(c, '\n' | '\t'), "");
            let name = crate::agent::control::one_line(&kept);
            if name.is_empty() || name.len() > MAX_NAME_BYTES {
                return Err(format!(
                    "the name must be 1 to {MAX_NAME_BYTES} bytes of text on one line"
                ));
            }
            nil(control.append(Pending::Name(name)))
        }
        (Object::Api, "append_entry") => {
            let kind = args.take("kind").text();
            let valid = |c: char| c.is_ascii_alphanumeric() || "_-.:".contains(c);
            if kind.is_empty() || kind.len() > MAX_NAME_BYTES || !kind.chars().all(valid) {
                return Err(format!(
                    "the kind must be 1 to {MAX_NAME_BYTES} letters, digits or _ - . : \
                     (not {kind:?})"
                ));
            }
            let data = args
                .take("data")
                .into_data("an entry may hold", MAX_ENTRY_BYTES)?;
            nil(control.append(Pending::Custom { kind, data }))
        }
        _ => Err("is not a function".into()),
    }
}

/// The tools, commands, flags, models and providers as data.
fn registry_member(
    link: &ApiLink,
    member: &'static Member,
    args: &mut Args<'_>,
) -> Result<Ret, String> {
    let host = link.host();
    let control = &host.control;
    match (member.object, member.name) {
        (Object::Api, "tools") => Ok(Ret::Data(tools(&host.tools))),
        (Object::Api, "set_active_tools") => {
            // nil: every tool again; an empty table: none.
            nil(host.tools.set_only(args.take("names").strings()))
        }
        (Object::Api, "commands") => Ok(Ret::Data(commands(&host.commands))),
        (Object::Api, "builtin_tool") => {
            let name = args.take("name").text();
            let entry = host.tools.builtin(&name).ok_or_else(|| {
                format!(
                    "there is no built-in tool '{name}'; they are: {}",
                    crate::tools::BUILTINS.join(", ")
                )
            })?;
            let spec = entry.spec();
            Ok(Ret::Builtin {
                name: spec.name.clone(),
                spec: json!({
                    "name": spec.name,
                    "description": spec.description,
                    "parameters": spec.parameters,
                }),
            })
        }
        (Object::Builtin, "execute") => {
            let name = args.take("tool").text();
            let arguments = match args.take("arguments") {
                Arg::Data(v @ Json::Object(_)) => v,
                _ => json!({}),
            };
            let out = link.run_builtin(&name, arguments)?;
            Ok(Ret::Data(
                json!({"content": out.content, "is_error": out.is_error}),
            ))
        }
        (Object::Api, "flag") => {
            let flag = flag(args.take("definition"), &link.info.name)?;
            control.declare_flag(flag).map(|()| Ret::Nil)
        }
        (Object::Api, "set_model") => {
            let model = args.take("model").text();
            if model.trim().is_empty() || model.len() > MAX_NAME_BYTES {
                return Err(format!("the model must be 1 to {MAX_NAME_BYTES} bytes"));
            }
            let provider = match args.take("options").field("provider") {
                Some(p @ (Arg::Str(_) | Arg::Int(_) | Arg::Num(_))) => Some(p.text()),
                _ => None,
            };
            nil(control.request(Request::SetModel { model, provider }))
        }
        (Object::Api, "provider") => {
            let provider = super::providers::from_arg(args.take("definition"), &link.info.name)?;
            control.add_provider(&link.info.name, provider);
            Ok(Ret::Nil)
        }
        _ => Err("is not a function".into()),
    }
}

/// Timers, watches and events between extensions.
fn background_member(
    link: &ApiLink,
    member: &'static Member,
    args: &mut Args<'_>,
    ctx: Option<&Arc<RunContext>>,
) -> Result<Ret, String> {
    let host = link.host();
    match (member.object, member.name) {
        (Object::Api, "timer") => {
            let ms = match args.take("ms") {
                Arg::Int(i) => i,
                Arg::Num(n) => n as i64,
                _ => 0,
            };
            let cb = args.take("handler").callback();
            let repeat = matches!(args.take("options").field("repeat"), Some(Arg::Bool(true)));
            let min = if repeat { MIN_REPEAT_MS as i64 } else { 0 };
            if ms < min || ms > MAX_TIMER_MS as i64 {
                return Err(format!(
                    "ms must be {min} to {MAX_TIMER_MS} (a day){}",
                    if repeat { " for a repeating timer" } else { "" }
                ));
            }
            let what = Background::Timer {
                ms: ms as u64,
                repeat,
            };
            let id = link.background(what, cb)?;
            Ok(Ret::Handle { id, cb })
        }
        (Object::Api, "watch") => {
            let path = link.cwd().join(args.take("path").text());
            let cb = args.take("handler").callback();
            std::fs::metadata(&path)
                .map_err(|e| format!("cannot watch {}: {e}", path.display()))?;
            let id = link.background(Background::Watch(path), cb)?;
            Ok(Ret::Handle { id, cb })
        }
        (Object::Events, "on") => {
            let name = event_name(args.take("name"))?;
            let cb = args.take("handler").callback();
            let id = link.background(Background::Event(name), cb)?;
            Ok(Ret::Handle { id, cb })
        }
        (Object::Events, "emit") => {
            let name = event_name(args.take("name"))?;
            let data = args
                .take("data")
                .into_data("an event may carry", MAX_ENTRY_BYTES)?;
            let ctx = ctx.cloned().unwrap_or_else(|| host.session());
            nil(host.background.emit(&name, data, ctx))
        }
        _ => Err("is not a function".into()),
    }
}

/// An event name between extensions: 1 to 200 bytes of text.
fn event_name(arg: Arg) -> Result<String, String> {
    let name = arg.text();
    if name.is_empty() || name.len() > MAX_EVENT_NAME {
        return Err(format!("the name must be 1 to {MAX_EVENT_NAME} bytes long"));
    }
    Ok(name)
}

/// `api.flag{name, type, default?, description?}` as declared.
fn flag(arg: Arg, extension: &str) -> Result<crate::config::extflags::Declared, String> {
    use crate::config::extflags::{Declared, Kind};
    let field = |name: &str| arg.clone().field(name);
    let name = field("name").unwrap_or(Arg::Nil).text();
    let valid = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_';
    if name.is_empty() || name.len() > 64 || !name.chars().all(valid) || name.starts_with('-') {
        return Err(format!(
            "the name must be 1 to 64 lowercase letters, digits, '-' or '_' (not {name:?})"
        ));
    }
    if crate::config::extflags::own_names().contains(&name) {
        return Err(format!("--{name} is one of mypi's own options"));
    }
    let kind_text = field("type").unwrap_or(Arg::Nil).text();
    let kind = Kind::parse(&kind_text)
        .ok_or_else(|| format!("type must be \"bool\" or \"string\", not {kind_text:?}"))?;
    let default = match field("default") {
        None | Some(Arg::Nil) => None,
        Some(Arg::Bool(b)) if kind == Kind::Bool => Some(json!(b)),
        Some(a @ (Arg::Str(_) | Arg::Int(_) | Arg::Num(_))) if kind == Kind::String => {
            Some(json!(a.text()))
        }
        Some(other) => {
            return Err(format!(
                "the default of a {kind_text} option cannot be a {}",
                other.type_name()
            ))
        }
    };
    Ok(Declared {
        name,
        kind,
        default,
        description: field("description").unwrap_or(Arg::Nil).text(),
        extension: extension.to_string(),
    })
}

/// `ctx.session.entries()`: every line of the session file after its header (as stored:
/// `{type, ts, ...}`), then the lines waiting to be written. A torn line is left out. The
/// whole must fit in what a script may be handed.
fn entries(link: &ApiLink) -> Result<Json, String> {
    let host = link.host();
    let max = host.limits.max_value_bytes;
    let mut out = Vec::new();
    let mut size = 0usize;
    if let Some(path) = host.control.session_file() {
        let file = std::fs::File::open(&path)
            .map_err(|e| format!("cannot read the session file {}: {e}", path.display()))?;
        for line in BufReader::new(file).split(b'\n').skip(1) {
            let line = line.map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            size += line.len();
            if size > max {
                return Err(format!(
                    "the session's entries are more than the {} a script may be handed \
                     (MYPI_EXT_VALUE_MB)",
                    crate::extensions::crossing::mib(max)
                ));
            }
            if let Ok(v) = serde_json::from_slice::<Json>(&line) {
                out.push(v);
            }
        }
    }
    for p in host.control.pending() {
        out.push(match p {
            Pending::Custom { kind, data } => json!({"type": "custom", "kind": kind, "data": data}),
            Pending::Name(name) => json!({"type": "session_info", "name": name}),
        });
    }
    Ok(Json::Array(out))
}

/// `api.tools()`: every tool by name (the newest registration of each), sorted.
fn tools(registry: &crate::tools::ToolRegistry) -> Json {
    Json::Array(
        registry
            .all()
            .into_iter()
            .map(|(e, active)| {
                json!({
                    "name": e.spec().name,
                    "description": e.spec().description,
                    "owner": e.owner.to_string(),
                    "active": active,
                })
            })
            .collect(),
    )
}

/// `api.commands()`: every slash command, sorted by name.
fn commands(table: &crate::commands::CommandTable) -> Json {
    let mut all = table.all();
    all.sort_by(|a, b| a.name.cmp(&b.name));
    Json::Array(
        all.into_iter()
            .map(|c| {
                json!({
                    "name": c.name,
                    "description": c.description,
                    "owner": c.owner.to_string(),
                })
            })
            .collect(),
    )
}
