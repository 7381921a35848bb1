//! Stacks shared by threads for work that goes deep once ([`StackPool`]): a closure runs on a
//! stack taken from a pool instead of its thread's own, and the stack goes back to the pool
//! after it. A hundred threads that each go some KiB deep once (an extension's load: the
//! engine's set-up, the parser, the script's top level) then touch the same few stacks'
//! pages instead of a hundred threads' own, which each would otherwise keep or give back
//! (a `madvise` per thread, and with it a flush of every other CPU's TLB).
//!
//! A pool stack is a mapping of its own with a guard page below it, as large as the threads'
//! own (address space, not memory). What a run touched more than [`TRIM_KEEP`] deep is given
//! back when the stack returns to the pool (the common run goes less deep: then nothing is;
//! after a run too short to go far, only the top [`QUICK_REACH`] is looked at).
//! Where no stack can be mapped, the closure runs on the thread's own stack. A run that
//! overflows a pool stack ends the process as on any stack (a segmentation fault rather than
//! Rust's "stack overflow" message): the stacks are as large as the threads' own so that the
//! engines' own limits come first.
// `unsafe` here: mapping the stacks and switching to one (`psm::on_stack`).
#![allow(unsafe_code)]

use std::panic::{self, AssertUnwindSafe};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// What a run may leave touched at the top of a pool stack: deeper pages are given back when
/// the stack returns to the pool.
pub const TRIM_KEEP: usize = 32 * 1024;
/// Stacks in a pool: two CPUs' worth of runs, and as many again that wait a moment on the
/// system (a run is CPU work: more stacks than CPUs only hold runs that were preempted).
const SHARED: usize = 4;
/// How long a run waits for a pool stack before it maps one of its own.
const WAIT: Duration = Duration::from_millis(50);
const PAGE: usize = 4096;
/// A run shorter than [`QUICK`] cannot have touched more than [`QUICK_REACH`] of its stack:
/// a fresh page costs a fault of a microsecond or more (a millisecond: some 4 MiB at most).
const QUICK: Duration = Duration::from_millis(1);
const QUICK_REACH: usize = 16 << 20;

/// One mapped stack: `len` bytes at `map`, the lowest page a guard.
struct Stack {
    map: usize,
    len: usize,
}

impl Stack {
    /// Maps a stack of `len` bytes (a multiple of the page size), or `None` if the system
    /// refuses.
    fn map(len: usize) -> Option<Stack> {
        // SAFETY: an anonymous private mapping at an address the kernel picks; nothing else
        // refers to it. The lowest page is then made inaccessible (the guard), within it.
        unsafe {
            let map = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_STACK,
                -1,
                0,
            );
            if map == libc::MAP_FAILED {
                return None;
            }
            let stack = Stack {
                map: map as usize,
                len,
            };
            if libc::mprotect(map, PAGE, libc::PROT_NONE) != 0 {
                return None;
            }
            Some(stack)
        }
    }

    /// Gives back the pages below the top [`TRIM_KEEP`] bytes (nothing runs on the stack).
    /// After a run `quick` enough that it cannot have touched more, only those within
    /// [`QUICK_REACH`] of the top: with nothing there, as after most runs, the call only
    /// walks that part of the page tables (the whole stack's took a few microseconds) and
    /// flushes nothing.
    fn trim(&self, quick: bool) {
        let high = self.map + self.len - TRIM_KEEP;
        let low = match quick {
            true => (self.map + self.len).saturating_sub(QUICK_REACH),
            false => 0,
        }
        .max(self.map + PAGE);
        // SAFETY: the range lies inside this mapping, above its guard, and no code runs on
        // this stack while it is out of use: its pages hold nothing live.
        unsafe {
            libc::madvise(low as *mut libc::c_void, high - low, libc::MADV_DONTNEED);
        }
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SAFETY: the mapping is this stack's own, and no code runs on it once it is dropped.
        unsafe {
            libc::munmap(self.map as *mut libc::c_void, self.len);
        }
    }
}

