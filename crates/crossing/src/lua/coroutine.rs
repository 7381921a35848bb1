//! Script calls in coroutines: each call runs in a coroutine the prelude's `run` resumes, so
//! the budget hook can suspend a call past its budget and the VM drop it (no code of the
//! script runs after that, not even its `__close` methods). A coroutine whose call finished
//! is reset and reused: creating one per call costs more than the rest of a small call.

use std::cell::RefCell;

use mlua::{Function, Lua, MultiValue, Thread, ThreadStatus, Value};

use super::raw;

/// A VM's runner and the coroutine kept for its next call.
pub struct Coroutines {
    /// The prelude's `run(co, ...)`: resumes coroutine `co` with the arguments after it.
    runner: Function,
    /// A coroutine whose call finished, for the next call.
    spare: RefCell<Option<Thread>>,
}

impl Coroutines {
    /// Calls through `runner`, the prelude's `run(co, ...)`.
    pub fn new(runner: Function) -> Coroutines {
        Coroutines {
            runner,
            spare: RefCell::new(None),
        }
    }

    /// Calls `f` with `args` in a coroutine: its result, and on failure the `path:line` of the
    /// innermost script frame it stopped in (a memory error carries no place of its own).
    #[inline(never)]
    pub fn call(
        &self,
        lua: &Lua,
        f: &Function,
        mut args: MultiValue,
    ) -> (mlua::Result<Value>, Option<String>) {
        let spare = self.spare.borrow_mut().take();
        let thread = match spare {
            Some(t) if t.reset(f.clone()).is_ok() => t,
            _ => match lua.create_thread(f.clone()) {
                Ok(t) => t,
                Err(e) => return (Err(e), None),
            },
        };
        args.push_front(Value::Thread(thread.clone()));
        let out = self.runner.call::<Value>(args);
        let at = match thread.status() {
            ThreadStatus::Finished => {
                *self.spare.borrow_mut() = Some(thread);
                None
            }
            // SAFETY: the coroutine belongs to this VM and stopped with its error.
            ThreadStatus::Error => unsafe { raw::innermost_file_frame(thread.state()) },
            _ => None,
        };
        (out, at)
    }
}
