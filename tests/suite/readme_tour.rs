//! The README's "Writing extensions" tour, run as written: every script block is written to
//! the file its first line names and checked, every `mypi ...` line of a `sh` block is run
//! with the binary in a fresh (untrusted) project, and a `text` block right after a `sh`
//! block is the output it must print. What the prose claims (hot reload, the tool, the
//! guard) is driven here too.

use std::path::PathBuf;

use serde_json::json;

use super::ext_util::WAIT;
use super::wire::tool_results;
use crate::common::{FakeOpenAi, Mypi, Reply, TestDir};

/// The fenced blocks of the README's "Writing extensions" section: (language, body).
fn tour_blocks() -> Vec<(String, String)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let readme = std::fs::read_to_string(path).unwrap();
    let start = readme.find("\n## Writing extensions\n").expect("the tour");
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    let mut blocks = Vec::new();
    let mut lines = rest[..end].lines();
    while let Some(line) = lines.next() {
        if let Some(lang) = line.strip_prefix("```") {
            let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
            blocks.push((lang.to_string(), body.join("\n")));
        }
    }
    blocks
}

/// A command line split as a shell would (double quotes only).
fn words(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[test]
fn the_writing_extensions_tour_runs_as_written() {
    let dir = TestDir::new();
    dir.untrust();
    let blocks = tour_blocks();
    assert!(blocks.len() >= 8, "{blocks:?}");
    let mut last_out: Option<String> = None;
    let mut checked = 0;
    for (lang, body) in &blocks {
        match lang.as_str() {
            "sh" => {
                let mut out = String::new();
                for line in body.lines() {
                    let w = words(line);
                    if w[0] == "mypi" {
                        let run = Mypi::new(&dir).args(&w[1..]).run();
                        assert!(run.success(), "{line}: {}", run.describe());
                        out.push_str(&run.stdout);
                    } else {
                        let ok = std::process::Command::new("sh")
                            .args(["-c", line])
                            .current_dir(dir.path())
                            .status()
                            .unwrap()
                            .success();
                        assert!(ok, "{line}");
                    }
                }
                last_out = Some(out);
            }
            "text" => {
                let out = last_out.take().expect("a text block follows a sh block");
                assert_eq!(
                    out.trim_end(),
                    body.trim_end(),
                    "output of the block before"
                );
            }
            "lua" | "rhai" => {
                let first = body.lines().next().unwrap();
                let file = first
                    .strip_prefix("-- ")
                    .or_else(|| first.strip_prefix("// "))
                    .expect("a script block starts with its path");
                dir.write(file, body);
                let out = Mypi::new(&dir).args(["ext", "check", file]).run();
                assert!(out.success(), "{file}: {}", out.describe());
                checked += 1;
                last_out = None;
            }
            other => panic!("a {other:?} block in the tour"),
        }
    }
    assert_eq!(checked, 2, "the Lua and the Rhai script");
    assert!(dir.exists(".agents/extensions/_types/mypi.lua"));
}

/// The tour's Lua script, as the README has it.
fn tour_script() -> String {
    tour_blocks()
        .into_iter()
        .find(|(lang, _)| lang == "lua")
        .map(|(_, body)| body)
        .unwrap()
}

#[test]
fn the_tours_tool_and_guard_do_what_it_says() {
    let dir = TestDir::new();
    dir.write(".agents/extensions/hello.lua", &tour_script());
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([
            ("c1", "word_count", json!({"text": "one two  three"})),
            ("c2", "bash", json!({"command": "git push origin main"})),
        ]),
        Reply::text("done"),
    ]);
    Mypi::new(&dir).openai(&fake).args(["-p", "go"]).run().ok();
    let results = tool_results(&fake.requests()[1]);
    assert_eq!(results[0].content, "3 words");
    assert_eq!(results[1].content, "blocked: pushing is for humans");
}

#[test]
fn the_tours_hot_reload_works_as_it_says() {
    let dir = TestDir::new();
    let script = tour_script();
    let file = dir.write(".agents/extensions/hello.lua", &script);
    let mut m = Mypi::new(&dir).args(["--provider", "faux"]).spawn();
    m.send_line("/hello");
    m.wait_for_line("hello world (repl mode)", WAIT);
    // Give the watcher its start before the save.
    std::thread::sleep(std::time::Duration::from_millis(300));
    std::fs::write(&file, script.replace("\"hello \"", "\"hi \"")).unwrap();
    m.wait_for_line("reloaded hello.lua: 1 tool, 1 command, 1 handler", WAIT);
    m.send_line("/hello");
    m.wait_for_line("hi world (repl mode)", WAIT);
    // A broken save: the error names the line, the last good version keeps working.
    std::fs::write(&file, "api.command(\"hello\",\n  function( end)\n").unwrap();
    m.wait_for_line("hello.lua:2", WAIT);
    m.send_line("/hello");
    m.wait_for_line("hi world (repl mode)", WAIT);
    m.send_line("/quit");
    m.wait().ok();
}
