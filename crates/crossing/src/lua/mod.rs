//! Values across the boundary: JSON (what the host speaks) to Lua and back.
//!
//! JSON to Lua: `null` becomes `nil` (a key with a `null` value is absent, an array element
//! leaves a hole), numbers that fit an `i64` become Lua integers and others floats, arrays
//! become sequences marked with mlua's array metatable (so an empty array comes back as `[]`),
//! objects become tables with string keys.
//!
//! Lua to JSON: `nil` is `null`, integers stay integers and floats stay floats (NaN and the
//! infinities become `null`), strings are read as UTF-8 (invalid bytes replaced). A table is
//! an array when it carries the array mark or when its keys are exactly `1..n` with `n > 0`;
//! otherwise it is an object (integer and float keys are written as decimal strings), so an
//! empty unmarked table is `{}`. `json.array{}` marks a table as an array. Functions,
//! coroutines and userdata cannot be converted: strict mode reports them, lenient mode (used
//! for `api.state`) drops them.
// `unsafe` here: the Lua raw API (mlua's ffi) for conversions mlua has no safe call for.
#![allow(unsafe_code)]

use mlua::{Lua, LuaSerdeExt, Table, Value};
use serde_json::{Map, Number, Value as Json};
use std::cell::RefCell;

mod coroutine;
pub mod raw;

pub use coroutine::Coroutines;

use crate::tape::Tape;
use crate::Crossing;

/// Why a Lua value has no JSON form, and where in the value it sits.
#[derive(Debug)]
pub struct ConvError {
    /// What went wrong, e.g. `a function` or `tables nested more than 100 levels`.
    pub what: String,
    /// The keys leading to the value, outermost first.
    pub path: Vec<String>,
}

impl ConvError {
    fn new(what: impl Into<String>) -> Self {
        ConvError {
            what: what.into(),
            path: Vec::new(),
        }
    }

    fn at(mut self, key: String) -> Self {
        self.path.push(key);
        self
    }

    /// `a function (at result.items[2])`, `verb` being e.g. `cannot return`.
    pub fn describe(&self, verb: &str, root: &str) -> String {
        if self.path.is_empty() {
            return format!("{verb} {}", self.what);
        }
        let mut at = root.to_string();
        for key in self.path.iter().rev() {
            at.push_str(key);
        }
        format!("{verb} {} (at {at})", self.what)
    }
}

/// Converts JSON to a Lua value.
pub fn json_to_lua(lua: &Lua, v: &Json) -> mlua::Result<Value> {
    let mark = lua.array_metatable();
    to_lua(lua, v, &mark)
}

/// [`json_to_lua`] with the array metatable at hand.
#[inline(never)]
pub fn json_to_lua_marked(lua: &Lua, v: &Json, mark: &Table) -> mlua::Result<Value> {
    to_lua(lua, v, mark)
}

fn to_lua(lua: &Lua, v: &Json, mark: &Table) -> mlua::Result<Value> {
    Ok(match v {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Boolean(*b),
        Json::Number(n) => number(n),
        Json::String(s) => Value::String(lua.create_string(s)?),
        // SAFETY: `push_json` keeps to the raw API's rules; `exec_raw` runs it in one
        // protected call, so a memory error it raises comes back as an error here.
        Json::Array(_) | Json::Object(_) => unsafe {
            lua.exec_raw::<Value>(mark, |state| {
                raw::push_json(state, v);
                // The result in place of the array mark (the one argument).
                mlua::ffi::lua_replace(state, raw::MARK);
            })?
        },
    })
}

/// The value of `tape` (what [`json_to_lua_marked`] makes of the same value's JSON).
#[inline(never)]
pub fn tape_to_lua(lua: &Lua, tape: &Tape, mark: &Table) -> mlua::Result<Value> {
    // SAFETY: as in `to_lua`: `push_tape` keeps to the raw API's rules in one protected call.
    unsafe {
        lua.exec_raw::<Value>(mark, |state| {
            raw::push_tape(state, tape);
            mlua::ffi::lua_replace(state, raw::MARK);
        })
    }
}

/// A JSON number as a Lua integer when it fits an `i64`, else a float.
fn number(n: &Number) -> Value {
    match n.as_i64() {
        Some(i) => Value::Integer(i),
        None => Value::Number(n.as_f64().unwrap_or(f64::NAN)),
    }
}

/// Converts a Lua value to JSON. `lenient` drops what has no JSON form instead of failing.
pub fn lua_to_json(lua: &Lua, v: &Value, lenient: bool) -> Result<Json, ConvError> {
    lua_to_json_marked(lua, v, &lua.array_metatable(), lenient)
}

/// [`lua_to_json`] with the array metatable at hand. A table of plain data is read in one go
/// with the raw API ([`raw::Reader`]); anything else (a function inside, a key that is not a
/// string or number, a value past the limits) takes the careful path, which says what and
/// where (or, lenient, drops it).
#[inline(never)]
pub fn lua_to_json_marked(
    lua: &Lua,
    v: &Value,
    mark: &Table,
    lenient: bool,
) -> Result<Json, ConvError> {
    // What most handlers return (nothing) and other scalars but strings, whose size counts.
    match v {
        Value::Nil => return Ok(Json::Null),
        Value::Boolean(b) => return Ok(Json::Bool(*b)),
        Value::Integer(i) => return Ok(Json::Number((*i).into())),
        _ => {}
    }
    match read_plain(lua, v, mark) {
        Some(json) => Ok(json),
        None => lua_to_json_careful(v, mark, lenient),
    }
}

