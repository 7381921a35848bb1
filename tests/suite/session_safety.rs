//! No session data is lost: a finished tool result survives kill -9 while later calls of the
//! batch run (and the resumed request carries it, the unfinished call answered as interrupted);
//! a complete last line without its newline is kept; `--continue` passes over a newest
//! `*.jsonl` that is a folder, FIFO or not a session; resuming a large session streams it;
//! two mypi processes never write one session (the second names the holder and starts anew).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{json, Value};

use crate::common::{Mypi, Reply, Running, TestDir};

use super::wire::{
    assistant_texts, no_panic, only_session, run_api, session_files, session_messages,
    tool_results, user_texts, Api, BOTH,
};

const WAIT: Duration = Duration::from_secs(30);

/// Polls `cond` every 20 ms until it holds; panics with `what` after `WAIT`.
fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The messages of a session file read leniently (the file may be being written).
fn stored_roles(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "message")
        .map(|e| e["message"]["role"].as_str().unwrap_or("").to_string())
        .collect()
}

fn faux_script(dir: &TestDir, lines: &[Value]) -> PathBuf {
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    dir.write("script.jsonl", &(text.join("\n") + "\n"))
}

/// Sets the modification time of a regular file to an hour ago.
fn make_old(path: &Path) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
}

#[test]
fn kill_9_mid_batch_keeps_the_finished_result_and_resume_sends_it() {
    let dir = TestDir::new();
    let script = faux_script(
        &dir,
        &[json!({"tool_calls": [
            {"id": "call_write", "name": "write",
             "arguments": {"path": "out.txt", "content": "written before the kill\n"}},
            {"id": "call_sleep", "name": "bash", "arguments": {"command": "sleep 30"}}
        ]})],
    );
    let running = Mypi::new(&dir)
        .args(["--provider", "faux", "--faux-script"])
        .arg(&script)
        .args(["-p", "write then sleep"])
        .spawn();
    wait_until("the write result in the session file", || {
        session_files(&dir)
            .first()
            .is_some_and(|p| stored_roles(p).contains(&"tool".to_string()))
    });
    running.kill();
    assert_eq!(dir.read("out.txt"), "written before the kill\n");
    let path = only_session(&dir);
    let stored = session_messages(&path);
    assert_eq!(stored.len(), 3, "{stored:?}");
    assert_eq!(stored[2]["tool_call_id"], "call_write");
    assert!(
        stored[2]["content"].as_str().unwrap().contains("out.txt"),
        "{stored:?}"
    );

    for api in BOTH {
        let (out, reqs) = run_api(api, &dir, vec![Reply::text("ok")], &["-c", "-p", "next"]);
        out.ok();
        no_panic(&out.stderr);
        assert!(
            out.stderr.contains("1 tool call(s) had not finished"),
            "{api:?}: {}",
            out.describe()
        );
        let results = tool_results(&reqs[0]);
        assert_eq!(results.len(), 2, "{api:?}: {}", reqs[0].raw_body);
        assert_eq!(results[0].id, "call_write");
        assert!(results[0].content.contains("out.txt"), "{results:?}");
        assert_eq!(results[1].id, "call_sleep");
        assert!(
            results[1]
                .content
                .starts_with("interrupted: this tool call did not finish"),
            "{results:?}"
        );
        if api == Api::Anthropic {
            assert!(results[1].is_error && !results[0].is_error, "{results:?}");
        }
        assert_eq!(user_texts(&reqs[0]).last().unwrap(), "next");
    }
    // The file keeps what happened; the interrupted result is given on each resume.
    let stored = session_messages(&path);
    assert_eq!(stored.len(), 7, "{stored:?}");
    assert!(stored.iter().all(|m| m["tool_call_id"] != "call_sleep"));
}

