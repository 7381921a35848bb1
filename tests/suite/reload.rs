//! Hot reload through the real binary: a REPL fed through a pipe, extension files written on
//! disk the way editors save them (in place; temp file + rename; truncate then write in
//! several events; backup-rename then write), checking the `! ` notices and the behaviour
//! before and after. Waits are for a notice with a timeout; the only fixed waits are the short
//! settle times that check a second reload did *not* happen. More cases: `reload_more.rs`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::{Mypi, Running, TestDir};

use super::wire::no_panic;

/// Longest wait for a notice or an answer.
pub const WAIT: Duration = Duration::from_secs(5);
/// After a reload notice: how long to watch for a second (unwanted) one.
pub const SETTLE: Duration = Duration::from_millis(300);

/// `.agents/extensions/<rel>`.
pub fn ext_rel(rel: &str) -> String {
    format!(".agents/extensions/{rel}")
}

/// Starts the REPL in `dir` (faux model, no session file) and waits until it is ready.
pub fn start(dir: &TestDir, args: &[&str]) -> Running {
    let mut m = Mypi::new(dir).arg("--no-session").args(args).spawn();
    m.wait_for_line("mypi ", WAIT);
    // A command is answered only once start-up (extensions, the watcher) is done.
    m.send_line("/help");
    m.wait_for_line("Anything else is sent to the model.", WAIT);
    m
}

/// Sends `line` and waits for an output line containing `expect`.
pub fn ask(m: &mut Running, line: &str, expect: &str) -> String {
    m.send_line(line);
    m.wait_for_line(expect, WAIT)
}

/// How many times `needle` appears in stdout so far.
pub fn count(m: &Running, needle: &str) -> usize {
    m.stdout_so_far().matches(needle).count()
}

/// Waits `SETTLE`, then asserts stdout holds `needle` exactly `n` times.
pub fn settle_and_count(m: &Running, needle: &str, n: usize) {
    std::thread::sleep(SETTLE);
    assert_eq!(count(m, needle), n, "{needle:?}\n{}", m.stdout_so_far());
}

/// Editor style 1: write in place (open, truncate, write, close).
pub fn save_in_place(path: &Path, content: &str) {
    std::fs::write(path, content).unwrap();
}

