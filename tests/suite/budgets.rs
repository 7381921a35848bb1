//! Budgets cannot be escaped (issue 8, family 7): code that would run while a budget stop
//! unwinds (`__close`, `xpcall` message handlers, metamethods, comparators) never runs
//! unbounded, and a file whose top level is stuck in native code is not loaded again on every
//! save, so saves cannot pile up spinning threads.

use std::time::{Duration, Instant};

use crate::common::{Mypi, TestDir};

use super::ext_util::{healthy_still_works, install, install_fixture, quit, WAIT};

const ESCAPES: &str = r#"
local looping = {__close = function() while true do end end}
api.command("close", function()
  local x <close> = setmetatable({}, looping)
  while true do end
end)
api.command("nested_close", function()
  local function f(n)
    local x <close> = setmetatable({}, looping)
    if n > 0 then return f(n - 1) end
    while true do end
  end
  f(100)
end)
api.command("pcall_close", function()
  pcall(function() local x <close> = setmetatable({}, looping) while true do end end)
  while true do end
end)
api.command("handler", function()
  return xpcall(function() while true do end end, function() while true do end end)
end)
api.command("sort", function()
  table.sort({5, 4, 3, 2, 1}, function() while true do end end)
end)
api.command("index", function()
  local t = setmetatable({}, {__index = function() while true do end end})
  return t.x
end)
api.command("ping", function() return "pong" end)
"#;

#[test]
fn nothing_of_a_script_runs_after_its_budget() {
    let dir = TestDir::new();
    install_fixture(&dir, "healthy.lua");
    install(&dir, "escapes.lua", ESCAPES);
    let mut m = Mypi::new(&dir)
        .env("MYPI_EXT_BUDGET_MS", "300")
        .args(["--provider", "faux", "--no-watch", "--no-session"])
        .spawn();
    m.wait_for_line("ext healthy (lua", WAIT);
    for cmd in [
        "close",
        "nested_close",
        "pcall_close",
        "handler",
        "sort",
        "index",
    ] {
        let started = Instant::now();
        m.send_line(&format!("/{cmd}"));
        let err = m.wait_for_line(&format!("error: /{cmd}:"), WAIT);
        assert!(err.contains("(the CPU budget)"), "{cmd}: {err}");
        assert!(started.elapsed() < Duration::from_secs(3), "{cmd}: {err}");
        // The extension answers at once: its thread is free, not stuck in the script.
        m.send_line("/ping");
        m.wait_for_line("pong", WAIT);
    }
    healthy_still_works(&mut m, "after the escapes");
    quit(m);
}

/// The live threads of process `pid` whose name starts with `prefix`.
fn threads(pid: u32, prefix: &str) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .is_ok_and(|c| c.trim_end().starts_with(prefix))
        })
        .count()
}

#[test]
fn saving_a_file_stuck_in_native_code_does_not_pile_up_threads() {
    let dir = TestDir::new();
    install_fixture(&dir, "healthy.lua");
    let stuck = |n: usize| {
        format!(
            "-- save {n}\nlocal s = string.rep('a', 40000)\nlocal _ = s:find(string.rep('a-', 40) .. 'b')\n"
        )
    };
    let path = install(&dir, "stuck.lua", &stuck(0));
    let mut m = Mypi::new(&dir)
        .env("MYPI_EXT_BUDGET_MS", "300")
        .args(["--provider", "faux", "--no-session"])
        .spawn();
    m.wait_for_line("stuck", Duration::from_secs(15));
    for n in 1..=10 {
        std::fs::write(&path, stuck(n)).unwrap();
        std::thread::sleep(Duration::from_millis(400));
    }
    m.wait_for_text("an earlier load is still stuck", Duration::from_secs(15));
    let spinning = threads(m.pid(), "ext:stuck");
    assert!(spinning <= 1, "{spinning} threads for stuck.lua");
    healthy_still_works(&mut m, "after ten saves");
    quit(m);
}
