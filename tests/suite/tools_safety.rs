//! The built-in tools never destroy what they should not touch, checked through the real
//! binary with the offline faux model: `write`, `edit` and `read` refuse named pipes, sockets,
//! devices and directories (also at the end of a symbolic link) without blocking and leave them
//! as they were; links to regular files are written through and kept, with the file's
//! permissions; an edit racing another writer fails with "the file changed; read it again"
//! and loses none of that writer's lines; reading a 300 MB one-line file stays small.
//!
//! Device nodes are made inside the test folder (a copy of the null device, never the real
//! `/dev/null`); where that is not permitted the device cases are skipped.

use std::ffi::CString;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{Mypi, TestDir};

use super::wire::no_panic;

/// A tool result as `--json` printed it.
#[derive(Debug)]
struct ToolResult {
    content: String,
    is_error: bool,
}

/// Writes a faux script: one reply calling `calls` (`(tool, arguments)`, ids `c0`, `c1`, ...),
/// then a final text.
fn script(dir: &TestDir, calls: &[(&str, Value)]) {
    let calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| json!({"id": format!("c{i}"), "name": name, "arguments": args}))
        .collect();
    let text = format!(
        "{}\n{}\n",
        json!({ "tool_calls": calls }),
        json!({"text": "done"})
    );
    dir.write("replies.jsonl", &text);
}

/// The `mypi` run for the script in `dir`.
fn mypi(dir: &TestDir) -> Mypi {
    Mypi::new(dir)
        .args(["--provider", "faux", "--faux-script", "replies.jsonl"])
        .args(["-p", "go", "--json"])
        .timeout(Duration::from_secs(60))
}

/// Runs `calls` and returns their results in order.
fn run_calls(dir: &TestDir, calls: &[(&str, Value)]) -> Vec<ToolResult> {
    script(dir, calls);
    let out = mypi(dir).run();
    out.ok();
    no_panic(&out.stderr);
    results(&out.stdout, calls.len())
}

/// The tool results in `--json` output, by call id `c0..cN`.
fn results(stdout: &str, n: usize) -> Vec<ToolResult> {
    let events: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|e: &Value| e["type"] == "tool_result")
        .collect();
    (0..n)
        .map(|i| {
            let e = events
                .iter()
                .find(|e| e["id"] == format!("c{i}"))
                .unwrap_or_else(|| panic!("no result for call c{i} in:\n{stdout}"));
            ToolResult {
                content: e["content"].as_str().unwrap_or_default().to_string(),
                is_error: e["is_error"] == true,
            }
        })
        .collect()
}

fn c_path(p: &Path) -> CString {
    CString::new(p.to_str().unwrap()).unwrap()
}

fn mkfifo(p: &Path) {
    // SAFETY: the path is a valid NUL-terminated string for the duration of the call.
    assert_eq!(unsafe { libc::mkfifo(c_path(p).as_ptr(), 0o644) }, 0);
}

/// Makes a copy of the null device (char 1,3) at `p`; false when not permitted.
fn mknod_null(p: &Path) -> bool {
    // SAFETY: the path is a valid NUL-terminated string for the duration of the call.
    unsafe {
        libc::mknod(
            c_path(p).as_ptr(),
            libc::S_IFCHR | 0o644,
            libc::makedev(1, 3),
        ) == 0
    }
}

/// The special entries a test folder gets: `(name, how its kind is described)`. The socket's
/// listener must stay alive while the binary runs.
fn special_files(dir: &TestDir) -> (Vec<(&'static str, &'static str)>, UnixListener) {
    mkfifo(&dir.join("pipe"));
    let sock = UnixListener::bind(dir.join("sock")).expect("bind socket");
    fs::create_dir(dir.join("folder")).unwrap();
    let mut kinds = vec![
        ("pipe", "a named pipe (FIFO)"),
        ("sock", "a socket"),
        ("folder", "a directory"),
    ];
    if mknod_null(&dir.join("null")) {
        kinds.push(("null", "a character device"));
    } else {
        eprintln!("skipping the device cases: mknod is not permitted here");
    }
    std::os::unix::fs::symlink("pipe", dir.join("link-to-pipe")).unwrap();
    if kinds.iter().any(|(n, _)| *n == "null") {
        std::os::unix::fs::symlink("null", dir.join("link-to-null")).unwrap();
    }
    (kinds, sock)
}

/// Checks every special entry is still what it was.
fn assert_untouched(dir: &TestDir, kinds: &[(&str, &str)]) {
    for (name, _) in kinds {
        let t = fs::symlink_metadata(dir.join(name)).unwrap().file_type();
        let ok = match *name {
            "pipe" => t.is_fifo(),
            "sock" => t.is_socket(),
            "folder" => t.is_dir(),
            _ => t.is_char_device(),
        };
        assert!(ok, "{name} was replaced: {t:?}");
    }
    for link in ["link-to-pipe", "link-to-null"] {
        if let Ok(m) = fs::symlink_metadata(dir.join(link)) {
            assert!(m.file_type().is_symlink(), "{link} is no longer a link");
        }
    }
    let leftovers: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

/// The names of the links `special_files` made.
fn links(kinds: &[(&str, &str)]) -> Vec<&'static str> {
    let mut v = vec!["link-to-pipe"];
    if kinds.iter().any(|(n, _)| *n == "null") {
        v.push("link-to-null");
    }
    v
}

