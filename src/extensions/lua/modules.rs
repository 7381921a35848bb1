//! `require`: the only searchers are `package.preload` and ours, which resolves `x.y` to
//! `x/y.lua` or `x/y/init.lua` in the extension's folder, then in its discovery root, then
//! to the embedded standard modules: `json` (native, serde_json), `fs` (native, `fs.rs`),
//! `path` and `schema` (`stdlib/lua/*.lua`). Files found are recorded so the host can watch them for hot reload.
//! Modules load as text only, with chunk name `@<full path>` so errors name the file. The
//! extension's own file is never a module: `require("fs")` in `fs.lua` is the standard `fs`.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use mlua::{ChunkMode, Function, IntoLuaMulti, Lua, LuaSerdeExt, MultiValue, Table, Value};

use super::convert::{json_to_lua, lua_to_json};
use super::fs::{self, Fs};
use super::raise;

/// The embedded pure-Lua modules: name, chunk name, source.
const STDLIB: [(&str, &str, &str); 2] = [
    (
        "path",
        "@stdlib/lua/path.lua",
        include_str!("../../../stdlib/lua/path.lua"),
    ),
    (
        "schema",
        "@stdlib/lua/schema.lua",
        include_str!("../../../stdlib/lua/schema.lua"),
    ),
];

/// Where `require` looks, and what it found.
pub(super) struct Modules {
    /// The extension's own file (skipped: requiring it would load it again without end).
    script: PathBuf,
    dirs: Vec<PathBuf>,
    required: RefCell<Vec<PathBuf>>,
}

impl Modules {
    /// Looks in `script`'s folder, then in `root`.
    pub fn new(script: &Path, root: &Path) -> Self {
        let mut dirs = Vec::new();
        if let Some(dir) = script.parent() {
            dirs.push(dir.to_path_buf());
        }
        if !root.as_os_str().is_empty() && !dirs.iter().any(|d| d == root) {
            dirs.push(root.to_path_buf());
        }
        Modules {
            script: script.to_path_buf(),
            dirs,
            required: RefCell::new(Vec::new()),
        }
    }

    /// The files `require` has loaded (or tried to: a file with a syntax error is listed).
    pub fn required(&self) -> Vec<PathBuf> {
        self.required.borrow().clone()
    }

    fn note(&self, path: &Path) {
        let mut required = self.required.borrow_mut();
        if !required.iter().any(|p| p == path) {
            required.push(path.to_path_buf());
        }
    }
}

/// Replaces `package.searchers` with `{preload, ours}`; `fs` is what `require("fs")` uses.
pub(super) fn install(lua: &Lua, modules: Rc<Modules>, fs: Rc<Fs>) -> mlua::Result<()> {
    let package: Table = lua.globals().get("package")?;
    let searchers: Table = package.get("searchers")?;
    let preload: Function = searchers.raw_get(1)?;
    let ours = lua.create_function(move |lua, name: String| search(lua, &modules, &fs, &name))?;
    package.set("searchers", lua.create_sequence_from([preload, ours])?)?;
    Ok(())
}

fn search(lua: &Lua, modules: &Modules, fs: &Rc<Fs>, name: &str) -> mlua::Result<MultiValue> {
    let rel = name.replace('.', "/");
    let mut tried = String::new();
    for dir in &modules.dirs {
        for candidate in [
            dir.join(format!("{rel}.lua")),
            dir.join(&rel).join("init.lua"),
        ] {
            if candidate == modules.script {
                let shown = candidate.display();
                tried.push_str(&format!("\n\t'{shown}' is the extension itself"));
                continue;
            }
            if candidate.is_file() {
                modules.note(&candidate);
                let loader = load_file(lua, &candidate)?;
                return (loader, candidate.display().to_string()).into_lua_multi(lua);
            }
            tried.push_str(&format!("\n\tno file '{}'", candidate.display()));
        }
    }
    if name == "json" {
        let loader = lua.create_function(|lua, ()| json_module(lua))?;
        return (loader, "stdlib:json").into_lua_multi(lua);
    }
    if name == "fs" {
        let fs = fs.clone();
        let loader = lua.create_function(move |lua, ()| fs::module(lua, &fs))?;
        return (loader, "stdlib:fs").into_lua_multi(lua);
    }
    if let Some((_, chunk, source)) = STDLIB.iter().find(|(n, _, _)| *n == name) {
        let loader = lua
            .load(*source)
            .set_name(*chunk)
            .set_mode(ChunkMode::Text)
            .into_function()?;
        return (loader, &chunk[1..]).into_lua_multi(lua);
    }
    tried.push_str("\n\tnot a standard module (json, fs, path, schema)");
    tried.into_lua_multi(lua)
}

/// Compiles a file as a text chunk named `@path`; a syntax error is raised with its message.
pub(super) fn load_file(lua: &Lua, path: &Path) -> mlua::Result<Function> {
    let source = std::fs::read(path)
        .map_err(|e| mlua::Error::runtime(format!("cannot read {}: {e}", path.display())))?;
    lua.load(source)
        .set_name(format!("@{}", path.display()))
        .set_mode(ChunkMode::Text)
        .into_function()
        .map_err(|e| match e {
            mlua::Error::SyntaxError { message, .. } => mlua::Error::RuntimeError(message),
            other => other,
        })
}

/// `require("json")`: `encode(value, {pretty = true}?)`, `decode(text)`, `null` (encodes as
/// `null`), `array(t?)` (marks `t` so it encodes as an array even when empty).
pub(super) fn json_module(lua: &Lua) -> mlua::Result<Table> {
    let json = lua.create_table()?;
    json.set(
        "encode",
        lua.create_function(|lua, (v, opts): (Value, Option<Table>)| {
            let pretty = match opts {
                Some(t) => t.get::<Option<bool>>("pretty")?.unwrap_or(false),
                None => false,
            };
            super::lazy::read_fields(&v)?;
            let j = lua_to_json(lua, &v, false).map_err(|e| {
                raise(
                    lua,
                    &format!("json.encode: {}", e.describe("cannot encode", "value")),
                )
            })?;
            let text = if pretty {
                serde_json::to_string_pretty(&j)
            } else {
                serde_json::to_string(&j)
            };
            text.map_err(|e| raise(lua, &format!("json.encode: {e}")))
        })?,
    )?;
    json.set(
        "decode",
        lua.create_function(|lua, text: mlua::String| {
            let j: serde_json::Value = serde_json::from_slice(&text.as_bytes())
                .map_err(|e| raise(lua, &format!("json.decode: {e}")))?;
            json_to_lua(lua, &j)
        })?,
    )?;
    json.set("null", Value::NULL)?;
    json.set(
        "array",
        lua.create_function(|lua, t: Option<Table>| {
            let t = match t {
                Some(t) => t,
                None => lua.create_table()?,
            };
            t.set_metatable(Some(lua.array_metatable()))?;
            Ok(t)
        })?,
    )?;
    Ok(json)
}
