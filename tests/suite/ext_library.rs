//! The small script library through the binary, as a user runs it (`mypi -p "/cmd ..."`):
//! Lua's `fs` module, Rhai's `regex_*` and `env`, their failures (a missing file, a file
//! past the size limit, a FIFO, a bad pattern), and the `todo_scan` examples that use them.

use std::time::{Duration, Instant};

use crate::common::{Mypi, Output, TestDir};

use super::ext_util::{install, install_example};

/// `mypi --provider faux -p "/CMD"` in `dir`.
fn slash(dir: &TestDir, cmd: &str) -> Output {
    slash_with(Mypi::new(dir), cmd)
}

fn slash_with(mypi: Mypi, cmd: &str) -> Output {
    mypi.args(["--provider", "faux", "-p", cmd]).run()
}

/// A command that fails: exit code 1, `want` (each part) on stderr.
fn fails(out: &Output, want: &[&str]) {
    out.expect_code(1);
    for w in want {
        assert!(out.stderr.contains(w), "no {w:?} in\n{}", out.describe());
    }
}

const FS_LUA: &str = r#"local fs = require("fs")
api.command("ls", function(a) return table.concat(fs.list(a), ",") end)
api.command("cat", function(a)
  return fs.read(a)
end)
api.command("put", function(a)
  local name, text = a:match("^(%S+)%s+(.*)$")
  fs.write(name, text)
  return ("%s %s %s"):format(fs.exists(name), fs.is_dir(name), fs.is_dir("out"))
end)
api.command("io", function(a)
  local f = assert(io.open(a, "w"))
  f:write("via io.open")
  f:close()
  return fs.read(a)
end)
"#;

#[test]
fn lua_fs_lists_reads_and_writes_in_print_mode() {
    let dir = TestDir::new();
    install(&dir, "fs.lua", FS_LUA);
    dir.write("d/b.md", "bee");
    dir.write("d/a.md", "");
    dir.write("d/.hidden", "");
    dir.write("d/sub/x", "");
    dir.write("home/mine/u.md", "mine");
    let ls = |arg: &str| {
        let out = slash(&dir, &format!("/ls {arg}"));
        out.ok();
        out.stdout.trim().to_string()
    };
    assert_eq!(ls("d"), ".hidden,a.md,b.md,sub/");
    assert_eq!(ls("~/mine"), "u.md");
    assert_eq!(ls("missing"), "");
    let out = slash(&dir, "/cat d/b.md");
    assert_eq!(out.ok().stdout.trim(), "bee");
    let out = slash(&dir, "/cat ~/mine/u.md");
    assert_eq!(out.ok().stdout.trim(), "mine");
    let out = slash(&dir, "/put out/new.txt hello world");
    assert_eq!(out.ok().stdout.trim(), "true false true");
    assert_eq!(dir.read("out/new.txt"), "hello world");
    // io.open's relative paths are against the same folder.
    let out = slash(&dir, "/io rel.txt");
    assert_eq!(out.ok().stdout.trim(), "via io.open");
    assert_eq!(dir.read("rel.txt"), "via io.open");
}

#[test]
fn lua_fs_failures_are_reported_at_the_scripts_line() {
    let dir = TestDir::new();
    let script = install(&dir, "fs.lua", FS_LUA).display().to_string();
    let at = format!("{script}:4: fs.read: cannot read ");
    dir.write("d/a.md", "");

    let out = slash(&dir, "/cat missing.txt");
    fails(&out, &[&at, "missing.txt: No such file or directory"]);

    std::fs::write(dir.join("big.txt"), vec![b'a'; (16 << 20) + 1]).unwrap();
    let out = slash(&dir, "/cat big.txt");
    fails(&out, &[&at, "big.txt: it is larger than 16 MiB"]);

    std::fs::write(dir.join("bin.dat"), [b'o', b'k', 0xff, 0xfe]).unwrap();
    let out = slash(&dir, "/cat bin.dat");
    fails(&out, &[&at, "bin.dat: it is not UTF-8 text"]);

    let fifo = dir.join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.unwrap().success());
    let start = Instant::now();
    let out = slash(&dir, "/cat pipe");
    fails(&out, &[&at, "pipe: not a regular file"]);
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "the read blocked"
    );

    let out = slash(&dir, "/ls d/a.md");
    fails(
        &out,
        &[&format!("{script}:2: fs.list: cannot list "), "d/a.md"],
    );
}

