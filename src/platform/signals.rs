//! Signals that end mypi: SIGTERM and SIGHUP always, SIGINT in print mode (in the REPL,
//! Ctrl-C cancels the running prompt instead: see `repl`). Each kills every child process
//! group ([`process::kill_all`]), puts the terminal back the way mypi found it and exits with
//! 128 + the signal's number, as a shell reports it.
//!
//! [`install`] registers the handlers at once, before the REPL's line editor starts, so no
//! library that saves and restores signal dispositions can put the default handler back.

use std::io::Write;
use tokio::signal::unix::{signal, SignalKind};

use crate::platform::process;

/// What a front end says last when a signal ends mypi, given the signal's name (`--json`
/// closes its stream of events with an `error` event).
pub type LastWords = Box<dyn Fn(&str) + Send + Sync>;

/// Registers the handlers and starts the task that acts on them. Needs the async runtime.
pub fn install(print_mode: bool, last_words: Option<LastWords>) -> std::io::Result<()> {
    let mut term = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    let mut int = signal(SignalKind::interrupt())?;
    tokio::spawn(async move {
        let sig = tokio::select! {
            _ = term.recv() => libc::SIGTERM,
            _ = hup.recv() => libc::SIGHUP,
            _ = int.recv(), if print_mode => libc::SIGINT,
        };
        if let Some(say) = &last_words {
            say(name_of(sig));
        }
        exit_now(sig);
    });
    Ok(())
}

/// `SIGTERM`, `SIGHUP`, `SIGINT`.
fn name_of(sig: i32) -> &'static str {
    match sig {
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        _ => "a signal",
    }
}

/// Ends the process at once after killing every child group and restoring the terminal.
pub fn exit_now(sig: i32) -> ! {
    process::kill_all();
    crate::platform::stdio::restore_terminal();
    let name = name_of(sig);
    // mypi's own words; a closed stderr is ignored.
    let _ = writeln!(std::io::stderr().lock(), "mypi: stopped by {name}");
    std::process::exit(128 + sig)
}
