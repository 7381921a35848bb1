//! The Lua engine: one `mlua` VM (Lua 5.4) per extension, owned by the extension's worker
//! thread.
//!
//! - `sandbox.rs` + `prelude.lua`: the VM (no `debug`, no `os.exit`, text chunks only), the
//!   CPU budget that `pcall` cannot swallow;
//! - `globals.rs`: the `api` table and the functions of `api` and `ctx`, on top of
//!   [`ApiLink`]; `ctx.rs`: the `ctx` table of a run;
//! - `modules.rs`: `require` (the extension's folder, its root, the embedded `json`, `fs`,
//!   `path`, `schema`); `fs.rs`: the `fs` module (files within the script's limits);
//! - `code.rs`: the VM of a `code` call (the model's script), built the same way;
//! - `convert.rs`: JSON <-> Lua values (`raw.rs`: the same in one protected call each).
//!
//! Errors carry `path:line: message` (full paths, also where Lua would shorten them); a call
//! over its budget reports [`ErrorKind::Budget`], one over the memory cap
//! [`ErrorKind::Memory`] (the VM is collected and stays usable). Runaway recursion is a
//! runtime "stack overflow": Lua's own, "C stack overflow" through library functions, or,
//! once the VM has used half its memory, the hook's check at 10 000 nested calls.
//!
//! [`new_engine`] is the [`EngineFactory`](super::api::EngineFactory); [`LuaEngine::new`]
//! gives the concrete type, whose [`LuaEngine::required_files`] lists the files the script
//! `require`d (for the hot-reload watcher).

pub mod code;
mod convert;
mod ctx;
mod fs;
mod globals;
mod lazy;
mod modules;
mod sandbox;
#[cfg(test)]
mod tests;

use std::cell::{Cell, RefCell};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use mlua::{Function, Lua, LuaSerdeExt, MultiValue, Table, Value};
use serde_json::Value as Json;

use mypi_crossing::lua::Coroutines;

use self::modules::Modules;
use self::sandbox::{Budget, Spent};
use super::api::{ApiLink, Engine, EventView};
use super::script::{CallbackId, ErrorKind, Limits, ScriptError, PLAIN_DATA};
use crate::vocab::run::RunContext;

/// Builds the engine for an extension (on its worker thread).
pub fn new_engine(link: Arc<ApiLink>, limits: Limits) -> Result<Box<dyn Engine>, ScriptError> {
    Ok(LuaEngine::boxed(link, limits)?)
}

/// The id of a run context and its Lua `ctx` table.
type CtxFields = (u64, Table);

/// An extension's Lua VM.
pub struct LuaEngine {
    link: Arc<ApiLink>,
    limits: Limits,
    budget: Rc<Budget>,
    modules: Rc<Modules>,
    api: Table,
    /// `CallbackId` -> function.
    callbacks: Table,
    ctx_maker: ctx::CtxMaker,
    shared: Rc<globals::Shared>,
    /// `ctx` for the last run context seen.
    ctx_fields: RefCell<Option<CtxFields>>,
    /// The table of the event view the running chain shares ([`LuaEngine::event_table`]).
    event: RefCell<Option<(u64, Value)>>,
    /// Calls in coroutines, through the prelude's `run(co, ...)` (see [`LuaEngine::resume`]).
    coroutines: Coroutines,
    /// `path:line` where the last call that failed was (read from its coroutine's stack: a
    /// memory error carries no place of its own).
    failed_at: Cell<Option<String>>,
    /// The `__pairs` of an event whose `text` is read on demand (one for all events).
    lazy_pairs: mlua::Function,
    /// The VM's memory after its last full collection ([`LuaEngine::end_event`]).
    collected: Cell<usize>,

    /// mlua's array metatable (marks tables that are JSON arrays).
    mark: Table,
    /// Declared last: dropped after the Lua values above.
    lua: Lua,
}

impl LuaEngine {
    /// A VM with the sandbox, `api` and `require` in place; the script is not run yet.
    pub fn new(link: Arc<ApiLink>, limits: Limits) -> Result<Self, ScriptError> {
        Self::boxed(link, limits).map(|engine| *engine)
    }