#[test]
fn write_refuses_what_is_not_a_regular_file() {
    let dir = TestDir::new();
    let (kinds, _sock) = special_files(&dir);
    let mut calls: Vec<(&str, Value)> = kinds
        .iter()
        .map(|(n, _)| ("write", json!({"path": n, "content": "clobber"})))
        .collect();
    for link in links(&kinds) {
        calls.push(("write", json!({"path": link, "content": "clobber"})));
    }
    let results = run_calls(&dir, &calls);
    for ((name, kind), r) in kinds.iter().zip(&results) {
        assert!(r.is_error, "{name}: {r:?}");
        assert!(r.content.starts_with(&format!("{name} is {kind}")), "{r:?}");
    }
    for (link, r) in links(&kinds).iter().zip(&results[kinds.len()..]) {
        assert!(r.is_error, "{link}: {r:?}");
        assert!(r.content.contains("is a symbolic link to"), "{r:?}");
        assert!(r.content.contains("left untouched"), "{r:?}");
    }
    assert_untouched(&dir, &kinds);
}

#[test]
fn edit_refuses_what_is_not_a_regular_file_without_blocking() {
    let dir = TestDir::new();
    let (kinds, _sock) = special_files(&dir);
    let mut names: Vec<&str> = kinds.iter().map(|(n, _)| *n).collect();
    names.extend(links(&kinds));
    let calls: Vec<(&str, Value)> = names
        .iter()
        .map(|n| ("edit", json!({"path": n, "old_text": "a", "new_text": "b"})))
        .collect();
    let started = Instant::now();
    let results = run_calls(&dir, &calls);
    for (name, r) in names.iter().zip(&results) {
        assert!(r.is_error, "{name}: {r:?}");
        assert!(
            r.content.contains("not a regular file") || r.content.contains("is a directory"),
            "{name}: {r:?}"
        );
    }
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_untouched(&dir, &kinds);
}

#[test]
fn read_refuses_pipes_sockets_and_devices_without_blocking() {
    let dir = TestDir::new();
    let (kinds, _sock) = special_files(&dir);
    let mut names: Vec<&str> = kinds
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| *n != "folder")
        .collect();
    names.extend(links(&kinds));
    let calls: Vec<(&str, Value)> = names.iter().map(|n| ("read", json!({"path": n}))).collect();
    let results = run_calls(&dir, &calls);
    for (name, r) in names.iter().zip(&results) {
        assert!(r.is_error, "{name}: {r:?}");
        assert!(
            r.content
                .contains("not a regular file; read only shows regular files"),
            "{name}: {r:?}"
        );
    }
    assert_untouched(&dir, &kinds);
}

#[test]
fn symlinks_to_files_are_written_and_edited_through_keeping_link_and_mode() {
    let dir = TestDir::new();
    let real = dir.write("real.sh", "echo one\n");
    fs::set_permissions(&real, fs::Permissions::from_mode(0o754)).unwrap();
    std::os::unix::fs::symlink("real.sh", dir.join("link.sh")).unwrap();
    std::os::unix::fs::symlink("made.txt", dir.join("dangling")).unwrap();
    let results = run_calls(
        &dir,
        &[
            (
                "edit",
                json!({"path": "link.sh", "old_text": "one", "new_text": "two"}),
            ),
            (
                "write",
                json!({"path": "link.sh", "content": "echo three\n"}),
            ),
            ("write", json!({"path": "dangling", "content": "new\n"})),
        ],
    );
    for r in &results {
        assert!(!r.is_error, "{r:?}");
    }
    assert!(results[1].content.contains("through the symbolic link"));
    assert_eq!(dir.read("real.sh"), "echo three\n");
    assert_eq!(dir.read("made.txt"), "new\n");
    for link in ["link.sh", "dangling"] {
        let m = fs::symlink_metadata(dir.join(link)).unwrap();
        assert!(m.file_type().is_symlink(), "{link} is no longer a link");
    }
    let mode = fs::metadata(&real).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o754);
}

