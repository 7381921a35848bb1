//! The process's allocator: the system allocator, with every block of alignment 8 or less
//! charged to the [`Meter`] that was current on the thread that allocated it, until the
//! block is freed on whatever thread frees it.
//!
//! This is how a Rhai VM gets a real memory cap (Rhai itself only limits single values): its
//! worker thread makes the VM's meter current, and the VM's `on_progress` hook ends a call
//! once the meter passes the cap. Because the charge travels with the block (a small header in
//! front of it names the meter), values that cross threads cannot make the count drift: a
//! result the host frees later stops counting when it is freed, and a host value freed on
//! the worker was never charged.
//!
//! Blocks aligned to 16 bytes or more carry no header and are never charged: that is every
//! block of a Lua VM (mlua asks for 16, and Lua has its own cap) and hash tables' buckets,
//! none of which a Rhai script's values are made of (its values, arrays, strings and maps
//! are aligned to 8). A Lua VM is most of an idle extension's memory and is made of small
//! blocks: a header on each cost it a fifth more.
//!
//! Cost: 8 bytes in front of every block of alignment 8 or less and one thread-local read
//! per allocation; an atomic add only for blocks charged to a meter.
//!
//! A crate of its own because every allocation of the process runs through it: mypi's crate
//! is built for size, which left these few lines a call of their own around each `malloc`
//! and `free` (8 % of a handler call in the VM); here they are built at opt-level 3 (see
//! mypi's Cargo.toml). The unit tests are mypi's (`src/platform/alloc.rs`).
// `unsafe` here: the global allocator: what this file is for.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};

/// Bytes in front of a metered block; the meter's index is in the last four of them.
const HEADER: usize = 8;

/// Blocks aligned to this or more have no header and are never charged.
const UNMETERED_ALIGN: usize = 16;

/// How many meters can exist at once (one per loaded Rhai extension; slot 0 means none).
const METERS: usize = 1024;

/// Bytes charged to each meter.
static CHARGED: [AtomicIsize; METERS] = [const { AtomicIsize::new(0) }; METERS];
/// Which meters are taken.
static TAKEN: [AtomicBool; METERS] = [const { AtomicBool::new(false) }; METERS];

thread_local! {
    /// The meter new blocks of this thread are charged to (0: none).
    static CURRENT: Cell<u32> = const { Cell::new(0) };
}

/// The system allocator with per-meter accounting.
pub struct Metered;

/// The process's allocator: whatever links this crate. Declared here, not in mypi, so that
/// the functions Rust's allocation calls reach (`__rg_alloc` and its kin, made where the
/// attribute is) are built at this crate's level, with [`Metered`]'s few lines inlined into
/// them (declared in mypi, each allocation made two calls).
#[global_allocator]
static GLOBAL: Metered = Metered;

/// Where the block starts for a caller's `layout` (0: no header), and the layout of the
/// whole block.
fn outer(layout: Layout) -> Option<(usize, Layout)> {
    if layout.align() >= UNMETERED_ALIGN {
        return Some((0, layout));
    }
    let size = layout.size().checked_add(HEADER)?;
    Layout::from_size_align(size, HEADER)
        .ok()
        .map(|l| (HEADER, l))
}

fn current() -> u32 {
    CURRENT.try_with(Cell::get).unwrap_or(0)
}

fn charge(meter: u32, bytes: isize) {
    if meter != 0 {
        if let Some(c) = CHARGED.get(meter as usize) {
            c.fetch_add(bytes, Ordering::Relaxed);
        }
    }
}

/// Writes the meter into the header of the block at `base` and returns the caller's pointer
/// (`base` itself for a block without a header).
///
/// # Safety
/// `base` must be a fresh block of at least `offset` + the caller's size bytes.
unsafe fn finish(base: *mut u8, offset: usize, size: usize) -> *mut u8 {
    if base.is_null() || offset == 0 {
        return base;
    }
    let meter = current();
    // SAFETY: offset == HEADER >= 4 and the block is at least `offset` bytes long; the
    // header is written unaligned.
    unsafe {
        let user = base.add(offset);
        user.sub(4).cast::<u32>().write_unaligned(meter);
        charge(meter, size as isize);
        user
    }
}

/// The meter a block was charged to.
///
/// # Safety
/// `user` must be a pointer returned by this allocator for a block with a header.
unsafe fn meter_of(user: *mut u8) -> u32 {
    // SAFETY: every block has its header right before the caller's pointer.
    unsafe { user.sub(4).cast::<u32>().read_unaligned() }
}

// SAFETY: every method forwards to `System` with a layout grown by the header, and gives the
// caller the part after the header, aligned as asked (the offset, 0 or 8, is a multiple of
// the alignment); `dealloc` and `realloc` undo the same offset from the same layout.
unsafe impl GlobalAlloc for Metered {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some((offset, full)) = outer(layout) else {
            return std::ptr::null_mut();
        };
        // SAFETY: `full` has a non-zero size.
        unsafe { finish(System.alloc(full), offset, layout.size()) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let Some((offset, full)) = outer(layout) else {
            return std::ptr::null_mut();
        };
        // SAFETY: as in `alloc`.
        unsafe { finish(System.alloc_zeroed(full), offset, layout.size()) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let Some((offset, full)) = outer(layout) else {
            return;
        };
        // SAFETY: `ptr` came from `alloc` with this layout, so the block starts `offset`
        // bytes before it, and has a header when `offset` is not 0.
        unsafe {
            if offset != 0 {
                charge(meter_of(ptr), -(layout.size() as isize));
            }
            System.dealloc(ptr.sub(offset), full);
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let Some((offset, full)) = outer(layout) else {
            return std::ptr::null_mut();
        };
        let Some(new_full) = new_size.checked_add(offset) else {
            return std::ptr::null_mut();
        };
        if offset == 0 {
            // SAFETY: a block without a header is the system's own block.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        // SAFETY: as in `dealloc`; the header lies in the first `offset` bytes, which realloc
        // keeps, so the block stays charged to its meter.
        unsafe {
            let meter = meter_of(ptr);
            let base = System.realloc(ptr.sub(offset), full, new_full);
            if base.is_null() {
                return base;
            }
            charge(meter, new_size as isize - layout.size() as isize);
            base.add(offset)
        }
    }
}

/// An account that blocks can be charged to; free again when dropped.
#[derive(Debug)]
pub struct Meter(u32);

impl Meter {
    /// A fresh meter, or `None` when all are in use.
    pub fn new() -> Option<Meter> {
        // A slot is reused only once everything charged to it was freed.
        (1..METERS).find_map(|i| {
            let free = CHARGED[i].load(Ordering::Relaxed) == 0;
            (free
                && TAKEN[i]
                    .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok())
            .then_some(Meter(i as u32))
        })
    }

    /// Charges this thread's new blocks to this meter until [`Meter::leave`].
    pub fn enter(&self) {
        let _ = CURRENT.try_with(|c| c.set(self.0));
    }

    /// This thread's new blocks are charged to no meter.
    pub fn leave() {
        let _ = CURRENT.try_with(|c| c.set(0));
    }

    /// Bytes allocated under this meter and not freed yet.
    pub fn bytes(&self) -> usize {
        CHARGED[self.0 as usize].load(Ordering::Relaxed).max(0) as usize
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        if current() == self.0 {
            Meter::leave();
        }
        TAKEN[self.0 as usize].store(false, Ordering::Release);
    }
}
