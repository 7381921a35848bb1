//! The Rhai engine of an extension. One [`RhaiEngine`] per extension, built and used on the
//! extension's worker thread: a `rhai::Engine` configured with the extension's limits, the
//! compiled script, and the callbacks the script registered.
//!
//! What a script sees (same names and behaviour as Lua, method-call syntax):
//! - `api` (provided by the variable resolver, not a script variable): `on`, `tool`,
//!   `command`, `send_message`, `exec`, `log`, `notify`, `state`, `extension`
//!   ([`bindings`]). `api.state` is a handle on one map ([`state`]): change its fields
//!   (`api.state.count += 1`, `api.state.clear()`); `let s = api.state;` aliases it; it
//!   cannot be reassigned as a whole;
//! - `ctx`, the last argument of every callback ([`ctx`]);
//! - global `read_file`, `write_file`, `file_exists`, `list_dir`, `json_encode`,
//!   `json_decode`, `regex_match`, `regex_find`, `regex_replace` ([`patterns`]), `env`;
//!   `print` / `debug` go to the debug log ([`globals`]);
//! - `import "x" as x;` of sibling files and the `path` and `schema` standard modules
//!   ([`resolver`]).
//!
//! Callbacks are `FnPtr`s (closures or `Fn("name")`). A callback declared with fewer
//! parameters than supplied is called with the first ones only (its arity is read from the
//! script's function definitions; closure captures are not counted).
//!
//! Limits: call levels, string / array / map sizes and expression depth from [`Limits`], a
//! generous operation cap, and an `on_progress` hook that ends a call once its CPU budget is
//! spent. Rhai's termination cannot be caught by `try` / `catch`.

mod bindings;
mod convert;
mod ctx;
mod globals;
mod patterns;
mod resolver;
mod state;
#[cfg(test)]
mod tests;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use ::rhai::{Dynamic, FnPtr, Map, Module, Scope, Shared, AST};
use serde_json::Value;

use self::bindings::{Api, Callbacks};
use self::convert::{to_dynamic, to_json, ErrorContext};
use self::resolver::{Imports, Resolver};
use super::api::{ApiLink, Engine, EventView};
use super::meter::CallClock;
use super::script::{CallbackId, Limits, ScriptError, PLAIN_DATA};
use crate::platform::alloc;
use crate::vocab::run::RunContext;

/// Operations per second of budget a call may run: a backstop behind the clock, far above
/// what Rhai manages (some 3e8 per second in a release build), so the clock always ends a
/// call first.
const OPERATIONS_PER_SEC: f64 = 4e9;
/// The budget clock is read every this many operations (a power of two).
const CLOCK_EVERY: u64 = 64;
/// What the progress hook ends a call of a cancelled run with.
pub(super) const CANCELLED: &str = "the run was cancelled";
/// What the progress hook ends a call with when the VM is over its memory cap.
pub(super) const OUT_OF_MEMORY: &str = "out of memory";
/// Called at the end of the top level, to keep the modules the script imported.
const CAPTURE_IMPORTS: &str = "__mypi_capture_imports";

/// The running call's clock and budget, read by the progress hook.
type Deadline = Rc<RefCell<Option<(CallClock, Duration)>>>;

/// A loaded (or loading) Rhai extension.
pub struct RhaiEngine {
    engine: ::rhai::Engine,
    ast: AST,
    scope: Scope<'static>,
    link: Arc<ApiLink>,
    /// The `api` object (its callbacks, for `ctx`'s functions).
    api: Api,
    limits: Limits,
    callbacks: Rc<RefCell<Callbacks>>,
    /// How many arguments each callback takes (learned at its first call).
    arity: BTreeMap<CallbackId, usize>,
    /// The running chain's event view and, from its second handler on, its value
    /// ([`Engine::call_event`]).
    event: Option<(u64, Option<Dynamic>)>,
    state: state::State,
    deadline: Deadline,
    imports: Rc<RefCell<Imports>>,
    /// `(alias, module)` imported at the top level, made visible to later callbacks.
    top_imports: Rc<RefCell<Vec<(String, Module)>>>,
    path: String,
    /// What the VM's allocations are charged to (held so that it lives as long as the VM).
    _memory: Option<Rc<alloc::Meter>>,
}

