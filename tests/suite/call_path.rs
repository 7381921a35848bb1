//! The extension call path (issue 7): long host waits never fail a call and cost no CPU, every
//! call gets the context of the run that made it, and queued messages all run, as prompts
//! with `source = "extension"`, in the REPL and in print mode.

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::ext_util::{faux, install, repl, BUDGET_MS, WAIT};
use crate::common::{Mypi, TestDir};

/// A `tool_call` guard that asks before every call, in Lua and in Rhai.
const LUA_GUARD: &str = r#"api.on("tool_call", function(e, ctx)
  if not ctx.ui.confirm("lua: run " .. e.name .. "?") then return {block = true, reason = "lua said no"} end
end)"#;
const RHAI_GUARD: &str = r#"api.on("tool_call", |e, ctx| {
  if !ctx.ui.confirm(`rhai: run ${e.name}?`) { return #{ block: true, reason: "rhai said no" }; }
});"#;

/// The user answers a guard's question after 3 s (far past the 0.3 s budget plus the grace
/// period): the call runs, nothing is reported as stuck.
fn confirm_answered_late(file: &str, guard: &str) {
    let dir = TestDir::new();
    install(&dir, file, guard);
    let replies = [
        json!({"tool_calls": [{"name": "bash", "arguments": {"command": "echo ran-it > ran.txt"}}]}),
        json!({"text": "all done"}),
    ];
    let mut m = faux(&dir, &replies).arg("--no-watch").spawn();
    // The question is asked at once (the faux model answers at once); on a pipe rustyline
    // prints no prompt, so the answer is simply sent 3 s later.
    m.send_line("go");
    std::thread::sleep(Duration::from_secs(3));
    m.send_line("y");
    m.wait_for_line("all done", WAIT);
    m.send_line("/extensions");
    m.wait_for_line(
        file.trim_end_matches(".lua").trim_end_matches(".rhai"),
        WAIT,
    );
    m.close_stdin();
    let out = m.wait();
    out.ok();
    assert_eq!(dir.read("ran.txt").trim(), "ran-it", "{}", out.describe());
    for bad in ["did not answer", "busy", "said no", "blocked"] {
        assert!(!out.stdout.contains(bad), "{bad}: {}", out.describe());
    }
}

#[test]
fn a_confirm_answered_after_3_s_completes_normally_in_lua() {
    confirm_answered_late("guard.lua", LUA_GUARD);
}

#[test]
fn a_confirm_answered_after_3_s_completes_normally_in_rhai() {
    confirm_answered_late("guard.rhai", RHAI_GUARD);
}

/// Runs `mypi -p PROMPT` and returns (stdout, the child's own CPU time, wall time).
fn run_measured(m: Mypi) -> (String, Duration, Duration) {
    let mut cmd = m.command();
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let start = Instant::now();
    // Reaped below with wait4, which also gives the child's own resource usage.
    #[allow(clippy::zombie_processes)]
    let mut child = cmd.spawn().expect("spawn mypi");
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let pid = child.id() as i32;
    // SAFETY: wait4 on our own child; it fills `status` and `usage` only.
    let (status, usage) = unsafe {
        let mut status = 0;
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::wait4(pid, &mut status, 0, &mut usage);
        (status, usage)
    };
    let wall = start.elapsed();
    assert_eq!(status, 0, "mypi exited with status {status}");
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    let cpu = tv(usage.ru_utime) + tv(usage.ru_stime);
    (reader.join().expect("reader"), cpu, wall)
}

fn exec_wait_costs_no_cpu(file: &str, script: &str) {
    let dir = TestDir::new();
    install(&dir, file, script);
    let m = Mypi::new(&dir).env("MYPI_EXT_BUDGET_MS", BUDGET_MS).args([
        "--provider",
        "faux",
        "-p",
        "/nap",
    ]);
    let (stdout, cpu, wall) = run_measured(m);
    assert_eq!(stdout.trim(), "slept: 0", "{stdout}");
    assert!(wall >= Duration::from_secs(3), "{wall:?}");
    assert!(
        cpu < Duration::from_millis(200),
        "a 3 s host wait cost {cpu:?} of CPU"
    );
}

#[test]
fn a_3_s_api_exec_completes_and_costs_no_cpu_in_lua() {
    exec_wait_costs_no_cpu(
        "nap.lua",
        r#"api.command("nap", function() return "slept: " .. api.exec("sleep", {"3"}).code end)"#,
    );
}

