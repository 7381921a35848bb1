//! Child processes that never outlive their caller: every child runs in its own process
//! group, and a [`Group`] guard kills the whole group (the child and anything it started) when
//! the caller is done with it, on timeout, on cancellation, or when the guard is dropped on any
//! other exit path. Shared by the `bash` tool and `api.exec` (and later MCP stdio servers).
//!
//! Every live group is also in a process-wide registry, so the exit paths that run no
//! destructors (a signal, `std::process::exit`, a panic hook) can still kill them all with
//! [`kill_all`].
//!
//! Exits that run no code at all (`kill -9`, the OOM killer) are covered twice:
//! - every child gets a parent-death signal (`PR_SET_PDEATHSIG`, SIGKILL), so the kernel kills
//!   it when mypi dies. The signal is tied to the *thread* that forked, not the process: a
//!   child forked from a thread that later ends (an extension's thread, a blocking-pool thread)
//!   would be killed with that thread. So every child is forked from one thread that lives as
//!   long as mypi ([`on_spawner`]);
//! - the signal does not reach the child's own children (a shell's background jobs, an MCP
//!   server's helpers): the [`reaper`], a second mypi process that outlives mypi, kills every
//!   group mypi left behind.
//!
//! Output is read as it arrives into [`Bounded`] buffers that keep the first and last
//! [`KEEP_BYTES`] and count what was dropped between, so a child printing without end costs a
//! fixed amount of memory.
// `unsafe` here: pre_exec's parent-death signal, process groups, kill(2).
#![allow(unsafe_code)]

use std::collections::VecDeque;
use std::process::ExitStatus;
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, ChildStderr, ChildStdout, Command};
use tokio_util::sync::CancellationToken;

pub mod reaper;

/// Output kept from each end of a very long output.
pub const KEEP_BYTES: usize = 1024 * 1024;
/// How long to wait for the output pipes to close once the process group is gone.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);
/// How long to wait for a killed child to be reaped.
const REAP_TIMEOUT: Duration = Duration::from_secs(5);

/// The process groups started and not killed yet.
static LIVE: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Held from a child's spawn until its group is registered, and by [`kill_all`]: a signal
/// that arrives while a child is being started waits for it to be registered, then kills it
/// with the rest, instead of missing it.
static SPAWNING: Mutex<()> = Mutex::new(());

fn live() -> std::sync::MutexGuard<'static, Vec<i32>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Sends SIGKILL to the process group `pgid`.
fn kill_group(pgid: i32) {
    signal_group(pgid, libc::SIGKILL);
}

