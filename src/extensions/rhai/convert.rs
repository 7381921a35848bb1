//! Values and errors across the Rhai boundary: JSON <-> `Dynamic` (hand-written, faster than
//! going through serde, and able to read shared values, which closures create), and Rhai
//! errors -> [`ScriptError`] with `path:line: message`.

use std::time::Duration;

use ::rhai::{Dynamic, EvalAltResult, Map, ParseError, Position, FLOAT, INT};
use serde_json::{Map as JsonMap, Number, Value};

use crate::extensions::crossing::Crossing;
use crate::extensions::script::{ErrorKind, ScriptError};
use crate::extensions::tape::{Tape, Tok};

/// JSON -> Rhai: objects become maps, arrays arrays, `null` unit.
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
            let map: Map = fields
                .iter()
                .map(|(k, v)| (k.as_str().into(), to_dynamic(v)))
                .collect();
            Dynamic::from_map(map)
        }
    }
}

/// The value of `tape` (what [`to_dynamic`] makes of the same value's JSON).
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

/// Rhai -> JSON. Functions, custom types and other non-data values are errors, and so is a
/// value past the host's limits ([`Crossing`]: nesting depth, total size counting every
/// appearance of a string).
pub fn to_json(value: &Dynamic) -> Result<Value, String> {
    value_to_json(value, &mut Crossing::for_thread(), 0)
}

/// A Rhai map as a JSON object (an empty map stays an object), within the host's limits.
pub fn map_to_json(map: &Map) -> Result<Value, String> {
    fields_to_json(map, &mut Crossing::for_thread(), 0)
}

fn value_to_json(value: &Dynamic, budget: &mut Crossing, depth: usize) -> Result<Value, String> {
    Crossing::check_depth(depth)?;
    if value.is_shared() {
        // Read through the shared cell without copying what it holds.
        let inner = value
            .read_lock::<Dynamic>()
            .ok_or("a shared value that is being changed")?;
        return value_to_json(&inner, budget, depth + 1);
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
            .map(|v| value_to_json(v, budget, depth + 1))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array);
    }
    if value.is_map() {
        return fields_to_json(&*value.as_map_ref()?, budget, depth);
    }
    if let Some(state) = value.read_lock::<super::state::State>() {
        return state.to_json();
    }
    if let Some(event) = value.read_lock::<super::ctx::LazyEvent>() {
        return fields_to_json(&event.whole(), budget, depth);
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

fn fields_to_json(map: &Map, budget: &mut Crossing, depth: usize) -> Result<Value, String> {
    let mut out = JsonMap::new();
    for (k, v) in map {
        budget.charge(k.len())?;
        let value = value_to_json(v, budget, depth + 1).map_err(|e| format!("field '{k}': {e}"))?;
        out.insert(k.to_string(), value);
    }
    Ok(Value::Object(out))
}

/// How an extension's errors are worded: its path and its budget.
pub struct ErrorContext<'a> {
    pub path: &'a str,
    pub budget: Duration,
    pub max_call_levels: usize,
    pub memory_cap: usize,
}

