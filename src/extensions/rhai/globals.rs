//! Functions every Rhai script (and module) can call without `api`: files (relative to the
//! working folder), JSON, and `print` / `debug` sent to the extension's debug log.
//!
//! - `read_file(path) -> string`, `write_file(path, text)` (creates parent folders),
//!   `file_exists(path) -> bool`, `list_dir(path) -> [names]` (sorted);
//! - `json_encode(value) -> string`, `json_decode(text) -> value`.

use std::sync::Arc;

use ::rhai::{Array, Dynamic, Engine};

use super::convert::{script_err, to_dynamic, to_json};
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
}

fn list_dir(link: &ApiLink, path: &str) -> RhaiResult<Array> {
    let dir = link.cwd().join(path);
    let entries = std::fs::read_dir(&dir)
        .map_err(|e| script_err(format!("cannot list {}: {e}", dir.display())))?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    Ok(names.into_iter().map(Dynamic::from).collect())
}
