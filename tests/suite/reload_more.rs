//! Hot reload, continued: `api.state` and the reload events (Lua and Rhai), a save while a
//! tool call is running, Rhai extensions, `/reload`, `/reload NAME` and `--no-watch`.

use crate::common::{Running, TestDir};

use super::reload::{
    ask, count, ext_rel, lua_x, save_by_rename, save_in_place, settle_and_count, start, SETTLE,
    WAIT,
};
use super::wire::no_panic;

/// Lua: counts its loads in `api.state`, `/bump` counts in it too; every session event and
/// its own `extension_loaded` are notified with the version.
fn lua_stateful(v: &str) -> String {
    format!(
        r#"local V = "{v}"
api.state.loads = (api.state.loads or 0) + 1
api.state.list = api.state.list or {{ "a", "b" }}
api.on("session_start", function(e)
  api.notify(V .. " session_start " .. e.reason .. " loads=" .. api.state.loads)
end)
api.on("session_shutdown", function(e) api.notify(V .. " session_shutdown " .. e.reason) end)
api.on("extension_loaded", function(e)
  if e.name == api.extension.name then api.notify(V .. " extension_loaded " .. e.reason) end
end)
api.command("bump", function()
  api.state.bumps = (api.state.bumps or 0) + 1
  return V .. " bumps=" .. api.state.bumps .. " loads=" .. api.state.loads
    .. " list=" .. table.concat(api.state.list, ",")
end)
"#
    )
}

/// The same in Rhai (`/rbump`).
fn rhai_stateful(v: &str) -> String {
    format!(
        r#"let V = "{v}";
if !("loads" in api.state) {{ api.state.loads = 0; api.state.bumps = 0; }}
api.state.loads = api.state.loads + 1;
api.on("session_start", |e| {{
  api.notify(`${{V}} session_start ${{e.reason}} loads=${{api.state.loads}}`);
}});
api.on("session_shutdown", |e| {{ api.notify(`${{V}} session_shutdown ${{e.reason}}`); }});
api.on("extension_loaded", |e| {{
  if e.name == api.extension.name {{ api.notify(`${{V}} extension_loaded ${{e.reason}}`); }}
}});
api.command("rbump", |args| {{
  api.state.bumps = api.state.bumps + 1;
  `${{V}} bumps=${{api.state.bumps}} loads=${{api.state.loads}}`
}});
"#
    )
}

/// Waits for the reload events of one extension, in order: the old version's shutdown, the
/// new one's start (with the carried-over load count) and `extension_loaded`, then the notice.
fn expect_reload_events(m: &mut Running, name: &str, file: &str, old: &str, new: &str, loads: u32) {
    m.wait_for_line(&format!("[{name}] {old} session_shutdown reload"), WAIT);
    m.wait_for_line(
        &format!("[{name}] {new} session_start reload loads={loads}"),
        WAIT,
    );
    m.wait_for_line(&format!("[{name}] {new} extension_loaded reload"), WAIT);
    m.wait_for_line(&format!("! reloaded {file}"), WAIT);
}

