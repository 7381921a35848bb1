//! The built-in `bash` tool: runs `bash -c COMMAND` in the working folder, in its own process
//! group, with stdin closed and stdout and stderr captured together in arrival order. The whole
//! group is killed when the command ends (so no background job outlives it), times out, or the
//! prompt is cancelled. The result is the output, cut in the middle when long, and a last line
//! with the exit code (or why it was killed).
//!
//! [`run_shell`] is that runner on its own: the REPL's `!cmd` uses it with `sh`.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::process::Command;

use super::{Tool, ToolContext, MAX_OUTPUT_BYTES};
use crate::platform::process::{self, Bounded, End, Sinks};
use crate::vocab::protocol::{ToolOutput, ToolSpec};
use crate::vocab::text::truncate_middle;
use futures_util::future::BoxFuture;

const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// How long a command runs before it is killed, unless the call says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(DEFAULT_TIMEOUT_MS);
const MAX_TIMEOUT_MS: u64 = 600_000;

const DESCRIPTION: &str = "\
Run a shell command with `bash -c` in the working folder and return its output.

- stdout and stderr are returned together, in the order they were written, followed by a last \
line `exit code: N`. A non-zero exit code marks the result as an error.
- stdin is closed: interactive programs cannot be used. Pass flags that avoid prompts and pagers \
(e.g. `git --no-pager`, `-y`); PAGER and GIT_PAGER are set to cat.
- The command is killed after `timeout_ms` (default 120000, at most 600000). Processes still \
running in the background when the command finishes are killed too; this tool is not for \
starting servers that must keep running.
- Long output is cut in the middle (at most 50 KiB is returned): filter it with grep, head, \
tail or wc rather than printing huge files or logs.
- Each call starts a new shell in the working folder; `cd` and variables do not carry over \
between calls. Chain dependent steps in one command (`cd sub && make`).
- Prefer the read, write and edit tools to view and change files, rather than cat, sed or echo.";

pub struct BashTool {
    spec: ToolSpec,
}

impl BashTool {
    pub fn new() -> Self {
        BashTool {
            spec: ToolSpec {
                name: "bash".into(),
                description: DESCRIPTION.into(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "command": {
                            "type": "string",
                            "minLength": 1,
                            "description": "The bash command(s) to run"
                        },
                        "timeout_ms": {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": MAX_TIMEOUT_MS,
                            "description": "Milliseconds before the command is killed (default 120000, max 600000)"
                        }
                    },
                    "required": ["command"],
                    "additionalProperties": false
                }),
            },
        }
    }
}

impl Default for BashTool {
    fn default() -> Self {
        Self::new()
    }
}

impl Tool for BashTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, ToolOutput> {
        Box::pin(async move {
            let Some(command) = args.get("command").and_then(Value::as_str) else {
                return ToolOutput::error("missing string argument `command`");
            };
            let timeout_ms = args
                .get("timeout_ms")
                .and_then(Value::as_u64)
                .unwrap_or(DEFAULT_TIMEOUT_MS)
                .clamp(1, MAX_TIMEOUT_MS);
            run_shell("bash", command, Duration::from_millis(timeout_ms), &ctx).await
        })
    }
}

/// Runs `SHELL -c COMMAND` in `ctx`'s working folder to completion, timeout or `ctx`'s
/// cancellation, and formats the result: the output (merged, cut in the middle to
/// [`MAX_OUTPUT_BYTES`]) and a last status line (`exit code: N`, `cancelled`, ...); an error
/// unless it exited with 0.
pub async fn run_shell(
    shell: &str,
    command: &str,
    timeout: Duration,
    ctx: &ToolContext,
) -> ToolOutput {
    if ctx.cancel.is_cancelled() {
        return ToolOutput::error("cancelled");
    }
    let mut cmd = Command::new(shell);
    cmd.arg("-c")
        .arg(command)
        .current_dir(&ctx.cwd)
        .stdin(Stdio::null())
        .env("TERM", "dumb")
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .env("GIT_TERMINAL_PROMPT", "0");
    let (child, group) = match process::spawn_merged(cmd) {
        Ok(spawned) => spawned,
        Err(e) => {
            return ToolOutput::error(format!(
                "could not start {shell} in {}: {e}",
                ctx.cwd.display()
            ))
        }
    };
    let sink = Bounded::shared();
    let watcher = watch_output(&sink, ctx);
    let end = process::run(
        child,
        group,
        timeout,
        &ctx.cancel,
        Sinks::Merged(sink.clone()),
    )
    .await;
    if let Some(task) = watcher {
        task.abort();
    }
    finish(Bounded::take(&sink), end, timeout, shell)
}

/// How often the output of a running command is passed on as progress, at most.
const REPORT_EVERY: Duration = Duration::from_millis(200);