/// Builds the engine for an extension (on its worker thread).
pub fn new_engine(link: Arc<ApiLink>, limits: Limits) -> Result<Box<dyn Engine>, ScriptError> {
    Ok(Box::new(RhaiEngine::new(link, limits)?))
}

impl RhaiEngine {
    /// Configures an engine for `link`'s script; [`Engine::load`] runs it.
    pub fn new(link: Arc<ApiLink>, limits: Limits) -> Result<Self, ScriptError> {
        let path = link.info.path.to_string_lossy().into_owned();
        // Everything this thread allocates from here on counts toward the VM's memory cap.
        let memory = alloc::Meter::new().map(Rc::new);
        if let Some(m) = &memory {
            m.enter();
        }
        crate::extensions::crossing::set_thread_cap(limits.max_value_bytes);
        let callbacks = Rc::new(RefCell::new(Callbacks::default()));
        let state = state::State::new(initial_state(&link, &path)?, limits.max_map_len);
        let deadline: Deadline = Rc::new(RefCell::new(None));
        let imports = Rc::new(RefCell::new(Imports::default()));
        let top_imports = Rc::new(RefCell::new(Vec::new()));
        let mut engine = ::rhai::Engine::new();
        configure_limits(&mut engine, &limits, &deadline, memory.clone());
        bindings::register(&mut engine);
        state::register(&mut engine);
        ctx::register(&mut engine);
        globals::register(&mut engine, &link, limits.max_string_bytes);
        let api = Api::new(link.clone(), callbacks.clone(), state.clone());
        let api_var = Dynamic::from(api.clone());
        #[allow(deprecated)] // `on_var` is marked volatile, not deprecated
        engine.on_var(move |name, _, _| match name {
            "api" => Ok(Some(api_var.clone())),
            _ => Ok(None),
        });
        let ext_dir = link
            .info
            .path
            .parent()
            .map(PathBuf::from)
            .unwrap_or_default();
        engine.set_module_resolver(Resolver {
            ext_dir,
            root: link.info.root.clone(),
            imports: imports.clone(),
        });
        let captured = top_imports.clone();
        engine.register_fn(CAPTURE_IMPORTS, move |ctx: ::rhai::NativeCallContext| {
            let mut top = captured.borrow_mut();
            top.clear();
            top.extend(ctx.iter_imports().map(|(n, m)| (n.to_string(), m.clone())));
        });
        Ok(RhaiEngine {
            engine,
            ast: AST::empty(),
            scope: Scope::new(),
            link,
            api,
            limits,
            callbacks,
            arity: BTreeMap::new(),
            event: None,
            state,
            deadline,
            imports,
            top_imports,
            path,
            _memory: memory,
        })
    }

    /// The signatures of the functions and getters registered on the engine (for the tests
    /// that hold the reference and the stubs to the code).
    #[cfg(test)]
    pub fn signatures(&self) -> Vec<String> {
        self.engine.gen_fn_signatures(false)
    }

    /// The files the script imported (directly or through other modules), in import order;
    /// the host watches them for hot reload. Standard modules are not listed.
    pub fn imported_files(&self) -> Vec<PathBuf> {
        self.imports.borrow().files.clone()
    }

