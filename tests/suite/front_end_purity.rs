//! Scripts cannot pollute the front end (issue 8, family 8): whatever a Lua or Rhai script
//! prints or writes to the standard streams goes to the debug log, never to mypi's stdout
//! (`-p` prints only the answer, `--json` stays pure JSON lines), and no script reads mypi's
//! stdin.

use crate::common::{Mypi, TestDir};

use super::ext_util::install;

/// A Lua extension that tries every way to reach stdout and stdin from `/noisy`.
const NOISY_LUA: &str = r#"
api.command("noisy", function()
  print("lua print")
  io.write("lua io.write\n")
  io.stdout:write("lua io.stdout\n"):flush()
  io.stderr:write("lua io.stderr\n")
  local read_ok = pcall(io.read, "l")
  local lines_ok = pcall(io.lines)
  local stdin_ok = pcall(function() return io.stdin:read("l") end)
  local f = io.open("/dev/stdout", "w")
  local g = io.open("/proc/self/fd/1", "w")
  -- A link to stdout under an innocent name reaches /dev/null, not mypi's stdout.
  local link = io.open("innocent.txt", "w")
  if link then link:write("leaked through a link\n") link:close() end
  return string.format("answer read=%s lines=%s stdin=%s open=%s/%s input=%s",
    tostring(read_ok), tostring(lines_ok), tostring(stdin_ok), tostring(f), tostring(g),
    tostring(io.input))
end)
api.on("tool_call", function() io.write("from a handler\n") end)
"#;

const NOISY_RHAI: &str = r#"
api.command("rnoisy", |a| { print("rhai print"); debug("rhai debug"); "ranswer" });
"#;

fn project() -> TestDir {
    let dir = TestDir::new();
    std::os::unix::fs::symlink("/dev/stdout", dir.join("innocent.txt")).unwrap();
    install(&dir, "noisy.lua", NOISY_LUA);
    install(&dir, "rnoisy.rhai", NOISY_RHAI);
    dir
}

#[test]
fn print_mode_stdout_carries_only_the_answer() {
    let dir = project();
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "/noisy"])
        .stdin("secret input that no script may read\n")
        .run();
    out.ok();
    assert_eq!(
        out.stdout,
        "answer read=false lines=false stdin=false open=nil/nil input=nil\n",
        "{}",
        out.describe()
    );
    assert!(!out.stderr.contains("lua io"), "{}", out.describe());
    let rhai = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "/rnoisy"])
        .run();
    rhai.ok();
    assert_eq!(rhai.stdout, "ranswer\n", "{}", rhai.describe());
}

#[test]
fn script_output_goes_to_the_log() {
    let dir = project();
    let out = Mypi::new(&dir)
        .env("MYPI_LOG", "1")
        .args(["--provider", "faux", "-p", "/noisy"])
        .run();
    out.ok();
    assert!(out.stdout.starts_with("answer "), "{}", out.describe());
    for line in [
        "lua print",
        "lua io.write",
        "lua io.stdout",
        "lua io.stderr",
    ] {
        assert!(out.stderr.contains(line), "{line}: {}", out.describe());
    }
}

#[test]
fn json_mode_stays_json_lines() {
    let dir = project();
    dir.write(
        "replies.jsonl",
        r#"{"tool_calls":[{"name":"read","arguments":{"path":"replies.jsonl"}}]}
{"text":"done"}
"#,
    );
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "--faux-script", "replies.jsonl"])
        .args(["-p", "go", "--json"])
        .run();
    out.ok();
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(lines.len() > 3, "{}", out.describe());
    for line in lines {
        assert!(
            serde_json::from_str::<serde_json::Value>(line).is_ok(),
            "not JSON: {line:?}\n{}",
            out.describe()
        );
    }
}
