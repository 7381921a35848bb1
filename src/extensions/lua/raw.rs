//! The Lua raw API where mlua has no safe call: reading where an error struck from a
//! stopped coroutine's stack. (The raw-API conversions are `mypi_crossing::lua::raw`.)
// `unsafe` here: the Lua raw API (mlua's ffi): what this file is for.
#![allow(unsafe_code)]

use std::ffi::CStr;

use mlua::ffi;

/// `path:line` of the innermost frame of a script file on the stack of coroutine `state`. A
/// coroutine that stopped with an error keeps its stack for the debug API, so the place a
/// memory error struck (the error itself carries none) can be read after it.
///
/// # Safety
/// `state` is a coroutine of a live VM, not running.
pub(super) unsafe fn innermost_file_frame(state: *mut ffi::lua_State) -> Option<String> {
    for level in 0..32 {
        let mut ar = std::mem::MaybeUninit::<ffi::lua_Debug>::zeroed();
        if ffi::lua_getstack(state, level, ar.as_mut_ptr()) == 0 {
            return None;
        }
        if ffi::lua_getinfo(state, c"Sl".as_ptr(), ar.as_mut_ptr()) == 0 {
            continue;
        }
        let ar = ar.assume_init_ref();
        if ar.source.is_null() {
            continue;
        }
        let source = CStr::from_ptr(ar.source).to_string_lossy();
        if let Some(path) = source.strip_prefix('@') {
            return Some(match ar.currentline {
                line if line > 0 => format!("{path}:{line}"),
                _ => path.to_string(),
            });
        }
    }
    None
}
