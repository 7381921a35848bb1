//! What the benchmarks share (included with `#[path]`; each bench is its own crate).

use std::time::Duration;

/// The median of `v` (which must not be empty).
pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The CPU time of the whole process (user + system, all threads).
#[allow(dead_code)] // not every bench measures process CPU
pub fn process_cpu() -> Duration {
    // SAFETY: getrusage fills the struct we pass and touches nothing else.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}
