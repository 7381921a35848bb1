//! `api.exec`: runs a program without a shell, in its own process group (killed on timeout,
//! on cancellation of the run, and on every other way the call ends), with stdout and stderr
//! kept apart and bounded. The script's worker thread waits for it on the async runtime, so
//! the wait costs no CPU.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::script::ExecResult;
use crate::platform::process::{self, Bounded, End, Sinks};

/// The default timeout of `api.exec`.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

/// Runs `cmd args...` in `dir`, capturing stdout and stderr.
pub async fn run(
    cmd: String,
    args: Vec<String>,
    timeout_ms: Option<u64>,
    dir: PathBuf,
    cancel: CancellationToken,
) -> Result<ExecResult, String> {
    let mut command = Command::new(&cmd);
    command.args(&args).current_dir(&dir).stdin(Stdio::null());
    let (child, group) = process::spawn(command).map_err(|e| format!("cannot run {cmd}: {e}"))?;
    let timeout = Duration::from_millis(timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS));
    let (out, err) = (Bounded::shared(), Bounded::shared());
    let end = process::run(
        child,
        group,
        timeout,
        &cancel,
        Sinks::Split(out.clone(), err.clone()),
    )
    .await;
    let code = match &end {
        End::Exited(Ok(status)) => status.code(),
        End::Exited(Err(e)) => return Err(format!("cannot wait for {cmd}: {e}")),
        End::TimedOut | End::Cancelled => None,
    };
    Ok(ExecResult {
        code,
        stdout: Bounded::take(&out).into_text(),
        stderr: Bounded::take(&err).into_text(),
        timed_out: matches!(end, End::TimedOut),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn exec(cmd: &str, args: &[&str], timeout_ms: Option<u64>) -> Result<ExecResult, String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let args = args.iter().map(|s| s.to_string()).collect();
        rt.block_on(run(
            cmd.into(),
            args,
            timeout_ms,
            PathBuf::from("/"),
            CancellationToken::new(),
        ))
    }

    #[test]
    fn captures_output_and_exit_code() {
        let r = exec("sh", &["-c", "echo out; echo err >&2; exit 3"], None).unwrap();
        assert_eq!(
            (r.code, r.stdout.as_str(), r.stderr.as_str()),
            (Some(3), "out\n", "err\n")
        );
        assert!(!r.timed_out);
    }

    #[test]
    fn times_out_and_kills() {
        let start = Instant::now();
        let r = exec("sleep", &["5"], Some(100)).unwrap();
        assert!(r.timed_out);
        assert_eq!(r.code, None);
        assert!(start.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn missing_program_is_an_error() {
        let e = exec("definitely-not-a-program-xyz", &[], None).unwrap_err();
        assert!(e.contains("cannot run definitely-not-a-program-xyz"), "{e}");
    }

    #[test]
    fn endless_output_is_bounded() {
        let r = exec("sh", &["-c", "head -c 5000000 /dev/zero"], None).unwrap();
        assert_eq!(r.code, Some(0));
        assert!(r.stdout.len() < 2 * crate::platform::process::KEEP_BYTES + 200);
        assert!(r
            .stdout
            .contains("bytes dropped from the middle of 5000000"));
    }
}