#[test]
fn state_survives_reloads_and_the_old_and_new_versions_get_their_events() {
    let dir = TestDir::new();
    let s = dir.write(&ext_rel("s.lua"), &lua_stateful("v1"));
    let r = dir.write(&ext_rel("r.rhai"), &rhai_stateful("r1"));
    let mut m = start(&dir, &[]);
    let banner = m.stdout_so_far();
    assert!(
        banner.contains("[s] v1 session_start startup loads=1"),
        "{banner}"
    );
    ask(&mut m, "/bump", "v1 bumps=1 loads=1 list=a,b");
    ask(&mut m, "/bump", "v1 bumps=2 loads=1");
    ask(&mut m, "/rbump", "r1 bumps=1 loads=1");

    save_in_place(&s, &lua_stateful("v2"));
    expect_reload_events(&mut m, "s", "s.lua", "v1", "v2", 2);
    ask(&mut m, "/bump", "v2 bumps=3 loads=2 list=a,b");
    save_by_rename(&s, &lua_stateful("v3"));
    expect_reload_events(&mut m, "s", "s.lua", "v2", "v3", 3);
    ask(&mut m, "/bump", "v3 bumps=4 loads=3");
    // Only the reloaded extension was told: the other one saw no reload events.
    let out = m.stdout_so_far();
    assert!(!out.contains("[r] r1 session_shutdown"), "{out}");
    assert!(!out.contains("[r] r1 extension_loaded reload"), "{out}");

    save_by_rename(&r, &rhai_stateful("r2"));
    expect_reload_events(&mut m, "r", "r.rhai", "r1", "r2", 2);
    ask(&mut m, "/rbump", "r2 bumps=2 loads=2");
    let out = m.stdout_so_far();
    assert_eq!(out.matches("session_shutdown reload").count(), 3, "{out}");
    assert_eq!(out.matches("session_start reload").count(), 3, "{out}");
    // A new version never gets the shutdown meant for the old one, nor the reverse.
    assert!(!out.contains("v1 session_start reload"), "{out}");
    assert!(!out.contains("v3 session_shutdown reload"), "{out}");

    m.send_line("/quit");
    let out = m.wait();
    out.ok();
    no_panic(&out.stderr);
    assert!(
        out.stdout.contains("[s] v3 session_shutdown quit"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("[r] r2 session_shutdown quit"),
        "{}",
        out.stdout
    );
}

/// A tool that notifies when it starts and when it ends, sleeping in between with `api.exec`.
fn lua_slow(v: &str) -> String {
    format!(
        r#"local V = "{v}"
api.tool{{name = "slow", description = "slow", parameters = {{type = "object", properties = {{}}}},
  timeout_ms = 10000,
  execute = function()
    api.notify("slow start " .. V)
    api.exec("sleep", {{"1"}})
    api.notify("slow done " .. V)
    return "slow " .. V
  end}}
"#
    )
}

#[test]
fn a_save_during_a_tool_call_lets_it_finish_on_the_old_version_and_the_next_uses_the_new() {
    let dir = TestDir::new();
    let slow = dir.write(&ext_rel("slow.lua"), &lua_slow("v1"));
    // Two calls of `slow` in a row, then text. The second reply streams slowly, so the swap
    // (which waits for the running call) is done before the agent reaches the next call.
    dir.write(
        "faux.jsonl",
        concat!(
            "{\"tool_calls\": [{\"name\": \"slow\", \"arguments\": {}, \"id\": \"c1\"}]}\n",
            "{\"tool_calls\": [{\"name\": \"slow\", \"arguments\": {}, \"id\": \"c2\"}], \"delay_ms\": 150}\n",
            "{\"text\": \"all done\"}\n",
        ),
    );
    let mut m = start(&dir, &["--faux-script", "faux.jsonl"]);
    m.send_line("go");
    m.wait_for_line("[slow] slow start v1", WAIT);
    save_in_place(&slow, &lua_slow("v2"));
    m.wait_for_line("all done", WAIT);
    let out = m.stdout_so_far();
    let at = |needle: &str| {
        out.find(needle)
            .unwrap_or_else(|| panic!("{needle:?} missing\n{out}"))
    };
    let order = [
        at("slow start v1"),
        at("slow done v1"),
        at("! reloaded slow.lua"),
        at("slow start v2"),
        at("slow done v2"),
        at("all done"),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}\n{out}");
    assert_eq!(
        out.matches("  ✓ ").count(),
        2,
        "both calls succeeded\n{out}"
    );
    assert!(!out.contains("✗"), "{out}");
    m.send_line("/quit");
    m.wait().ok();
}

#[test]
fn state_changed_by_a_long_running_call_survives_a_reload_during_it() {
    let dir = TestDir::new();
    // A CPU-bound tool with a long budget (5 s) that runs ~2 s, longer than the default
    // per-call budget (1 s) the reload would otherwise wait for the old version's state.
    let spin = |v: &str| {
        format!(
            r#"local V = "{v}"
api.tool{{name = "spin", description = "spin", parameters = {{type = "object", properties = {{}}}},
  timeout_ms = 5000,
  execute = function()
    api.notify("spin start " .. V)
    local t = os.clock()
    while os.clock() - t < 2 do end
    api.state.spins = (api.state.spins or 0) + 1
    api.notify("spin done " .. V)
    return "spun"
  end}}
api.command("spins", function() return V .. " spins=" .. tostring(api.state.spins) end)
"#
        )
    };
    let file = dir.write(&ext_rel("spin.lua"), &spin("v1"));
    dir.write(
        "faux.jsonl",
        concat!(
            "{\"tool_calls\": [{\"name\": \"spin\", \"arguments\": {}, \"id\": \"c1\"}]}\n",
            "{\"text\": \"spun once\"}\n",
        ),
    );
    let mut m = start(&dir, &["--faux-script", "faux.jsonl"]);
    m.send_line("go");
    m.wait_for_line("[spin] spin start v1", WAIT);
    save_in_place(&file, &spin("v2"));
    // Two seconds of CPU take longer on a busy machine: a wait, not a measure.
    m.wait_for_line("spun once", WAIT * 12);
    let out = m.stdout_so_far();
    if !out.contains("! reloaded spin.lua") {
        m.wait_for_line("! reloaded spin.lua", WAIT);
    }
    ask(&mut m, "/spins", "v2 spins=");
    let out = m.stdout_so_far();
    assert!(
        out.contains("v2 spins=1"),
        "api.state.spins was lost\n{out}"
    );
    assert!(out.contains("  ✓ "), "{out}");
    m.send_line("/quit");
    m.wait().ok();
}

#[test]
fn rhai_extensions_reload_keep_the_previous_version_when_broken_and_reload_when_fixed() {
    let dir = TestDir::new();
    let rv = |v: &str| {
        format!(
            r#"let V = "{v}";
api.tool(#{{name: "rtool", description: "r", parameters: #{{type: "object", properties: #{{}}}},
  execute: |args| `rtool ${{V}}`}});
api.command("rv", |args| `rv=${{V}}`, "version");
api.on("input", |e| {{ api.notify(`input seen by ${{V}}`); }});
"#
        )
    };
    let file = dir.write(&ext_rel("r.rhai"), &rv("r1"));
    let mut m = start(&dir, &[]);
    ask(&mut m, "/rv", "rv=r1");

    save_by_rename(&file, &rv("r2"));
    let line = m.wait_for_line("! reloaded r.rhai", WAIT);
    assert_eq!(line, "! reloaded r.rhai: 1 tool, 1 command, 1 handler");
    ask(&mut m, "/rv", "rv=r2");
    ask(&mut m, "hello", "input seen by r2");

    // Line 2 does not parse.
    save_in_place(&file, "let V = \"r3\";\nlet = ;\n");
    let err = m.wait_for_line("kept the previous version of r.rhai", WAIT);
    assert!(err.contains("r.rhai"), "{err}");
    assert!(err.contains(":2"), "names the line: {err}");
    ask(&mut m, "/rv", "rv=r2");
    ask(&mut m, "hello again", "input seen by r2");

    // A failing top level.
    save_in_place(
        &file,
        "let V = \"r4\";\napi.command(\"rv\", |args| V);\nthrow \"rhai boom\";\n",
    );
    let err = m.wait_for_line("kept the previous version of r.rhai", WAIT);
    assert!(err.contains("rhai boom"), "{err}");
    ask(&mut m, "/rv", "rv=r2");

    save_in_place(&file, &rv("r5"));
    m.wait_for_line("! reloaded r.rhai: 1 tool, 1 command, 1 handler", WAIT);
    ask(&mut m, "/rv", "rv=r5");
    settle_and_count(&m, "! reloaded r.rhai", 2);
    m.wait().ok();
}