/// Sends `signal` to the process group `pgid`.
fn signal_group(pgid: i32, signal: libc::c_int) {
    if pgid > 0 {
        // SAFETY: kill(2) takes plain integers and touches no memory of ours; a negative
        // pid addresses the process group the spawned child leads.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

/// Whether process `pid` still runs (one of another user's counts as running).
pub fn running(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill(2) with signal 0 only checks that the process exists; it takes plain
    // integers and touches no memory of ours.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Folders mypi made for this process alone (MCP spill files), removed on every exit path.
static LEFTOVERS: Mutex<Vec<std::path::PathBuf>> = Mutex::new(Vec::new());

/// Removes `folder` and what is in it when mypi ends, however it ends but `kill -9`
/// ([`kill_all`] runs on the others).
pub fn remove_at_exit(folder: std::path::PathBuf) {
    LEFTOVERS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(folder);
}

/// Removes the folders [`remove_at_exit`] was given.
fn remove_leftovers() {
    let folders = std::mem::take(&mut *LEFTOVERS.lock().unwrap_or_else(|p| p.into_inner()));
    for folder in folders {
        let _ = std::fs::remove_dir_all(folder);
    }
}

/// Kills every process group still alive, and removes the folders made for this process:
/// for exit paths that skip destructors.
pub fn kill_all() {
    remove_leftovers();
    let _no_spawn_half_done = SPAWNING.lock().unwrap_or_else(|p| p.into_inner());
    let groups = std::mem::take(&mut *live());
    for pgid in groups {
        kill_group(pgid);
        reaper::forget(pgid);
    }
}

/// How many process groups are alive (started and not killed yet).
pub fn live_groups() -> usize {
    live().len()
}

/// The processes of group `pgid` that are alive (zombies waiting for a reaper do not count),
/// each as its `/proc/PID/stat` line.
pub fn live_in_group(pgid: i32) -> Vec<String> {
    let mut live = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return live;
    };
    for entry in entries.flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // After the command name in parentheses: state, ppid, pgrp, ...
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(2) == Some(&pgid.to_string().as_str()) && fields.first() != Some(&"Z") {
            live.push(stat);
        }
    }
    live
}

/// Kills a process group (once) when asked or when dropped.
pub struct Group(Option<i32>);

impl Group {
    /// Takes charge of the group `pgid` (registered until it is killed).
    pub fn new(pgid: Option<i32>) -> Group {
        if let Some(p) = pgid.filter(|&p| p > 0) {
            live().push(p);
            reaper::watch(p);
        }
        Group(pgid)
    }

    /// Asks the group to end (SIGTERM); the group stays in charge until [`Group::kill`].
    pub fn terminate(&self) {
        if let Some(pgid) = self.0 {
            signal_group(pgid, libc::SIGTERM);
        }
    }

    /// Kills the group with SIGKILL; later calls do nothing.
    pub fn kill(&mut self) {
        if let Some(pgid) = self.0.take() {
            live().retain(|&p| p != pgid);
            kill_group(pgid);
            reaper::forget(pgid);
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Starts `command` as the leader of a new process group, with stdout and stderr piped.
pub fn spawn(mut command: Command) -> std::io::Result<(Child, Group)> {
    command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    spawn_group(command)
}

/// Starts `command` like [`spawn`], with its stderr the same pipe as its stdout (`2>&1`):
/// what it writes to either comes in the order it was written, however late mypi reads it
/// (two pipes read together come in the order they are read, which a busy machine changes).
pub fn spawn_merged(mut command: Command) -> std::io::Result<(Child, Group)> {
    command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    // SAFETY: runs in the forked child before exec; dup2(2) is async-signal-safe and
    // allocates nothing.
    unsafe {
        command.pre_exec(|| {
            if libc::dup2(1, 2) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    spawn_group(command)
}

/// Starts `command` (its stdio as set) as the leader of a new process group that dies with
/// mypi (see the module docs), registered before anything can miss it (see [`SPAWNING`]).
pub fn spawn_group(mut command: Command) -> std::io::Result<(Child, Group)> {
    let parent = std::process::id();
    command.process_group(0).kill_on_drop(true);
    // SAFETY: the closure runs in the forked child before exec and calls only prctl(2) and
    // getppid(2), which are async-signal-safe; it allocates nothing.
    unsafe {
        command.pre_exec(move || die_with_parent(parent));
    }
    let _registering = SPAWNING.lock().unwrap_or_else(|p| p.into_inner());
    let runtime = tokio::runtime::Handle::try_current().ok();
    let child = on_spawner(move || {
        // tokio registers the child with the runtime's reaper of exit statuses.
        let _entered = runtime.as_ref().map(|r| r.enter());
        command.spawn()
    })??;
    // The child leads its own group, so the group id is its pid.
    let group = Group::new(child.id().and_then(|id| i32::try_from(id).ok()));
    Ok((child, group))
}

/// In a forked child: asks for SIGKILL when the thread that forked it (the spawner thread,
/// which lives as long as mypi) ends; fails when mypi is already gone.
fn die_with_parent(parent: u32) -> std::io::Result<()> {
    // SAFETY: prctl(2) with PR_SET_PDEATHSIG takes a signal number and touches no memory.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // The parent may have died before the signal was asked for: nothing would send it.
    // SAFETY: getppid(2) has no arguments and cannot fail.
    if u32::try_from(unsafe { libc::getppid() }).ok() != Some(parent) {
        return Err(std::io::Error::other("mypi ended while the child started"));
    }
    Ok(())
}

/// A job for the spawner thread.
type Job = Box<dyn FnOnce() + Send>;

/// Runs `job` on the spawner thread, a thread that lives as long as mypi, and returns what it
/// returned: a child forked there gets its parent-death signal only when mypi ends.
fn on_spawner<T: Send + 'static>(job: impl FnOnce() -> T + Send + 'static) -> std::io::Result<T> {
    static SPAWNER: OnceLock<Option<mpsc::Sender<Job>>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (jobs, queue) = mpsc::channel::<Job>();
        let started = std::thread::Builder::new()
            .name("mypi-spawner".into())
            .spawn(move || queue.into_iter().for_each(|job| job()));
        started.ok().map(|_| jobs)
    });
    let lost = || std::io::Error::other("the thread that starts child processes is gone");
    let Some(jobs) = spawner else {
        return Err(std::io::Error::other(
            "the thread that starts child processes could not be started",
        ));
    };
    let (reply, answer) = mpsc::sync_channel(1);
    jobs.send(Box::new(move || {
        let _ = reply.send(job());
    }))
    .map_err(|_| lost())?;
    answer.recv().map_err(|_| lost())
}

/// How a child ended.
#[derive(Debug)]
pub enum End {
    Exited(std::io::Result<ExitStatus>),
    TimedOut,
    Cancelled,
}

/// Where each pipe's output goes: both into one buffer (arrival order) or one each.
pub enum Sinks {
    Merged(Arc<Mutex<Bounded>>),
    Split(Arc<Mutex<Bounded>>, Arc<Mutex<Bounded>>),
}

/// Runs a spawned child to its end, its timeout or `cancel`, reading its output into `sinks`;
/// the group is killed in every case (background jobs do not outlive the command).
pub async fn run(
    mut child: Child,
    mut group: Group,
    timeout: Duration,
    cancel: &CancellationToken,
    sinks: Sinks,
) -> End {
    let (out, err) = (child.stdout.take(), child.stderr.take());
    let (to_out, to_err) = match sinks {
        Sinks::Merged(s) => (s.clone(), s),
        Sinks::Split(o, e) => (o, e),
    };
    let mut reader = tokio::spawn(collect(out, err, to_out, to_err));
    let end = tokio::select! {
        status = child.wait() => End::Exited(status),
        _ = tokio::time::sleep(timeout) => End::TimedOut,
        _ = cancel.cancelled() => End::Cancelled,
    };
    group.kill();
    if !matches!(end, End::Exited(_)) {
        let _ = tokio::time::timeout(REAP_TIMEOUT, child.wait()).await;
    }
    if tokio::time::timeout(DRAIN_TIMEOUT, &mut reader)
        .await
        .is_err()
    {
        // Something outside the group still holds the pipes open; keep what arrived.
        reader.abort();
    }
    end
}

/// Reads stdout and stderr until both close, appending chunks as they arrive.
async fn collect(
    mut out: Option<ChildStdout>,
    mut err: Option<ChildStderr>,
    to_out: Arc<Mutex<Bounded>>,
    to_err: Arc<Mutex<Bounded>>,
) {
    let mut out_buf = vec![0u8; 8192];
    let mut err_buf = vec![0u8; 8192];
    while out.is_some() || err.is_some() {
        let (is_out, result) = tokio::select! {
            r = read_some(&mut out, &mut out_buf) => (true, r),
            r = read_some(&mut err, &mut err_buf) => (false, r),
        };
        match result {
            Ok(n) if n > 0 => {
                let (buf, sink) = if is_out {
                    (&out_buf, &to_out)
                } else {
                    (&err_buf, &to_err)
                };
                sink.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(&buf[..n]);
            }
            // End of file or a read error: this pipe is done.
            _ if is_out => out = None,
            _ => err = None,
        }
    }
}

/// Reads from the pipe if it is still open; never resolves for a closed one.
async fn read_some<R: AsyncRead + Unpin>(
    pipe: &mut Option<R>,
    buf: &mut [u8],
) -> std::io::Result<usize> {
    match pipe {
        Some(r) => r.read(buf).await,
        None => std::future::pending().await,
    }
}

/// Output in arrival order, bounded: the first and last [`KEEP_BYTES`] are kept. A watcher,
/// when set, sees every chunk as it arrives.
#[derive(Default)]
pub struct Bounded {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: usize,
    watch: Option<Watch>,
}

/// What sees each chunk of a child's output as it arrives.
type Watch = Box<dyn FnMut(&[u8]) + Send>;

impl Bounded {
    pub fn shared() -> Arc<Mutex<Bounded>> {
        Arc::new(Mutex::new(Bounded::default()))
    }

    /// Calls `watch` with every chunk pushed from now on.
    pub fn watch(&mut self, watch: impl FnMut(&[u8]) + Send + 'static) {
        self.watch = Some(Box::new(watch));
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        if let Some(watch) = &mut self.watch {
            watch(bytes);
        }
        self.total += bytes.len();
        let room = KEEP_BYTES.saturating_sub(self.head.len());
        let (to_head, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(to_head);
        bytes = rest;
        if bytes.len() >= KEEP_BYTES {
            self.tail.clear();
            bytes = &bytes[bytes.len() - KEEP_BYTES..];
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(KEEP_BYTES);
        self.tail.drain(..overflow);
        self.tail.extend(bytes);
    }

    /// Bytes in all.
    pub fn total(&self) -> usize {
        self.total
    }

    /// Bytes that were dropped from the middle because output was very long.
    pub fn dropped(&self) -> usize {
        self.total - self.head.len() - self.tail.len()
    }

    /// What was kept, as text (invalid UTF-8 replaced), with a note in the middle naming how
    /// many bytes were dropped there.
    pub fn into_text(mut self) -> String {
        let dropped = self.dropped();
        let tail: Vec<u8> = std::mem::take(&mut self.tail).into();
        let head = String::from_utf8_lossy(&self.head);
        if dropped == 0 {
            let mut all = self.head;
            all.extend(tail);
            return String::from_utf8_lossy(&all).into_owned();
        }
        format!(
            "{head}\n[… {dropped} bytes dropped from the middle of {} …]\n{}",
            self.total,
            String::from_utf8_lossy(&tail)
        )
    }

    /// Takes what was kept out of a shared buffer.
    pub fn take(shared: &Arc<Mutex<Bounded>>) -> Bounded {
        std::mem::take(&mut *shared.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The kept bytes, head then tail, without a note (the caller reports [`Self::dropped`]).
    pub fn into_bytes(self) -> Vec<u8> {
        let mut all = self.head;
        all.extend(self.tail);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_keeps_both_ends_and_counts_the_middle() {
        let mut b = Bounded::default();
        b.push(&vec![b'a'; KEEP_BYTES]);
        b.push(&[b'b'; 10]);
        b.push(&vec![b'c'; KEEP_BYTES]);
        assert_eq!(b.total(), 2 * KEEP_BYTES + 10);
        assert_eq!(b.dropped(), 10);
        let text = b.into_text();
        assert!(
            text.contains("[… 10 bytes dropped from the middle of"),
            "{}",
            &text[KEEP_BYTES..KEEP_BYTES + 80]
        );
        assert!(text.starts_with('a') && text.ends_with('c'));
    }

    #[tokio::test]
    async fn the_group_dies_on_timeout_and_the_call_ends() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 30 & sleep 30"])
            .stdin(std::process::Stdio::null());
        let (child, group) = spawn(cmd).unwrap();
        let pid = child.id().unwrap() as i32;
        let start = std::time::Instant::now();
        let sinks = Sinks::Merged(Bounded::shared());
        let end = run(
            child,
            group,
            Duration::from_millis(100),
            &CancellationToken::new(),
            sinks,
        )
        .await;
        assert!(matches!(end, End::TimedOut), "{end:?}");
        assert!(start.elapsed() < Duration::from_secs(3));
        // SIGKILL was sent; a busy machine may take a moment to carry it out.
        let killed = std::time::Instant::now();
        while !live_in_group(pid).is_empty() && killed.elapsed() < Duration::from_secs(3) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(
            crate::platform::process::live_in_group(pid).is_empty(),
            "the process group outlived the call"
        );
    }

    #[test]
    fn a_child_outlives_the_thread_that_started_it() {
        // Its parent-death signal is tied to the spawner thread, not to the short-lived
        // thread that asked for it.
        let (child, mut group) = std::thread::spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                let mut cmd = Command::new("sleep");
                cmd.arg("30");
                spawn(cmd).unwrap()
            })
        })
        .join()
        .unwrap();
        let pid = child.id().unwrap() as i32;
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(live_in_group(pid).len(), 1, "killed with its thread");
        group.kill();
    }
}
