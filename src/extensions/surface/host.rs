//! The members that reach the app rather than a registry of one extension: the host control
//! of `ctx` (`is_idle`, `shutdown`, `reload`, `new_session`, `system_prompt`,
//! `context_usage`), the session (`ctx.session.*`, `api.append_entry`) and the tools and
//! commands as data (`api.tools`, `api.set_active_tools`, `api.commands`), and what calls a
//! script outside any run (`api.events.*`, `api.timer`, `api.watch`). Requests that
//! change the app are carried out once the call that made them has ended (see
//! `control.rs`).

use std::io::{BufRead, BufReader};

use serde_json::{json, Value as Json};

use super::{Arg, Call, Ret};
use crate::agent::control::{Pending, Request, MAX_ENTRY_BYTES, MAX_NAME_BYTES};
use crate::extensions::background::{MAX_EVENT_NAME, MAX_TIMER_MS, MIN_REPEAT_MS};
use crate::extensions::registrar::Background;

/// A member that returns nothing.
fn nil(done: Result<(), String>) -> Result<Ret, String> {
    done.map(|()| Ret::Nil)
}

/// `ctx.is_idle()`.
pub(super) fn is_idle(c: &mut Call<'_>) -> Result<Ret, String> {
    Ok(Ret::Bool(c.link.host().control.is_idle()))
}

/// `api.project_trusted()`.
pub(super) fn project_trusted(c: &mut Call<'_>) -> Result<Ret, String> {
    Ok(Ret::Bool(c.link.host().control.project_trusted()))
}

/// `ctx.shutdown()`, once the agent is idle.
pub(super) fn shutdown(c: &mut Call<'_>) -> Result<Ret, String> {
    c.acting()?;
    nil(c.link.host().control.request(Request::Shutdown))
}

/// `ctx.reload()`, once the call has ended.
pub(super) fn reload(c: &mut Call<'_>) -> Result<Ret, String> {
    c.acting()?;
    nil(c.link.host().control.request(Request::Reload))
}

/// `ctx.new_session()`, once the agent is idle.
pub(super) fn new_session(c: &mut Call<'_>) -> Result<Ret, String> {
    c.acting()?;
    nil(c.link.host().control.request(Request::NewSession))
}

/// `ctx.system_prompt()`.
pub(super) fn system_prompt(c: &mut Call<'_>) -> Result<Ret, String> {
    Ok(Ret::Data(json!(c.link.host().control.system_prompt())))
}

/// `ctx.context_usage()`.
pub(super) fn context_usage(c: &mut Call<'_>) -> Result<Ret, String> {
    Ok(Ret::Data(json!(c.link.host().control.context_usage())))
}

/// `ctx.session.name()`.
pub(super) fn session_name(c: &mut Call<'_>) -> Result<Ret, String> {
    let name = c.link.host().control.session_name();
    Ok(Ret::Data(name.map_or(Json::Null, Json::String)))
}

/// `ctx.session.set_name(name)`. A name is kept in the session file: its control
/// characters are dropped (they would only be shown as `^[` wherever the name is printed).
pub(super) fn set_name(c: &mut Call<'_>) -> Result<Ret, String> {
    let text = c.args.take("name").text();
    let kept = text.replace(|c: char| c.is_control() && !matches!(c, '\n' | '\t'), "");
    let name = crate::agent::control::one_line(&kept);
    if name.is_empty() || name.len() > MAX_NAME_BYTES {
        return Err(format!(
            "the name must be 1 to {MAX_NAME_BYTES} bytes of text on one line"
        ));
    }
    nil(c.link.host().control.append(Pending::Name(name)))
}

/// `api.append_entry(kind, data)`.
pub(super) fn append_entry(c: &mut Call<'_>) -> Result<Ret, String> {
    let kind = c.args.take("kind").text();
    let valid = |c: char| c.is_ascii_alphanumeric() || "_-.:".contains(c);
    if kind.is_empty() || kind.len() > MAX_NAME_BYTES || !kind.chars().all(valid) {
        return Err(format!(
            "the kind must be 1 to {MAX_NAME_BYTES} letters, digits or _ - . : \
             (not {kind:?})"
        ));
    }
    let data = c
        .args
        .take("data")
        .into_data("an entry may hold", MAX_ENTRY_BYTES)?;
    nil(c.link.host().control.append(Pending::Custom { kind, data }))
}

/// `api.tools()`: every tool by name (the newest registration of each), sorted, with its
/// exposure.
pub(super) fn tools(c: &mut Call<'_>) -> Result<Ret, String> {
    let tools = &c.link.host().tools;
    let all = tools.all().into_iter().map(|(e, active)| {
        json!({
            "name": e.spec().name,
            "description": e.spec().description,
            "owner": e.owner.to_string(),
            "active": active,
            "exposure": tools.exposure_of(&e).as_str(),
        })
    });
    Ok(Ret::Data(Json::Array(all.collect())))
}

/// `api.set_active_tools(names)`: nil, every tool again; an empty table, none.
pub(super) fn set_active_tools(c: &mut Call<'_>) -> Result<Ret, String> {
    let names = c.args.take("names").strings();
    nil(c.link.host().tools.set_only(names))
}