#[test]
fn no_watch_turns_watching_off_and_reload_does_it_on_demand() {
    let dir = TestDir::new();
    let x = dir.write(&ext_rel("x.lua"), &lua_x("v1"));
    let mut m = start(&dir, &["--no-watch"]);
    ask(&mut m, "/ver", "ver=v1");

    save_in_place(&x, &lua_x("v2"));
    let y = dir.write(
        &ext_rel("y.lua"),
        r#"api.command("why", function() return "y here" end)"#,
    );
    std::thread::sleep(SETTLE);
    ask(&mut m, "/ver", "ver=v1");
    assert_eq!(count(&m, "loaded"), 0, "{}", m.stdout_so_far());

    // `/reload`: re-discovers (y loads) and reloads x, each once.
    m.send_line("/reload");
    m.wait_for_line("reloaded x.lua: 2 tools, 1 command, 3 handlers", WAIT);
    ask(&mut m, "/ver", "ver=v2");
    ask(&mut m, "/why", "y here");
    let out = m.stdout_so_far();
    assert_eq!(out.matches("loaded y.lua").count(), 1, "{out}");
    assert_eq!(
        out.matches("reloaded x.lua").count(),
        1,
        "x reloaded once\n{out}"
    );

    // `/reload NAME` reloads that one only (by name or by file).
    save_in_place(&x, &lua_x("v3"));
    ask(&mut m, "/reload x", "reloaded x.lua");
    ask(&mut m, "/ver", "ver=v3");
    save_in_place(&x, &lua_x("v4"));
    ask(&mut m, "/reload x.lua", "reloaded x.lua");
    ask(&mut m, "/ver", "ver=v4");
    ask(&mut m, "/reload nope", "no extension called nope");
    let out = m.stdout_so_far();
    assert!(!out.contains("reloaded y.lua"), "{out}");

    // A broken file: `/reload x` keeps the previous version too.
    save_in_place(&x, "this is not lua\n");
    ask(&mut m, "/reload x", "kept the previous version of x.lua");
    ask(&mut m, "/ver", "ver=v4");

    // `/reload` with y deleted unloads it.
    save_in_place(&x, &lua_x("v5"));
    std::fs::remove_file(&y).unwrap();
    m.send_line("/reload");
    m.wait_for_line("unloaded y.lua", WAIT);
    ask(&mut m, "/ver", "ver=v5");
    ask(&mut m, "/why", "unknown command /why");
    m.send_line("/quit");
    let out = m.wait();
    out.ok();
    // Nothing reloaded on its own.
    assert_eq!(
        out.stdout.matches("! reloaded").count(),
        0,
        "{}",
        out.stdout
    );
}

