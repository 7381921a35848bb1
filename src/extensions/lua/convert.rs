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

use super::raw;
use crate::extensions::crossing::Crossing;

/// Why a Lua value has no JSON form, and where in the value it sits.
#[derive(Debug)]
pub(super) struct ConvError {
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
pub(super) fn json_to_lua(lua: &Lua, v: &Json) -> mlua::Result<Value> {
    let mark = lua.array_metatable();
    to_lua(lua, v, &mark)
}

/// [`json_to_lua`] with the array metatable at hand.
pub(super) fn json_to_lua_marked(lua: &Lua, v: &Json, mark: &Table) -> mlua::Result<Value> {
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
pub(super) fn tape_to_lua(
    lua: &Lua,
    tape: &crate::extensions::tape::Tape,
    mark: &Table,
) -> mlua::Result<Value> {
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
pub(super) fn lua_to_json(lua: &Lua, v: &Value, lenient: bool) -> Result<Json, ConvError> {
    lua_to_json_marked(lua, v, &lua.array_metatable(), lenient)
}

/// [`lua_to_json`] with the array metatable at hand. A table of plain data is read in one go
/// with the raw API ([`raw::Reader`]); anything else (a function inside, a key that is not a
/// string or number, a value past the limits) takes the careful path, which says what and
/// where (or, lenient, drops it).
pub(super) fn lua_to_json_marked(
    lua: &Lua,
    v: &Value,
    mark: &Table,
    lenient: bool,
) -> Result<Json, ConvError> {
    if let Value::Table(_) = v {
        let mut read = None;
        // SAFETY: the reader only reads (no call in it raises a Lua error, so nothing
        // unwinds through its frames) and leaves the stack as it found it.
        let ran = unsafe {
            lua.exec_raw::<()>(v, |state| {
                read = raw::Reader::new(state, mark.to_pointer()).value(1, 0);
            })
        };
        if let (Ok(()), Some(json)) = (ran, read) {
            return Ok(json);
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round(lua: &Lua, v: Json) -> Json {
        let l = json_to_lua(lua, &v).unwrap();
        lua_to_json(lua, &l, false).unwrap()
    }

    #[test]
    fn json_round_trips_through_lua() {
        let lua = Lua::new();
        let v = json!({"a": [1, 2.5, "x", true, {"b": []}], "e": {}, "n": -7, "big": 1e300});
        assert_eq!(round(&lua, v.clone()), v);
        assert_eq!(round(&lua, json!([])), json!([]));
        assert_eq!(round(&lua, json!(null)), json!(null));
    }

    #[test]
    fn lua_tables_become_arrays_or_objects() {
        let lua = Lua::new();
        let v: Value = lua
            .load(r#"return {seq = {1, 2, 3}, empty = {}, mixed = {1, x = 2}, [5] = "five", f = 1.5, i = 2}"#)
            .eval()
            .unwrap();
        let j = lua_to_json(&lua, &v, false).unwrap();
        assert_eq!(
            j,
            json!({"seq": [1, 2, 3], "empty": {}, "mixed": {"1": 1, "x": 2}, "5": "five", "f": 1.5, "i": 2})
        );
    }

    #[test]
    fn functions_are_refused_or_dropped() {
        let lua = Lua::new();
        let v: Value = lua.load("return {a = {1, print}, b = 2}").eval().unwrap();
        let e = lua_to_json(&lua, &v, false).unwrap_err();
        assert_eq!(
            e.describe("cannot return", "result"),
            "cannot return a function (at result.a[2])"
        );
        let v: Value = lua.load("return {a = print, b = 2}").eval().unwrap();
        assert_eq!(lua_to_json(&lua, &v, true).unwrap(), json!({"b": 2}));
    }

    #[test]
    fn cycles_are_reported() {
        let lua = Lua::new();
        let v: Value = lua.load("local t = {} t.t = t return t").eval().unwrap();
        let e = lua_to_json(&lua, &v, false).unwrap_err();
        assert!(e.what.contains("contains itself"), "{}", e.what);
    }

    #[test]
    fn nulls_leave_holes_and_keys_out_and_arrays_keep_their_mark() {
        let lua = Lua::new();
        let v = json!({"a": [1, null, 3], "gone": null, "s": "x\u{0}y"});
        let t: Table = match json_to_lua(&lua, &v).unwrap() {
            Value::Table(t) => t,
            other => panic!("{other:?}"),
        };
        let a: Table = t.raw_get("a").unwrap();
        assert_eq!(a.raw_get::<i64>(3).unwrap(), 3);
        assert!(a.raw_get::<Value>(2).unwrap().is_nil());
        assert!(t.raw_get::<Value>("gone").unwrap().is_nil());
        let s: mlua::String = t.raw_get("s").unwrap();
        assert_eq!(
            s.as_bytes().as_ref(),
            b"x\0y",
            "strings keep their NUL bytes"
        );
        assert_eq!(
            lua_to_json(&lua, &Value::Table(t), false).unwrap(),
            json!({"a": [1, null, 3], "s": "x\u{0}y"})
        );
    }

    #[test]
    fn a_value_past_the_memory_cap_is_an_error_and_the_vm_goes_on() {
        let lua = Lua::new();
        lua.set_memory_limit(4 * 1024 * 1024).unwrap();
        let big = Json::Array(vec![json!({"text": "x".repeat(1024)}); 8192]);
        let e = json_to_lua(&lua, &big).unwrap_err();
        assert!(matches!(e, mlua::Error::MemoryError(_)), "{e:?}");
        lua.gc_collect().unwrap();
        assert_eq!(
            round(&lua, json!({"still": [true]})),
            json!({"still": [true]})
        );
    }

    #[test]
    fn deep_values_convert() {
        let lua = Lua::new();
        let mut v = json!("leaf");
        for _ in 0..150 {
            v = json!({"in": [v]});
        }
        let l = json_to_lua(&lua, &v).unwrap();
        let Value::Table(mut t) = l else { panic!() };
        for _ in 0..150 {
            let a: Table = t.raw_get("in").unwrap();
            t = match a.raw_get::<Value>(1).unwrap() {
                Value::Table(next) => next,
                Value::String(s) => {
                    assert_eq!(s.to_str().unwrap(), "leaf");
                    return;
                }
                other => panic!("{other:?}"),
            };
        }
        panic!("no leaf");
    }

    /// The careful path alone, to hold the raw reader to it.
    fn careful(lua: &Lua, v: &Value, lenient: bool) -> Result<Json, String> {
        let conv = ToJson {
            mark: lua.array_metatable().to_pointer(),
            lenient,
            budget: RefCell::new(Crossing::for_thread()),
        };
        conv.value(v, 0)
            .map(|j| j.unwrap_or(Json::Null))
            .map_err(|e| e.describe("cannot return", "result"))
    }

    #[test]
    fn the_raw_reader_gives_what_the_careful_path_gives() {
        let lua = Lua::new();
        lua.globals().set("null", lua.null()).unwrap();
        lua.globals().set("mark", lua.array_metatable()).unwrap();
        let cases = [
            "{}",
            "{1, 2, 3}",
            "{1, nil, 3}",
            "{[1] = 1, [3] = 3}",
            "{[-1] = 'neg', [0] = 'zero', [1] = 'one'}",
            "{[1.5] = 'f', [2] = 'i', x = {y = {z = {}}}}",
            "setmetatable({}, mark)",
            "setmetatable({1, 2}, mark)",
            "{a = null, b = {null, 1}}",
            "{s = 'caf\\xff\\xfe', n = 0/0, i = 1/0, m = -1/0, big = 2^63}",
            "{[true] = 1}",
            "{f = print}",
            "{{{{print}}}}",
            "setmetatable({1}, {__index = function() return 2 end})",
            "(function() local t = {} t.t = t return t end)()",
            "{co = coroutine.create(print)}",
        ];
        // Plain data is read by the raw reader itself (not by the careful path after it).
        let plain: Value = lua
            .load("return {a = {1, 2, {b = 'c'}}, [2] = true}")
            .eval()
            .unwrap();
        let mut read = None;
        let mark = lua.array_metatable().to_pointer();
        // SAFETY: as in `lua_to_json_marked`.
        unsafe {
            lua.exec_raw::<()>(&plain, |state| {
                read = raw::Reader::new(state, mark).value(1, 0);
            })
            .unwrap();
        }
        assert_eq!(read, Some(json!({"a": [1, 2, {"b": "c"}], "2": true})));
        for src in cases {
            let v: Value = lua.load(format!("return {src}")).eval().unwrap();
            for lenient in [false, true] {
                let fast = lua_to_json_marked(&lua, &v, &lua.array_metatable(), lenient)
                    .map_err(|e| e.describe("cannot return", "result"));
                assert_eq!(
                    fast,
                    careful(&lua, &v, lenient),
                    "{src} (lenient {lenient})"
                );
            }
        }
    }

    /// What the tape gives for `value`, and what the JSON path gives, as Lua values.
    fn both_ways<T: serde::Serialize>(lua: &Lua, value: &T) -> Option<(Value, Value)> {
        let mark = lua.array_metatable();
        let taped = crate::extensions::tape::with_tape(value, |t| tape_to_lua(lua, t, &mark))?;
        let json = serde_json::to_value(value).unwrap();
        Some((taped.unwrap(), json_to_lua(lua, &json).unwrap()))
    }

    #[test]
    fn the_tape_builds_what_the_json_path_builds() {
        let lua = Lua::new();
        let same: mlua::Function = lua
            .load(
                r#"local function same(a, b)
                  if type(a) ~= type(b) then return false end
                  if type(a) ~= "table" then return a == b and math.type(a) == math.type(b) end
                  if getmetatable(a) ~= getmetatable(b) then return false end
                  for k, v in pairs(a) do if not same(v, b[k]) then return false end end
                  for k in pairs(b) do if a[k] == nil then return false end end
                  return true
                end
                return same"#,
            )
            .eval()
            .unwrap();
        let check = |what: &str, (taped, json): (Value, Value)| {
            assert!(same.call::<bool>((taped, json)).unwrap(), "{what}");
        };
        for (event, _) in crate::hooks::tests::pinned_events() {
            let (payload, _) = event.script_parts();
            check(event.kind().name(), both_ways(&lua, &payload).unwrap());
        }
        let (odd, values) = crate::extensions::tape::fixtures::odd_values();
        check("odd values", both_ways(&lua, &odd).unwrap());
        check("json values", both_ways(&lua, &values).unwrap());
        // A map whose keys are not strings has no tape (the JSON path handles it).
        let keyed: std::collections::BTreeMap<u8, u8> = [(1, 2)].into();
        assert!(both_ways(&lua, &keyed).is_none());
    }
}
