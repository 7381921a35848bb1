//! The `api` global and the functions of `ctx`: each member checks its arguments and calls
//! the extension's [`ApiLink`]. Errors are raised at the script's line (`path:line: ...`).
//! Script functions given to `api.on` / `api.tool` / `api.command` are kept in a Lua table in
//! the registry under the [`CallbackId`]s handed to the link.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

use mlua::{Function, Lua, MetaMethod, Table, UserData, UserDataMethods, Value};
use serde_json::{json, Value as Json};

use super::convert::{json_to_lua, lua_to_json};
use super::raise;
use crate::extensions::api::{ApiLink, CallbackId, ToolDef};
use crate::run::RunContext;

/// Registry name of the table of callbacks (`CallbackId` -> function).
pub(super) const CALLBACKS: &str = "mypi.callbacks";

/// What the `api` functions share.
pub(super) struct Shared {
    pub link: Arc<ApiLink>,
    next_cb: Cell<CallbackId>,
}

impl Shared {
    pub fn new(link: Arc<ApiLink>) -> Rc<Self> {
        Rc::new(Shared {
            link,
            next_cb: Cell::new(1),
        })
    }

    /// Keeps `f` under a fresh id.
    fn keep(&self, lua: &Lua, f: Function) -> mlua::Result<CallbackId> {
        let id = self.next_cb.get();
        self.next_cb.set(id + 1);
        callbacks(lua)?.raw_set(id, f)?;
        Ok(id)
    }

    fn forget(&self, lua: &Lua, id: CallbackId) -> mlua::Result<()> {
        callbacks(lua)?.raw_set(id, Value::Nil)
    }
}

/// The table of callbacks.
pub(super) fn callbacks(lua: &Lua) -> mlua::Result<Table> {
    lua.named_registry_value(CALLBACKS)
}

/// What `api.on` / `api.tool` / `api.command` return: `handle:remove()` unregisters.
struct LuaHandle {
    id: u64,
    cb: CallbackId,
    shared: Rc<Shared>,
}

impl UserData for LuaHandle {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("remove", |lua, this, ()| {
            let removed = this.shared.link.remove(this.id);
            if removed {
                this.shared.forget(lua, this.cb)?;
            }
            Ok(removed)
        });
        methods.add_meta_method(MetaMethod::ToString, |_, this, ()| {
            Ok(format!("handle {}", this.id))
        });
    }
}

/// Registers `f` with `register` (a link call); on failure the function is dropped and the
/// link's message raised at the caller's line.
fn register(
    lua: &Lua,
    shared: &Rc<Shared>,
    what: &str,
    f: Function,
    register: impl FnOnce(CallbackId) -> Result<u64, String>,
) -> mlua::Result<LuaHandle> {
    let cb = shared.keep(lua, f)?;
    match register(cb) {
        Ok(id) => Ok(LuaHandle {
            id,
            cb,
            shared: shared.clone(),
        }),
        Err(e) => {
            shared.forget(lua, cb)?;
            Err(raise(lua, &format!("{what}: {e}")))
        }
    }
}

fn want_string(lua: &Lua, what: &str, v: Value) -> mlua::Result<String> {
    match v {
        Value::String(s) => Ok(s.to_string_lossy()),
        Value::Integer(_) | Value::Number(_) => Ok(v.to_string()?),
        other => Err(raise(
            lua,
            &format!("{what} must be a string, not {}", other.type_name()),
        )),
    }
}

fn want_function(lua: &Lua, what: &str, v: Value) -> mlua::Result<Function> {
    match v {
        Value::Function(f) => Ok(f),
        other => Err(raise(
            lua,
            &format!("{what} must be a function, not {}", other.type_name()),
        )),
    }
}