impl ErrorContext<'_> {
    /// A compile error of a script.
    pub fn syntax(&self, err: &ParseError) -> ScriptError {
        let line = err.position().line().unwrap_or(0);
        ScriptError::new(
            ErrorKind::Syntax,
            format!("{}:{line}: {}", self.path, err.err_type()),
        )
    }

    /// A runtime error: follows function-call and module wrappers down to the error that
    /// happened, keeping the innermost known source file and line.
    pub fn runtime(&self, err: Box<EvalAltResult>) -> ScriptError {
        self.runtime_in(err, None)
    }

    /// [`Self::runtime`] of a callback handed over on `fallback` (the line given when the
    /// error carries none: a limit stopping a callback the host called).
    pub fn runtime_in(&self, err: Box<EvalAltResult>, fallback: Option<usize>) -> ScriptError {
        let mut source = self.path.to_string();
        let mut err = err;
        let mut line = None;
        loop {
            match *err {
                EvalAltResult::ErrorInFunctionCall(_, src, inner, pos) => {
                    if !src.is_empty() {
                        source = src;
                    }
                    line = pos.line().or(line);
                    err = inner;
                }
                EvalAltResult::ErrorInModule(src, inner, pos) => {
                    line = pos.line().or(line);
                    if !src.is_empty() {
                        source = src;
                        line = None;
                    }
                    err = inner;
                }
                _ => break,
            }
        }
        let pos = err.take_position();
        let line = pos.line().or(line);
        let line = match line {
            None if source == self.path => fallback,
            line => line,
        };
        self.leaf(&source, line, *err)
    }

    fn leaf(&self, source: &str, line: Option<usize>, err: EvalAltResult) -> ScriptError {
        let at = match line {
            Some(l) => format!("{source}:{l}"),
            None => source.to_string(),
        };
        let (kind, message) = match err {
            EvalAltResult::ErrorParsing(e, _) => (ErrorKind::Syntax, e.to_string()),
            EvalAltResult::ErrorTerminated(why, _)
                if why
                    .read_lock::<::rhai::ImmutableString>()
                    .is_some_and(|s| s.as_str() == super::CANCELLED) =>
            {
                return ScriptError::runtime(format!("{at}: stopped: {}", super::CANCELLED))
            }
            EvalAltResult::ErrorTerminated(why, _)
                if why
                    .read_lock::<::rhai::ImmutableString>()
                    .is_some_and(|s| s.as_str() == super::OUT_OF_MEMORY) =>
            {
                return ScriptError::out_of_memory(&at, self.memory_cap)
            }
            EvalAltResult::ErrorTerminated(..) => {
                return ScriptError::over_budget(&at, self.budget)
            }
            EvalAltResult::ErrorTooManyOperations(_) => (
                ErrorKind::Memory,
                "too many operations (the operation limit)".to_string(),
            ),
            EvalAltResult::ErrorDataTooLarge(what, _) => (
                ErrorKind::Memory,
                format!("{what} is too large (the script size limits)"),
            ),
            e @ (EvalAltResult::ErrorTooManyVariables(_)
            | EvalAltResult::ErrorTooManyModules(_)) => (ErrorKind::Memory, e.to_string()),
            EvalAltResult::ErrorStackOverflow(_) => (
                ErrorKind::Runtime,
                format!(
                    "stack overflow: more than {} nested call levels",
                    self.max_call_levels
                ),
            ),
            EvalAltResult::ErrorRuntime(value, _) if value.is_string() => {
                (ErrorKind::Runtime, value.to_string())
            }
            e => (ErrorKind::Runtime, e.to_string()),
        };
        ScriptError::new(kind, format!("{at}: {message}"))
    }
}

/// A script error raised from a native function (Rhai adds the caller's position).
pub fn script_err(message: impl Into<String>) -> Box<EvalAltResult> {
    EvalAltResult::ErrorRuntime(Dynamic::from(message.into()), Position::NONE).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extensions::tape::{fixtures, with_tape};

    /// What the tape gives for `value` and what the JSON path gives, written out.
    fn both_ways<T: serde::Serialize>(value: &T) -> Option<(String, String)> {
        let taped = with_tape(value, tape_to_dynamic)?;
        let json = to_dynamic(&serde_json::to_value(value).ok()?);
        Some((format!("{taped:?}"), format!("{json:?}")))
    }

    #[test]
    fn the_tape_builds_what_the_json_path_builds() {
        for (event, _) in crate::hooks::tests::pinned_events() {
            let (payload, _) = event.script_parts();
            let (taped, json) = both_ways(&payload).expect("every event has a tape");
            assert_eq!(taped, json, "{}", event.kind().name());
        }
        let (odd, values) = fixtures::odd_values();
        let (taped, json) = both_ways(&odd).expect("a tape");
        assert_eq!(taped, json);
        assert!(taped.contains("\"huge\": 1.8446744073709552e19"), "{taped}");
        let (taped, json) = both_ways(&values).expect("a tape");
        assert_eq!(taped, json);
    }
}
