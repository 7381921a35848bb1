//! Runs one hook command: `bash -c COMMAND` (`sh` without bash) in the run's folder, in its
//! own process group ([`crate::platform::process`]), with the event's JSON on stdin and
//! `CLAUDE_PROJECT_DIR` set. Its timeout, the run's cancellation and every other exit path
//! kill the group; stdout and stderr are read into bounded buffers, so a hook that prints
//! without end costs a fixed amount of memory.

use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

use crate::platform::process::{self, Bounded, End, Sinks};

/// How a hook's process ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ended {
    /// It exited with this code.
    Exited(i32),
    /// A signal ended it (not mypi's).
    Signalled,
    TimedOut,
    Cancelled,
    /// It could not be started: why.
    NotStarted(String),
}

/// What a hook's run left: how it ended, what it printed (bounded), and how long it took.
#[derive(Debug)]
pub struct Ran {
    pub ended: Ended,
    pub stdout: String,
    pub stderr: String,
    /// Bytes written to stdout and stderr in all, and whether some were not kept.
    pub printed: (usize, usize),
    pub cut: bool,
    pub duration: Duration,
}

/// The shell hooks run in: bash, as Claude Code's docs assume, or sh.
fn shell() -> &'static str {
    static SHELL: OnceLock<&'static str> = OnceLock::new();
    SHELL.get_or_init(|| {
        if Path::new("/bin/bash").exists() {
            "/bin/bash"
        } else {
            "/bin/sh"
        }
    })
}

/// Runs `command` with `stdin` on its standard input.
pub async fn run(
    command: &str,
    stdin: Vec<u8>,
    cwd: &Path,
    project_dir: &Path,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Ran {
    let start = Instant::now();
    let mut cmd = tokio::process::Command::new(shell());
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env("CLAUDE_PROJECT_DIR", project_dir)
        .stdin(std::process::Stdio::piped());
    let (mut child, group) = match process::spawn(cmd) {
        Ok(started) => started,
        Err(e) => {
            return Ran {
                ended: Ended::NotStarted(e.to_string()),
                stdout: String::new(),
                stderr: String::new(),
                printed: (0, 0),
                cut: false,
                duration: start.elapsed(),
            }
        }
    };
    if let Some(mut pipe) = child.stdin.take() {
        // A hook that never reads its stdin must not hold the run: written on the side,
        // and dropped (closed) when done or when the hook has gone.
        tokio::spawn(async move {
            let _ = pipe.write_all(&stdin).await;
        });
    }
    let (out, err) = (Bounded::shared(), Bounded::shared());
    let end = process::run(
        child,
        group,
        timeout,
        cancel,
        Sinks::Split(out.clone(), err.clone()),
    )
    .await;
    let (out, err) = (Bounded::take(&out), Bounded::take(&err));
    let ended = match end {
        End::Exited(Ok(status)) => match status.code() {
            Some(code) => Ended::Exited(code),
            None => Ended::Signalled,
        },
        End::Exited(Err(e)) => Ended::NotStarted(e.to_string()),
        End::TimedOut => Ended::TimedOut,
        End::Cancelled => Ended::Cancelled,
    };
    Ran {
        ended,
        printed: (out.total(), err.total()),
        cut: out.dropped() + err.dropped() > 0,
        stdout: out.into_text(),
        stderr: err.into_text(),
        duration: start.elapsed(),
    }
}
