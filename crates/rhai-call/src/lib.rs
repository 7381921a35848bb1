//! The call of a Rhai callback that mypi makes for every event a script handles, in a crate
//! of its own: Rhai's generic call code is instantiated where it is used, and mypi's own
//! crate is built for size, which made each call up to a third slower; a crate of its own is
//! built at opt-level 3 like the rest of Rhai (see mypi's Cargo.toml).
#![forbid(unsafe_code)]

use rhai::{Dynamic, Engine, EvalAltResult, FnPtr, AST};

/// Calls `f` (a closure or a named function of `ast`) with `args`.
pub fn call(
    f: &FnPtr,
    engine: &Engine,
    ast: &AST,
    args: Vec<Dynamic>,
) -> Result<Dynamic, Box<EvalAltResult>> {
    f.call::<Dynamic>(engine, ast, args)
}