#[test]
fn a_complete_last_line_without_newline_is_kept() {
    for api in BOTH {
        let dir = TestDir::new();
        run_api(
            api,
            &dir,
            vec![Reply::text("The kept answer.")],
            &["-p", "one"],
        )
        .0
        .ok();
        let path = only_session(&dir);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.trim_end_matches('\n')).unwrap();

        let (out, reqs) = run_api(api, &dir, vec![Reply::text("b")], &["-c", "-p", "two"]);
        out.ok();
        assert!(!out.stderr.contains("incomplete"), "{}", out.describe());
        assert_eq!(assistant_texts(&reqs[0]), vec!["The kept answer."]);
        assert_eq!(user_texts(&reqs[0]), vec!["one", "two"]);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with('\n'));
        for line in text.lines() {
            serde_json::from_str::<Value>(line)
                .unwrap_or_else(|e| panic!("{api:?}: a glued line ({e}): {line:?}"));
        }
        assert_eq!(session_messages(&path).len(), 4);
    }
}

#[test]
fn continue_passes_over_a_newest_folder_fifo_or_foreign_file() {
    let dir = TestDir::new();
    run_api(
        Api::OpenAi,
        &dir,
        vec![Reply::text("a")],
        &["-p", "the real one"],
    )
    .0
    .ok();
    let real = only_session(&dir);
    make_old(&real);
    let sessions = super::wire::sessions_dir(&dir);
    std::fs::create_dir(sessions.join("zz-folder.jsonl")).unwrap();
    let fifo = sessions.join("zz-fifo.jsonl");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let locked_out = sessions.join("zz-unreadable.jsonl");
    std::fs::write(&locked_out, "not a session\n").unwrap();
    std::fs::set_permissions(
        &locked_out,
        std::os::unix::fs::PermissionsExt::from_mode(0o000),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        sessions.join("missing-target"),
        sessions.join("zz-dangling.jsonl"),
    )
    .unwrap();

    let (out, reqs) = run_api(
        Api::OpenAi,
        &dir,
        vec![Reply::text("b")],
        &["-c", "-p", "more"],
    );
    out.ok();
    no_panic(&out.stderr);
    assert_eq!(user_texts(&reqs[0]), vec!["the real one", "more"]);
    for name in ["zz-folder", "zz-fifo", "zz-unreadable", "zz-dangling"] {
        assert!(
            out.stderr
                .contains(&format!("skipped {}", sessions.join(name).display())),
            "{name}: {}",
            out.describe()
        );
    }
    assert!(out.stderr.contains("it is a FIFO"), "{}", out.describe());
    assert_eq!(session_messages(&real).len(), 4);
}

#[test]
fn a_second_mypi_on_a_session_in_use_names_the_holder_and_starts_a_new_one() {
    let dir = TestDir::new();
    let mut first = Mypi::new(&dir).args(["--provider", "faux"]).spawn();
    first.send_line("hello from the first");
    wait_until("the first session's answer", || {
        session_files(&dir)
            .first()
            .is_some_and(|p| stored_roles(p).len() == 2)
    });
    let held = only_session(&dir);
    let id = held.file_stem().unwrap().to_string_lossy().into_owned();

    let (out, reqs) = run_api(
        Api::OpenAi,
        &dir,
        vec![Reply::text("b")],
        &["-c", "-p", "two"],
    );
    out.ok();
    let expected = format!(
        "session {id} is in use by mypi (pid {}); starting a new session",
        first.pid()
    );
    assert!(out.stderr.contains(&expected), "{}", out.describe());
    assert_eq!(
        user_texts(&reqs[0]),
        vec!["two"],
        "nothing of the held session"
    );
    assert_eq!(session_files(&dir).len(), 2);
    assert_eq!(
        stored_roles(&held).len(),
        2,
        "the held file was not touched"
    );

    // The holder goes on writing its own file.
    first.send_line("second line");
    wait_until("the first session's next answer", || {
        stored_roles(&held).len() == 4
    });
    first.send_line("/quit");
    first.wait().ok();
}

