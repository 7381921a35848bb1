//! Signals that end mypi: SIGTERM and SIGHUP always, SIGINT in print mode (in the REPL,
//! Ctrl-C cancels the running prompt instead: see `repl`). Each kills every child process
//! group ([`process::kill_all`]), puts the terminal back the way mypi found it and exits with
//! 128 + the signal's number, as a shell reports it.
//!
//! [`install`] registers the handlers at once, before the REPL's line editor starts, so no
//! library that saves and restores signal dispositions can put the default handler back.

use std::io::Write;
use tokio::signal::unix::{signal, SignalKind};

use crate::process;

/// Registers the handlers and starts the task that acts on them. Needs the async runtime.
pub fn install(print_mode: bool) -> std::io::Result<()> {
    let mut term = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    let mut int = signal(SignalKind::interrupt())?;
    tokio::spawn(async move {
        let sig = tokio::select! {
            _ = term.recv() => libc::SIGTERM,
            _ = hup.recv() => libc::SIGHUP,
            _ = int.recv(), if print_mode => libc::SIGINT,
        };
        exit_now(sig);
    });
    Ok(())
}

/// Ends the process at once after killing every child group and restoring the terminal.
pub fn exit_now(sig: i32) -> ! {
    process::kill_all();
    crate::stdio::restore_terminal();
    let name = match sig {
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        _ => "a signal",
    };
    // mypi's own words; a closed stderr is ignored.
    let _ = writeln!(std::io::stderr().lock(), "mypi: stopped by {name}");
    std::process::exit(128 + sig)
}