/// The raw reader alone: a table of plain data as JSON, `None` for anything else (which the
/// careful path must look at).
pub fn read_plain(lua: &Lua, v: &Value, mark: &Table) -> Option<Json> {
    let Value::Table(_) = v else {
        return None;
    };
    let mut read = None;
    // SAFETY: the reader only reads (no call in it raises a Lua error, so nothing unwinds
    // through its frames) and leaves the stack as it found it.
    let ran = unsafe {
        lua.exec_raw::<()>(v, |state| {
            read = raw::Reader::new(state, mark.to_pointer()).value(1, 0);
        })
    };
    ran.ok().and(read)
}

/// The careful path alone: any value, saying what has no JSON form and where (or, lenient,
/// dropping it).
pub fn lua_to_json_careful(v: &Value, mark: &Table, lenient: bool) -> Result<Json, ConvError> {
    let conv = ToJson {
        mark: mark.to_pointer(),
        lenient,
        budget: RefCell::new(Crossing::for_thread()),
    };
    Ok(conv.value(v, 0)?.unwrap_or(Json::Null))
}

struct ToJson {
    /// The array metatable's address.
    mark: *const std::ffi::c_void,
    lenient: bool,
    /// The host's limits on what crosses over ([`Crossing`]).
    budget: RefCell<Crossing>,
}

impl ToJson {
    fn charge(&self, text_bytes: usize) -> Result<(), ConvError> {
        self.budget
            .borrow_mut()
            .charge(text_bytes)
            .map_err(ConvError::new)
    }
}

impl ToJson {
    /// `None`: a value lenient mode drops.
    fn value(&self, v: &Value, depth: usize) -> Result<Option<Json>, ConvError> {
        let unsupported = |what: &str| {
            if self.lenient {
                Ok(None)
            } else {
                Err(ConvError::new(what))
            }
        };
        self.charge(match v {
            Value::String(s) => s.as_bytes().len(),
            _ => 0,
        })?;
        Ok(Some(match v {
            Value::Nil => Json::Null,
            Value::Boolean(b) => Json::Bool(*b),
            Value::Integer(i) => Json::Number((*i).into()),
            Value::Number(f) => Number::from_f64(*f).map_or(Json::Null, Json::Number),
            Value::String(s) => Json::String(s.to_string_lossy()),
            Value::LightUserData(p) if p.0.is_null() => Json::Null,
            Value::Table(t) => return self.table(t, depth),
            Value::Function(_) => return unsupported("a function"),
            Value::Thread(_) => return unsupported("a coroutine"),
            Value::Error(_) => return unsupported("an error value"),
            _ => return unsupported("a userdata"),
        }))
    }

    fn table(&self, t: &Table, depth: usize) -> Result<Option<Json>, ConvError> {
        Crossing::check_depth(depth + 1).map_err(ConvError::new)?;
        let marked = t.metatable().is_some_and(|m| m.to_pointer() == self.mark);
        let len = t.raw_len();
        let mut pairs = Vec::new();
        let mut sequence = true;
        for pair in t.pairs::<Value, Value>() {
            let (k, v) = pair.map_err(|e| ConvError::new(format!("an unreadable table ({e})")))?;
            sequence &= matches!(k, Value::Integer(i) if i >= 1 && (i as usize) <= len);
            pairs.push((k, v));
        }
        if marked || (sequence && len > 0 && pairs.len() == len) {
            self.array(t, len, depth).map(Some)
        } else {
            self.object(pairs, depth).map(Some)
        }
    }

    fn array(&self, t: &Table, len: usize, depth: usize) -> Result<Json, ConvError> {
        let mut out = Vec::with_capacity(len);
        for i in 1..=len {
            let v: Value = t.raw_get(i).unwrap_or(Value::Nil);
            let item = self
                .value(&v, depth + 1)
                .map_err(|e| e.at(format!("[{i}]")))?;
            out.push(item.unwrap_or(Json::Null));
        }
        Ok(Json::Array(out))
    }

    fn object(&self, pairs: Vec<(Value, Value)>, depth: usize) -> Result<Json, ConvError> {
        let mut out = Map::new();
        for (k, v) in pairs {
            let key = match &k {
                Value::String(s) => {
                    self.charge(s.as_bytes().len())?;
                    s.to_string_lossy()
                }
                Value::Integer(i) => i.to_string(),
                Value::Number(f) => f.to_string(),
                _ if self.lenient => continue,
                other => {
                    return Err(ConvError::new(format!(
                        "a table key of type {}",
                        other.type_name()
                    )))
                }
            };
            let item = self
                .value(&v, depth + 1)
                .map_err(|e| e.at(format!(".{key}")))?;
            if let Some(item) = item {
                out.insert(key, item);
            }
        }
        // A Lua table has no order (`pairs` goes by hash): its keys sorted, so the same table
        // always encodes the same way, whatever order serde_json's maps keep.
        out.sort_keys();
        Ok(Json::Object(out))
    }
}
