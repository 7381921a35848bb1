//! Resuming a large session (`cargo bench --bench resume`): a 100 MB session file of many
//! turns (each with a tool result of 10 KB), resumed by the real binary with `--continue`
//! and asked `/session` (no model request). Measured: the time from start to the answer,
//! next to a start with no session, and mypi's own peak memory (`VmHWM` of its process, read
//! while it runs) against the file's size. Issue 12 asks for under 1 s and under 3x.
// Test and benchmark code: system calls for fixtures and measures, and unwrap as a failed check.
#![allow(unsafe_code, clippy::unwrap_used)]

#[path = "util/mod.rs"]
mod util;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

const SIZE: u64 = 100 << 20;
const RUNS: usize = 5;

fn write_session(path: &Path) -> u64 {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let header = json!({"type": "session", "version": 2, "id": "big", "cwd": "/x",
                        "created_ms": 0, "provider": "faux", "model": "faux"});
    writeln!(out, "{header}").unwrap();
    let output = "lorem ipsum \"quoted\" \\ dolor sit amet\n".repeat(260);
    let (mut written, mut n) = (0u64, 0);
    while written < SIZE {
        let id = format!("c{n}");
        for message in [
            json!({"role": "user", "content": format!("question {n}")}),
            json!({"role": "assistant", "content": "", "tool_calls": [
                {"id": id, "name": "read", "arguments": {"path": format!("f{n}.txt")}}]}),
            json!({"role": "tool", "content": output, "tool_call_id": id, "name": "read"}),
            json!({"role": "assistant", "content": format!("answer {n}"),
                   "usage": {"input_tokens": 10, "output_tokens": 5}}),
        ] {
            let line = json!({"type": "message", "message": message, "ts": 1}).to_string();
            writeln!(out, "{line}").unwrap();
            written += line.len() as u64 + 1;
        }
        n += 1;
    }
    out.flush().unwrap();
    std::fs::metadata(path).unwrap().len()
}

/// `VmHWM` of `pid`, in bytes.
fn peak(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Starts mypi in `project`, asks `/session`, and returns the time to its answer and the
/// process's peak memory then.
fn run(home: &Path, project: &Path, args: &[&str]) -> (Duration, u64) {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mypi"))
        .args(["--provider", "faux", "--no-extensions", "--no-mcp"])
        .args(args)
        .current_dir(project)
        .env("HOME", home)
        .env("NO_COLOR", "1")
        .env("MYPI_CONTEXT_WINDOW", "4000000000")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "/session").unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines.by_ref() {
        if line.unwrap().starts_with("Messages:") {
            break;
        }
    }
    let took = started.elapsed();
    let hwm = peak(child.id());
    writeln!(stdin, "/quit").unwrap();
    drop(stdin);
    for _ in lines {}
    child.wait().unwrap();
    (took, hwm)
}

fn main() {
    let root = std::env::temp_dir().join(format!("mypi-bench-resume-{}", std::process::id()));
    let (home, project) = (root.join("home"), root.join("project"));
    std::fs::create_dir_all(&project).unwrap();
    let project = project.canonicalize().unwrap();
    let dir: PathBuf = home
        .join(".agents/sessions")
        .join(mypi::config::project_slug(&project));
    let len = write_session(&dir.join("20250101-000000-big0.jsonl"));
    let (mut cold, mut warm, mut peaks) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..RUNS {
        cold.push(run(&home, &project, &["--no-session"]).0);
        let (t, m) = run(&home, &project, &["--continue"]);
        warm.push(t);
        peaks.push(m);
    }
    let base = run(&home, &project, &["--no-session"]).1;
    let cold = util::median(cold);
    let warm = util::median(warm);
    let peak = *peaks.iter().max().unwrap();
    println!(
        "resume of a {} MB session: {:.0} ms to answer /session (a start with no session: {:.0} ms); \
         peak memory {} MB ({:.2}x the file; {} MB with no session)",
        len >> 20,
        warm.as_secs_f64() * 1e3,
        cold.as_secs_f64() * 1e3,
        peak >> 20,
        peak as f64 / len as f64,
        base >> 20
    );
    let _ = std::fs::remove_dir_all(&root);
}
