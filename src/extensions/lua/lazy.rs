//! Event tables with a field read on demand ([`LazyField`]: `message_update`'s `text`,
//! `agent_end`'s `messages`): the table's metatable makes the field on its first read and
//! keeps it in the table; `pairs` and `json.encode` read it too, so the event shows all its
//! fields. A handler that never looks at the field never builds it in its VM; `messages`
//! read from a table kept after its event is over is `nil` (see [`crate::hooks::LazyField`]).

use mlua::{Lua, Table, Value};

use super::convert;
use crate::extensions::api::engine_value;
use crate::hooks::LazyField;

/// The `__name` of an event table with a field read on demand.
const LAZY_EVENT: &str = "mypi.event";
/// The metatable's key naming that field.
const FIELD: &str = "__lazy";

/// The metatable of an event table whose field `lazy` is read on demand; `mark` is the
/// engine's array marker (an empty list of messages stays a list).
pub(super) fn metatable(
    lua: &Lua,
    lazy: LazyField,
    pairs: &mlua::Function,
    mark: &Table,
) -> mlua::Result<Table> {
    let mt = lua.create_table_with_capacity(0, 4)?;
    let name = lazy.name();
    let mark = mark.clone();
    let index = lua.create_function(move |lua, (t, key): (Table, Value)| {
        if !matches!(&key, Value::String(k) if k.as_bytes() == name.as_bytes()) {
            return Ok(Value::Nil);
        }
        let value = match (lazy.text(), lazy.messages()) {
            (Some(text), _) => Value::String(text.with(|t| lua.create_string(t))?),
            (None, Some(messages)) => engine_value(
                &*messages,
                |tape| convert::tape_to_lua(lua, tape, &mark),
                |json| convert::json_to_lua_marked(lua, json, &mark),
            )?,
            // The event is over (a table kept past its handler).
            (None, None) => return Ok(Value::Nil),
        };
        t.raw_set(name, &value)?;
        Ok(value)
    })?;
    mt.raw_set("__index", index)?;
    mt.raw_set("__pairs", pairs)?;
    mt.raw_set("__name", LAZY_EVENT)?;
    mt.raw_set(FIELD, name)?;
    Ok(mt)
}

/// `pairs` of an event table: reads its on-demand field, then walks the table.
pub(super) fn pairs(lua: &Lua) -> mlua::Result<mlua::Function> {
    let next: mlua::Function = lua.globals().raw_get("next")?;
    lua.create_function(move |_, t: Table| {
        read_fields(&Value::Table(t.clone()))?;
        Ok((next.clone(), t, Value::Nil))
    })
}

/// Reads the on-demand field of `v` if it is an event table (before it is converted whole).
pub(super) fn read_fields(v: &Value) -> mlua::Result<()> {
    let Value::Table(t) = v else {
        return Ok(());
    };
    let Some(mt) = t.metatable() else {
        return Ok(());
    };
    if let Some(field) = mt.raw_get::<Option<mlua::String>>(FIELD)? {
        t.get::<Value>(field)?;
    }
    Ok(())
}