#[test]
fn a_killed_holder_releases_its_session() {
    let dir = TestDir::new();
    let mut first = Mypi::new(&dir).args(["--provider", "faux"]).spawn();
    first.send_line("before the kill");
    wait_until("the answer", || {
        session_files(&dir)
            .first()
            .is_some_and(|p| stored_roles(p).len() == 2)
    });
    let path = only_session(&dir);
    let lock = PathBuf::from(format!("{}.lock", path.display()));
    assert_eq!(
        std::fs::read_to_string(&lock).unwrap().trim(),
        first.pid().to_string()
    );
    first.kill();
    assert!(lock.exists(), "kill -9 leaves the lock file behind");

    let (out, reqs) = run_api(
        Api::OpenAi,
        &dir,
        vec![Reply::text("b")],
        &["-c", "-p", "after"],
    );
    out.ok();
    assert!(!out.stderr.contains("in use"), "{}", out.describe());
    assert_eq!(user_texts(&reqs[0]), vec!["before the kill", "after"]);
    assert_eq!(only_session(&dir), path);
    assert!(!lock.exists(), "a clean exit removes the lock file");
}

#[test]
fn processes_continuing_at_once_never_interleave_in_one_file() {
    let dir = TestDir::new();
    run_api(Api::OpenAi, &dir, vec![Reply::text("a")], &["-p", "start"])
        .0
        .ok();
    let script = faux_script(
        &dir,
        &[
            json!({"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 1"}}]}),
            json!({"text": "done"}),
        ],
    );
    let start = |n: usize| -> Running {
        Mypi::new(&dir)
            .args(["--provider", "faux", "--faux-script"])
            .arg(&script)
            .args(["-c", "-p", &format!("run {n}")])
            .spawn()
    };
    let runs: Vec<Running> = (0..3).map(start).collect();
    for out in runs.into_iter().map(Running::wait) {
        out.ok();
        no_panic(&out.stderr);
    }
    // Each run is one block of four messages; two writers in one file would mix them.
    let mut runs_seen = 0;
    for file in session_files(&dir) {
        let roles = stored_roles(&file);
        let messages = session_messages(&file);
        let blocks = if messages[0]["content"] == "start" {
            assert_eq!(roles[..2], ["user", "assistant"], "{file:?}");
            &roles[2..]
        } else {
            &roles[..]
        };
        for (k, block) in blocks.chunks(4).enumerate() {
            assert_eq!(
                block,
                ["user", "assistant", "tool", "assistant"],
                "{file:?} {roles:?}"
            );
            let at = roles.len() - blocks.len() + 4 * k;
            assert!(messages[at]["content"]
                .as_str()
                .unwrap()
                .starts_with("run "));
            runs_seen += 1;
        }
    }
    assert_eq!(runs_seen, 3);
}

/// Writes a session of about `bytes` bytes: rounds of a question, a `read` call, a ~10 kB
/// result and an answer.
fn write_large_session(path: &Path, bytes: u64) {
    use std::io::Write;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let header =
        json!({"type": "session", "version": 1, "id": "big", "cwd": "/x", "created_ms": 0});
    writeln!(out, "{header}").unwrap();
    let chunk = "lorem ipsum \"quoted\" \\ dolor sit amet\n".repeat(260);
    let mut written = 0u64;
    let mut n = 0;
    while written < bytes {
        let id = format!("c{n}");
        let lines = [
            json!({"role": "user", "content": format!("question {n}")}),
            json!({"role": "assistant", "content": "", "tool_calls": [
                {"id": id, "name": "read", "arguments": {"path": format!("f{n}.txt")}}]}),
            json!({"role": "tool", "content": chunk, "tool_call_id": id, "name": "read"}),
            json!({"role": "assistant", "content": format!("answer {n}")}),
        ];
        for message in lines {
            let line = json!({"type": "message", "message": message}).to_string();
            writeln!(out, "{line}").unwrap();
            written += line.len() as u64 + 1;
        }
        n += 1;
    }
    out.flush().unwrap();
}

