//! The reaper: a second, tiny mypi process (`mypi __reaper`) whose one job is to kill every
//! child process group mypi started once mypi is gone, however it went (`kill -9`, the OOM
//! killer, a crash in native code: exits that run no code of mypi's).
//!
//! A parent-death signal reaches only a direct child (see [`super::spawn_group`]); what a shell
//! started in the background, or an MCP server's own helpers, are its grandchildren, and only
//! a process that lives on after mypi can kill their group. So mypi starts the reaper with the
//! first child it starts: from `/proc/self/exe` (the same binary, even if the file was
//! replaced meanwhile), in a process group of its own (the terminal's Ctrl-C, Ctrl-Z and
//! hangup do not reach it), ignoring the signals that end or stop a process, with a pipe as
//! its stdin. mypi writes `+PGID` to the pipe when it starts a group and `-PGID` when it has
//! killed it. The pipe's write end is mypi's alone (close-on-exec, so no child inherits it):
//! when mypi ends, the kernel closes it, the reaper reads the end of the file, sends SIGKILL
//! to every group still listed, and exits. A reaper that dies is started again on the next
//! write and told the groups alive then; one that cannot be started (no `/proc`) is not tried
//! again, and the children keep their parent-death signal.
//!
//! Only the `mypi` binary turns it on ([`enable`]); library tests start no reaper.
// `unsafe` here: the reaper process group and signal dispositions.
#![allow(unsafe_code)]

use std::collections::BTreeSet;
use std::io::{BufRead, Write};
use std::os::unix::process::CommandExt;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The argument that makes `mypi` the reaper (`mypi __reaper`).
pub const ARG: &str = "__reaper";

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Set when the reaper could not be started: it is not tried again for every child.
static CANNOT_START: AtomicBool = AtomicBool::new(false);

/// The reaper's stdin, once it is started.
static LINK: Mutex<Option<ChildStdin>> = Mutex::new(None);

/// Lets the process groups started from now on be watched by a reaper (started with the
/// first of them).
pub fn enable() {
    ENABLED.store(true, Ordering::SeqCst);
}

/// Tells the reaper that group `pgid` was started.
pub(super) fn watch(pgid: i32) {
    send(&format!("+{pgid}\n"));
}

/// Tells the reaper that mypi killed group `pgid` itself.
pub(super) fn forget(pgid: i32) {
    send(&format!("-{pgid}\n"));
}

fn send(line: &str) {
    if !ENABLED.load(Ordering::SeqCst) || CANNOT_START.load(Ordering::SeqCst) {
        return;
    }
    let mut link = LINK.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(pipe) = link.as_mut() {
        if pipe.write_all(line.as_bytes()).is_ok() {
            return;
        }
    }
    // Not started yet, or it died: a new one is told every group alive now (which includes
    // the one this line is about, or rightly leaves it out).
    *link = start().ok();
    CANNOT_START.store(link.is_none(), Ordering::SeqCst);
    if let Some(pipe) = link.as_mut() {
        let alive: String = super::live().iter().map(|g| format!("+{g}\n")).collect();
        if pipe.write_all(alive.as_bytes()).is_err() {
            *link = None;
        }
    }
}

/// Starts the reaper; its stdin is the pipe.
fn start() -> std::io::Result<ChildStdin> {
    let mut child = Command::new("/proc/self/exe")
        .arg(ARG)
        .current_dir("/")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()?;
    child
        .stdin
        .take()
        .ok_or_else(|| std::io::Error::other("the reaper's stdin could not be opened"))
}

/// The reaper's life: reads `+PGID` / `-PGID` lines until the end of its stdin, then kills
/// every group still listed and exits.
pub fn serve() -> ! {
    for sig in [
        libc::SIGINT,
        libc::SIGHUP,
        libc::SIGTERM,
        libc::SIGQUIT,
        libc::SIGPIPE,
        libc::SIGTSTP,
        libc::SIGTTIN,
        libc::SIGTTOU,
    ] {
        // SAFETY: signal(2) with SIG_IGN installs no handler code; it only changes the
        // disposition of this process, which runs nothing else.
        unsafe {
            libc::signal(sig, libc::SIG_IGN);
        }
    }
    let mut groups = BTreeSet::new();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        apply(&mut groups, &line);
    }
    for pgid in groups {
        super::signal_group(pgid, libc::SIGKILL);
    }
    std::process::exit(0)
}

/// Applies one line of the pipe to the groups listed.
fn apply(groups: &mut BTreeSet<i32>, line: &str) {
    let number = |rest: &str| rest.trim().parse::<i32>().ok().filter(|&p| p > 1);
    if let Some(pgid) = line.strip_prefix('+').and_then(number) {
        groups.insert(pgid);
    } else if let Some(pgid) = line.strip_prefix('-').and_then(number) {
        groups.remove(&pgid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_add_and_remove_groups_and_nonsense_is_ignored() {
        let mut groups = BTreeSet::new();
        for line in [
            "+12", "+13", "-12", "+1", "+0", "+-5", "x", "", "é", "+ab", "+14",
        ] {
            apply(&mut groups, line);
        }
        assert_eq!(groups.into_iter().collect::<Vec<_>>(), vec![13, 14]);
    }
}
