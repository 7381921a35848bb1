//! What crosses between mypi and its script engines, and the host's backstop on it: values
//! as JSON, event tapes ([`tape`]), and their conversions to and from Lua ([`lua`]) and Rhai
//! ([`rhai`]) values, with the calls into Lua coroutines and Rhai callbacks.
//!
//! A crate of its own because it runs on every call a script handles, and mypi's crate is
//! built for size (`opt-level = "s"`), which made one handler call 6-8 % slower (this code
//! and the generic code it instantiates: serde_json's maps, Rhai's maps and strings, mlua's
//! calls); this crate is built at opt-level 3 (see mypi's Cargo.toml and benches/README's
//! tenth pass). Its entry points are `#[inline(never)]`: the link-time pass would otherwise
//! inline them into mypi's callers, where they would be built for size with them. Its tests
//! are mypi's, which drive it through the engines (`src/extensions/`).
//!
//! The backstop, [`Crossing`], is on values a script hands over (handler and callback
//! results, tool results, `api.*` arguments, `json_encode`), shared by both engines'
//! converters: at most [`MAX_DEPTH`] levels of nesting, and at most
//! `Limits::max_value_bytes` bytes of JSON, counting every string each time it appears (one
//! 1 MiB string referenced 3,000 times in a returned table is 3 GB, not 1 MiB) plus a little
//! for every value and key.
//!
//! The cap is set once per worker thread ([`set_thread_cap`]) when its engine starts, so each
//! conversion on that thread can start a [`Crossing`] without the limits at hand.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// How deep a value may nest.
pub const MAX_DEPTH: usize = 100;

/// What every value and key costs on top of its text (about what JSON and the host's
/// representation spend on it).
const PER_ITEM: usize = 16;

/// The cap when no engine set one (tests, tools).
pub const DEFAULT_CAP: usize = 16 * 1024 * 1024;

thread_local! {
    static CAP: Cell<usize> = const { Cell::new(DEFAULT_CAP) };
    /// Set by the host when it gave up on the thread's running call.
    static ABANDONED: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// Makes conversions on this thread stop once `flag` is set (the host gave up on the call).
pub fn set_thread_abandoned(flag: Arc<AtomicBool>) {
    ABANDONED.with(|a| *a.borrow_mut() = Some(flag));
}

/// Sets the byte cap of conversions on this thread.
pub fn set_thread_cap(bytes: usize) {
    CAP.with(|c| c.set(bytes));
}

/// One conversion's budget.
pub struct Crossing {
    left: usize,
    cap: usize,
    abandoned: Option<Arc<AtomicBool>>,
}

impl Crossing {
    /// A budget of this thread's cap.
    pub fn for_thread() -> Crossing {
        let cap = CAP.with(Cell::get);
        let abandoned = ABANDONED.with(|a| a.borrow().clone());
        Crossing {
            left: cap,
            cap,
            abandoned,
        }
    }

    /// Counts one value (or key) of `text_bytes` bytes of text.
    pub fn charge(&mut self, text_bytes: usize) -> Result<(), String> {
        if self
            .abandoned
            .as_ref()
            .is_some_and(|a| a.load(Ordering::Relaxed))
        {
            return Err("nothing: the call was given up before its value was ready".into());
        }
        match self.left.checked_sub(text_bytes.saturating_add(PER_ITEM)) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => Err(format!(
                "a value larger than {} (a string counts each time it appears; MYPI_EXT_VALUE_MB raises the limit)",
                mib(self.cap)
            )),
        }
    }

    /// Fails when `depth` is past [`MAX_DEPTH`].
    pub fn check_depth(depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            Err(format!(
                "a value nested more than {MAX_DEPTH} levels deep (one that contains itself?)"
            ))
        } else {
            Ok(())
        }
    }
}

/// `16 MiB`, `512 KiB`, `100 bytes`.
pub fn mib(bytes: usize) -> String {
    if bytes >= 1024 * 1024 && bytes.is_multiple_of(1024 * 1024) {
        format!("{} MiB", bytes / (1024 * 1024))
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

pub mod lua;
pub mod rhai;
pub mod tape;
