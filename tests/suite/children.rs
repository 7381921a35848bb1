//! No process outlives mypi (issue 8, family 3): the `bash` tool's and `api.exec`'s process
//! groups are killed on every exit path (SIGTERM, SIGHUP, SIGINT in print mode, the normal
//! end of `-p`, `/quit` and Ctrl-D in the REPL), and `api.exec` honours its timeout when a
//! background child keeps the output pipe open.

use std::time::{Duration, Instant};

use mypi::platform::process::live_in_group;

use crate::common::{Mypi, Running, TestDir};

use serde_json::json;

use super::ext_util::{faux, install};

/// A shell command that writes its process group id to `pgid` and then waits, with a
/// background child holding its output open.
const LINGER: &str = "echo $$ > pgid; sleep 300 & sleep 300";

/// Waits for `dir/pgid` to be written; the group id.
fn pgid_of(dir: &TestDir, m: &Running) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(text) = std::fs::read_to_string(dir.join("pgid")) {
            if let Ok(n) = text.trim().parse() {
                return n;
            }
        }
        assert!(
            Instant::now() < deadline,
            "the command never started: {}",
            m.stderr_so_far()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Asserts that group `pgid` is gone (allowing a moment for the kernel to deliver SIGKILL).
fn assert_gone(pgid: i32, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(3);
    while !live_in_group(pgid).is_empty() {
        assert!(
            Instant::now() < deadline,
            "{what}: processes outlived mypi: {:?}",
            live_in_group(pgid)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// mypi on the faux model, which calls `bash` with [`LINGER`] and then answers "done".
fn lingering(dir: &TestDir) -> Mypi {
    let call = json!({"tool_calls": [{"name": "bash", "arguments": {"command": LINGER}}]});
    faux(dir, &[call, json!({"text": "done"})])
}

#[test]
fn signals_end_print_mode_and_kill_the_bash_tools_group() {
    for (sig, name) in [
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
    ] {
        let dir = TestDir::new();
        let m = lingering(&dir).args(["-p", "go"]).spawn();
        let pgid = pgid_of(&dir, &m);
        m.signal(sig);
        let started = Instant::now();
        let out = m.wait();
        assert!(started.elapsed() < Duration::from_secs(5), "{name}");
        assert_eq!(out.code, 128 + sig, "{name}: {}", out.describe());
        assert!(
            out.stderr.contains(&format!("stopped by {name}")),
            "{}",
            out.describe()
        );
        assert_gone(pgid, name);
    }
}

#[test]
fn signals_end_the_repl_and_kill_the_bash_tools_group() {
    for sig in [libc::SIGTERM, libc::SIGHUP] {
        let dir = TestDir::new();
        let mut m = lingering(&dir).arg("--no-watch").spawn();
        m.send_line("go");
        let pgid = pgid_of(&dir, &m);
        m.signal(sig);
        let out = m.wait();
        assert_eq!(out.code, 128 + sig, "{}", out.describe());
        assert_gone(pgid, "repl");
    }
}

/// A Lua command that starts `sh -c SCRIPT` through `api.exec` and returns what it saw.
const EXEC: &str = r#"
api.command("exec", function(script)
  local r = api.exec("sh", {"-c", script}, {timeout_ms = 1500})
  return string.format("code=%s timed_out=%s out=%s", tostring(r.code), tostring(r.timed_out),
    r.stdout:gsub("%s+$", ""))
end)
"#;

/// Runs `/exec SCRIPT` in print mode; asserts it answered `expect` within 10 s and that
/// the process group the script wrote to `pgid` is gone.
fn exec_leaves_nothing(script: &str, expect: &str, what: &str) {
    let dir = TestDir::new();
    install(&dir, "exec.lua", EXEC);
    let started = Instant::now();
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", &format!("/exec {script}")])
        .run();
    out.ok();
    assert!(out.stdout.contains(expect), "{}", out.describe());
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{}",
        out.describe()
    );
    let pgid: i32 = dir.read("pgid").trim().parse().unwrap();
    assert_gone(pgid, what);
}

#[test]
fn api_exec_background_children_do_not_outlive_the_call() {
    exec_leaves_nothing(
        "echo $$ > pgid; sleep 300 & echo started",
        "code=0 timed_out=false out=started",
        "background child of api.exec",
    );
}

#[test]
fn api_exec_times_out_while_a_background_child_holds_the_pipe() {
    exec_leaves_nothing(
        "echo $$ > pgid; sleep 300 & echo started; sleep 300",
        "timed_out=true out=started",
        "timed-out api.exec",
    );
}

#[test]
fn quit_and_ctrl_d_leave_no_child_behind() {
    for how in ["/quit", "eof"] {
        let dir = TestDir::new();
        let mut m = lingering(&dir).arg("--no-watch").spawn();
        m.send_line("go");
        let pgid = pgid_of(&dir, &m);
        // /quit typed during the run leaves at once; at the end of input the REPL finishes
        // the run first, so Ctrl-C ends it.
        if how == "/quit" {
            m.send_line("/quit");
        } else {
            m.close_stdin();
            m.interrupt();
        }
        let out = m.wait();
        out.ok();
        assert_gone(pgid, how);
    }
}

/// Whether process `pid` is alive (a zombie waiting for its reaper is not).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
    })
}

/// Waits for the pids written to `dir/name` (one a line, the file renamed into place).
fn pids_in(dir: &TestDir, m: &Running, name: &str) -> Vec<i32> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(text) = std::fs::read_to_string(dir.join(name)) {
            return text.lines().filter_map(|l| l.trim().parse().ok()).collect();
        }
        assert!(
            Instant::now() < deadline,
            "{name} was never written: {}",
            m.stderr_so_far()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `kill -9` runs no code of mypi's: the kernel's parent-death signal (the children) and the
/// reaper (their groups: a shell's background job, an MCP server's helper) still end every
/// process mypi started.
#[test]
fn nothing_mypi_started_outlives_kill_9() {
    let dir = TestDir::new();
    let bash = "(echo $$; sleep 300 & echo $!) > b.tmp && mv b.tmp bash; sleep 300";
    let call = json!({"tool_calls": [{"name": "bash", "arguments": {"command": bash}}]});
    let exec = "(echo $$; sleep 300 & echo $!) > e.tmp && mv e.tmp exec; exec sleep 300";
    install(
        &dir,
        "exec.lua",
        &format!("api.timer(10, function() api.exec(\"sh\", {{\"-c\", {exec:?}}}) end)\n"),
    );
    let server = crate::common::mcp::grandchild_entry(&dir, "normal", 30);
    dir.write(
        ".mcp.json",
        &json!({"mcpServers": {"srv": server}}).to_string(),
    );
    let m = faux(&dir, &[call, json!({"text": "done"})])
        .args(["-p", "go"])
        .spawn();
    let mut pids = pids_in(&dir, &m, "bash");
    pids.extend(pids_in(&dir, &m, "exec"));
    pids.extend(pids_in(&dir, &m, "pgid"));
    pids.extend(pids_in(&dir, &m, "grandchild"));
    assert_eq!(pids.len(), 6, "{pids:?}");
    assert!(pids.iter().all(|&p| alive(p)), "{pids:?} before the kill");
    m.signal(libc::SIGKILL);
    let out = m.wait();
    assert_eq!(out.code, -1, "{}", out.describe());
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let left: Vec<i32> = pids.iter().copied().filter(|&p| alive(p)).collect();
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "outlived mypi's kill -9: {left:?} of {pids:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
