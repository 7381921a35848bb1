//! No script value takes mypi down or fills its memory (issue 8, families 1 and 2): values
//! nested without end, chains of closures, one string referenced thousands of times, map keys,
//! endless process output and huge rewritten results each end in a clear error (or a cut
//! result) naming the extension, mypi's own peak memory stays under 512 MiB, and the same
//! process goes on answering.

use std::time::Duration;

use crate::common::{FakeOpenAi, Mypi, Reply, Running, TestDir};

use super::ext_util::{healthy_still_works, install, install_fixture, quit, WAIT};

/// The most memory mypi may use in these tests.
const PEAK_LIMIT_KB: u64 = 512 * 1024;

const RHAI: &str = r#"
// Rhai checks the size of a nested array on every assignment (quadratic in the depth), so
// 1,500 levels keep a debug build quick; the limit is at 100.
api.command("deep_array", |args, ctx| { let a = []; for i in 0..1500 { a = [a]; } a });
api.command("closures", |args, ctx| {
  let f = || 1;
  for i in 0..100000 { let g = f; f = || g.call(); }
  "built"
});
api.command("keys", |args, ctx| {
  let k = "k"; k.pad(1000000, 'x');
  let m = #{};
  for i in 0..100000 { m[k + i] = i; }
  "kept"
});
api.command("read_big", |args, ctx| { read_file("big.txt").len() });
"#;

const LUA: &str = r#"
api.command("deep_table", function()
  local t = {} for i = 1, 20000 do t = {t} end return t
end)
api.command("refs", function()
  local s = string.rep("x", 1024 * 1024)
  local t = {} for i = 1, 3000 do t[i] = s end
  return t
end)
api.command("zero", function()
  local r = api.exec("cat", {"/dev/zero"}, {timeout_ms = 2000})
  return "timed_out=" .. tostring(r.timed_out) .. " bytes=" .. #r.stdout
end)
"#;

/// A REPL with the hostile scripts and the healthy one, with a budget that lets a debug
/// build on a loaded machine reach the limits before the clock.
fn start(dir: &TestDir) -> Running {
    install_fixture(dir, "healthy.lua");
    install(dir, "hostile.rhai", RHAI);
    install(dir, "hostile_lua.lua", LUA);
    let mut m = Mypi::new(dir)
        .env("MYPI_EXT_BUDGET_MS", "20000")
        .args(["--provider", "faux", "--no-watch", "--no-session"])
        .timeout(Duration::from_secs(180))
        .spawn();
    m.wait_for_line("ext healthy (lua", WAIT);
    m
}

/// mypi's own peak resident memory so far, in KiB.
fn peak_kb(m: &Running) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", m.pid())).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Runs `/cmd`, waits for a line containing `expect` and returns it.
fn run(m: &mut Running, cmd: &str, expect: &str) -> String {
    m.send_line(&format!("/{cmd}"));
    let line = m.wait_for_line(expect, Duration::from_secs(120));
    healthy_still_works(m, cmd);
    assert!(peak_kb(m) < PEAK_LIMIT_KB, "{cmd}: peak {} KiB", peak_kb(m));
    line
}

#[test]
fn values_nested_without_end_are_refused_and_mypi_goes_on() {
    let dir = TestDir::new();
    let mut m = start(&dir);
    for cmd in ["deep_array", "deep_table"] {
        let line = run(&mut m, cmd, &format!("error: /{cmd}"));
        assert!(
            line.contains("nested more than 100 levels"),
            "{cmd}: {line}"
        );
    }
    // Building and dropping a chain of 100,000 closures cannot overflow the thread's stack.
    run(&mut m, "closures", "built");
    quit(m);
}

#[test]
fn host_memory_stays_bounded() {
    let dir = TestDir::new();
    std::fs::write(dir.join("big.txt"), vec![b'a'; 40 << 20]).unwrap();
    let mut m = start(&dir);
    let refs = run(&mut m, "refs", "error: /refs");
    assert!(
        refs.contains("hostile_lua.lua") && refs.contains("larger than 16 MiB"),
        "{refs}"
    );
    let keys = run(&mut m, "keys", "error: /keys");
    assert!(
        keys.contains("hostile.rhai") && keys.contains("out of memory"),
        "{keys}"
    );
    let big = run(&mut m, "read_big", "error: /read_big");
    assert!(big.contains("larger than 16 MiB"), "{big}");
    let zero = run(&mut m, "zero", "timed_out=");
    assert!(zero.contains("timed_out=true bytes="), "{zero}");
    let bytes: usize = zero.rsplit('=').next().unwrap().trim().parse().unwrap();
    assert!(bytes <= 3 << 20, "{zero}");
    quit(m);
}

