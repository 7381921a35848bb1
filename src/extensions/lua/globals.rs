//! The `api` global and the functions of `ctx`, built from the engine-neutral member table
//! ([`surface::MEMBERS`]): each function converts its Lua arguments into [`Arg`]s as the
//! member's parameter types ask (script functions are kept as callbacks), calls
//! [`surface::call`], and converts the result back. Errors are raised at the script's line
//! (`path:line: ...`). Script functions given to `api.on` / `api.tool` / `api.command` are
//! kept in a Lua table in the registry under the [`CallbackId`]s handed to the link.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

use mlua::{Function, Lua, MetaMethod, MultiValue, Table, UserData, UserDataMethods, Value};
use serde_json::Value as Json;

use super::convert::{json_to_lua, lua_to_json};
use super::raise;
use crate::extensions::api::ApiLink;
use crate::extensions::script::CallbackId;
use crate::extensions::surface::{self, Arg, Member, Object, Ret, Shape, Ty};
use crate::vocab::run::RunContext;

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

/// What `api.on` / `api.tool` / `api.command` / `api.renderer` return: `handle:remove()`
/// unregisters.
struct LuaHandle {
    id: u64,
    cbs: Vec<CallbackId>,
    shared: Rc<Shared>,
}

impl UserData for LuaHandle {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("remove", |lua, this, ()| {
            let removed = this.shared.link.remove(this.id);
            if removed {
                for cb in &this.cbs {
                    this.shared.forget(lua, *cb)?;
                }
            }
            Ok(removed)
        });
        methods.add_meta_method(MetaMethod::ToString, |_, this, ()| {
            Ok(format!("handle {}", this.id))
        });
    }
}

/// A Lua value as an [`Arg`] for a parameter of type `ty`; functions become callbacks.
fn to_arg(lua: &Lua, shared: &Shared, ty: Ty, v: Value) -> mlua::Result<Arg> {
    Ok(match (ty, v) {
        (_, Value::Nil) => Arg::Nil,
        (Ty::Func, Value::Function(f)) => Arg::Func(shared.keep(lua, f)?),
        (Ty::Record(fields), Value::Table(t)) => {
            let mut out = Vec::new();
            for pair in t.pairs::<Value, Value>() {
                let (k, v) = pair?;
                let key = match &k {
                    Value::String(s) => s.to_string_lossy(),
                    other => other.to_string()?,
                };
                let field_ty = fields
                    .iter()
                    .find(|f| f.name == key)
                    .map_or(Ty::Any, |f| f.ty);
                out.push((key, to_arg(lua, shared, field_ty, v)?));
            }
            out.sort_by(|a, b| a.0.cmp(&b.0));
            Arg::Record(out)
        }
        (_, Value::Boolean(b)) => Arg::Bool(b),
        (_, Value::Integer(i)) => Arg::Int(i),
        (_, Value::Number(n)) => Arg::Num(n),
        (_, Value::String(s)) => Arg::Str(s.to_string_lossy()),
        // A table that says how to print itself is shown that way.
        (Ty::Any, v @ Value::Table(_)) if matches!(&v, Value::Table(t) if has_tostring(t)) => {
            Arg::Str(v.to_string()?)
        }
        (ty, v @ Value::Table(_)) => match lua_to_json(lua, &v, ty == Ty::Any) {
            Ok(j) => Arg::Data(j),
            Err(e) => Arg::Other(e.describe("table holding", "it")),
        },
        (_, Value::Function(_)) => Arg::Other("function".into()),
        (_, other) => Arg::Other(other.type_name().to_string()),
    })
}

fn has_tostring(t: &Table) -> bool {
    t.metatable()
        .is_some_and(|m| matches!(m.raw_get::<Value>("__tostring"), Ok(Value::Function(_))))
}

/// A member's result as a Lua value.
fn from_ret(lua: &Lua, shared: &Rc<Shared>, ret: Ret) -> mlua::Result<Value> {
    Ok(match ret {
        Ret::Nil => Value::Nil,
        Ret::Bool(b) => Value::Boolean(b),
        Ret::Handle { id, cb } => Value::UserData(lua.create_userdata(LuaHandle {
            id,
            cbs: vec![cb],
            shared: shared.clone(),
        })?),
        Ret::Handles { id, cbs } => Value::UserData(lua.create_userdata(LuaHandle {
            id,
            cbs,
            shared: shared.clone(),
        })?),
        Ret::Data(j) => json_to_lua(lua, &j)?,
        Ret::Builtin { name, spec } => Value::Table(builtin_table(lua, shared, name, &spec)?),
    })
}

/// `api.flags`: reads each declared option's value from the host when asked; read-only.
fn flags_table(lua: &Lua, shared: &Rc<Shared>) -> mlua::Result<Table> {
    let flags = lua.create_table()?;
    let meta = lua.create_table()?;
    let link = shared.link.clone();
    meta.set(
        "__index",
        lua.create_function(move |lua, (_, key): (Value, String)| {
            match link.host().control.flag_value(&key) {
                Some(v) => json_to_lua(lua, &v),
                None => Ok(Value::Nil),
            }
        })?,
    )?;
    meta.set(
        "__newindex",
        lua.create_function(|lua, _: MultiValue| -> mlua::Result<()> {
            Err(raise(
                lua,
                "api.flags is read-only: declare options with api.flag{...}",
            ))
        })?,
    )?;
    flags.set_metatable(Some(meta))?;
    Ok(flags)
}