    /// [`LuaEngine::new`], on the heap. The VM is made first, from this small frame: its
    /// libraries' set-up is the deepest a load's stack goes before the script runs. The
    /// engine is built around it by [`LuaEngine::assemble`], in a frame of its own, so the two
    /// frames do not add up (see [`on_load_stack`], the stacks loads run on).
    ///
    /// [`on_load_stack`]: crate::extensions::thread::on_load_stack
    fn boxed(link: Arc<ApiLink>, limits: Limits) -> Result<Box<Self>, ScriptError> {
        crate::extensions::crossing::set_thread_cap(limits.max_value_bytes);
        let budget = Rc::new(Budget::default());
        let log_link = link.clone();
        let made = sandbox::new_vm(budget.clone(), move |line| log_link.log(line))
            .and_then(|(lua, runner)| Self::assemble(lua, runner, &link, limits, budget));
        made.map_err(|e| {
            ScriptError::runtime(format!(
                "{}: cannot set up the Lua VM: {e}",
                link.info.path.display()
            ))
        })
    }

    /// The engine around a fresh VM: the write guard when checking, `require`, `api`, `ctx`
    /// and the memory cap.
    #[inline(never)]
    fn assemble(
        lua: Lua,
        runner: mlua::Function,
        link: &Arc<ApiLink>,
        limits: Limits,
        budget: Rc<Budget>,
    ) -> mlua::Result<Box<LuaEngine>> {
        let modules = Rc::new(Modules::new(&link.info.path, &link.info.root));
        if link.host().checking {
            sandbox::refuse_writes(&lua, crate::extensions::services::CHECKING)?;
        }
        let files = fs::Fs::new(link.clone(), limits.max_string_bytes);
        modules::install(&lua, modules.clone(), files)?;
        let shared = globals::Shared::new(link.clone());
        let api = globals::api_table(&lua, &shared)?;
        lua.globals().set("api", &api)?;
        let ctx_maker = ctx::CtxMaker::new(&lua, &shared)?;
        lua.set_memory_limit(limits.memory_bytes)?;
        budget.set_memory_cap(limits.memory_bytes);
        Ok(Box::new(LuaEngine {
            link: link.clone(),
            limits,
            budget,
            modules,
            api,
            callbacks: globals::callbacks(&lua)?,
            ctx_maker,
            shared,
            ctx_fields: RefCell::new(None),
            event: RefCell::new(None),
            coroutines: Coroutines::new(runner),
            failed_at: Cell::new(None),
            lazy_pairs: lazy::pairs(&lua)?,
            collected: Cell::new(0),
            mark: lua.array_metatable(),
            lua,
        }))
    }

    /// The files the script has `require`d so far (its helpers, for the hot-reload watcher).
    pub fn required_files(&self) -> Vec<PathBuf> {
        self.modules.required()
    }

    /// Memory the VM uses now, in bytes.
    pub fn used_memory(&self) -> usize {
        self.lua.used_memory()
    }

    /// Runs `f` under the CPU budget and turns its failure into a [`ScriptError`].
    fn guarded<T>(
        &self,
        budget: Duration,
        f: impl FnOnce() -> mlua::Result<T>,
    ) -> Result<T, ScriptError> {
        self.budget.start(self.link.start_call(budget), budget);
        let out = f();
        let spent = self.budget.stop();
        if spent.cancelled {
            self.recover();
            return Err(ScriptError::runtime(format!(
                "{}: stopped: the run was cancelled",
                self.link.info.path.display()
            )));
        }
        match (out, spent.over.is_some()) {
            (Ok(v), false) => Ok(v),
            (Ok(_), true) => Err(self.budget_error(&spent)),
            (Err(_), true) => {
                self.recover();
                Err(self.budget_error(&spent))
            }
            (Err(e), false) => {
                let err = self.script_error(&e);
                if err.kind == ErrorKind::Memory {
                    self.recover();
                }
                Err(err)
            }
        }
    }