/// Passes the command's output on as progress while it runs (the REPL shows its last lines,
/// `--json` has `tool_update` events): what arrived since the last report, at most five
/// reports a second, on whole characters. `None` when the call has nowhere to report.
fn watch_output(
    sink: &std::sync::Arc<std::sync::Mutex<Bounded>>,
    ctx: &ToolContext,
) -> Option<tokio::task::JoinHandle<()>> {
    use std::sync::{Arc, Mutex};
    let report = ctx.reporter()?;
    let pending: Arc<(Mutex<Vec<u8>>, tokio::sync::Notify)> = Arc::default();
    let incoming = pending.clone();
    sink.lock()
        .unwrap_or_else(|p| p.into_inner())
        .watch(move |bytes| {
            let mut buf = incoming.0.lock().unwrap_or_else(|p| p.into_inner());
            buf.extend_from_slice(bytes);
            let over = buf
                .len()
                .saturating_sub(crate::vocab::run::MAX_PROGRESS_BYTES);
            buf.drain(..over);
            incoming.1.notify_one();
        });
    Some(tokio::spawn(async move {
        loop {
            pending.1.notified().await;
            let text = {
                let mut buf = pending.0.lock().unwrap_or_else(|p| p.into_inner());
                // A character cut between two chunks waits for its other half.
                let whole = match std::str::from_utf8(&buf) {
                    Ok(_) => buf.len(),
                    Err(e) if e.error_len().is_none() => e.valid_up_to(),
                    Err(_) => buf.len(),
                };
                let bytes: Vec<u8> = buf.drain(..whole).collect();
                String::from_utf8_lossy(&bytes).into_owned()
            };
            if !text.is_empty() {
                report(crate::vocab::run::UpdateKind::Output, &text);
            }
            tokio::time::sleep(REPORT_EVERY).await;
        }
    }))
}

/// The kept output as text, cut in the middle to [`MAX_OUTPUT_BYTES`], with a note when
/// very long output lost bytes before that.
fn output_text(collected: Bounded) -> String {
    let (dropped, total) = (collected.dropped(), collected.total());
    let bytes = collected.into_bytes();
    let mut text = truncate_middle(&String::from_utf8_lossy(&bytes), MAX_OUTPUT_BYTES);
    if dropped > 0 {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!(
            "[the command printed {total} bytes in all; the count above leaves out {dropped} \
             more bytes dropped from the middle]"
        ));
    }
    text
}