/// Builds the `api` table.
pub(super) fn api_table(lua: &Lua, shared: &Rc<Shared>) -> mlua::Result<Table> {
    lua.set_named_registry_value(CALLBACKS, lua.create_table()?)?;
    let api = lua.create_table()?;
    let s = shared.clone();
    api.set(
        "on",
        lua.create_function(move |lua, (event, f): (Value, Value)| {
            let event = want_string(lua, "api.on: the event", event)?;
            let f = want_function(lua, "api.on: the handler", f)?;
            register(lua, &s, "api.on", f, |cb| s.link.on(&event, cb))
        })?,
    )?;
    let s = shared.clone();
    api.set(
        "tool",
        lua.create_function(move |lua, spec: Value| {
            let Value::Table(spec) = spec else {
                return Err(raise(
                    lua,
                    "api.tool: expected a table {name, description, parameters, execute}",
                ));
            };
            let (def, f) = tool_def(lua, &spec)?;
            register(lua, &s, "api.tool", f, |cb| s.link.tool(def, cb))
        })?,
    )?;
    let s = shared.clone();
    api.set(
        "command",
        lua.create_function(
            move |lua, (name, f, desc): (Value, Value, Option<String>)| {
                let name = want_string(lua, "api.command: the name", name)?;
                let f = want_function(lua, "api.command: the handler", f)?;
                let desc = desc.unwrap_or_default();
                register(lua, &s, "api.command", f, |cb| {
                    s.link.command(&name, &desc, cb)
                })
            },
        )?,
    )?;
    add_messages(lua, &api, shared)?;
    add_exec(lua, &api, shared)?;
    add_data(lua, &api, &shared.link)?;
    Ok(api)
}

/// Reads `api.tool{...}`.
fn tool_def(lua: &Lua, spec: &Table) -> mlua::Result<(ToolDef, Function)> {
    let name = want_string(lua, "api.tool: name", spec.get("name")?)?;
    if name.is_empty() {
        return Err(raise(lua, "api.tool: name must not be empty"));
    }
    let f = want_function(lua, "api.tool: execute", spec.get("execute")?)?;
    let description = match spec.get::<Value>("description")? {
        Value::Nil => String::new(),
        v => want_string(lua, "api.tool: description", v)?,
    };
    let parameters = match spec.get::<Value>("parameters")? {
        Value::Nil => json!({"type": "object", "properties": {}}),
        v @ Value::Table(_) => {
            let mut schema = lua_to_json(lua, &v, false).map_err(|e| {
                raise(
                    lua,
                    &format!(
                        "api.tool: parameters: {}",
                        e.describe("cannot hold", "parameters")
                    ),
                )
            })?;
            fix_schema_arrays(&mut schema);
            schema
        }
        other => {
            return Err(raise(
                lua,
                &format!(
                    "api.tool: parameters must be a table (a JSON Schema), not {}",
                    other.type_name()
                ),
            ))
        }
    };
    let parallel_safe = spec.get::<Option<bool>>("parallel_safe")?.unwrap_or(false);
    let timeout_ms = match spec.get::<Value>("timeout_ms")? {
        Value::Nil => None,
        Value::Integer(n) if n > 0 => Some(n as u64),
        Value::Number(n) if n >= 1.0 && n.fract() == 0.0 => Some(n as u64),
        _ => {
            return Err(raise(
                lua,
                "api.tool: timeout_ms must be a positive integer",
            ))
        }
    };
    let def = ToolDef {
        name,
        description,
        parameters,
        parallel_safe,
        timeout_ms,
    };
    Ok((def, f))
}

/// In a JSON Schema, keywords that hold arrays (`required`, `enum`, ...) written as empty Lua
/// tables came out as `{}`: make them `[]`.
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