    /// Calls `f` through the prelude's `run`, in a coroutine that the budget hook suspends
    /// (and the VM drops) once the call is past its budget: no code of the script runs after
    /// that, not even its `__close` methods ([`Coroutines`], built at opt-level 3).
    fn resume(&self, f: &mlua::Function, args: MultiValue) -> mlua::Result<Value> {
        let (out, at) = self.coroutines.call(&self.lua, f, args);
        self.failed_at.set(at);
        out
    }

    /// After a budget or memory failure: free what the failed call left behind.
    fn recover(&self) {
        self.lua.gc_restart();
        let _ = self.lua.gc_collect();
    }

    fn budget_error(&self, spent: &Spent) -> ScriptError {
        let at = spent.over.clone().flatten();
        let at = at.unwrap_or_else(|| self.link.info.path.display().to_string());
        ScriptError::over_budget(&self.expand(&at), spent.budget)
    }

    /// Classifies an mlua error; the message gets `path:line:` in front if Lua gave none.
    fn script_error(&self, e: &mlua::Error) -> ScriptError {
        let (kind, msg) = classify(e);
        let path = self.link.info.path.display().to_string();
        let msg = match kind {
            ErrorKind::Memory => {
                let at = self.failed_at.take().unwrap_or(path);
                return ScriptError::out_of_memory(&self.expand(&at), self.limits.memory_bytes);
            }
            _ => {
                let msg = self.expand(&msg);
                if has_location(&msg) {
                    msg
                } else {
                    format!("{path}: {msg}")
                }
            }
        };
        ScriptError::new(kind, msg)
    }

    /// Lua shortens long chunk names to `...tail`: put the full paths back.
    fn expand(&self, msg: &str) -> String {
        let mut paths = self.modules.required();
        paths.push(self.link.info.path.clone());
        expand_paths(msg, &paths)
    }

    /// `ctx` of a call ([`ctx::CtxMaker`]), the one of the last run context seen again.
    fn ctx_table(&self, ctx: &Arc<RunContext>) -> mlua::Result<Table> {
        let mut cache = self.ctx_fields.borrow_mut();
        if let Some((seen, table)) = cache.as_ref() {
            if *seen == ctx.id {
                return Ok(table.clone());
            }
        }
        let table = self.ctx_maker.make(&self.lua, &self.shared, ctx)?;
        *cache = Some((ctx.id, table.clone()));
        Ok(table)
    }

    /// The function of callback `cb`; `None` when it was removed.
    fn callback(&self, cb: CallbackId) -> mlua::Result<Option<Function>> {
        Ok(match self.callbacks.raw_get::<Value>(cb)? {
            Value::Function(f) => Some(f),
            _ => None,
        })
    }

    /// The Lua table of an event view: built once per view (the handlers of one chain share
    /// it until one rewrites the event). Its on-demand field (`message_update`'s `text`,
    /// `agent_end`'s `messages`) is read from the host only when the script looks at it.
    fn event_table(&self, view: &EventView) -> mlua::Result<Value> {
        if let Some((id, table)) = &*self.event.borrow() {
            if *id == view.id {
                return Ok(table.clone());
            }
        }
        let (value, lazy) = view.build(
            |tape| convert::tape_to_lua(&self.lua, tape, &self.mark),
            |json| convert::json_to_lua_marked(&self.lua, json, &self.mark),
        );
        let value = value?;
        if let (Some(lazy), Value::Table(table)) = (lazy, &value) {
            let mt = lazy::metatable(&self.lua, lazy, &self.lazy_pairs, &self.mark)?;
            table.set_metatable(Some(mt))?;
        }
        *self.event.borrow_mut() = Some((view.id, value.clone()));
        Ok(value)
    }

    /// Calls callback `cb` with the arguments `args` makes and `ctx` last; a removed callback
    /// answers `null`.
    fn invoke(
        &mut self,
        cb: CallbackId,
        args: impl FnOnce(&Self) -> mlua::Result<MultiValue>,
        ctx: &Arc<RunContext>,
        budget: Duration,
    ) -> Result<Json, ScriptError> {
        let prepared = || -> mlua::Result<Option<(Function, MultiValue)>> {
            let Some(f) = self.callback(cb)? else {
                return Ok(None);
            };
            let mut argv = args(self)?;
            argv.push_back(Value::Table(self.ctx_table(ctx)?));
            Ok(Some((f, argv)))
        };
        let Some((f, argv)) = prepared().map_err(|e| self.script_error(&e))? else {
            return Ok(Json::Null);
        };
        let out = self.guarded(budget, || self.resume(&f, argv))?;
        convert::lua_to_json_marked(&self.lua, &out, &self.mark, false).map_err(|e| {
            ScriptError::runtime(format!(
                "{}: {}; {PLAIN_DATA}",
                self.link.info.path.display(),
                e.describe("cannot return", "result")
            ))
        })
    }
}