/// `api.builtin_tool(name)`: `{name, description, parameters, execute}`, where
/// `execute(args, ctx)` (or `:execute(args)`) runs the built-in in the running call.
fn builtin_table(lua: &Lua, shared: &Rc<Shared>, name: String, spec: &Json) -> mlua::Result<Table> {
    let Value::Table(table) = json_to_lua(lua, spec)? else {
        return lua.create_table();
    };
    let Some(member) = surface::member(Object::Builtin, "execute") else {
        return Ok(table);
    };
    let shared = shared.clone();
    let execute = lua.create_function(move |lua, argv: MultiValue| {
        let mut argv = argv.into_iter();
        let mut first = argv.next().unwrap_or(Value::Nil);
        // Called as a method: the table itself comes first.
        if let Value::Table(t) = &first {
            if matches!(t.raw_get::<Value>("execute"), Ok(Value::Function(_))) {
                first = argv.next().unwrap_or(Value::Nil);
            }
        }
        let args = vec![
            Arg::Str(name.clone()),
            to_arg(lua, &shared, Ty::Table, first)?,
        ];
        match surface::call(&shared.link, member, args, None) {
            Ok(ret) => from_ret(lua, &shared, ret),
            Err(e) => Err(raise(lua, &e)),
        }
    })?;
    table.set("execute", execute)?;
    Ok(table)
}

/// The Lua function for function member `member`; `ctx` is the run context it belongs to
/// (for `ctx.*` members made per context).
pub(super) fn member_function(
    lua: &Lua,
    shared: &Rc<Shared>,
    member: &'static Member,
    ctx: Option<Arc<RunContext>>,
) -> mlua::Result<Function> {
    let shared = shared.clone();
    lua.create_function(move |lua, argv: MultiValue| {
        let params = member.params();
        let mut args = Vec::with_capacity(argv.len());
        for (i, v) in argv.into_iter().enumerate() {
            let ty = params.get(i).map_or(Ty::Any, |p| p.ty);
            args.push(to_arg(lua, &shared, ty, v)?);
        }
        let kept: Vec<CallbackId> = args.iter().flat_map(Arg::callbacks).collect();
        match surface::call(&shared.link, member, args, ctx.as_ref()) {
            Ok(ret) => from_ret(lua, &shared, ret),
            Err(e) => {
                for cb in kept {
                    shared.forget(lua, cb)?;
                }
                Err(raise(lua, &e))
            }
        }
    })
}

/// A table of `object`'s function members, each made when first read (then kept in the
/// table): a VM holds only the functions its script uses, and an extension that uses a few
/// costs a few (each function is a closure and a userdata in the VM's memory). `pairs` makes
/// them all first, so the table lists every member.
pub(super) fn lazy_members(lua: &Lua, shared: &Rc<Shared>, object: Object) -> mlua::Result<Table> {
    let functions = move || {
        surface::MEMBERS
            .iter()
            .filter(move |m| m.object == object && matches!(m.shape, Shape::Function(..)))
    };
    let table = lua.create_table()?;
    let meta = lua.create_table_with_capacity(0, 2)?;
    let for_index = shared.clone();
    let index = lua.create_function(move |lua, (t, key): (Table, Value)| {
        let Value::String(key) = key else {
            return Ok(Value::Nil);
        };
        let Some(member) = functions().find(|m| m.name.as_bytes() == key.as_bytes().as_ref())
        else {
            return Ok(Value::Nil);
        };
        let f = member_function(lua, &for_index, member, None)?;
        t.raw_set(key, &f)?;
        Ok(Value::Function(f))
    })?;
    let for_pairs = shared.clone();
    let next: Function = lua.globals().raw_get("next")?;
    let pairs = lua.create_function(move |lua, t: Table| {
        for member in functions() {
            if t.raw_get::<Value>(member.name)?.is_nil() {
                t.raw_set(member.name, member_function(lua, &for_pairs, member, None)?)?;
            }
        }
        Ok((next.clone(), t, Value::Nil))
    })?;
    meta.raw_set("__index", index)?;
    meta.raw_set("__pairs", pairs)?;
    table.set_metatable(Some(meta))?;
    Ok(table)
}

/// Builds the `api` table.
pub(super) fn api_table(lua: &Lua, shared: &Rc<Shared>) -> mlua::Result<Table> {
    lua.set_named_registry_value(CALLBACKS, lua.create_table()?)?;
    let api = lazy_members(lua, shared, Object::Api)?;
    for (name, object) in [("mcp", Object::Mcp), ("events", Object::Events)] {
        api.set(name, lazy_members(lua, shared, object)?)?;
    }
    let link = &shared.link;
    let state = match link.initial_state() {
        s @ Json::Object(_) => json_to_lua(lua, &s)?,
        _ => Value::Table(lua.create_table()?),
    };
    api.set("state", state)?;
    api.set("flags", flags_table(lua, shared)?)?;
    api.set(
        "extension",
        json_to_lua(lua, &surface::extension_value(&link.info))?,
    )?;
    api.set("version", surface::VERSION)?;
    Ok(api)
}
