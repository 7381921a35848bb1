//! The threads extensions run on: each gets a large stack reservation, so that no value a
//! script can build within its memory cap overflows it when dropped or converted.

use std::sync::Arc;

use crate::platform::stacks::StackPool;

/// Stack of a worker thread. Deep native recursion must hit the engines' limits, not the
/// guard page: Lua's C stack limit, and Rhai's values, which are dropped recursively (a chain
/// of closures as long as the memory cap allows needs some hundred MiB in a debug build). It
/// is address space, not memory: only the part a script actually uses is ever touched.
pub const STACK_BYTES: usize = 512 * 1024 * 1024;
/// The stack when the system refuses [`STACK_BYTES`] (strict overcommit).
const SMALL_STACK_BYTES: usize = 8 * 1024 * 1024;

/// Starts a worker thread with a [`STACK_BYTES`] stack, or [`SMALL_STACK_BYTES`] where the
/// system will not reserve that much.
pub fn spawn<F: FnOnce() + Send + 'static>(name: String, f: F) -> std::io::Result<()> {
    let slot = Arc::new(std::sync::Mutex::new(Some(f)));
    let mut failure = None;
    for size in [STACK_BYTES, SMALL_STACK_BYTES] {
        let s = slot.clone();
        let started = std::thread::Builder::new()
            .name(name.clone())
            .stack_size(size)
            .spawn(move || {
                let f = s.lock().unwrap_or_else(|p| p.into_inner()).take();
                if let Some(f) = f {
                    f();
                }
            });
        match started {
            Ok(_) => return Ok(()),
            Err(e) => failure = Some(e),
        }
    }
    Err(failure.unwrap_or_else(|| std::io::Error::other("no thread")))
}

/// Gives the pages of this thread's stack below the current frame back to the system (they
/// read as zeros if touched again). After a call that went deep (a Rhai value dropped
/// recursively) the touched stack would otherwise stay resident until the thread ends.
pub fn release_unused_stack() {
    crate::platform::sys::release_stack_below(256 * 1024);
}

/// The stacks extension loads run on (see [`on_load_stack`]).
static LOAD_STACKS: StackPool = StackPool::new(STACK_BYTES, SMALL_STACK_BYTES);

/// Runs an extension's load (the engine's set-up, the parser, the script's top level: some
/// KiB of stack) on a stack shared by all extension threads rather than the thread's own,
/// which then only ever holds its idle loop and its jobs. A hundred loads at start-up touch
/// the pages of a few shared stacks instead of each its own thread's, which each would give
/// back after (a `madvise` per thread, and the flush of the other CPU's TLB it forces):
/// 100 Lua extensions start in 25.7 ms instead of 28.5 (turn 2: 25.8), with the same memory
/// per extension (benches/README, ninth pass). Whether it ran there (where no stack could be
/// mapped it ran on the thread's own, see [`release_load_stack`]), and what `load` returned.
pub fn on_load_stack<R>(load: impl FnOnce() -> R) -> (bool, R) {
    LOAD_STACKS.run(load)
}

/// After the script's top level ran on the thread's own stack (where no shared one could be
/// mapped): gives back the stack the engine's set-up and the parser touched, so a hundred
/// idle extensions do not each keep theirs. It keeps what lies
/// within 1 KiB below the call (the system's `madvise` wrapper it ends in runs there; the
/// loop's wait for its next job mostly does too): a page less per idle extension than
/// keeping 4 KiB (100 extensions: 15.07 -> 14.64 MiB). An extension's first call touches
/// again what it needs.
pub fn release_load_stack() {
    crate::platform::sys::release_stack_below(crate::platform::sys::MIN_KEEP);
}