/// Appends numbered lines to `path` every millisecond, from the moment a temporary file shows
/// up in its folder (the edit has read the file and is writing the new one) until `stop`.
/// Returns how many lines were appended.
fn append_while_editing(path: &Path, stop: &AtomicBool) -> usize {
    let folder = path.parent().unwrap();
    let staging = || {
        fs::read_dir(folder)
            .map(|it| {
                it.flatten()
                    .any(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            })
            .unwrap_or(false)
    };
    while !stop.load(Ordering::SeqCst) && !staging() {
        thread::sleep(Duration::from_micros(200));
    }
    let mut n = 0;
    while !stop.load(Ordering::SeqCst) {
        let mut f = fs::OpenOptions::new().append(true).open(path).unwrap();
        f.write_all(format!("concurrent {n}\n").as_bytes()).unwrap();
        n += 1;
        thread::sleep(Duration::from_millis(1));
    }
    n
}

/// One edit of a 20 MB file while another writer appends to it; returns the edit's result,
/// after checking that none of the other writer's lines were lost.
fn racing_edit() -> ToolResult {
    let dir = TestDir::new();
    let filler = "filler text for a big file\n".repeat(20_000_000 / 27);
    let path = dir.write("big.txt", &format!("MARKER old\n{filler}"));
    script(
        &dir,
        &[(
            "edit",
            json!({"path": "big.txt", "old_text": "MARKER old", "new_text": "MARKER new"}),
        )],
    );
    let stop = Arc::new(AtomicBool::new(false));
    let appender = {
        let (path, stop) = (path.clone(), stop.clone());
        thread::spawn(move || append_while_editing(&path, &stop))
    };
    let out = mypi(&dir).run();
    stop.store(true, Ordering::SeqCst);
    let appended = appender.join().unwrap();
    out.ok();
    let text = fs::read_to_string(&path).unwrap();
    let lost: Vec<usize> = (0..appended)
        .filter(|i| !text.contains(&format!("concurrent {i}\n")))
        .collect();
    assert!(lost.is_empty(), "lines of the other writer lost: {lost:?}");
    results(&out.stdout, 1).remove(0)
}

#[test]
fn edit_racing_another_writer_fails_and_loses_nothing() {
    // The other writer almost always gets in while the edit writes 20 MB; when it comes too
    // late the edit rightly succeeds, so a few attempts are allowed to see the failure.
    for attempt in 1..=3 {
        let r = racing_edit();
        if r.is_error {
            assert!(
                r.content.contains("the file changed; read it again"),
                "{r:?}"
            );
            return;
        }
        eprintln!("attempt {attempt}: the other writer came after the edit: {r:?}");
    }
    panic!("the edit never noticed the other writer");
}

/// Runs `mypi` to the end; returns its stdout and its own peak resident memory in KiB
/// (`VmHWM`), read once the tool result is printed, while the slow final reply still streams.
/// (`wait4`'s `ru_maxrss` would not do: it also counts the test process's memory from before
/// `exec`.)
fn run_measuring_peak(dir: &TestDir, timeout: Duration) -> (u64, String) {
    let out_path = dir.join("stdout.txt");
    let mut cmd = mypi(dir).command();
    cmd.stdin(Stdio::null())
        .stdout(fs::File::create(&out_path).unwrap())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("spawn mypi");
    let status_file = format!("/proc/{}/status", child.id());
    let deadline = Instant::now() + timeout;
    let mut peak = None;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        let printed = || fs::read_to_string(&out_path).is_ok_and(|o| o.contains("tool_result"));
        if peak.is_none() && printed() {
            peak = fs::read_to_string(&status_file)
                .ok()
                .and_then(|s| vm_hwm(&s));
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mypi did not finish within {timeout:?}");
        }
        thread::sleep(Duration::from_millis(10));
    };
    assert!(status.success(), "{status:?}");
    let peak = peak.expect("mypi ended before its peak memory could be read");
    (peak, fs::read_to_string(&out_path).unwrap())
}

/// The `VmHWM` (peak resident set) of a `/proc/PID/status` text, in KiB.
fn vm_hwm(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn read_of_a_300_mb_single_line_stays_in_bounded_memory() {
    let dir = TestDir::new();
    {
        let mut f = fs::File::create(dir.join("one-line.txt")).unwrap();
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..300 {
            f.write_all(&chunk).unwrap();
        }
        f.write_all(b"THE END\n").unwrap();
    }
    let read = json!({"id": "c0", "name": "read", "arguments": {"path": "one-line.txt"}});
    let slow_end = json!({"text": "and that is all", "delay_ms": 500});
    dir.write(
        "replies.jsonl",
        &format!("{}\n{slow_end}\n", json!({ "tool_calls": [read] })),
    );
    let (peak_kib, stdout) = run_measuring_peak(&dir, Duration::from_secs(60));
    let r = results(&stdout, 1).remove(0);
    assert!(!r.is_error, "{}", &r.content[..200.min(r.content.len())]);
    assert!(r.content.len() <= 50 * 1024, "{}", r.content.len());
    assert!(r.content.contains("bytes of this line omitted"));
    assert!(r.content.contains("xxTHE END\n"));
    assert!(r.content.contains("line 1 is longer than the output limit"));
    assert!(
        peak_kib < 200 * 1024,
        "peak resident memory {peak_kib} KiB for a 300 MB line"
    );
}
