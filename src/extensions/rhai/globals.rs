//! Functions every Rhai script (and module) can call without `api`: files (relative to the
//! working folder), JSON, regular expressions, environment variables, and `print` / `debug`
//! sent to the extension's debug log.
//!
//! - `read_file(path) -> string`, `write_file(path, text)` (creates parent folders),
//!   `file_exists(path) -> bool`, `list_dir(path) -> [names]` (sorted, at most
//!   [`MAX_DIR_ENTRIES`](crate::extensions::script::MAX_DIR_ENTRIES));
//! - `json_encode(value) -> string`, `json_decode(text) -> value`;
//! - `regex_match(pattern, text) -> bool`, `regex_find(pattern, text) -> [captures] | ()`,
//!   `regex_replace(pattern, text, replacement) -> string` ([`Patterns`]);
//! - `env(name) -> string | ()`.

use std::rc::Rc;
use std::sync::Arc;

use ::rhai::{Array, Dynamic, Engine};

use super::convert::{script_err, to_dynamic, to_json};
use super::patterns::Patterns;
use crate::extensions::api::ApiLink;

type RhaiResult<T> = Result<T, Box<::rhai::EvalAltResult>>;

/// Registers the global functions and the `print` / `debug` hooks.
pub fn register(engine: &mut Engine, link: &Arc<ApiLink>, max_string_bytes: usize) {
    let l = link.clone();
    engine.on_print(move |s| l.log(s));
    let l = link.clone();
    engine.on_debug(move |s, src, pos| match (src, pos.line()) {
        (Some(src), Some(line)) => l.log(&format!("{src}:{line}: {s}")),
        _ => l.log(s),
    });
    let l = link.clone();
    engine.register_fn("read_file", move |path: &str| {
        l.read_file(path, max_string_bytes).map_err(script_err)
    });
    let l = link.clone();
    engine.register_fn("write_file", move |path: &str, text: &str| {
        l.write_file(path, text).map_err(script_err)
    });
    let l = link.clone();
    engine.register_fn("file_exists", move |path: &str| l.cwd().join(path).exists());
    let l = link.clone();
    engine.register_fn("list_dir", move |path: &str| list_dir(&l, path));
    engine.register_fn("json_encode", |value: Dynamic| -> RhaiResult<String> {
        let json = to_json(&value).map_err(|e| script_err(format!("json_encode: {e}")))?;
        Ok(json.to_string())
    });
    engine.register_fn("json_decode", |text: &str| -> RhaiResult<Dynamic> {
        let json: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| script_err(format!("json_decode: invalid JSON: {e}")))?;
        Ok(to_dynamic(&json))
    });
    register_patterns(engine);
    engine.register_fn("env", env);
}

/// `regex_match`, `regex_find`, `regex_replace`, sharing one cache of compiled patterns.
fn register_patterns(engine: &mut Engine) {
    let patterns = Rc::new(Patterns::default());
    let p = patterns.clone();
    engine.register_fn("regex_match", move |pattern: &str, text: &str| {
        p.is_match(pattern, text).map_err(script_err)
    });
    let p = patterns.clone();
    engine.register_fn("regex_find", move |pattern: &str, text: &str| {
        p.find(pattern, text).map_err(script_err)
    });
    let p = patterns;
    engine.register_fn(
        "regex_replace",
        move |pattern: &str, text: &str, replacement: &str| {
            p.replace(pattern, text, replacement).map_err(script_err)
        },
    );
}

/// `env(name)`: the variable's value (invalid UTF-8 replaced), `()` when it is not set.
fn env(name: &str) -> RhaiResult<Dynamic> {
    if name.is_empty() || name.contains(['=', '\0']) {
        return Err(script_err(format!(
            "env: {name:?} is not an environment variable name"
        )));
    }
    Ok(match std::env::var_os(name) {
        Some(v) => Dynamic::from(v.to_string_lossy().into_owned()),
        None => Dynamic::UNIT,
    })
}

fn list_dir(link: &ApiLink, path: &str) -> RhaiResult<Array> {
    let names = link.list_dir(path).map_err(script_err)?;
    Ok(names.into_iter().map(Dynamic::from).collect())
}
