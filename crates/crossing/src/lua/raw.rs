//! The raw-API halves of the Lua conversions (`lua.rs`): JSON to Lua and plain Lua data to JSON, each in one
//! protected call instead of mlua's one per table write (a small event took 5 µs to build
//! through the safe API once a memory cap is set, and as long to read back).
//!
//! The rules are `convert.rs`'s; the reader gives up (`None`) on anything unusual, and the
//! careful path there says what and where.
// `unsafe` here: the Lua raw API (mlua's ffi): what this file is for.
#![allow(unsafe_code)]

use std::ffi::{c_int, c_void, CStr};

use mlua::ffi;
use serde_json::{Map, Number, Value as Json};

use crate::tape::{Tape, Tok};
use crate::Crossing;

/// Stack index of the array metatable in [`push_json`]'s frame.
pub const MARK: c_int = 1;

/// Pushes `v` as a Lua value with the raw API. mlua's safe calls protect each table write
/// with a `pcall` of its own once a memory cap is set (a small event took 5 µs to build);
/// this builds a whole value in one. Nothing here owns a value with a destructor, so a
/// memory error that unwinds through it (a `longjmp`) skips nothing that must run.
///
/// # Safety
/// `state` is the state of a protected call whose stack slot [`MARK`] holds the array
/// metatable.
pub unsafe fn push_json(state: *mut ffi::lua_State, v: &Json) {
    // Room for a table, a key and a value at every level; raises (caught) past Lua's limit.
    ffi::luaL_checkstack(state, 3, c"JSON value nested too deep".as_ptr());
    match v {
        Json::Null => ffi::lua_pushnil(state),
        Json::Bool(b) => ffi::lua_pushboolean(state, c_int::from(*b)),
        Json::Number(n) => match n.as_i64() {
            Some(i) => ffi::lua_pushinteger(state, i),
            None => ffi::lua_pushnumber(state, n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => {
            ffi::lua_pushlstring(state, s.as_ptr().cast(), s.len());
        }
        Json::Array(items) => {
            ffi::lua_createtable(state, len(items.len()), 0);
            for (i, item) in items.iter().enumerate() {
                if !item.is_null() {
                    push_json(state, item);
                    ffi::lua_rawseti(state, -2, (i + 1) as ffi::lua_Integer);
                }
            }
            ffi::lua_pushvalue(state, MARK);
            ffi::lua_setmetatable(state, -2);
        }
        Json::Object(map) => {
            ffi::lua_createtable(state, 0, len(map.len()));
            for (k, item) in map {
                if !item.is_null() {
                    ffi::lua_pushlstring(state, k.as_ptr().cast(), k.len());
                    push_json(state, item);
                    ffi::lua_rawset(state, -3);
                }
            }
        }
    }
}

/// Pushes the value of `tape` as [`push_json`] would push its JSON: the same rules, the same
/// safety (nothing here owns a value with a destructor).
///
/// # Safety
/// As for [`push_json`].
pub unsafe fn push_tape(state: *mut ffi::lua_State, tape: &Tape) {
    let mut at = 0;
    push_tok(state, tape, &mut at);
}

/// Pushes the value starting at token `*at`, leaving `*at` past it.
///
/// # Safety
/// As for [`push_json`].
unsafe fn push_tok(state: *mut ffi::lua_State, tape: &Tape, at: &mut usize) {
    ffi::luaL_checkstack(state, 3, c"JSON value nested too deep".as_ptr());
    let Some(tok) = tape.toks.get(*at).copied() else {
        ffi::lua_pushnil(state);
        return;
    };
    *at += 1;
    match tok {
        Tok::Null => ffi::lua_pushnil(state),
        Tok::Bool(b) => ffi::lua_pushboolean(state, c_int::from(b)),
        Tok::Int(i) => ffi::lua_pushinteger(state, i),
        Tok::Num(f) => ffi::lua_pushnumber(state, f),
        Tok::Str(start, n) => push_bytes(state, tape.str(start, n)),
        Tok::Arr(n) => {
            ffi::lua_createtable(state, len(n), 0);
            for i in 1..=n {
                if tape.toks.get(*at) == Some(&Tok::Null) {
                    *at += 1;
                    continue;
                }
                push_tok(state, tape, at);
                ffi::lua_rawseti(state, -2, i as ffi::lua_Integer);
            }
            ffi::lua_pushvalue(state, MARK);
            ffi::lua_setmetatable(state, -2);
        }
        Tok::Obj(n) => {
            ffi::lua_createtable(state, 0, len(n));
            for _ in 0..n {
                let key = match tape.toks.get(*at) {
                    Some(Tok::Str(start, n)) => tape.str(*start, *n),
                    _ => &[],
                };
                *at += 1;
                if tape.toks.get(*at) == Some(&Tok::Null) {
                    *at += 1;
                    continue;
                }
                push_bytes(state, key);
                push_tok(state, tape, at);
                ffi::lua_rawset(state, -3);
            }
        }
    }
}

unsafe fn push_bytes(state: *mut ffi::lua_State, b: &[u8]) {
    ffi::lua_pushlstring(state, b.as_ptr().cast(), b.len());
}

/// A size hint for `lua_createtable`.
fn len(n: usize) -> c_int {
    c_int::try_from(n).unwrap_or(c_int::MAX)
}

/// Reads plain Lua data as JSON with the same rules and limits as `convert.rs`'s careful
/// path, calling only functions that cannot raise a Lua error.
pub struct Reader {
    state: *mut ffi::lua_State,
    /// The array metatable's address.
    mark: *const c_void,
    budget: Crossing,
}

impl Reader {
    /// A reader of values on `state`'s stack; `mark` is the array metatable's address.
    pub fn new(state: *mut ffi::lua_State, mark: *const c_void) -> Reader {
        Reader {
            state,
            mark,
            budget: Crossing::for_thread(),
        }
    }

    /// The value at stack index `idx` (absolute) as JSON; `None` for anything the careful
    /// path must look at.
    ///
    /// # Safety
    /// `state` is live, with a value at `idx`.
    pub unsafe fn value(&mut self, idx: c_int, depth: usize) -> Option<Json> {
        let state = self.state;
        let text = (ffi::lua_type(state, idx) == ffi::LUA_TSTRING).then(|| bytes(state, idx));
        self.budget.charge(text.map_or(0, <[u8]>::len)).ok()?;
        Some(match ffi::lua_type(state, idx) {
            ffi::LUA_TNIL => Json::Null,
            ffi::LUA_TBOOLEAN => Json::Bool(ffi::lua_toboolean(state, idx) != 0),
            ffi::LUA_TNUMBER if ffi::lua_isinteger(state, idx) != 0 => {
                Json::Number(ffi::lua_tointegerx(state, idx, std::ptr::null_mut()).into())
            }
            ffi::LUA_TNUMBER => {
                let f = ffi::lua_tonumberx(state, idx, std::ptr::null_mut());
                Number::from_f64(f).map_or(Json::Null, Json::Number)
            }
            ffi::LUA_TSTRING => Json::String(String::from_utf8_lossy(text?).into_owned()),
            ffi::LUA_TLIGHTUSERDATA if ffi::lua_touserdata(state, idx).is_null() => Json::Null,
            ffi::LUA_TTABLE => return self.table(idx, depth),
            _ => return None,
        })
    }

    /// A table: an array when marked or keyed exactly `1..n`, else an object.
    ///
    /// # Safety
    /// As for [`Reader::value`].
    unsafe fn table(&mut self, idx: c_int, depth: usize) -> Option<Json> {
        let state = self.state;
        Crossing::check_depth(depth + 1).ok()?;
        if ffi::lua_checkstack(state, 4) == 0 {
            return None;
        }
        let marked = ffi::lua_getmetatable(state, idx) != 0 && {
            let same = ffi::lua_topointer(state, -1) == self.mark;
            ffi::lua_pop(state, 1);
            same
        };
        let len = ffi::lua_rawlen(state, idx);
        let (mut pairs, mut sequence) = (0usize, true);
        ffi::lua_pushnil(state);
        while ffi::lua_next(state, idx) != 0 {
            // Only an integer key is read as one: `lua_tointegerx` would also try to read a
            // string key as a number (`strtod` on every field name of an object).
            sequence = sequence && ffi::lua_isinteger(state, -2) != 0 && {
                let i = ffi::lua_tointegerx(state, -2, std::ptr::null_mut());
                i >= 1 && (i as usize) <= len
            };
            pairs += 1;
            ffi::lua_pop(state, 1);
        }
        if marked || (sequence && len > 0 && pairs == len) {
            self.array(idx, len, depth)
        } else {
            self.object(idx, depth)
        }
    }

    /// # Safety
    /// As for [`Reader::value`]; the table at `idx` has border `len`.
    unsafe fn array(&mut self, idx: c_int, len: usize, depth: usize) -> Option<Json> {
        let state = self.state;
        let top = ffi::lua_gettop(state);
        let mut out = Vec::with_capacity(len.min(1 << 16));
        for i in 1..=len {
            ffi::lua_rawgeti(state, idx, i as ffi::lua_Integer);
            let item = self.value(top + 1, depth + 1);
            ffi::lua_pop(state, 1);
            out.push(item?);
        }
        Some(Json::Array(out))
    }

    /// # Safety
    /// As for [`Reader::value`].
    unsafe fn object(&mut self, idx: c_int, depth: usize) -> Option<Json> {
        let state = self.state;
        let top = ffi::lua_gettop(state);
        let mut out = Map::new();
        ffi::lua_pushnil(state);
        while ffi::lua_next(state, idx) != 0 {
            let value = match self.key() {
                Some(key) => self.value(top + 2, depth + 1).map(|v| (key, v)),
                None => None,
            };
            let Some((key, value)) = value else {
                ffi::lua_settop(state, top);
                return None;
            };
            out.insert(key, value);
            ffi::lua_pop(state, 1);
        }
        // Keys sorted, as the careful path's (`convert.rs`): a table has no order of its own.
        out.sort_keys();
        Some(Json::Object(out))
    }

    /// The key below the top of the stack as an object key (a string, or a number written
    /// out); `None` for other keys.
    ///
    /// # Safety
    /// As for [`Reader::value`], inside a `lua_next` loop.
    unsafe fn key(&mut self) -> Option<String> {
        let state = self.state;
        match ffi::lua_type(state, -2) {
            ffi::LUA_TSTRING => {
                let k = bytes(state, -2);
                self.budget.charge(k.len()).ok()?;
                Some(String::from_utf8_lossy(k).into_owned())
            }
            ffi::LUA_TNUMBER if ffi::lua_isinteger(state, -2) != 0 => {
                Some(ffi::lua_tointegerx(state, -2, std::ptr::null_mut()).to_string())
            }
            ffi::LUA_TNUMBER => {
                Some(ffi::lua_tonumberx(state, -2, std::ptr::null_mut()).to_string())
            }
            _ => None,
        }
    }
}

/// The bytes of the string at `idx` (which must be a string: no conversion happens).
///
/// # Safety
/// The value at `idx` is a string; the slice lives as long as it stays on the stack.
unsafe fn bytes<'a>(state: *mut ffi::lua_State, idx: c_int) -> &'a [u8] {
    let mut n = 0usize;
    let p = ffi::lua_tolstring(state, idx, &mut n);
    if p.is_null() {
        return &[];
    }
    std::slice::from_raw_parts(p.cast(), n)
}

/// `path:line` of the innermost frame of a script file on the stack of coroutine `state`. A
/// coroutine that stopped with an error keeps its stack for the debug API, so the place a
/// memory error struck (the error itself carries none) can be read after it.
///
/// # Safety
/// `state` is a coroutine of a live VM, not running.
pub unsafe fn innermost_file_frame(state: *mut ffi::lua_State) -> Option<String> {
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