#[test]
fn state_written_by_the_old_versions_shutdown_handler_reaches_the_new_version() {
    let script = |v: &str| {
        format!(
            r#"api.state.log = api.state.log or {{}}
local log = api.state.log
api.on("session_shutdown", function(e)
  if e.reason == "reload" then
    api.state.farewells = (api.state.farewells or 0) + 1
    log[#log + 1] = "bye"
  end
end)
api.command("farewells", function()
  return "{v} farewells=" .. tostring(api.state.farewells) .. " log=" .. #log
end)
"#
        )
    };
    let rhai = |v: &str| {
        format!(
            r#"api.on("session_shutdown", |e| {{
  if e.reason == "reload" {{ api.state.farewells = (api.state.farewells ?? 0) + 1; }}
}});
api.command("rfarewells", |a| `{v} farewells=${{api.state.farewells}}`);
"#
        )
    };
    let dir = TestDir::new();
    let lua_path = dir.write(&ext_rel("f.lua"), &script("v1"));
    let rhai_path = dir.write(&ext_rel("g.rhai"), &rhai("v1"));
    let mut m = start(&dir, &[]);
    ask(&mut m, "/farewells", "v1 farewells=nil log=0");
    save_in_place(&lua_path, &script("v2"));
    m.wait_for_line("reloaded f.lua", WAIT);
    ask(&mut m, "/farewells", "v2 farewells=1 log=1");
    save_by_rename(&lua_path, &script("v3"));
    m.wait_for_line("reloaded f.lua", WAIT);
    ask(&mut m, "/farewells", "v3 farewells=2 log=2");
    save_in_place(&rhai_path, &rhai("v2"));
    m.wait_for_line("reloaded g.rhai", WAIT);
    ask(&mut m, "/rfarewells", "v2 farewells=1");
    m.send_line("/quit");
    no_panic(&m.wait().stderr);
}

/// Writes `NAME.lua` (a command `/NAME` answering "NAME ok"), waits for its load notice and
/// asks the command.
fn write_command_and_use_it(dir: &TestDir, m: &mut Running, name: &str) {
    dir.write(
        &ext_rel(&format!("{name}.lua")),
        &format!(r#"api.command("{name}", function() return "{name} ok" end)"#),
    );
    let loaded = format!("! loaded {name}.lua: 0 tools, 1 command, 0 handlers");
    m.wait_for_line(&loaded, WAIT);
    ask(m, &format!("/{name}"), &format!("{name} ok"));
}

#[test]
fn an_extensions_folder_created_after_start_is_watched() {
    let dir = TestDir::new();
    let mut m = start(&dir, &[]);
    write_command_and_use_it(&dir, &mut m, "late");
    m.send_line("/quit");
    no_panic(&m.wait().stderr);
}

/// After the extensions folder (or `.agents` with it) is deleted and created again, a file
/// written there loads as in a folder that was never removed: right away, or after the
/// unload was seen.
#[test]
fn an_extensions_folder_deleted_and_created_again_is_watched_again() {
    for (gone, wait_for_unload) in [
        (".agents/extensions", true),
        (".agents", true),
        (".agents/extensions", false),
    ] {
        let dir = TestDir::new();
        dir.write(
            &ext_rel("a.lua"),
            r#"api.command("a", function() return "a ok" end)"#,
        );
        let mut m = start(&dir, &[]);
        ask(&mut m, "/a", "a ok");
        std::fs::remove_dir_all(dir.join(gone)).unwrap();
        if wait_for_unload {
            m.wait_for_line("! unloaded a.lua", WAIT);
        }
        std::fs::create_dir_all(dir.join(".agents/extensions")).unwrap();
        if wait_for_unload {
            // The new folder is seen before the file is written in it.
            std::thread::sleep(SETTLE);
        }
        write_command_and_use_it(&dir, &mut m, "b");
        // And a file written later still.
        write_command_and_use_it(&dir, &mut m, "c");
        ask(&mut m, "/a", "unknown command /a");
        m.send_line("/quit");
        no_panic(&m.wait().stderr);
    }
}