/// The output followed by the status line.
fn finish(collected: Bounded, end: End, timeout: Duration, shell: &str) -> ToolOutput {
    let mut text = output_text(collected);
    let (status, is_error) = match end {
        End::Exited(Ok(status)) => match status.code() {
            Some(code) => (format!("exit code: {code}"), code != 0),
            None => {
                use std::os::unix::process::ExitStatusExt;
                let signal = status.signal().unwrap_or(0);
                (format!("killed by signal {signal}"), true)
            }
        },
        End::Exited(Err(e)) => (format!("could not wait for {shell}: {e}"), true),
        End::TimedOut => (
            format!("killed after {} s (timeout)", timeout.as_secs_f64()),
            true,
        ),
        End::Cancelled => ("cancelled".to_string(), true),
    };
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&status);
    ToolOutput {
        content: text,
        is_error,
        images: Vec::new(),
        details: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::testutil::TempDir;
    use std::time::Instant;
    use tokio_util::sync::CancellationToken;

    async fn bash(dir: &TempDir, args: Value) -> ToolOutput {
        BashTool::new().call(args, dir.ctx()).await
    }

    #[tokio::test]
    async fn runs_in_cwd_and_reports_exit_code() {
        let dir = TempDir::new("cwd");
        std::fs::write(dir.0.join("marker.txt"), "").unwrap();
        let out = bash(&dir, json!({"command": "ls; echo \"$PAGER $TERM\""})).await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(out.content, "marker.txt\ncat dumb\nexit code: 0");
    }

    #[tokio::test]
    async fn nonzero_exit_is_an_error() {
        let dir = TempDir::new("fail");
        let out = bash(&dir, json!({"command": "echo oops >&2; exit 3"})).await;
        assert!(out.is_error);
        assert_eq!(out.content, "oops\nexit code: 3");
        let out = bash(&dir, json!({"command": "true"})).await;
        assert_eq!(out.content, "exit code: 0");
    }

    #[tokio::test]
    async fn stdout_and_stderr_come_in_the_order_written() {
        // One pipe for both: the order holds without pauses, however late mypi reads.
        let dir = TempDir::new("order");
        let cmd = "for i in 1 2 3 4 5 6; do echo o$i; echo e$i >&2; done; seq 3; echo end >&2";
        let out = bash(&dir, json!({"command": cmd})).await;
        let expected = "o1\ne1\no2\ne2\no3\ne3\no4\ne4\no5\ne5\no6\ne6\n1\n2\n3\nend\n";
        assert_eq!(out.content, format!("{expected}exit code: 0"));
    }

    #[tokio::test]
    async fn stdin_is_closed() {
        let dir = TempDir::new("stdin");
        let out = bash(&dir, json!({"command": "cat; echo done"})).await;
        assert_eq!(out.content, "done\nexit code: 0");
    }

    #[tokio::test]
    async fn invalid_utf8_is_converted_lossily() {
        let dir = TempDir::new("lossy");
        let out = bash(&dir, json!({"command": "printf 'ok\\377\\376!'"})).await;
        assert_eq!(out.content, "ok\u{fffd}\u{fffd}!\nexit code: 0");
    }

    #[tokio::test]
    async fn long_output_is_cut_in_the_middle() {
        let dir = TempDir::new("long");
        let out = bash(&dir, json!({"command": "seq 1 100000"})).await;
        assert!(!out.is_error);
        assert!(out.content.starts_with("1\n2\n3\n"));
        assert!(out.content.contains("omitted"));
        assert!(out.content.ends_with("99999\n100000\nexit code: 0"));
        assert!(out.content.len() < MAX_OUTPUT_BYTES + 200);
    }

    #[tokio::test]
    async fn huge_output_is_bounded_in_memory_and_says_so() {
        let dir = TempDir::new("huge");
        let cmd = "head -c 3000000 /dev/zero | tr '\\0' a; echo; echo end";
        let out = bash(&dir, json!({"command": cmd})).await;
        assert!(
            out.content.contains("printed 3000005 bytes in all"),
            "{}",
            &out.content[out.content.len() - 300..]
        );
        assert!(out.content.contains("end\n"));
        assert!(out.content.len() < MAX_OUTPUT_BYTES + 400);
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_group() {
        let dir = TempDir::new("timeout");
        let started = Instant::now();
        let out = bash(
            &dir,
            json!({"command": "echo $$; sleep 30 & sleep 30", "timeout_ms": 300}),
        )
        .await;
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert!(out.is_error);
        assert!(
            out.content.ends_with("\nkilled after 0.3 s (timeout)"),
            "{}",
            out.content
        );
        let pgid: i32 = out.content.lines().next().unwrap().parse().unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            crate::platform::process::live_in_group(pgid).is_empty(),
            "{:?}",
            crate::platform::process::live_in_group(pgid)
        );
    }

    #[tokio::test]
    async fn background_jobs_do_not_outlive_the_command() {
        let dir = TempDir::new("background");
        let started = Instant::now();
        let out = bash(&dir, json!({"command": "echo $$; sleep 30 &"})).await;
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(out.content.ends_with("exit code: 0"), "{}", out.content);
        let pgid: i32 = out.content.lines().next().unwrap().parse().unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(crate::platform::process::live_in_group(pgid).is_empty());
    }

    #[tokio::test]
    async fn cancel_kills_the_command() {
        let dir = TempDir::new("cancel");
        let ctx = dir.ctx();
        let cancel = ctx.cancel.clone();
        let started = Instant::now();
        let call = BashTool::new().call(json!({"command": "echo $$; sleep 30"}), ctx);
        let task = tokio::spawn(call);
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
        let out = task.await.unwrap();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(out.is_error);
        assert!(out.content.ends_with("\ncancelled"), "{}", out.content);
        let pgid: i32 = out.content.lines().next().unwrap().parse().unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(crate::platform::process::live_in_group(pgid).is_empty());
        let again = bash(&dir, json!({"command": "echo hi"})).await;
        assert_eq!(again.content, "hi\nexit code: 0");
        let out = BashTool::new()
            .call(json!({"command": "echo never"}), {
                let c = dir.ctx();
                c.cancel.cancel();
                c
            })
            .await;
        assert_eq!(out.content, "cancelled");
    }

    #[tokio::test]
    async fn missing_cwd_is_an_error() {
        let ctx = std::sync::Arc::new(
            crate::vocab::run::RunContext::detached(
                std::env::temp_dir().join("mypi-bash-test-no-such-folder-xyz"),
            )
            .with_cancel(CancellationToken::new()),
        );
        let out = BashTool::new().call(json!({"command": "true"}), ctx).await;
        assert!(out.is_error);
        assert!(
            out.content.starts_with("could not start bash"),
            "{}",
            out.content
        );
    }

    #[test]
    fn collector_keeps_both_ends() {
        use crate::platform::process::KEEP_BYTES;
        let mut c = Bounded::default();
        c.push(&vec![b'a'; KEEP_BYTES + 10]);
        c.push(&vec![b'b'; KEEP_BYTES * 2]);
        c.push(b"end");
        assert_eq!(c.total(), KEEP_BYTES * 3 + 13);
        assert_eq!(c.dropped(), KEEP_BYTES + 13);
        assert!(output_text(c).contains("bbbend\n[the command printed"));
    }

    #[test]
    fn schema_is_complete() {
        let v = jsonschema::validator_for(&BashTool::new().spec().parameters).unwrap();
        assert!(v.is_valid(&json!({"command": "ls", "timeout_ms": 1000})));
        assert!(!v.is_valid(&json!({"command": "ls", "timeout_ms": 600_001})));
        assert!(!v.is_valid(&json!({"timeout_ms": 5})));
        assert!(!v.is_valid(&json!({"command": "ls", "cwd": "/"})));
        assert!(!BashTool::new().parallel_safe());
    }
}
