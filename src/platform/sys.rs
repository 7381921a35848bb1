//! The system calls mypi needs that neither std nor `nix` offers safely, each behind a safe
//! function with its safety argument: a thread's CPU clock (the scripts' budgets), giving a
//! thread's unused stack back, the heap's free pages back, the local time, the terminal's
//! width, a TCP socket's addresses and quick-ACK switch (see [`super::quickack`]), and the CPU
//! a thread runs on (`nix` has that one behind a feature; switching it on renames every
//! symbol of mypi's, and with them the start-up list). Everything else of the kind goes
//! through `nix` (termios, poll, fstat, renameat2, mkfifo).
// `unsafe` here: the libc calls above.
#![allow(unsafe_code)]

use std::net::SocketAddr;
use std::os::fd::RawFd;
use std::time::Duration;

/// A thread's CPU clock, readable from other threads while that thread lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadClock(libc::clockid_t);

impl ThreadClock {
    /// The calling thread's clock.
    pub fn current() -> Option<ThreadClock> {
        let mut clock: libc::clockid_t = 0;
        // SAFETY: pthread_getcpuclockid(3) writes one clockid_t through a valid pointer for
        // the calling thread's own handle.
        let rc = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock) };
        (rc == 0).then_some(ThreadClock(clock))
    }

    /// The CPU time the clock shows (`None` once its thread is gone).
    pub fn read(self) -> Option<Duration> {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime(2) writes one timespec through a valid pointer.
        let rc = unsafe { libc::clock_gettime(self.0, &mut ts) };
        let secs = u64::try_from(ts.tv_sec).ok()?;
        let nanos = u32::try_from(ts.tv_nsec).ok()?;
        (rc == 0).then(|| Duration::new(secs, nanos))
    }
}

/// The least [`release_stack_below`] keeps below its own locals.
pub const MIN_KEEP: usize = 1024;

/// Gives the pages of the calling thread's stack below the current frame, less `keep` bytes,
/// back to the system (they read as zeros if touched again). `keep` must cover what runs
/// below this function's locals while it gives them back: the rest of its frame and the
/// system's `madvise` wrapper, a few hundred bytes; [`MIN_KEEP`] or more.
pub fn release_stack_below(keep: usize) {
    let keep = keep.max(MIN_KEEP);
    // SAFETY: pthread_getattr_np fills `attr` for the calling thread; the range given to
    // madvise lies inside this thread's stack, below the current frame (minus a margin), where
    // nothing is live: the stack grows down and no signal handler runs on it meanwhile.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return;
        }
        let mut base: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let got = libc::pthread_attr_getstack(&attr, &mut base, &mut size);
        libc::pthread_attr_destroy(&mut attr);
        if got != 0 || base.is_null() {
            return;
        }
        let here = &size as *const _ as usize;
        // Not on this thread's own stack (on a shared one, see `super::stacks`): nothing
        // of the thread's below here can be told apart from what is live.
        if !(base as usize..base as usize + size).contains(&here) {
            return;
        }
        let page = 4096;
        let low = (base as usize + page * 16).next_multiple_of(page);
        let high = here.saturating_sub(keep) / page * page;
        if high > low {
            libc::madvise(low as *mut libc::c_void, high - low, libc::MADV_DONTNEED);
        }
    }
}

/// A moment in the local time zone, to the minute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalTime {
    pub year: i32,
    /// 1 to 12.
    pub month: i32,
    pub day: i32,
    pub hour: i32,
    pub minute: i32,
}

/// `secs` after the epoch in the local time zone (std has no local time).
pub fn local_time(secs: i64) -> LocalTime {
    let t = secs as libc::time_t;
    // SAFETY: localtime_r fills the zeroed tm we own from a time_t we own; no shared state.
    let tm = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&t, &mut tm);
        tm
    };
    LocalTime {
        year: tm.tm_year + 1900,
        month: tm.tm_mon + 1,
        day: tm.tm_mday,
        hour: tm.tm_hour,
        minute: tm.tm_min,
    }
}

/// The columns of the terminal on standard output (`None` off a terminal).
pub fn stdout_columns() -> Option<usize> {
    // SAFETY: TIOCGWINSZ fills the zeroed winsize struct and nothing else.
    let cols = unsafe {
        let mut ws: libc::winsize = std::mem::zeroed();
        if libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) == 0 {
            ws.ws_col as usize
        } else {
            0
        }
    };
    (cols > 0).then_some(cols)
}

