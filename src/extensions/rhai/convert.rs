//! Values and errors across the Rhai boundary: JSON <-> `Dynamic` (`mypi_crossing::rhai`,
//! built at opt-level 3, with mypi's own types that have a JSON form), and Rhai errors ->
//! [`ScriptError`] with `path:line: message`.

use std::time::Duration;

use ::rhai::{Dynamic, EvalAltResult, Map, ParseError, Position};
use serde_json::Value;

use crate::extensions::crossing::Crossing;
use crate::extensions::script::{ErrorKind, ScriptError};

pub use mypi_crossing::rhai::{tape_to_dynamic, to_dynamic};

/// Rhai -> JSON within the host's limits (`mypi_crossing::rhai::to_json`), with mypi's own
/// types that have a JSON form: `api.state` and an event read on demand.
pub fn to_json(value: &Dynamic) -> Result<Value, String> {
    mypi_crossing::rhai::to_json(value, custom)
}

/// A Rhai map as a JSON object (an empty map stays an object), within the host's limits.
pub fn map_to_json(map: &Map) -> Result<Value, String> {
    mypi_crossing::rhai::map_to_json(map, custom)
}

/// The JSON of mypi's custom types: `api.state` and an event read on demand.
fn custom(value: &Dynamic, budget: &mut Crossing, depth: usize) -> Option<Result<Value, String>> {
    if let Some(state) = value.read_lock::<super::state::State>() {
        return Some(state.to_json());
    }
    let event = value.read_lock::<super::ctx::LazyEvent>()?;
    Some(mypi_crossing::rhai::fields_to_json(
        &event.whole(),
        budget,
        depth,
        custom,
    ))
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