/// The peak resident memory of process `pid` since it started (`VmHWM`). Read while it
/// runs: the rusage of a reaped child can report its parent's size, since the child starts
/// as a copy of the test process.
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmHWM in {status}"));
    kb * 1024
}

/// A Chat Completions server on 127.0.0.1 that reads each request body without keeping it
/// and streams the reply "ok". Returns its URL and the body sizes it saw.
fn start_sink() -> (String, std::sync::mpsc::Receiver<usize>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let (sizes, seen) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream);
            let mut length = 0;
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap_or(0) > 2 {
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                line.clear();
            }
            let got = std::io::copy(&mut (&mut reader).take(length as u64), &mut std::io::sink());
            let _ = sizes.send(got.unwrap_or(0) as usize);
            let body = concat!(
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"sink says ok\"}}]}\n\n",
                "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
                "data: [DONE]\n\n"
            );
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\
                 connection: close\r\n\r\n",
                body.len()
            );
            let mut stream = reader.into_inner();
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(body.as_bytes());
        }
    });
    (url, seen)
}

/// Runs the REPL in `dir` with `args`, sends `prompt`, waits for `answer`, and returns the
/// peak resident memory reached until then (read while mypi waits for the next line).
pub(super) fn peak_after_answer(dir: &TestDir, args: &[&str], prompt: &str, answer: &str) -> u64 {
    let timeout = Duration::from_secs(300);
    // What is measured is resuming and sending the whole conversation: a window it fits in,
    // so it is not compacted.
    let mut mypi = Mypi::new(dir)
        .env("MYPI_CONTEXT_WINDOW", "4000000000")
        .args(args)
        .timeout(timeout)
        .spawn();
    mypi.send_line(prompt);
    mypi.wait_for_line(answer, timeout);
    let peak = peak_rss(mypi.pid());
    mypi.send_line("/quit");
    mypi.wait().ok();
    peak
}

#[test]
fn resuming_a_large_session_needs_memory_near_its_size() {
    const SIZE: u64 = 48 << 20;
    let dir = TestDir::new();
    // What mypi needs with no session at all: the ratios below are of the memory on top.
    let idle = ["--provider", "faux", "--no-extensions", "--no-session"];
    let base = peak_after_answer(&dir, &idle, "baseline", "baseline");
    let path = super::wire::sessions_dir(&dir).join("20250101-000000-0b1g.jsonl");
    write_large_session(&path, SIZE);
    let file_len = std::fs::metadata(&path).unwrap().len() as f64;
    let measure = |args: &[&str], prompt: &str, answer: &str| -> f64 {
        let peak = peak_after_answer(&dir, args, prompt, answer);
        let ratio = peak.saturating_sub(base) as f64 / file_len;
        eprintln!(
            "{args:?}: peak RSS {} MB ({} MB without a session): {ratio:.2}x the session",
            peak >> 20,
            base >> 20
        );
        ratio
    };

    // The offline model: the session in memory and the request as JSON.
    let faux_args = ["--provider", "faux", "--no-extensions", "-c"];
    let faux = measure(&faux_args, "still there?", "still there?");
    assert_eq!(
        session_messages(&path).last().unwrap()["content"],
        "still there?"
    );
    assert!(
        faux < 2.8,
        "resuming with faux peaked at {faux:.2}x the session"
    );

    // A real API: the session in memory and the encoded request body, nothing more.
    let (url, seen) = start_sink();
    let args = [
        "--provider",
        "openai",
        "--base-url",
        &url,
        "--no-extensions",
        "-c",
    ];
    let openai = measure(&args, "and now?", "sink says ok");
    let sent = seen.recv_timeout(WAIT).unwrap() as f64;
    assert!(
        sent > 0.9 * file_len,
        "the whole conversation was sent ({sent} bytes)"
    );
    assert_eq!(
        session_messages(&path).last().unwrap()["content"],
        "sink says ok"
    );
    assert!(
        openai < 2.5,
        "resuming with openai peaked at {openai:.2}x the session"
    );
}