impl Engine for LuaEngine {
    fn required_files(&self) -> Vec<PathBuf> {
        LuaEngine::required_files(self)
    }

    fn load(&mut self) -> Result<(), ScriptError> {
        let path = self.link.info.path.clone();
        let source = self.link.info.source().map_err(|e| {
            ScriptError::runtime(format!("{}: cannot read the script: {e}", path.display()))
        })?;
        let chunk = self
            .lua
            .load(&*source)
            .set_name(format!("@{}", path.display()))
            .set_mode(mlua::ChunkMode::Text)
            .into_function()
            .map_err(|e| self.script_error(&e))?;
        drop(source);
        let ran = self.guarded(self.limits.budget, || {
            self.resume(&chunk, MultiValue::new()).map(drop)
        });
        drop(chunk);
        ran?;
        self.collected.set(self.lua.used_memory());
        Ok(())
    }

    /// A removed callback (its handle's `remove()` ran) answers `null`, as if it returned
    /// nothing.
    fn call(
        &mut self,
        cb: CallbackId,
        args: &[Json],
        ctx: &Arc<RunContext>,
        budget: Duration,
    ) -> Result<Json, ScriptError> {
        let convert = |engine: &Self| {
            args.iter()
                .map(|a| convert::json_to_lua_marked(&engine.lua, a, &engine.mark))
                .collect()
        };
        self.invoke(cb, convert, ctx, budget)
    }

    fn call_event(
        &mut self,
        cb: CallbackId,
        view: &EventView,
        ctx: &Arc<RunContext>,
        budget: Duration,
    ) -> Result<Json, ScriptError> {
        let event = |engine: &Self| Ok(MultiValue::from_iter([engine.event_table(view)?]));
        self.invoke(cb, event, ctx, budget)
    }

    /// Drops the event's table, and collects the VM's garbage once it has more than doubled
    /// (plus 256 KiB) since the last collection: an `agent_end` carries the whole
    /// conversation, and a VM that allocates little between two of them would otherwise keep
    /// a table of it as garbage for the whole session.
    fn end_event(&mut self) {
        self.event.borrow_mut().take();
        if self.lua.used_memory() > 2 * self.collected.get() + (256 << 10) {
            let _ = self.lua.gc_collect();
            self.collected.set(self.lua.used_memory());
        }
    }

    /// What a reload carries over: each field of `api.state` that is plain data within the
    /// limits (functions and the like are dropped quietly; a field past the limits is left
    /// out and named).
    fn state(&mut self) -> (Json, Vec<String>) {
        let Ok(Value::Table(state)) = self.api.raw_get::<Value>("state") else {
            return (Json::Object(Default::default()), Vec::new());
        };
        let whole = Value::Table(state.clone());
        if let Ok(j @ (Json::Object(_) | Json::Array(_))) =
            convert::lua_to_json_marked(&self.lua, &whole, &self.mark, true)
        {
            return (j, Vec::new());
        }
        let mut kept = serde_json::Map::new();
        let mut dropped = Vec::new();
        for (k, v) in state.pairs::<Value, Value>().flatten() {
            let key = match &k {
                Value::String(s) => s.to_string_lossy(),
                Value::Integer(i) => i.to_string(),
                _ => continue,
            };
            match convert::lua_to_json_marked(&self.lua, &v, &self.mark, true) {
                Ok(j) => {
                    kept.insert(key, j);
                }
                Err(e) => dropped.push(e.describe(&format!("api.state.{key} is not kept:"), "")),
            }
        }
        (Json::Object(kept), dropped)
    }