/// A pool of stacks of one size (see the module's doc).
pub struct StackPool {
    /// The size of its stacks, and a smaller one for a system that will not map that much.
    sizes: [usize; 2],
    state: Mutex<Shelf>,
    returned: Condvar,
}

/// The pool's stacks out of use, how many it has in all, and how many runs wait for one.
struct Shelf {
    free: Vec<Stack>,
    made: usize,
    waiting: usize,
}

impl StackPool {
    /// An empty pool of stacks of `size` bytes, or `fallback` bytes where `size` cannot be
    /// mapped (both multiples of the page size, larger than [`TRIM_KEEP`]).
    pub const fn new(size: usize, fallback: usize) -> StackPool {
        StackPool {
            sizes: [size, fallback],
            state: Mutex::new(Shelf {
                free: Vec::new(),
                made: 0,
                waiting: 0,
            }),
            returned: Condvar::new(),
        }
    }

    /// Runs `f` on a stack of the pool, or on the calling thread's own stack if none can be
    /// mapped. Whether it ran on a pool stack, and what `f` returned; a panic in `f` goes on
    /// in the caller.
    ///
    /// The pool has at most [`SHARED`] stacks: with all in use, a run waits for one up to
    /// [`WAIT`], then maps one of its own, unmapped after it (so a run that blocks, or one
    /// that waits on another's, holds up the others no longer than that).
    pub fn run<R>(&self, f: impl FnOnce() -> R) -> (bool, R) {
        let Some((stack, shared)) = self.take() else {
            return (false, f());
        };
        let base = (stack.map + PAGE) as *mut u8;
        let size = stack.len - PAGE;
        // SAFETY: `base..base + size` is a mapped, writable stack with a guard page below it,
        // both ends page-aligned, used by no other code until it is given back below; `f`
        // cannot unwind out of it (the panic is caught on that stack and resumed here).
        let started = Instant::now();
        let outcome =
            unsafe { psm::on_stack(base, size, || panic::catch_unwind(AssertUnwindSafe(f))) };
        if shared {
            stack.trim(started.elapsed() < QUICK);
            let mut shelf = self.shelf();
            shelf.free.push(stack);
            // A wake-up is a system call: only when a run waits, and with the lock let go
            // (the run woken takes it at once).
            let wake = shelf.waiting > 0;
            drop(shelf);
            if wake {
                self.returned.notify_one();
            }
        }
        match outcome {
            Ok(value) => (true, value),
            Err(panic) => panic::resume_unwind(panic),
        }
    }

    fn shelf(&self) -> MutexGuard<'_, Shelf> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A stack, and whether it is one of the pool's (to give back after the run).
    fn take(&self) -> Option<(Stack, bool)> {
        let deadline = Instant::now() + WAIT;
        let mut shelf = self.shelf();
        loop {
            if let Some(stack) = shelf.free.pop() {
                return Some((stack, true));
            }
            if shelf.made < SHARED {
                shelf.made += 1;
                drop(shelf);
                let stack = self.map();
                if stack.is_none() {
                    self.shelf().made -= 1;
                }
                return stack.map(|s| (s, true));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                drop(shelf);
                return self.map().map(|s| (s, false));
            }
            shelf.waiting += 1;
            shelf = self
                .returned
                .wait_timeout(shelf, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            shelf.waiting -= 1;
        }
    }

    fn map(&self) -> Option<Stack> {
        self.sizes.iter().find_map(|&len| Stack::map(len))
    }
}

#[cfg(test)]
mod tests {
    use super::super::sys::probe::{deep, resident};
    use super::*;

    /// An address on the stack the caller runs on.
    #[inline(never)]
    fn sp() -> usize {
        let marker = 0u8;
        std::hint::black_box(&marker) as *const u8 as usize
    }