    fn errors(&self, budget: Duration) -> ErrorContext<'_> {
        ErrorContext {
            path: &self.path,
            budget,
            max_call_levels: self.limits.max_call_levels,
            memory_cap: self.limits.memory_bytes,
        }
    }

    /// Runs `f` with the budget clock running.
    fn timed<T>(&mut self, budget: Duration, f: impl FnOnce(&Self) -> T) -> T {
        let ops = (budget.as_secs_f64().max(0.001) * OPERATIONS_PER_SEC) as u64;
        self.engine.set_max_operations(ops);
        *self.deadline.borrow_mut() = Some((self.link.start_call(budget), budget));
        let out = f(self);
        *self.deadline.borrow_mut() = None;
        out
    }

    /// Makes the modules imported at the top level visible to callbacks, which run later
    /// without the top level's imports.
    fn keep_imports(&mut self) {
        let top = std::mem::take(&mut *self.top_imports.borrow_mut());
        for (alias, module) in top {
            self.engine
                .register_static_module(alias, Shared::new(module));
        }
    }

    /// How many of `supplied` arguments `f` takes.
    fn arity_of(&self, f: &FnPtr, supplied: usize) -> usize {
        let curried = f.curry().len();
        self.ast
            .iter_functions()
            .filter(|m| m.name == f.fn_name())
            .map(|m| m.params.len().saturating_sub(curried))
            .filter(|n| *n <= supplied)
            .max()
            .unwrap_or(supplied)
    }

    /// Calls callback `cb` with `argv` and `ctx` (cut to the parameters it declares).
    fn invoke(
        &mut self,
        cb: CallbackId,
        mut argv: Vec<Dynamic>,
        ctx: &Arc<RunContext>,
        budget: Duration,
    ) -> Result<Value, ScriptError> {
        let Some(f) = self.callbacks.borrow().fns.get(&cb).cloned() else {
            return Ok(Value::Null);
        };
        // `ctx` comes last, made only for a callback that declares it.
        let supplied = argv.len() + 1;
        let n = match self.arity.get(&cb) {
            Some(n) => *n,
            None => {
                let n = self.arity_of(&f, supplied);
                self.arity.insert(cb, n);
                n
            }
        };
        if n == supplied {
            argv.push(Dynamic::from(ctx::Ctx::new(ctx.clone(), self.api.clone())));
        } else {
            argv.truncate(n);
        }
        let result = self.timed(budget, |me| {
            mypi_crossing::rhai::call(&f, &me.engine, &me.ast, argv)
        });
        let value = result.map_err(|e| {
            let line = self.callbacks.borrow().line(cb);
            self.errors(budget).runtime_in(e, line)
        })?;
        if value.is_fnptr() {
            return Err(ScriptError::runtime(format!(
                "{}: cannot return a function; {PLAIN_DATA}",
                self.path
            )));
        }
        to_json(&value)
            .map_err(|e| ScriptError::runtime(format!("{}: the callback's result: {e}", self.path)))
    }
}

/// The script value of an event view (a `LazyEvent` when a field is read on demand).
fn event_value(view: &EventView) -> Dynamic {
    let (value, lazy) = view.build(convert::tape_to_dynamic, to_dynamic);
    match lazy {
        Some(lazy) if value.is_map() => {
            Dynamic::from(ctx::LazyEvent::new(value.cast::<Map>(), lazy))
        }
        _ => value,
    }
}

/// `api.state` at load: what the previous version left (a map), or an empty map.
fn initial_state(link: &ApiLink, path: &str) -> Result<Map, ScriptError> {
    match to_dynamic(&link.initial_state()) {
        d if d.is_map() => Ok(d.cast::<Map>()),
        d if d.is_unit() => Ok(Map::new()),
        d => Err(ScriptError::runtime(format!(
            "{path}: api.state must be a map, not {}",
            d.type_name()
        ))),
    }
}