    fn set_state(&mut self, state: Json) -> Result<(), ScriptError> {
        let fill = || -> mlua::Result<()> {
            let fresh = convert::json_to_lua_marked(&self.lua, &state, &self.mark)?;
            match (self.api.raw_get::<Value>("state")?, fresh) {
                (Value::Table(target), Value::Table(fresh)) => sync_table(&target, &fresh, 0),
                (_, fresh) => self.api.raw_set("state", fresh),
            }
        };
        fill().map_err(|e| self.script_error(&e))
    }
}

/// Makes `target` hold what `fresh` holds, changing nested tables in place so that scripts'
/// aliases of them (`local items = api.state.items`) stay valid.
fn sync_table(target: &Table, fresh: &Table, depth: usize) -> mlua::Result<()> {
    let old_keys: Vec<Value> = target
        .pairs::<Value, Value>()
        .map(|kv| kv.map(|(k, _)| k))
        .collect::<mlua::Result<_>>()?;
    for k in old_keys {
        if fresh.raw_get::<Value>(k.clone())?.is_nil() {
            target.raw_set(k, Value::Nil)?;
        }
    }
    for kv in fresh.pairs::<Value, Value>() {
        let (k, v) = kv?;
        match (target.raw_get::<Value>(k.clone())?, v) {
            (Value::Table(t), Value::Table(f)) if depth < 32 => {
                t.set_metatable(f.metatable())?;
                sync_table(&t, &f, depth + 1)?;
            }
            (_, v) => target.raw_set(k, v)?,
        }
    }
    Ok(())
}

/// Raises `msg` as an error at the line of the Lua code that called the running Rust
/// function.
pub(super) fn raise(lua: &Lua, msg: &str) -> mlua::Error {
    let at = lua.inspect_stack(1, |d| {
        let source = d.source();
        let path = source.source.as_deref()?.strip_prefix('@')?.to_string();
        Some(match d.current_line() {
            Some(line) => format!("{path}:{line}"),
            None => path,
        })
    });
    match at.flatten() {
        Some(at) => mlua::Error::RuntimeError(format!("{at}: {msg}")),
        None => mlua::Error::RuntimeError(msg.to_string()),
    }
}

/// The kind and the message of an error (without mlua's wrapping and traceback).
pub(super) fn classify(e: &mlua::Error) -> (ErrorKind, String) {
    match e {
        mlua::Error::SyntaxError { message, .. } => (ErrorKind::Syntax, message.clone()),
        mlua::Error::MemoryError(m) => (ErrorKind::Memory, m.clone()),
        mlua::Error::RuntimeError(m) => {
            let m = m.split("\nstack traceback:").next().unwrap_or(m).trim_end();
            let kind = if m.ends_with("not enough memory") {
                ErrorKind::Memory
            } else {
                ErrorKind::Runtime
            };
            (kind, m.to_string())
        }
        mlua::Error::CallbackError { cause, .. } | mlua::Error::WithContext { cause, .. } => {
            classify(cause)
        }
        mlua::Error::BadArgument { cause, .. } => {
            let (kind, _) = classify(cause);
            (kind, e.to_string())
        }
        other => (ErrorKind::Runtime, other.to_string()),
    }
}

/// Whether a message starts with a `place:line:` (a colon, digits, a colon in its first
/// line).
fn has_location(msg: &str) -> bool {
    let line = msg.lines().next().unwrap_or("");
    line.match_indices(':').any(|(i, _)| {
        let rest = &line[i + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && rest[digits..].starts_with(':')
    })
}

/// Replaces `...tail` (Lua's shortened chunk name) with the path in `paths` ending in
/// `tail`.
fn expand_paths(msg: &str, paths: &[PathBuf]) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while let Some(i) = rest.find("...") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 3..];
        let tail = &after[..after.find(':').unwrap_or(after.len())];
        let full = paths
            .iter()
            .map(|p| p.display().to_string())
            .find(|p| !tail.is_empty() && p.ends_with(tail) && p.len() > tail.len());
        match full {
            Some(p) => {
                out.push_str(&p);
                rest = &after[tail.len()..];
            }
            None => {
                out.push_str("...");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}