/// The local and peer addresses of the TCP socket on descriptor `fd` (`None` for a descriptor
/// that is not a connected IP socket, or not open).
pub fn tcp_addresses(fd: RawFd) -> Option<(SocketAddr, SocketAddr)> {
    type Call = unsafe extern "C" fn(RawFd, *mut libc::sockaddr, *mut libc::socklen_t) -> i32;
    let address = |call: Call| {
        // SAFETY: try_init hands a zeroed sockaddr_storage and its length, which
        // getsockname(2)/getpeername(2) fill for whatever descriptor `fd` is (a closed one
        // fails with EBADF; no memory of ours is touched but the storage).
        let got = unsafe {
            socket2::SockAddr::try_init(|storage, len| match call(fd, storage.cast(), len) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            })
        };
        got.ok()?.1.as_socket()
    };
    Some((address(libc::getsockname)?, address(libc::getpeername)?))
}

/// Makes the TCP socket on descriptor `fd` acknowledge what it has received at once and
/// leave delayed-ACK mode until its next send (`TCP_QUICKACK`; a no-op off Linux, or on a
/// descriptor that is not a TCP socket).
pub fn tcp_quick_ack(fd: RawFd) {
    #[cfg(target_os = "linux")]
    {
        let on: libc::c_int = 1;
        // SAFETY: setsockopt(2) reads one c_int through a valid pointer with its size.
        unsafe {
            libc::setsockopt(
                fd,
                libc::IPPROTO_TCP,
                libc::TCP_QUICKACK,
                (&on as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
}

/// The CPU the calling thread runs on now (`sched_getcpu`: the kernel's per-thread answer
/// read without a system call where glibc has it, some ns); `None` where the system has no
/// answer. It may have changed by the time the caller looks.
pub fn current_cpu() -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sched_getcpu(3) takes no argument and touches no memory of ours.
        let cpu = unsafe { libc::sched_getcpu() };
        u32::try_from(cpu).ok()
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// Gives the free pages of the heap back to the system (`malloc_trim`; a no-op off glibc).
/// A long session's transient buffers leave holes as large as the conversation in the
/// allocator's arenas; an interactive mypi calls this when a line is done.
pub fn release_free_memory() {
    // SAFETY: malloc_trim(3) takes no pointer; it only walks the allocator's own arenas
    // under their locks.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Stack probes for the tests of the stack's release (here and in [`super::stacks`]).
#[cfg(test)]
pub(crate) mod probe {
    /// Whether the page holding `addr` is in memory.
    pub fn resident(addr: usize) -> bool {
        let mut v = 0u8;
        let page = (addr / 4096 * 4096) as *mut libc::c_void;
        // SAFETY: mincore reads the page tables and writes one byte into `v`.
        assert_eq!(unsafe { libc::mincore(page, 4096, &mut v) }, 0);
        v & 1 == 1
    }

    /// Goes `levels` frames of 16 KiB deep; the address of the deepest frame's buffer.
    #[inline(never)]
    pub fn deep(levels: usize) -> usize {
        let buf = std::hint::black_box([1u8; 16 * 1024]);
        if levels == 0 {
            return buf.as_ptr() as usize;
        }
        std::hint::black_box(deep(levels - 1)) + (buf[levels] as usize - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::probe::{deep, resident};
    use super::*;

    #[test]
    fn a_thread_knows_its_cpu_and_only_its_allowed_ones() {
        // Held to one CPU, a thread runs there and says so.
        std::thread::spawn(|| {
            let cpu = current_cpu().expect("Linux answers");
            // SAFETY: a zeroed cpu_set_t is the empty set; sched_setaffinity(2) reads the
            // set through a valid pointer with its size, for this thread (0).
            let held = unsafe {
                let mut one: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu as usize, &mut one);
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &one)
            };
            assert_eq!(held, 0, "{}", std::io::Error::last_os_error());
            for _ in 0..100 {
                std::thread::yield_now();
                assert_eq!(current_cpu(), Some(cpu));
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_threads_clock_counts_its_work() {
        let clock = ThreadClock::current().unwrap();
        let before = clock.read().unwrap();
        let mut x = 0u64;
        while clock.read().unwrap() - before < Duration::from_millis(5) {
            x = x.wrapping_add(1);
        }
        assert!(x > 0);
    }

    #[test]
    fn the_stack_below_a_frame_is_given_back_once_touched() {
        std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(|| {
                let deepest = deep(8);
                assert!(resident(deepest), "the deep frames were touched");
                // The least margin: the call returns through what it kept.
                release_stack_below(0);
                assert!(!resident(deepest), "and given back");
                // Nothing below now: the call gives back nothing more.
                release_stack_below(4096);
                assert!(!resident(deepest));
                // Touched again, it is memory again (zeros, then what the frame wrote).
                let again = deep(8);
                assert!(resident(again));
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn local_time_is_a_calendar_date() {
        let t = local_time(1_700_000_000);
        assert_eq!(t.year, 2023);
        assert!((1..=12).contains(&t.month) && (1..=31).contains(&t.day));
        assert!((0..24).contains(&t.hour) && (0..60).contains(&t.minute));
    }
}
