//! `require("fs")`: files and folders for Lua extensions, within the limits Rhai's file
//! functions have, on top of [`ApiLink`]:
//!
//! - `fs.list(path) -> {names}`: `api.read_dir` (sorted, folders end in `/`, hidden names
//!   included, `{}` for a folder that does not exist, at most
//!   [`MAX_DIR_ENTRIES`](crate::extensions::script::MAX_DIR_ENTRIES) names);
//! - `fs.read(path) -> text`: Rhai's `read_file` (a regular file's UTF-8 text, up to the
//!   script's string size limit; FIFOs and devices are refused, so a read cannot block);
//! - `fs.write(path, text)`: Rhai's `write_file` (creates parent folders);
//! - `fs.exists(path) -> bool`, `fs.is_dir(path) -> bool`.
//!
//! A leading `~/` is the home folder, a relative path is against the working folder
//! ([`ApiLink::resolve`]). Errors are raised at the script's line, `fs.NAME: ...`.

use std::rc::Rc;
use std::sync::Arc;

use mlua::{Lua, LuaSerdeExt, Table, Value};

use super::raise;
use crate::extensions::api::ApiLink;

/// What the `fs` functions share.
pub(super) struct Fs {
    link: Arc<ApiLink>,
    /// The largest file `fs.read` returns (the script's string size limit).
    max_read: usize,
}

impl Fs {
    pub fn new(link: Arc<ApiLink>, max_read: usize) -> Rc<Self> {
        Rc::new(Fs { link, max_read })
    }
}

/// Builds the `fs` table (once per `require`; `package.loaded` keeps it).
pub(super) fn module(lua: &Lua, fs: &Rc<Fs>) -> mlua::Result<Table> {
    let t = lua.create_table_with_capacity(0, 5)?;
    let f = fs.clone();
    t.set(
        "list",
        lua.create_function(move |lua, path: Value| {
            let path = path_arg(lua, "fs.list", path)?;
            let names = f
                .link
                .read_dir(&path)
                .map_err(|e| raise(lua, &format!("fs.list: {e}")))?;
            let list = lua.create_sequence_from(names)?;
            list.set_metatable(Some(lua.array_metatable()))?;
            Ok(list)
        })?,
    )?;
    let f = fs.clone();
    t.set(
        "read",
        lua.create_function(move |lua, path: Value| {
            let path = path_arg(lua, "fs.read", path)?;
            f.link
                .read_path(&f.link.resolve(&path), f.max_read)
                .map_err(|e| raise(lua, &format!("fs.read: {e}")))
        })?,
    )?;
    let f = fs.clone();
    t.set(
        "write",
        lua.create_function(move |lua, (path, text): (Value, Value)| {
            let path = path_arg(lua, "fs.write", path)?;
            let text = text_arg(lua, "fs.write", text)?;
            f.link
                .write_path(&f.link.resolve(&path), &text)
                .map_err(|e| raise(lua, &format!("fs.write: {e}")))
        })?,
    )?;
    let f = fs.clone();
    t.set(
        "exists",
        lua.create_function(move |lua, path: Value| {
            let path = path_arg(lua, "fs.exists", path)?;
            Ok(f.link.resolve(&path).exists())
        })?,
    )?;
    let f = fs.clone();
    t.set(
        "is_dir",
        lua.create_function(move |lua, path: Value| {
            let path = path_arg(lua, "fs.is_dir", path)?;
            Ok(f.link.resolve(&path).is_dir())
        })?,
    )?;
    Ok(t)
}

/// A path argument: a non-empty UTF-8 string.
fn path_arg(lua: &Lua, func: &str, v: Value) -> mlua::Result<String> {
    match v {
        Value::String(s) => match s.to_str() {
            Ok(p) if !p.is_empty() => Ok(p.to_string()),
            Ok(_) => Err(raise(lua, &format!("{func}: the path is empty"))),
            Err(_) => Err(raise(lua, &format!("{func}: the path is not UTF-8 text"))),
        },
        other => Err(raise(
            lua,
            &format!("{func}: the path must be a string, not {}", type_of(&other)),
        )),
    }
}

/// A text argument: a UTF-8 string or a number (written as Lua prints it).
fn text_arg(lua: &Lua, func: &str, v: Value) -> mlua::Result<String> {
    match v {
        Value::String(s) => s
            .to_str()
            .map(|t| t.to_string())
            .map_err(|_| raise(lua, &format!("{func}: the text is not UTF-8"))),
        Value::Integer(_) | Value::Number(_) => v.to_string(),
        other => Err(raise(
            lua,
            &format!("{func}: the text must be a string, not {}", type_of(&other)),
        )),
    }
}

/// `nil`, `a table`, `an integer`, ... as the `api` functions name a wrong value.
fn type_of(v: &Value) -> String {
    match v.type_name() {
        "nil" => "nil".to_string(),
        t if t.starts_with(['a', 'e', 'i', 'o', 'u']) => format!("an {t}"),
        t => format!("a {t}"),
    }
}