fn configure_limits(
    engine: &mut ::rhai::Engine,
    limits: &Limits,
    deadline: &Deadline,
    memory: Option<Rc<alloc::Meter>>,
) {
    engine.set_max_call_levels(limits.max_call_levels);
    engine.set_max_string_size(limits.max_string_bytes);
    engine.set_max_array_size(limits.max_array_len);
    engine.set_max_map_size(limits.max_map_len);
    engine.set_max_expr_depths(64, 32);
    let deadline = deadline.clone();
    let cap = limits.memory_bytes;
    engine.on_progress(move |ops| {
        // Every operation: one may allocate a whole string or array at the size limits.
        if memory.as_ref().is_some_and(|m| m.bytes() > cap) {
            return Some(Dynamic::from(OUT_OF_MEMORY));
        }
        if ops % CLOCK_EVERY != 0 {
            return None;
        }
        match &*deadline.borrow() {
            Some((clock, _)) if clock.cancelled() => Some(Dynamic::from(CANCELLED)),
            Some((clock, budget)) if clock.exceeded(*budget) => Some(Dynamic::UNIT),
            _ => None,
        }
    });
}

impl Engine for RhaiEngine {
    fn required_files(&self) -> Vec<PathBuf> {
        self.imported_files()
    }

    fn load(&mut self) -> Result<(), ScriptError> {
        let budget = self.limits.budget;
        let bytes = self.link.info.source().map_err(|e| {
            ScriptError::runtime(format!("{}: cannot read the script: {e}", self.path))
        })?;
        let text = String::from_utf8(bytes.into_owned()).map_err(|_| {
            ScriptError::runtime(format!(
                "{}: cannot read the script: it is not UTF-8",
                self.path
            ))
        })?;
        let mut ast = self
            .engine
            .compile(&text)
            .map_err(|e| self.errors(budget).syntax(&e))?;
        ast.set_source(self.path.as_str());
        self.callbacks.borrow_mut().script_fns =
            ast.iter_functions().map(|f| f.name.to_string()).collect();
        let tail = self
            .engine
            .compile(format!("{CAPTURE_IMPORTS}();"))
            .map_err(|e| self.errors(budget).syntax(&e))?;
        ast.combine(tail);
        self.ast = ast;
        let mut scope = std::mem::take(&mut self.scope);
        let result = self.timed(budget, |me| {
            me.engine.run_ast_with_scope(&mut scope, &me.ast)
        });
        self.scope = scope;
        result.map_err(|e| self.errors(budget).runtime(e))?;
        self.keep_imports();
        Ok(())
    }

    /// A removed callback (its handle's `remove()` ran) answers `null`, as if it returned
    /// nothing.
    fn call(
        &mut self,
        cb: CallbackId,
        args: &[Value],
        ctx: &Arc<RunContext>,
        budget: Duration,
    ) -> Result<Value, ScriptError> {
        let argv: Vec<Dynamic> = args.iter().map(to_dynamic).collect();
        self.invoke(cb, argv, ctx, budget)
    }

    /// An event with a field read on demand is a `LazyEvent` (see `ctx.rs`). A Rhai value
    /// is its own, so each handler gets a copy: the first handler of a view gets the value
    /// converted for it (a chain of one copies nothing), the second converts it again and
    /// keeps it, the ones after copy what was kept.
    fn call_event(
        &mut self,
        cb: CallbackId,
        view: &EventView,
        ctx: &Arc<RunContext>,
        budget: Duration,
    ) -> Result<Value, ScriptError> {
        let arg = match &mut self.event {
            Some((id, Some(kept))) if *id == view.id => kept.clone(),
            Some((id, slot @ None)) if *id == view.id => slot.insert(event_value(view)).clone(),
            _ => {
                self.event = Some((view.id, None));
                event_value(view)
            }
        };
        self.invoke(cb, vec![arg], ctx, budget)
    }

    fn end_event(&mut self) {
        self.event = None;
    }

    fn set_state(&mut self, state: Value) -> Result<(), ScriptError> {
        let fresh = to_dynamic(&state);
        let Some(fresh) = fresh.try_cast::<Map>() else {
            return Err(ScriptError::runtime(format!(
                "{}: api.state must be a map",
                self.path
            )));
        };
        self.state.replace(fresh);
        Ok(())
    }

    fn state(&mut self) -> (Value, Vec<String>) {
        self.state.to_json_lenient()
    }
}
