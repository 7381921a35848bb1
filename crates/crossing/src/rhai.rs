//! Values across the Rhai boundary: JSON and event tapes -> `Dynamic`, `Dynamic` -> JSON
//! (hand-written, faster than going through serde, and able to read shared values, which
//! closures create), and the call into a Rhai callback (Rhai's call code is generic, so it is
//! instantiated here, at opt-level 3, not in mypi's crate built for size).

use rhai::{Dynamic, Engine, EvalAltResult, FnPtr, Map, AST, FLOAT, INT};
use serde_json::{Map as JsonMap, Number, Value};

use crate::tape::{Tape, Tok};
use crate::Crossing;

/// Calls `f` (a closure or a named function of `ast`) with `args`.
#[inline(never)]
pub fn call(
    f: &FnPtr,
    engine: &Engine,
    ast: &AST,
    args: Vec<Dynamic>,
) -> Result<Dynamic, Box<EvalAltResult>> {
    f.call::<Dynamic>(engine, ast, args)
}

/// JSON -> Rhai: objects become maps, arrays arrays, `null` unit.
#[inline(never)]
pub fn to_dynamic(value: &Value) -> Dynamic {
    match value {
        Value::Null => Dynamic::UNIT,
        Value::Bool(b) => Dynamic::from_bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Dynamic::from_int(i as INT),
            None => Dynamic::from_float(n.as_f64().unwrap_or(0.0) as FLOAT),
        },
        Value::String(s) => Dynamic::from(s.clone()),
        Value::Array(items) => Dynamic::from_array(items.iter().map(to_dynamic).collect()),
        Value::Object(fields) => {
            // Inserted one by one: collecting would gather the pairs in a vector and sort
            // them first (an allocation and a pass more for the few keys of an event).
            let mut map = Map::new();
            for (k, v) in fields {
                map.insert(k.as_str().into(), to_dynamic(v));
            }
            Dynamic::from_map(map)
        }
    }
}

/// The value of `tape` (what [`to_dynamic`] makes of the same value's JSON).
#[inline(never)]
pub fn tape_to_dynamic(tape: &Tape) -> Dynamic {
    let mut at = 0;
    from_tape(tape, &mut at)
}

/// The value starting at token `*at`, leaving `*at` past it.
fn from_tape(tape: &Tape, at: &mut usize) -> Dynamic {
    let Some(tok) = tape.toks.get(*at).copied() else {
        return Dynamic::UNIT;
    };
    *at += 1;
    match tok {
        Tok::Null => Dynamic::UNIT,
        Tok::Bool(b) => Dynamic::from_bool(b),
        Tok::Int(i) => Dynamic::from_int(i as INT),
        Tok::Num(f) => Dynamic::from_float(f as FLOAT),
        Tok::Str(start, n) => Dynamic::from(tape.text_of(start, n).to_string()),
        Tok::Arr(n) => Dynamic::from_array((0..n).map(|_| from_tape(tape, at)).collect()),
        Tok::Obj(n) => {
            let mut map = Map::new();
            for _ in 0..n {
                let key = match tape.toks.get(*at) {
                    Some(Tok::Str(start, n)) => tape.text_of(*start, *n),
                    _ => "",
                };
                *at += 1;
                map.insert(key.into(), from_tape(tape, at));
            }
            Dynamic::from_map(map)
        }
    }
}

/// The JSON of a custom type the caller knows (`None`: not one of its types).
pub type Custom = fn(&Dynamic, &mut Crossing, usize) -> Option<Result<Value, String>>;

/// Rhai -> JSON. Functions, custom types other than `custom`'s and other non-data values are
/// errors, and so is a value past the host's limits ([`Crossing`]: nesting depth, total size
/// counting every appearance of a string).
#[inline(never)]
pub fn to_json(value: &Dynamic, custom: Custom) -> Result<Value, String> {
    value_to_json(value, &mut Crossing::for_thread(), 0, custom)
}

/// A Rhai map as a JSON object (an empty map stays an object), within the host's limits.
#[inline(never)]
pub fn map_to_json(map: &Map, custom: Custom) -> Result<Value, String> {
    fields_to_json(map, &mut Crossing::for_thread(), 0, custom)
}

fn value_to_json(
    value: &Dynamic,
    budget: &mut Crossing,
    depth: usize,
    custom: Custom,
) -> Result<Value, String> {
    Crossing::check_depth(depth)?;
    if value.is_shared() {
        // Read through the shared cell without copying what it holds.
        let inner = value
            .read_lock::<Dynamic>()
            .ok_or("a shared value that is being changed")?;
        return value_to_json(&inner, budget, depth + 1, custom);
    }
    if let Ok(s) = value.as_immutable_string_ref() {
        budget.charge(s.len())?;
        return Ok(Value::String(s.to_string()));
    }
    budget.charge(0)?;
    if value.is_unit() {
        return Ok(Value::Null);
    }
    if let Ok(b) = value.as_bool() {
        return Ok(Value::Bool(b));
    }
    if let Ok(i) = value.as_int() {
        return Ok(Value::Number(Number::from(i)));
    }
    if let Ok(f) = value.as_float() {
        return Ok(Number::from_f64(f).map_or(Value::Null, Value::Number));
    }
    if let Ok(c) = value.as_char() {
        return Ok(Value::String(c.to_string()));
    }
    if value.is_array() {
        let items = value.as_array_ref()?;
        return items
            .iter()
            .map(|v| value_to_json(v, budget, depth + 1, custom))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array);
    }
    if value.is_map() {
        return fields_to_json(&*value.as_map_ref()?, budget, depth, custom);
    }
    if let Some(json) = custom(value, budget, depth) {
        return json;
    }
    if value.is_blob() {
        let blob = value.as_blob_ref()?;
        budget.charge(blob.len() * 4)?;
        return Ok(Value::Array(blob.iter().map(|b| Value::from(*b)).collect()));
    }
    Err(format!(
        "a value of type {} cannot be converted to JSON (only unit, bool, numbers, strings, arrays and maps)",
        value.type_name()
    ))
}

/// The fields of `map` as a JSON object, `depth` levels down (for a [`Custom`] that holds a
/// map).
pub fn fields_to_json(
    map: &Map,
    budget: &mut Crossing,
    depth: usize,
    custom: Custom,
) -> Result<Value, String> {
    let mut out = JsonMap::new();
    for (k, v) in map {
        budget.charge(k.len())?;
        let value =
            value_to_json(v, budget, depth + 1, custom).map_err(|e| format!("field '{k}': {e}"))?;
        out.insert(k.to_string(), value);
    }
    Ok(Value::Object(out))
}