#[test]
fn a_huge_rewritten_result_is_cut_before_it_is_stored_or_sent() {
    let dir = TestDir::new();
    install(
        &dir,
        "rewrite.lua",
        r#"api.on("tool_result", function(e) return {updated_result = string.rep("y", 10 * 1024 * 1024)} end)"#,
    );
    dir.write("a.txt", "small\n");
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([("c1", "read", serde_json::json!({"path": "a.txt"}))]),
        Reply::text("done"),
    ]);
    let out = Mypi::new(&dir).openai(&fake).args(["-p", "go"]).run();
    out.ok();
    let reqs = fake.requests();
    let sent = super::wire::tool_results(&reqs[1]);
    let content = &sent[0].content;
    assert!(content.len() < 60 * 1024, "{} bytes sent", content.len());
    assert!(content.contains("omitted"), "{}", &content[..200]);
    let sessions = super::wire::session_files(&dir);
    let stored = std::fs::read_to_string(&sessions[0]).unwrap();
    assert!(stored.len() < 200 * 1024, "{} bytes stored", stored.len());
}

#[test]
fn a_file_building_a_closure_chain_at_top_level_loads_and_reloads() {
    let dir = TestDir::new();
    install_fixture(&dir, "healthy.lua");
    let chain = |n: u32| {
        format!(
            "let f = || 1;\nfor i in 0..{n} {{ let g = f; f = || g.call(); }}\napi.command(\"chain\", |a| \"chain {n}\");\n"
        )
    };
    let path = install(&dir, "chain.rhai", &chain(100_000));
    let mut m = Mypi::new(&dir)
        .env("MYPI_EXT_BUDGET_MS", "20000")
        .args(["--provider", "faux", "--no-session"])
        .timeout(Duration::from_secs(120))
        .spawn();
    m.wait_for_line("ext chain (rhai", Duration::from_secs(60));
    // Commands are answered once start-up (and the watcher) is ready.
    m.send_line("/chain");
    m.wait_for_line("chain 100000", WAIT);
    std::fs::write(&path, chain(100_001)).unwrap();
    m.wait_for_line("reloaded chain.rhai", Duration::from_secs(60));
    m.send_line("/chain");
    m.wait_for_line("chain 100001", WAIT);
    healthy_still_works(&mut m, "after the chain");
    quit(m);
}

#[test]
fn a_too_deep_api_state_field_is_left_out_of_a_reload_and_the_rest_kept() {
    let dir = TestDir::new();
    let lua = |v: &str| {
        format!(
            "-- {v}\napi.command(\"mk\", function() local t = {{}} for i = 1, 5000 do t = {{t}} end api.state.t = t api.state.n = 1 return \"made\" end)\napi.command(\"n\", function() return \"n=\" .. tostring(api.state.n) .. \" t=\" .. type(api.state.t) end)\n"
        )
    };
    let rhai = |v: &str| {
        format!(
            "// {v}\napi.command(\"rmk\", |a| {{ let t = []; for i in 0..300 {{ t = [t]; }} api.state.t = t; api.state.n = 1; \"rmade\" }});\napi.command(\"rn\", |a| `rn=${{api.state.n}} t=${{type_of(api.state.t)}}`);\n"
        )
    };
    let lua_path = install(&dir, "deep.lua", &lua("v1"));
    let rhai_path = install(&dir, "deep2.rhai", &rhai("v1"));
    let mut m = Mypi::new(&dir)
        .args(["--provider", "faux", "--no-session"])
        .spawn();
    m.send_line("/mk");
    m.wait_for_line("made", WAIT);
    m.send_line("/rmk");
    m.wait_for_line("rmade", WAIT);
    std::fs::write(&lua_path, lua("v2")).unwrap();
    let why = m.wait_for_line("api.state.t is not kept", WAIT);
    assert!(
        why.contains("deep.lua") && why.contains("nested more than 100"),
        "{why}"
    );
    m.wait_for_line("reloaded deep.lua", WAIT);
    std::fs::write(&rhai_path, rhai("v2")).unwrap();
    let why = m.wait_for_line("api.state.t is not kept", WAIT);
    assert!(
        why.contains("deep2.rhai") && why.contains("nested more than 100"),
        "{why}"
    );
    m.wait_for_line("reloaded deep2.rhai", WAIT);
    m.send_line("/n");
    m.wait_for_line("n=1 t=nil", WAIT);
    m.send_line("/rn");
    m.wait_for_line("rn=1 t=()", WAIT);
    quit(m);
}
