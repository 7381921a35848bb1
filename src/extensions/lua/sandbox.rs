//! The VM an extension runs in: the safe standard libraries without `debug`, the prelude
//! (`prelude.lua`: budget-proof `pcall` and friends, text-only chunks, no `os.exit`), and the
//! CPU budget.
//!
//! The budget is an instruction hook (every [`HOOK_EVERY`] instructions, also in coroutines,
//! which inherit the hook of the thread that creates them) that compares the call's
//! [`CallClock`] with its budget. Once over, the hook raises on every tick and the prelude's
//! wrappers re-raise whatever they catch, so `pcall` in a loop cannot keep the call alive.
//! The hook only runs between VM instructions: a long-running C function (a pathological
//! `string.find`) is left to the host's wall-clock deadline.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::OnceLock;
use std::time::Duration;

use mlua::{ChunkMode, HookTriggers, Lua, LuaOptions, StdLib, VmState};

use crate::extensions::meter::CallClock;

/// Instructions between two budget checks (a check costs well under a microsecond; 10 000
/// instructions take tens of microseconds).
const HOOK_EVERY: u32 = 10_000;

/// The error value the hook raises (the host sees the budget message built from [`Budget`]).
pub(super) const OVER_BUDGET: &str = "stopped: the call ran past its CPU budget";

/// Call depth from which recursion counts as runaway once the VM has used half its memory
/// (Lua's own "stack overflow" comes only at about 200 000 levels, past a 64 MiB cap).
const DEEP: usize = 10_000;

/// The prelude, run once before the extension.
const PRELUDE: &str = include_str!("prelude.lua");

/// The prelude compiled by the first VM of the process (see [`compiled`]).
static PRELUDE_CODE: OnceLock<Vec<u8>> = OnceLock::new();

/// mypi's own Lua chunk `source` (named `name`) as a function of `lua`: compiled by the first
/// VM of the process, whose bytecode `cache` keeps; every later VM loads that bytecode (made
/// in this process, from mypi's own source) instead of parsing the source again, which was
/// most of the time and transient memory a new VM took. The bytecode is stripped of debug
/// information (line numbers, local names): a third of what the chunk costs each VM, and
/// these chunks raise errors at their caller's line or without a place.
pub(super) fn compiled(
    lua: &Lua,
    cache: &OnceLock<Vec<u8>>,
    name: &str,
    source: &str,
) -> mlua::Result<mlua::Function> {
    if let Some(code) = cache.get() {
        return lua
            .load(&code[..])
            .set_name(name)
            .set_mode(ChunkMode::Binary)
            .into_function();
    }
    let f = lua
        .load(source)
        .set_name(name)
        .set_mode(ChunkMode::Text)
        .into_function()?;
    let _ = cache.set(f.dump(true));
    Ok(f)
}

/// The CPU budget of the running call.
#[derive(Default)]
pub(super) struct Budget {
    clock: RefCell<Option<CallClock>>,
    limit: Cell<Duration>,
    over: Cell<bool>,
    /// Set with `over` when the stop is the run's cancellation, not the budget.
    cancelled: Cell<bool>,
    /// The last tick over budget asked to yield (the next one raises, in case that tick was
    /// where no yield is possible).
    tried_yield: Cell<bool>,
    /// `path:line` where the script was when it ran out.
    at: RefCell<Option<String>>,
    /// Half the VM's memory cap: past it, deep recursion is stopped.
    half_memory: Cell<usize>,
}

/// How a call ended with respect to its budget.
pub(super) struct Spent {
    /// The call's budget (what a stop says it ran past: the script time it used when the
    /// check caught it depends on the machine's load).
    pub budget: Duration,
    /// Whether the call ran out; with the place it was stopped at, if known.
    pub over: Option<Option<String>>,
    /// The call was stopped because its run was cancelled.
    pub cancelled: bool,
}

impl Budget {
    /// Starts a call: resets the over-budget state.
    pub fn start(&self, clock: CallClock, limit: Duration) {
        *self.clock.borrow_mut() = Some(clock);
        self.limit.set(limit);
        self.over.set(false);
        self.cancelled.set(false);
        self.tried_yield.set(false);
        *self.at.borrow_mut() = None;
    }

    /// Ends a call.
    pub fn stop(&self) -> Spent {
        self.clock.borrow_mut().take();
        let over = self.over.replace(false);
        let cancelled = self.cancelled.replace(false);
        Spent {
            budget: self.limit.get(),
            over: over.then(|| self.at.borrow_mut().take()),
            cancelled,
        }
    }

    /// Whether the running call is over its budget (the prelude's wrappers ask).
    pub fn is_over(&self) -> bool {
        self.over.get()
    }

    /// Sets the VM's memory cap (for the recursion check).
    pub fn set_memory_cap(&self, bytes: usize) {
        self.half_memory.set(bytes / 2);
    }