/// `api.commands()`: every slash command, sorted by name.
pub(super) fn commands(c: &mut Call<'_>) -> Result<Ret, String> {
    let mut all = c.link.host().commands.all();
    all.sort_by(|a, b| a.name.cmp(&b.name));
    let all = all.into_iter().map(|c| {
        json!({
            "name": c.name,
            "description": c.description,
            "owner": c.owner.to_string(),
        })
    });
    Ok(Ret::Data(Json::Array(all.collect())))
}

/// `api.builtin_tool(name)`: the built-in's spec; the engine adds its `execute`.
pub(super) fn builtin_tool(c: &mut Call<'_>) -> Result<Ret, String> {
    let name = c.args.take("name").text();
    let entry = c.link.host().tools.builtin(&name).ok_or_else(|| {
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

/// `api.builtin_tool(name).execute(arguments)`.
pub(super) fn builtin_execute(c: &mut Call<'_>) -> Result<Ret, String> {
    let name = c.args.take("tool").text();
    let arguments = match c.args.take("arguments") {
        Arg::Data(v @ Json::Object(_)) => v,
        _ => json!({}),
    };
    let out = c.link.run_builtin(&name, arguments)?;
    Ok(Ret::Data(
        json!({"content": out.content, "is_error": out.is_error}),
    ))
}

/// `api.flag{name, type, default?, description?}`.
pub(super) fn flag(c: &mut Call<'_>) -> Result<Ret, String> {
    let flag = declared_flag(c.args.take("definition"), &c.link.info.name)?;
    nil(c.link.host().control.declare_flag(flag))
}

/// `api.set_model(model, {provider?})`, once the call has ended.
pub(super) fn set_model(c: &mut Call<'_>) -> Result<Ret, String> {
    let model = c.args.take("model").text();
    if model.trim().is_empty() || model.len() > MAX_NAME_BYTES {
        return Err(format!("the model must be 1 to {MAX_NAME_BYTES} bytes"));
    }
    let provider = match c.args.take("options").field("provider") {
        Some(p @ (Arg::Str(_) | Arg::Int(_) | Arg::Num(_))) => Some(p.text()),
        _ => None,
    };
    nil(c
        .link
        .host()
        .control
        .request(Request::SetModel { model, provider }))
}

/// `api.set_thinking(level)`.
pub(super) fn set_thinking(c: &mut Call<'_>) -> Result<Ret, String> {
    use crate::vocab::thinking::{Thinking, LEVELS};
    let level = c.args.take("level").text();
    let level = Thinking::parse(&level).ok_or_else(|| {
        format!(
            "{:?} is not a thinking level; the levels are {}",
            level.chars().take(40).collect::<String>(),
            LEVELS.join(", ")
        )
    })?;
    nil(c.link.host().control.request(Request::SetThinking(level)))
}

/// `api.provider{...}`.
pub(super) fn provider(c: &mut Call<'_>) -> Result<Ret, String> {
    let name = &c.link.info.name;
    let provider = super::providers::from_arg(c.args.take("definition"), name)?;
    c.link.host().control.add_provider(name, provider);
    Ok(Ret::Nil)
}

/// `api.timer(ms, handler, {repeat?})`.
pub(super) fn timer(c: &mut Call<'_>) -> Result<Ret, String> {
    let ms = match c.args.take("ms") {
        Arg::Int(i) => i,
        Arg::Num(n) => n as i64,
        _ => 0,
    };
    let cb = c.args.take("handler").callback();
    let repeat = matches!(
        c.args.take("options").field("repeat"),
        Some(Arg::Bool(true))
    );
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
    let id = c.link.background(what, cb)?;
    Ok(Ret::Handle { id, cb })
}

/// `api.watch(path, handler)`.
pub(super) fn watch(c: &mut Call<'_>) -> Result<Ret, String> {
    let path = c.link.cwd().join(c.args.take("path").text());
    let cb = c.args.take("handler").callback();
    std::fs::metadata(&path).map_err(|e| format!("cannot watch {}: {e}", path.display()))?;
    let id = c.link.background(Background::Watch(path), cb)?;
    Ok(Ret::Handle { id, cb })
}

/// `api.events.on(name, handler)`.
pub(super) fn events_on(c: &mut Call<'_>) -> Result<Ret, String> {
    let name = event_name(c.args.take("name"))?;
    let cb = c.args.take("handler").callback();
    let id = c.link.background(Background::Event(name), cb)?;
    Ok(Ret::Handle { id, cb })
}

/// `api.events.emit(name, data?)`: to the handlers of every extension, in the context of
/// the run that emits (or outside any).
pub(super) fn events_emit(c: &mut Call<'_>) -> Result<Ret, String> {
    let name = event_name(c.args.take("name"))?;
    let data = c
        .args
        .take("data")
        .into_data("an event may carry", MAX_ENTRY_BYTES)?;
    let host = c.link.host();
    let ctx = c.ctx.cloned().unwrap_or_else(|| host.session());
    nil(host.background.emit(&name, data, ctx))
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
fn declared_flag(arg: Arg, extension: &str) -> Result<crate::config::extflags::Declared, String> {
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
pub(super) fn entries(c: &mut Call<'_>) -> Result<Ret, String> {
    let host = c.link.host();
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
    Ok(Ret::Data(Json::Array(out)))
}