    #[test]
    fn a_run_is_on_a_pool_stack_whose_deep_pages_are_given_back() {
        static POOL: StackPool = StackPool::new(64 << 20, 1 << 20);
        let own = sp();
        let (shared, first) = POOL.run(sp);
        assert!(shared);
        assert!(first.abs_diff(own) > 1 << 20, "{first:x} vs {own:x}");
        // 128 KiB deep: past what the stack keeps. Those pages are memory while the run
        // goes on, and given back once the stack returns to the pool.
        let (_, deepest) = POOL.run(|| {
            let deepest = deep(8);
            assert!(resident(deepest));
            deepest
        });
        assert!(!resident(deepest), "given back");
        // A quick run is not looked after far below the top: a page written there (not by a
        // frame, which takes time to go that deep) stays until a longer run.
        let write_far = || {
            let far = sp() - QUICK_REACH - (1 << 20);
            // SAFETY: a byte of this pool stack, far below every live frame.
            unsafe { std::ptr::write_volatile(far as *mut u8, 1) };
            far
        };
        // (A run the machine held up past `QUICK` is not quick: tried again.)
        let quick = (0..20).find_map(|_| {
            let started = Instant::now();
            let (_, far) = POOL.run(write_far);
            (started.elapsed() < QUICK).then_some(far)
        });
        assert!(resident(quick.expect("a quick run")), "not looked for");
        let (_, far) = POOL.run(|| {
            std::thread::sleep(QUICK * 2);
            write_far()
        });
        assert!(!resident(far), "given back after a longer run");
        // The same thread takes the same stack again, at the same place.
        let (_, again) = POOL.run(sp);
        assert_eq!(again, first);
    }

    #[test]
    fn with_every_stack_taken_a_run_waits_for_one_then_maps_its_own() {
        use std::sync::mpsc;
        static POOL: StackPool = StackPool::new(8 << 20, 1 << 20);
        // Take all of the pool's stacks with runs that block until told.
        let (go, held) = mpsc::channel::<()>();
        let mut holders = Vec::new();
        let mut ends = Vec::new();
        for _ in 0..SHARED {
            let (end, wait) = mpsc::channel::<()>();
            let go = go.clone();
            ends.push(end);
            holders.push(std::thread::spawn(move || {
                POOL.run(|| {
                    go.send(()).unwrap();
                    wait.recv().unwrap();
                })
            }));
        }
        for _ in 0..SHARED {
            held.recv().unwrap();
        }
        assert_eq!(POOL.shelf().made, SHARED);
        // A run now waits [`WAIT`] for a stack, then runs on one of its own.
        let started = Instant::now();
        let (shared, ()) = POOL.run(|| ());
        assert!(shared);
        assert!(started.elapsed() >= WAIT, "{:?}", started.elapsed());
        assert_eq!(POOL.shelf().made, SHARED, "its own stack is not the pool's");
        // A run that waits gets the first stack given back.
        let waiter = std::thread::spawn(|| {
            let started = Instant::now();
            POOL.run(|| ());
            started.elapsed()
        });
        std::thread::sleep(Duration::from_millis(5));
        ends[0].send(()).unwrap();
        assert!(waiter.join().unwrap() < WAIT);
        for (end, holder) in ends.iter().zip(holders).skip(1) {
            end.send(()).unwrap();
            holder.join().unwrap();
        }
        assert_eq!(POOL.shelf().free.len(), SHARED);
    }

    #[test]
    fn the_threads_own_stack_release_does_nothing_from_a_pool_stack() {
        static POOL: StackPool = StackPool::new(8 << 20, 1 << 20);
        // The pool's stack first, the thread's after: mapped lower, so a release that took
        // the pool stack's address for the thread's would give back the thread's live frames.
        POOL.run(|| ());
        std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(|| {
                let kept = std::hint::black_box([7u8; 64 * 1024]);
                POOL.run(|| super::super::sys::release_stack_below(0));
                assert!(std::hint::black_box(&kept).iter().all(|&b| b == 7));
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn a_panic_on_a_pool_stack_goes_on_in_the_caller() {
        static POOL: StackPool = StackPool::new(8 << 20, 1 << 20);
        let caught = panic::catch_unwind(|| POOL.run(|| panic!("boom")));
        let message = caught.err().and_then(|p| p.downcast_ref::<&str>().copied());
        assert_eq!(message, Some("boom"));
        assert_eq!(POOL.run(|| 7).1, 7);
    }
}