const TEXT_RHAI: &str = r#"api.command("redact", |text| regex_replace("(sk|pk)-[A-Za-z0-9]{8,}", text, "$1-***"));
api.command("who", |name| {
  let v = env(name);
  if v == () { `${name} is not set` } else { `${name}=${v}` }
});
api.command("grep", |args| {
  let parts = regex_find("^(\\S+) (.*)$", args);
  if regex_match(parts[1], parts[2]) { "yes" } else { "no" }
});
"#;

#[test]
fn rhai_regex_and_env_in_print_mode() {
    let dir = TestDir::new();
    let script = install(&dir, "text.rhai", TEXT_RHAI).display().to_string();
    let out = slash(
        &dir,
        "/redact keys sk-abcdefgh12 and pk-ZYXWVUTS9 but not sk-short",
    );
    assert_eq!(
        out.ok().stdout.trim(),
        "keys sk-*** and pk-*** but not sk-short"
    );
    let with_env = Mypi::new(&dir).env("MYPI_TEST_WHO", "alice");
    let out = slash_with(with_env, "/who MYPI_TEST_WHO");
    assert_eq!(out.ok().stdout.trim(), "MYPI_TEST_WHO=alice");
    let out = slash(&dir, "/who MYPI_TEST_WHO");
    assert_eq!(out.ok().stdout.trim(), "MYPI_TEST_WHO is not set");
    let out = slash(&dir, r"/grep ^\d+$ 2024");
    assert_eq!(out.ok().stdout.trim(), "yes");

    let out = slash(&dir, "/grep a(b text");
    fails(
        &out,
        &[&format!(
            "{script}:8: regex_match: invalid pattern `a(b`: unclosed group"
        )],
    );
}

/// A project with tagged comments in the places `todo_scan` looks and in the ones it skips.
fn todo_project() -> TestDir {
    let dir = TestDir::new();
    dir.write(
        "src/main.rs",
        "fn main() {\n    // TODO: handle errors\n    let x = 1; // FIXME\n    // HACK around it\n}\n",
    );
    dir.write("src/todo_list.rs", "let todo_add = 1; // not a TODOS tag\n");
    dir.write("notes.md", "XXX  check this \r\nplain line\n");
    dir.write(".git/config", "TODO hidden\n");
    dir.write("target/debug.txt", "TODO built\n");
    std::fs::write(dir.join("bin.dat"), [0xff, b' ', b'T', b'O', b'D', b'O']).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(dir.join("pipe"))
        .status();
    assert!(made.unwrap().success());
    dir
}

fn todo_scan_finds_the_tagged_comments(example: &str) {
    let dir = todo_project();
    install_example(&dir, example);
    let out = slash(&dir, "/todo_scan");
    assert_eq!(
        out.ok().stdout.trim(),
        "notes.md:1: XXX: check this\nsrc/main.rs:2: TODO: handle errors\nsrc/main.rs:3: FIXME",
        "{}",
        out.describe()
    );
    let hack = Mypi::new(&dir).env("MYPI_TODO_TAGS", "HACK, note");
    let out = slash_with(hack, "/todo_scan src");
    assert_eq!(out.ok().stdout.trim(), "src/main.rs:4: HACK: around it");
    dir.write("empty/.keep", "");
    let out = slash(&dir, "/todo_scan empty");
    assert_eq!(
        out.ok().stdout.trim(),
        "no comments tagged TODO, FIXME, XXX below empty"
    );
    let out = slash(&dir, "/todo_scan notes.md");
    fails(&out, &["cannot list ", "notes.md"]);
}

#[test]
fn todo_scan_in_rhai_finds_the_tagged_comments() {
    todo_scan_finds_the_tagged_comments("todo_scan.rhai");
}

#[test]
fn todo_scan_in_lua_finds_the_tagged_comments() {
    todo_scan_finds_the_tagged_comments("todo_scan.lua");
}