/// Editor style 2: write a temp file next to it, then rename it over the original.
pub fn save_by_rename(path: &Path, content: &str) {
    let tmp = tmp_name(path, "tmp");
    std::fs::write(&tmp, content).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// Editor style 3: truncate, then write in three pieces (several modify events).
pub fn save_truncate_then_write(path: &Path, content: &str) {
    let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_len(0).unwrap();
    f.sync_all().unwrap();
    let bytes = content.as_bytes();
    let third = bytes.len() / 3;
    for piece in [
        &bytes[..third],
        &bytes[third..2 * third],
        &bytes[2 * third..],
    ] {
        std::thread::sleep(Duration::from_millis(5));
        f.write_all(piece).unwrap();
        f.flush().unwrap();
    }
}

/// Editor style 4 (vim with `backupcopy=no`): rename the original to a backup, write a new
/// file under the name, remove the backup.
pub fn save_backup_then_write(path: &Path, content: &str) {
    let backup = tmp_name(path, "bak~");
    std::fs::rename(path, &backup).unwrap();
    std::fs::write(path, content).unwrap();
    std::fs::remove_file(&backup).unwrap();
}

/// One of the `save_*` functions.
type SaveFn = fn(&Path, &str);

fn tmp_name(path: &Path, suffix: &str) -> PathBuf {
    let name = path.file_name().unwrap().to_string_lossy();
    path.with_file_name(format!("{name}.{suffix}"))
}

/// A Lua extension with 2 tools, 1 command (`/ver` -> `ver=<v>`) and 3 handlers (the `input`
/// one notifies `input seen by <v>`).
pub fn lua_x(v: &str) -> String {
    format!(
        r#"local V = "{v}"
api.tool{{name = "x_one", description = "one", parameters = {{type = "object", properties = {{}}}},
  execute = function() return "one " .. V end}}
api.tool{{name = "x_two", description = "two", parameters = {{type = "object", properties = {{}}}},
  execute = function() return "two " .. V end}}
api.command("ver", function() return "ver=" .. V end, "which version")
api.on("input", function(e) api.notify("input seen by " .. V) end)
api.on("turn_start", function() end)
api.on("agent_end", function() end)
"#
    )
}

const X_COUNTS: &str = "reloaded x.lua: 2 tools, 1 command, 3 handlers";

#[test]
fn saving_in_place_reloads_once_and_the_next_command_uses_the_new_code() {
    let dir = TestDir::new();
    let x = dir.write(&ext_rel("x.lua"), &lua_x("v1"));
    let mut m = start(&dir, &[]);
    ask(&mut m, "/ver", "ver=v1");
    ask(&mut m, "hello", "input seen by v1");

    let t = Instant::now();
    save_in_place(&x, &lua_x("v2"));
    let line = m.wait_for_line("! reloaded x.lua", WAIT);
    let took = t.elapsed();
    assert_eq!(line, format!("! {X_COUNTS}"));
    // The issue asks for a quarter second; allow slack for a loaded test machine (the
    // benchmark measures the real figure).
    assert!(took < Duration::from_secs(1), "reload took {took:?}");
    ask(&mut m, "/ver", "ver=v2");
    ask(&mut m, "hello again", "input seen by v2");
    settle_and_count(&m, "reloaded x.lua", 1);
    assert_eq!(count(&m, "input seen by v1"), 1, "{}", m.stdout_so_far());

    m.send_line("/quit");
    let out = m.wait();
    out.ok();
    no_panic(&out.stderr);
}

#[test]
fn every_editor_save_style_triggers_exactly_one_reload() {
    let dir = TestDir::new();
    let x = dir.write(&ext_rel("x.lua"), &lua_x("v1"));
    // Only x is listed (the shipped extensions would add lines of their own).
    let mut m = start(&dir, &["--no-builtin-extensions"]);
    ask(&mut m, "/ver", "ver=v1");
    let styles: [(&str, SaveFn); 4] = [
        ("temp file + rename", save_by_rename),
        ("truncate then write", save_truncate_then_write),
        ("backup rename + write", save_backup_then_write),
        ("in place", save_in_place),
    ];
    for (n, (style, save)) in styles.iter().enumerate() {
        let v = format!("v{}", n + 2);
        save(&x, &lua_x(&v));
        m.wait_for_line(X_COUNTS, WAIT);
        ask(&mut m, "/ver", &format!("ver={v}"));
        std::thread::sleep(SETTLE);
        let out = m.stdout_so_far();
        assert_eq!(
            out.matches("reloaded x.lua").count(),
            n + 1,
            "{style}: one reload per save\n{out}"
        );
        assert!(!out.contains("unloaded"), "{style}: never unloaded\n{out}");
        assert!(
            !out.contains("! loaded x.lua"),
            "{style}: not a fresh load\n{out}"
        );
    }
    // The temp and backup files never showed up as extensions.
    m.send_line("/extensions");
    m.wait_for_line("Extensions:", WAIT);
    let listed = m.wait_for_line("(lua, ", WAIT);
    assert!(listed.contains("x (lua"), "{listed}");
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(count(&m, "(lua, "), 2, "start-up line + one listed");
    m.wait().ok();
}

#[test]
fn ten_saves_in_a_hundred_milliseconds_reload_once_or_twice_and_the_last_wins() {
    let dir = TestDir::new();
    let x = dir.write(&ext_rel("x.lua"), &lua_x("v0"));
    let mut m = start(&dir, &[]);
    ask(&mut m, "/ver", "ver=v0");
    let t = Instant::now();
    // On a busy machine a save can come a debounce or more after the one before; each such
    // gap (and each half second of saving, the longest a batch waits) may start a batch.
    let mut spread_out = 0;
    let mut last = Instant::now();
    for i in 1..=10 {
        if i > 1 && last.elapsed() >= mypi::extensions::reload::DEBOUNCE {
            spread_out += 1;
        }
        save_in_place(&x, &lua_x(&format!("v{i}")));
        last = Instant::now();
        std::thread::sleep(Duration::from_millis(9));
    }
    let batches_allowed = 2 + spread_out + (t.elapsed().as_millis() / 500) as usize;
    m.wait_for_line("! reloaded x.lua", WAIT);
    std::thread::sleep(SETTLE);
    let reloads = count(&m, "reloaded x.lua");
    assert!(
        (1..=batches_allowed).contains(&reloads),
        "{reloads} reloads for saves over {:?} ({spread_out} gaps of a debounce)\n{}",
        t.elapsed(),
        m.stdout_so_far()
    );
    ask(&mut m, "/ver", "ver=v10");
    m.wait().ok();
}

#[test]
fn a_broken_save_keeps_the_previous_version_until_it_is_fixed() {
    let dir = TestDir::new();
    let x = dir.write(&ext_rel("x.lua"), &lua_x("v1"));
    let mut m = start(&dir, &[]);
    ask(&mut m, "/ver", "ver=v1");

    // A syntax error on line 3.
    let broken = "local V = \"v2\"\napi.command(\"ver\", function() return V end)\nlocal = 1\n";
    save_in_place(&x, broken);
    let err = m.wait_for_line("kept the previous version of x.lua", WAIT);
    assert!(err.starts_with("! "), "{err}");
    assert!(
        err.contains(&format!("{}:", x.display())),
        "names the file: {err}"
    );
    assert!(err.contains("x.lua:3:"), "and the line: {err}");
    // The old command, tools and handlers still work.
    ask(&mut m, "/ver", "ver=v1");
    ask(&mut m, "still there?", "input seen by v1");
    m.send_line("/tools");
    m.wait_for_line("x_one", WAIT);
    m.wait_for_line("x_two", WAIT);

    // A failing top level (error on line 10, after some registrations).
    let failing = format!("{}error(\"top level boom\")\n", lua_x("v3"));
    save_in_place(&x, &failing);
    let err = m.wait_for_line("kept the previous version of x.lua", WAIT);
    assert!(err.contains("x.lua:10:"), "{err}");
    assert!(err.contains("top level boom"), "{err}");
    ask(&mut m, "/ver", "ver=v1");
    m.send_line("/extensions");
    let listed = m.wait_for_line("x (lua", WAIT);
    assert!(
        listed.contains("2 tools, 1 command, 3 handlers"),
        "the half-run top level registered nothing: {listed}"
    );
    // It says the reload failed and the previous version runs, with the file and line
    // (issue 34).
    assert!(
        listed.contains("— its last reload failed, the previous version runs: ")
            && listed.contains("x.lua:10:"),
        "{listed}"
    );

    // Fixed: it reloads.
    save_in_place(&x, &lua_x("v4"));
    m.wait_for_line(X_COUNTS, WAIT);
    m.send_line("/extensions");
    let listed = m.wait_for_line("x (lua", WAIT);
    assert!(!listed.contains("reload failed"), "{listed}");
    ask(&mut m, "/ver", "ver=v4");
    ask(&mut m, "and now?", "input seen by v4");
    assert_eq!(count(&m, "reloaded x.lua"), 1);
    m.wait().ok();
}

#[test]
fn deleting_or_renaming_to_underscore_unloads_and_a_new_file_or_folder_loads() {
    let dir = TestDir::new();
    let x = dir.write(&ext_rel("x.lua"), &lua_x("v1"));
    let y = dir.write(
        &ext_rel("y.lua"),
        r#"api.command("why", function() return "y here" end)"#,
    );
    let mut m = start(&dir, &[]);
    ask(&mut m, "/ver", "ver=v1");
    ask(&mut m, "/why", "y here");

    std::fs::remove_file(&x).unwrap();
    m.wait_for_line("! unloaded x.lua", WAIT);
    ask(&mut m, "/ver", "unknown command /ver");
    ask(&mut m, "hi", "hi");
    m.send_line("/tools");
    m.wait_for_line("Tools:", WAIT);
    ask(&mut m, "/why", "y here");
    assert!(!m.stdout_so_far().contains("x_one ["), "tools gone");
    assert!(!m.stdout_so_far().contains("input seen by"), "handler gone");

    let hidden = y.with_file_name("_y.lua");
    std::fs::rename(&y, &hidden).unwrap();
    m.wait_for_line("! unloaded y.lua", WAIT);
    ask(&mut m, "/why", "unknown command /why");
    std::fs::rename(&hidden, &y).unwrap();
    let loaded = m.wait_for_line("! loaded y.lua", WAIT);
    assert!(
        loaded.contains("0 tools, 1 command, 0 handlers"),
        "{loaded}"
    );
    ask(&mut m, "/why", "y here");

    // A new file, and a new sub-folder with two files in it.
    dir.write(&ext_rel("x.lua"), &lua_x("v5"));
    m.wait_for_line("! loaded x.lua: 2 tools, 1 command, 3 handlers", WAIT);
    ask(&mut m, "/ver", "ver=v5");
    dir.write(
        &ext_rel("sub/w.rhai"),
        r#"api.command("w", |args| "w says " + args);"#,
    );
    dir.write(
        &ext_rel("sub/deeper/z.lua"),
        r#"api.command("zz", function() return "zz here" end)"#,
    );
    m.wait_for_line("! loaded sub/", WAIT);
    ask(&mut m, "/w hi", "w says hi");
    ask(&mut m, "/zz", "zz here");
    let out = m.stdout_so_far();
    assert_eq!(out.matches("! loaded sub/w.rhai").count(), 1, "{out}");
    assert_eq!(out.matches("! loaded sub/deeper/z.lua").count(), 1, "{out}");
    m.wait().ok();
}

#[test]
fn editing_a_required_module_reloads_the_scripts_that_use_it() {
    let dir = TestDir::new();
    dir.write(&ext_rel("_util.lua"), "return { word = \"alpha\" }\n");
    for name in ["a", "b"] {
        dir.write(
            &ext_rel(&format!("{name}.lua")),
            &format!(
                "local util = require(\"_util\")\napi.command(\"{name}\", function() return \"{name}:\" .. util.word end)\n"
            ),
        );
    }
    dir.write(
        &ext_rel("c.lua"),
        r#"api.command("c", function() return "c:plain" end)"#,
    );
    dir.write(&ext_rel("_helper.rhai"), "fn word() { \"one\" }\n");
    dir.write(
        &ext_rel("r.rhai"),
        "import \"_helper\" as h;\napi.command(\"r\", |args| \"r:\" + h::word());\n",
    );
    let mut m = start(&dir, &[]);
    ask(&mut m, "/a", "a:alpha");
    ask(&mut m, "/b", "b:alpha");
    ask(&mut m, "/r", "r:one");

    save_in_place(
        &dir.join(&ext_rel("_util.lua")),
        "return { word = \"beta\" }\n",
    );
    m.wait_for_line("! reloaded a.lua", WAIT);
    m.wait_for_line("! reloaded b.lua", WAIT);
    ask(&mut m, "/a", "a:beta");
    ask(&mut m, "/b", "b:beta");
    ask(&mut m, "/c", "c:plain");
    settle_and_count(&m, "! reloaded", 2);

    save_by_rename(
        &dir.join(&ext_rel("_helper.rhai")),
        "fn word() { \"two\" }\n",
    );
    m.wait_for_line("! reloaded r.rhai", WAIT);
    ask(&mut m, "/r", "r:two");
    settle_and_count(&m, "! reloaded", 3);

    // A broken module: the users keep their previous version.
    save_in_place(&dir.join(&ext_rel("_util.lua")), "return { word = \n");
    m.wait_for_line("kept the previous version of a.lua", WAIT);
    m.wait_for_line("kept the previous version of b.lua", WAIT);
    ask(&mut m, "/a", "a:beta");
    save_in_place(
        &dir.join(&ext_rel("_util.lua")),
        "return { word = \"gamma\" }\n",
    );
    m.wait_for_line("! reloaded a.lua", WAIT);
    m.wait_for_line("! reloaded b.lua", WAIT);
    ask(&mut m, "/b", "b:gamma");
    m.wait().ok();
}