#[test]
fn a_3_s_api_exec_completes_and_costs_no_cpu_in_rhai() {
    exec_wait_costs_no_cpu(
        "nap.rhai",
        r#"api.command("nap", |args| `slept: ${api.exec("sleep", ["3"]).code}`);"#,
    );
}

#[test]
fn host_time_does_not_count_against_the_budget_but_script_time_does() {
    let dir = TestDir::new();
    // 0.3 s budget: a 1 s host wait plus a little script work passes (a loaded machine may
    // stretch the work's wall time, so it stays well under the budget); 2 s of work does not.
    install(
        &dir,
        "mix.lua",
        r#"local function spin(s) local t = os.clock() while os.clock() - t < s do end end
api.command("mix", function() api.exec("sleep", {"1"}); spin(0.05); return "mixed ok" end)
api.command("spin", function() api.exec("sleep", {"1"}); spin(2); return "never" end)"#,
    );
    let out = faux(&dir, &[]).args(["-p", "/mix"]).run();
    out.ok();
    assert_eq!(out.stdout.trim(), "mixed ok", "{}", out.describe());
    let out = faux(&dir, &[]).args(["-p", "/spin"]).run();
    assert_eq!(out.code, 1, "{}", out.describe());
    assert!(out.stderr.contains("CPU budget"), "{}", out.describe());
}

/// An extension that records the `ctx` it sees at each kind of call in `ctx.log`.
const CTX_RECORDER: &str = r#"local function log(where, ctx)
  local f = io.open("ctx.log", "a")
  f:write(where, " ", ctx.session_id, " ", ctx.mode, " ", ctx.model, " ", ctx.depth, "\n")
  f:close()
end
api.on("session_start", function(e, ctx) log("start:" .. e.reason, ctx) end)
api.on("input", function(e, ctx) log("input", ctx) end)
api.on("tool_call", function(e, ctx) log("tool_call", ctx) end)
api.tool{name = "probe", parameters = {type = "object", properties = {}},
  execute = function(args, ctx) log("tool", ctx) return "probed" end}
api.command("probe", function(args, ctx) log("command", ctx) return "ok" end)"#;

fn ctx_lines(dir: &TestDir) -> Vec<Vec<String>> {
    dir.read("ctx.log")
        .lines()
        .map(|l| l.split(' ').map(str::to_string).collect())
        .collect()
}

