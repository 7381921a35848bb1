//! `api.exec`: runs a process without a shell, with a timeout, from a script's worker thread
//! (blocking is fine there: no script runs on the async runtime). On timeout the whole process
//! group is killed.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use super::api::ExecResult;

/// The default timeout of `api.exec`.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

/// Runs `cmd args...` in `cwd` (relative to `base`), capturing stdout and stderr.
pub fn run(
    cmd: &str,
    args: &[String],
    timeout_ms: Option<u64>,
    cwd: Option<&str>,
    base: &Path,
) -> Result<ExecResult, String> {
    let dir = match cwd {
        Some(c) => base.join(c),
        None => base.to_path_buf(),
    };
    let mut child = Command::new(cmd)
        .args(args)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot run {cmd}: {e}"))?;
    let out = child.stdout.take().map(reader);
    let err = child.stderr.take().map(reader);
    let timeout = Duration::from_millis(timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS));
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() >= timeout => {
                timed_out = true;
                kill_group(child.id());
                break child.wait().ok();
            }
            Ok(None) => thread::sleep(Duration::from_millis(2)),
            Err(e) => return Err(format!("cannot wait for {cmd}: {e}")),
        }
    };
    let collect =
        |h: Option<thread::JoinHandle<String>>| h.and_then(|h| h.join().ok()).unwrap_or_default();
    Ok(ExecResult {
        code: if timed_out {
            None
        } else {
            status.and_then(|s| s.code())
        },
        stdout: collect(out),
        stderr: collect(err),
        timed_out,
    })
}

fn reader(mut pipe: impl Read + Send + 'static) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        String::from_utf8_lossy(&buf).into_owned()
    })
}

fn kill_group(pid: u32) {
    // SAFETY: kill(2) with a negative pid signals the process group we created; no memory
    // is touched.
    unsafe {
        libc::kill(-(pid as i32), libc::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_output_and_exit_code() {
        let r = run(
            "sh",
            &["-c".into(), "echo out; echo err >&2; exit 3".into()],
            None,
            None,
            Path::new("/"),
        )
        .unwrap();
        assert_eq!(
            (r.code, r.stdout.as_str(), r.stderr.as_str()),
            (Some(3), "out\n", "err\n")
        );
        assert!(!r.timed_out);
    }

    #[test]
    fn times_out_and_kills() {
        let start = Instant::now();
        let r = run("sleep", &["5".into()], Some(100), None, Path::new("/")).unwrap();
        assert!(r.timed_out);
        assert_eq!(r.code, None);
        assert!(start.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn missing_program_is_an_error() {
        let e = run(
            "definitely-not-a-program-xyz",
            &[],
            None,
            None,
            Path::new("/"),
        )
        .unwrap_err();
        assert!(e.contains("cannot run definitely-not-a-program-xyz"), "{e}");
    }
}
