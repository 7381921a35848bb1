//! mypi's own standard output, kept apart from everything else in the process in print mode
//! and `mypi acp` (whose protocol input is read from a private copy of stdin: [`take_input`]).
//!
//! In `-p` and `--json` mode stdout is a contract: the answer, or one JSON event per line.
//! [`isolate`] moves the real stdout to a private descriptor (close-on-exec, so no child
//! inherits it) and points descriptors 0 and 1 at `/dev/null`. Whatever else writes to fd 1
//! (a script opening `/dev/stdout`, C code inside a VM, a child that inherits it) or reads fd
//! 0 then reaches nothing; mypi itself writes through [`out_line`]. In the REPL nothing moves:
//! rustyline needs the terminal on 0 and 1, and scripts' `print`/`io.write` go to the log.
// `unsafe` here: dup, fcntl and termios on the standard descriptors.
#![allow(unsafe_code)]

use std::fs::File;
use std::io::{self, IsTerminal, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::{Mutex, OnceLock};

/// The terminal settings of stdin when mypi started (REPL only).
static TERMINAL: OnceLock<libc::termios> = OnceLock::new();

/// Remembers the terminal settings of stdin, if it is a terminal, for [`restore_terminal`].
pub fn save_terminal() {
    // SAFETY: termios is plain data; tcgetattr fills it or fails without touching it.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        if libc::isatty(libc::STDIN_FILENO) == 1 && libc::tcgetattr(libc::STDIN_FILENO, &mut t) == 0
        {
            let _ = TERMINAL.set(t);
        }
    }
}

/// The terminal settings [`save_terminal`] found, if any.
pub fn saved_terminal() -> Option<libc::termios> {
    TERMINAL.get().copied()
}

/// Puts the terminal back as [`save_terminal`] found it (after raw-mode line editing, on an
/// exit path that skips the editor's own clean-up).
pub fn restore_terminal() {
    if let Some(t) = TERMINAL.get() {
        // SAFETY: `t` came from tcgetattr on the same descriptor.
        unsafe {
            libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, t);
        }
    }
}

/// The real stdout after [`isolate`].
static PRIVATE: OnceLock<Mutex<File>> = OnceLock::new();

/// Moves stdout to a private descriptor and points 0 and 1 at `/dev/null`. Call once, after
/// the prompt was read from stdin. On failure nothing changes and the reason is returned.
pub fn isolate() -> io::Result<()> {
    if PRIVATE.get().is_some() {
        return Ok(());
    }
    io::stdout().flush()?;
    // SAFETY: fcntl(F_DUPFD_CLOEXEC) returns a new descriptor we own, or -1.
    let saved = unsafe { libc::fcntl(libc::STDOUT_FILENO, libc::F_DUPFD_CLOEXEC, 3) };
    if saved < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `saved` is a fresh descriptor owned by nobody else.
    let saved = unsafe { OwnedFd::from_raw_fd(saved) };
    let null = File::options().read(true).write(true).open("/dev/null")?;
    for fd in [libc::STDIN_FILENO, libc::STDOUT_FILENO] {
        // SAFETY: dup2 onto the standard descriptors; both arguments are open descriptors.
        if unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&null), fd) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    let _ = PRIVATE.set(Mutex::new(File::from(saved)));
    Ok(())
}

/// Standard input on a private descriptor (close-on-exec, so no child inherits it), for a
/// front end that reads its protocol from stdin (`mypi acp`). Call before [`isolate`], which
/// points descriptor 0 at `/dev/null`.
pub fn take_input() -> io::Result<File> {
    // SAFETY: fcntl(F_DUPFD_CLOEXEC) returns a new descriptor we own, or -1.
    let fd = unsafe { libc::fcntl(libc::STDIN_FILENO, libc::F_DUPFD_CLOEXEC, 3) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor owned by nobody else.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
}

/// Writes `bytes` to mypi's stdout (the private descriptor after [`isolate`]) and flushes.
/// A closed stdout (`mypi -p ... | head`) is not an error worth reporting.
pub fn write_out(bytes: &[u8]) {
    match PRIVATE.get() {
        Some(file) => {
            if let Ok(mut f) = file.lock() {
                let _ = f.write_all(bytes);
            }
        }
        None => {
            let mut out = io::stdout().lock();
            let _ = out.write_all(bytes).and_then(|_| out.flush());
        }
    }
}

/// Whether mypi's stdout (the private descriptor after [`isolate`]) is a terminal; read once.
pub fn out_is_terminal() -> bool {
    static TERMINAL: OnceLock<bool> = OnceLock::new();
    *TERMINAL.get_or_init(|| match PRIVATE.get() {
        Some(file) => file.lock().map(|f| f.is_terminal()).unwrap_or(false),
        None => io::stdout().is_terminal(),
    })
}

/// Whether stderr is a terminal; read once.
pub fn err_is_terminal() -> bool {
    static TERMINAL: OnceLock<bool> = OnceLock::new();
    *TERMINAL.get_or_init(|| io::stderr().is_terminal())
}

/// Writes one line to mypi's stdout.
pub fn out_line(text: &str) {
    let mut line = String::with_capacity(text.len() + 1);
    line.push_str(text);
    line.push('\n');
    write_out(line.as_bytes());
}