/// `api.send_message`, `api.log`, `api.notify`.
fn add_messages(lua: &Lua, api: &Table, shared: &Rc<Shared>) -> mlua::Result<()> {
    let link = shared.link.clone();
    api.set(
        "send_message",
        lua.create_function(move |lua, (text, opts): (Value, Option<Table>)| {
            let text = want_string(lua, "api.send_message: the text", text)?;
            let deliver_as = match &opts {
                Some(o) => o.get::<Option<String>>("deliver_as")?,
                None => None,
            };
            if let Some(d) = deliver_as.as_deref() {
                if d != "steer" && d != "follow_up" {
                    return Err(raise(lua, &format!(
                        "api.send_message: deliver_as must be \"steer\" or \"follow_up\", not \"{d}\""
                    )));
                }
            }
            link.send_message(&text, deliver_as.as_deref())
                .map_err(|e| raise(lua, &format!("api.send_message: {e}")))
        })?,
    )?;
    let link = shared.link.clone();
    api.set(
        "log",
        lua.create_function(move |_, msg: Value| {
            link.log(&msg.to_string()?);
            Ok(())
        })?,
    )?;
    let link = shared.link.clone();
    api.set(
        "notify",
        lua.create_function(move |_, msg: Value| {
            link.notify(&msg.to_string()?);
            Ok(())
        })?,
    )?;
    Ok(())
}

/// `api.exec(cmd, args?, {timeout_ms?, cwd?}) -> {code, stdout, stderr, timed_out}`.
fn add_exec(lua: &Lua, api: &Table, shared: &Rc<Shared>) -> mlua::Result<()> {
    let link = shared.link.clone();
    let exec = lua.create_function(
        move |lua, (cmd, args, opts): (Value, Option<Table>, Option<Table>)| {
            let cmd = want_string(lua, "api.exec: the command", cmd)?;
            let mut argv = Vec::new();
            if let Some(args) = args {
                for v in args.sequence_values::<Value>() {
                    argv.push(want_string(lua, "api.exec: each argument", v?)?);
                }
            }
            let (timeout_ms, cwd) = match &opts {
                Some(o) => (
                    o.get::<Option<u64>>("timeout_ms")?,
                    o.get::<Option<String>>("cwd")?,
                ),
                None => (None, None),
            };
            let out = link
                .exec(&cmd, &argv, timeout_ms, cwd.as_deref())
                .map_err(|e| raise(lua, &format!("api.exec: {e}")))?;
            let t = lua.create_table_with_capacity(0, 4)?;
            t.set("code", out.code)?;
            t.set("stdout", out.stdout)?;
            t.set("stderr", out.stderr)?;
            t.set("timed_out", out.timed_out)?;
            Ok(t)
        },
    )?;
    api.set("exec", exec)
}

/// `api.state` and `api.extension`.
fn add_data(lua: &Lua, api: &Table, link: &ApiLink) -> mlua::Result<()> {
    let state = match link.initial_state() {
        s @ Json::Object(_) => json_to_lua(lua, &s)?,
        _ => Value::Table(lua.create_table()?),
    };
    api.set("state", state)?;
    let ext = lua.create_table()?;
    ext.set("name", link.info.name.as_str())?;
    ext.set("path", link.info.path.display().to_string())?;
    ext.set("language", "lua")?;
    api.set("extension", ext)
}

/// `ctx.ui` (`confirm`, `notify`), made once per VM.
pub(super) fn ctx_ui(lua: &Lua, link: &Arc<ApiLink>) -> mlua::Result<Table> {
    let ui = lua.create_table()?;
    let l = link.clone();
    ui.set(
        "confirm",
        lua.create_function(move |lua, q: Value| {
            let q = want_string(lua, "ctx.ui.confirm: the question", q)?;
            Ok(l.confirm(&q))
        })?,
    )?;
    let l = link.clone();
    ui.set(
        "notify",
        lua.create_function(move |_, msg: Value| {
            l.notify(&msg.to_string()?);
            Ok(())
        })?,
    )?;
    Ok(ui)
}

/// `ctx.abort` of one run context: cancels that run.
pub(super) fn abort_function(lua: &Lua, ctx: &Arc<RunContext>) -> mlua::Result<Function> {
    let cancel = ctx.cancel.clone();
    lua.create_function(move |_, ()| {
        cancel.cancel();
        Ok(())
    })
}
