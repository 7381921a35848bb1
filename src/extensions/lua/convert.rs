//! Values across the boundary: JSON (what the host speaks) to Lua and back, by the rules of
//! `mypi_crossing::lua` (built at opt-level 3; its docs say them). Here: its tests, through
//! a real VM.

pub(super) use mypi_crossing::lua::{
    json_to_lua, json_to_lua_marked, lua_to_json, lua_to_json_marked, tape_to_lua,
};

#[cfg(test)]
mod tests {
    use super::*;
    use mlua::{Lua, LuaSerdeExt, Table, Value};
    use mypi_crossing::lua::{lua_to_json_careful, read_plain};
    use serde_json::{json, Value as Json};

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
        lua_to_json_careful(v, &lua.array_metatable(), lenient)
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
            // Scalars: nil, booleans and integers take a short way of their own.
            "nil",
            "true",
            "false",
            "-7",
            "1.5",
            "0/0",
            "'caf\\xff'",
            "print",
        ];
        // Plain data is read by the raw reader itself (not by the careful path after it).
        let plain: Value = lua
            .load("return {a = {1, 2, {b = 'c'}}, [2] = true}")
            .eval()
            .unwrap();
        let read = read_plain(&lua, &plain, &lua.array_metatable());
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