    /// The hook: raises once the call is over budget, and on every tick after that. Also
    /// stops a runaway recursion before it uses up the memory cap.
    fn tick(&self, lua: &Lua) -> mlua::Result<VmState> {
        if !self.over.get() {
            let (exceeded, cancelled) = match &*self.clock.borrow() {
                Some(clock) => (clock.exceeded(self.limit.get()), clock.cancelled()),
                None => (false, false),
            };
            self.cancelled.set(cancelled);
            let exceeded = exceeded || cancelled;
            if !exceeded {
                if lua.used_memory() > self.half_memory.get()
                    && lua.inspect_stack(DEEP, |_| ()).is_some()
                {
                    let at = place(lua).map_or(String::new(), |at| format!("{at}: "));
                    return Err(mlua::Error::runtime(format!(
                        "{at}stack overflow (more than {DEEP} nested calls)"
                    )));
                }
                return Ok(VmState::Continue);
            }
            self.over.set(true);
            *self.at.borrow_mut() = place(lua);
        }
        // Leave the call by suspending the coroutine it runs in: nothing unwinds, so no
        // `__close`, message handler or metamethod of the script runs after its budget. Where
        // a yield is impossible (inside a C function) the next tick raises instead.
        if !self.tried_yield.replace(true) {
            return Ok(VmState::Yield);
        }
        self.tried_yield.set(false);
        Err(mlua::Error::runtime(OVER_BUDGET))
    }
}

/// `path:line` of the script code the hook interrupted: the innermost frame from a file
/// (not the prelude or a C function).
fn place(lua: &Lua) -> Option<String> {
    (0..20).find_map(|level| {
        lua.inspect_stack(level, |d| {
            let source = d.source();
            let path = source.source.as_deref()?.strip_prefix('@')?.to_string();
            Some(match d.current_line() {
                Some(line) => format!("{path}:{line}"),
                None => path,
            })
        })?
    })
}

/// For `mypi ext check`, which runs nothing a file asks for: `io.open` for writing,
/// `os.remove` and `os.rename` raise `message` instead of touching a file.
pub(super) fn refuse_writes(lua: &Lua, message: &str) -> mlua::Result<()> {
    lua.load(
        r#"
local message = ...
local open_ = io.open
function io.open(name, mode, ...)
  if mode ~= nil and tostring(mode):find("[wa+]") then
    error("io.open: " .. message, 2)
  end
  return open_(name, mode, ...)
end
function os.remove() error("os.remove: " .. message, 2) end
function os.rename() error("os.rename: " .. message, 2) end
"#,
    )
    .set_name("=check")
    .call::<()>(message)
}

/// A fresh VM with the safe libraries, the prelude and the budget hook. `log` receives what
/// `print` writes. The memory cap is set by the caller once everything is in place. Never
/// inlined: the libraries' set-up goes some KiB deep, from this frame rather than a larger one.
#[inline(never)]
pub(super) fn new_vm(
    budget: Rc<Budget>,
    log: impl Fn(&str) + 'static,
) -> mlua::Result<(Lua, mlua::Function)> {
    let lua = Lua::new_with(StdLib::ALL_SAFE, LuaOptions::default())?;
    let over = {
        let budget = budget.clone();
        lua.create_function(move |_, ()| Ok(budget.is_over()))?
    };
    let log = lua.create_function(move |_, line: mlua::String| {
        log(&line.to_string_lossy());
        Ok(())
    })?;
    let plain = lua.create_function(|lua, v: mlua::Value| match v {
        mlua::Value::Error(e) => {
            let (_, message) = super::classify(&e);
            Ok(mlua::Value::String(lua.create_string(&message)?))
        }
        other => Ok(other),
    })?;
    let prelude = compiled(&lua, &PRELUDE_CODE, "=prelude", PRELUDE)?;
    let run: mlua::Function = prelude.call((over, log, plain, OVER_BUDGET))?;
    let triggers = HookTriggers::new().every_nth_instruction(HOOK_EVERY);
    lua.set_global_hook(triggers, move |lua, _| budget.tick(lua))?;
    Ok((lua, run))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// The first VM compiles the prelude; the ones after load its bytecode and are the same
    /// sandbox.
    #[test]
    fn a_vm_made_from_the_prelude_bytecode_is_the_same_sandbox() {
        for _ in 0..2 {
            let printed = Arc::new(Mutex::new(String::new()));
            let log = printed.clone();
            let (lua, _run) = new_vm(Rc::new(Budget::default()), move |line| {
                log.lock().unwrap().push_str(line)
            })
            .unwrap();
            let gone: bool = lua
                .load("print('to', 'log') return string.dump == nil and os.exit == nil and io.popen == nil")
                .eval()
                .unwrap();
            assert!(gone);
            assert_eq!(*printed.lock().unwrap(), "to\tlog");
            let refused = lua.load("setmetatable({}, {__gc = print})").exec();
            assert!(refused.unwrap_err().to_string().contains("__gc"));
        }
        assert!(PRELUDE_CODE.get().is_some());
    }
}