fn session_ids(dir: &TestDir) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(super::wire::sessions_dir(dir))
        .map(|d| {
            d.flatten()
                .map(|e| e.path().file_stem().unwrap().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

#[test]
fn every_call_of_the_first_run_sees_the_session_it_belongs_to() {
    let dir = TestDir::new();
    install(&dir, "rec.lua", CTX_RECORDER);
    let replies = [
        json!({"tool_calls": [{"name": "probe", "arguments": {}}]}),
        json!({"text": "done"}),
    ];
    let out = faux(&dir, &replies).args(["-p", "hello"]).run();
    out.ok();
    let ids = session_ids(&dir);
    assert_eq!(ids.len(), 1, "{ids:?}");
    let lines = ctx_lines(&dir);
    let wheres: Vec<&str> = lines.iter().map(|l| l[0].as_str()).collect();
    assert_eq!(wheres, ["start:startup", "input", "tool_call", "tool"]);
    for l in &lines {
        assert_eq!(&l[1..], [ids[0].as_str(), "print", "faux", "0"], "{l:?}");
    }
}

#[test]
fn session_start_after_new_sees_the_new_session() {
    let dir = TestDir::new();
    install(&dir, "rec.lua", CTX_RECORDER);
    let mut m = repl(&dir);
    m.send_line("first prompt");
    m.wait_for_line("first prompt", WAIT);
    m.send_line("/new");
    m.wait_for_line("Started a new session.", WAIT);
    m.send_line("/probe");
    m.wait_for_line("ok", WAIT);
    m.send_line("second prompt");
    m.wait_for_line("second prompt", WAIT);
    m.close_stdin();
    m.wait().ok();
    let lines = ctx_lines(&dir);
    let ids = session_ids(&dir);
    assert_eq!(ids.len(), 2, "{ids:?}");
    let of = |w: &str| -> Vec<&Vec<String>> { lines.iter().filter(|l| l[0] == w).collect() };
    let first = &of("input")[0][1];
    let new_start = &of("start:new")[0][1];
    assert_ne!(
        first, new_start,
        "session_start after /new still saw the old id"
    );
    assert!(!new_start.is_empty());
    assert_eq!(&of("command")[0][1], new_start);
    assert_eq!(&of("input")[1][1], new_start);
    assert_eq!(&lines[0][2], "repl");
}

/// An extension whose command queues messages, and which records every input it sees.
const QUEUER: &str = r#"api.on("input", function(e, ctx) api.notify("input[" .. e.source .. "]: " .. e.text) end)
api.command("queue", function(args, ctx)
  for word in args:gmatch("%S+") do api.send_message(word, {deliver_as = "follow_up"}) end
  return "queued"
end)
api.command("steer", function(args, ctx) api.send_message(args) return "steered" end)"#;

#[test]
fn messages_queued_while_idle_all_run_as_extension_input_without_typing() {
    let dir = TestDir::new();
    install(&dir, "q.lua", QUEUER);
    let mut m = repl(&dir);
    m.send_line("/queue one two /help");
    m.wait_for_line("queued", WAIT);
    m.wait_for_line("input[extension]: one", WAIT);
    m.wait_for_line("input[extension]: two", WAIT);
    // A queued text that starts with `/` goes to the model as it is (faux echoes it).
    m.wait_for_line("input[extension]: /help", WAIT);
    m.send_line("/steer now");
    m.wait_for_line("input[extension]: now", WAIT);
    m.close_stdin();
    let out = m.wait();
    out.ok();
    assert!(
        !out.stdout.contains("Commands:"),
        "a queued /help ran as a command: {}",
        out.describe()
    );
}

#[test]
fn print_mode_runs_what_a_command_queued_before_it_exits() {
    let dir = TestDir::new();
    install(&dir, "q.lua", QUEUER);
    let out = faux(&dir, &[json!({"text": "answer to the queued one"})])
        .args(["-p", "/queue later"])
        .run();
    out.ok();
    assert!(
        out.stderr.contains("input[extension]: later"),
        "{}",
        out.describe()
    );
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines,
        ["queued", "answer to the queued one"],
        "{}",
        out.describe()
    );
}

#[test]
fn print_mode_runs_what_a_handler_queued_during_the_run() {
    let dir = TestDir::new();
    install(
        &dir,
        "after.lua",
        r#"local sent = false
api.on("agent_end", function()
  if not sent then sent = true api.send_message("/not-a-command", {deliver_as = "follow_up"}) end
end)"#,
    );
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "first", "--json"])
        .run();
    out.ok();
    let finals: Vec<Value> = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "final")
        .collect();
    let texts: Vec<&str> = finals
        .iter()
        .map(|e| e["text"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(texts.len(), 2, "{}", out.describe());
    assert!(texts[1].contains("/not-a-command"), "{texts:?}");
}

/// Ctrl-C during a script tool that loops stops the tool at once (its budget is 20 s), and
/// the extension keeps working: a cancelled call is not a failure of the script.
fn ctrl_c_stops_a_looping_script_tool(file: &str, script: &str) {
    let dir = TestDir::new();
    install(&dir, file, script);
    let replies = [
        json!({"tool_calls": [{"name": "spin", "arguments": {}}]}),
        json!({"text": "never reached"}),
    ];
    let mut m = faux(&dir, &replies).arg("--no-watch").spawn();
    m.wait_for_line("mypi ", WAIT);
    m.send_line("go");
    // The tool writes a file when it starts looping.
    let started = Instant::now();
    while !dir.exists("spinning") && started.elapsed() < WAIT {
        std::thread::sleep(Duration::from_millis(20));
    }
    let t = Instant::now();
    m.interrupt();
    m.wait_for_line("cancelling", WAIT);
    m.send_line("/alive");
    m.wait_for_line("still here", WAIT);
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "the loop ran on: {:?}",
        t.elapsed()
    );
    m.close_stdin();
    let out = m.wait();
    out.ok();
    assert!(!out.stdout.contains("never reached"), "{}", out.describe());
}

#[test]
fn ctrl_c_stops_a_looping_lua_tool() {
    ctrl_c_stops_a_looping_script_tool(
        "spin.lua",
        r#"api.tool{name = "spin", timeout_ms = 20000, execute = function()
  io.open("spinning", "w"):close()
  while true do pcall(function() end) end
end}
api.command("alive", function() return "still here" end)"#,
    );
}

#[test]
fn ctrl_c_stops_a_looping_rhai_tool() {
    ctrl_c_stops_a_looping_script_tool(
        "spin.rhai",
        r#"api.tool(#{ name: "spin", timeout_ms: 20000, execute: |args| {
  write_file("spinning", "");
  loop { try { let x = 1; } catch { } }
}});
api.command("alive", |args| "still here");"#,
    );
}
