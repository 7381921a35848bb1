//! Session access from scripts (issue 13, point 3), in Lua and in Rhai through the binary:
//! `api.append_entry` keeps data in the session file that the model never sees and that
//! `ctx.session.entries()` returns after `--continue`; `ctx.session.set_name` names the
//! session for `/session` and `mypi sessions`; a tool's `{content, details}` gives the model
//! the content and keeps the details with the result.

use serde_json::{json, Value};

use super::ext_util::install;
use super::wire::session_files;
use crate::common::{FakeOpenAi, Mypi, Output, Reply, TestDir};

const LUA: &str = r#"
api.tool{ name = "stats", description = "counts rows",
  execute = function() return { content = "42 rows", details = { rows = 42 } } end }
api.command("note", function(args) api.append_entry("note", { text = args }) return "noted" end)
api.command("name", function(args, ctx)
  ctx.session.set_name(args)
  return "named " .. tostring(ctx.session.name())
end)
api.command("notes", function(_, ctx)
  local notes, rows, msgs = {}, "none", 0
  for _, e in ipairs(ctx.session.entries()) do
    if e.type == "custom" and e.kind == "note" then notes[#notes + 1] = e.data.text end
    if e.type == "message" then
      msgs = msgs + 1
      if e.message.details then rows = tostring(e.message.details.rows) end
    end
  end
  return "notes=" .. table.concat(notes, ",") .. " rows=" .. rows .. " messages=" .. msgs
    .. " name=" .. tostring(ctx.session.name())
end)
api.command("badkind", function() api.append_entry("no spaces", 1) end)
"#;

const RHAI: &str = r#"
api.tool(#{ name: "stats", description: "counts rows",
  execute: |args, ctx| #{ content: "42 rows", details: #{ rows: 42 } } });
api.command("note", |args, ctx| { api.append_entry("note", #{ text: args }); "noted" });
api.command("name", |args, ctx| { ctx.session.set_name(args); `named ${ctx.session.name()}` });
api.command("notes", |args, ctx| {
  let notes = "";
  let rows = "none";
  let msgs = 0;
  for e in ctx.session.entries() {
    if e["type"] == "custom" && e.kind == "note" {
      notes = if notes == "" { e.data.text } else { notes + "," + e.data.text };
    }
    if e["type"] == "message" {
      msgs += 1;
      if e.message.details != () { rows = `${e.message.details.rows}`; }
    }
  }
  `notes=${notes} rows=${rows} messages=${msgs} name=${ctx.session.name()}`
});
api.command("badkind", |args, ctx| { api.append_entry("no spaces", 1); });
"#;

fn run(dir: &TestDir, fake: &FakeOpenAi, args: &[&str]) -> Output {
    Mypi::new(dir).openai(fake).args(args).run()
}

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn scenario(file: &str, source: &str) {
    let dir = TestDir::new();
    install(&dir, file, source);
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([("c1", "stats", json!({}))]),
        Reply::text("done"),
        Reply::text("second answer"),
    ]);
    run(&dir, &fake, &["-p", "count them"]).ok();
    let out = run(&dir, &fake, &["--continue", "-p", "/note first thing"]);
    assert_eq!(out.ok().stdout.trim(), "noted", "{}", out.describe());
    run(&dir, &fake, &["--continue", "-p", "/note second"]).ok();
    let out = run(
        &dir,
        &fake,
        &["--continue", "-p", "/name Refactor \x1b[31mwork"],
    );
    assert_eq!(out.ok().stdout.trim(), "named Refactor [31mwork");
    let out = run(&dir, &fake, &["--continue", "-p", "/notes"]);
    assert_eq!(
        out.ok().stdout.trim(),
        "notes=first thing,second rows=42 messages=4 name=Refactor [31mwork",
        "{}",
        out.describe()
    );
    // The model never sees the details or the custom entries; it saw the content.
    run(&dir, &fake, &["--continue", "-p", "and now?"]).ok();
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 3);
    let sent = reqs[2].body["messages"].to_string();
    assert!(sent.contains("42 rows"), "{sent}");
    assert!(
        !sent.contains("rows\":42") && !sent.contains("first thing"),
        "{sent}"
    );
    // The file holds them as the reference says, and one session was used throughout.
    let files = session_files(&dir);
    assert_eq!(files.len(), 1, "{files:?}");
    let entries = lines(&files[0]);
    let custom: Vec<&Value> = entries.iter().filter(|e| e["type"] == "custom").collect();
    assert_eq!(custom.len(), 2);
    assert_eq!(custom[0]["kind"], "note");
    assert_eq!(custom[0]["data"], json!({"text": "first thing"}));
    assert!(custom[0]["ts"].is_u64());
    let tool = entries
        .iter()
        .find(|e| e["message"]["role"] == "tool")
        .unwrap();
    assert_eq!(tool["message"]["details"], json!({"rows": 42}));
    // `/session` and the session list show the name.
    let out = run(&dir, &fake, &["--continue", "-p", "/session"]);
    assert!(
        out.ok().stdout.contains("Name: Refactor [31mwork"),
        "{}",
        out.describe()
    );
    let out = Mypi::new(&dir).args(["sessions"]).run();
    assert!(
        out.ok().stdout.contains("[Refactor [31mwork] count them"),
        "{}",
        out.describe()
    );
    // A bad kind is an error at the script's line, and nothing is written.
    let out = run(&dir, &fake, &["--continue", "-p", "/badkind"]);
    assert_eq!(out.code, 1, "{}", out.describe());
    assert!(
        out.stderr
            .contains("api.append_entry: the kind must be 1 to 200 letters, digits or _ - . : (not \"no spaces\")"),
        "{}",
        out.describe()
    );
    assert_eq!(
        lines(&files[0])
            .iter()
            .filter(|e| e["type"] == "custom")
            .count(),
        2
    );
}

#[test]
fn lua_entries_names_and_details_are_kept_in_the_session() {
    scenario("session.lua", LUA);
}

#[test]
fn rhai_entries_names_and_details_are_kept_in_the_session() {
    scenario("session.rhai", RHAI);
}

#[test]
fn entries_are_empty_before_the_first_message_and_with_no_session() {
    let dir = TestDir::new();
    install(&dir, "session.lua", LUA);
    let fake = FakeOpenAi::with_replies(vec![]);
    let out = run(&dir, &fake, &["--no-session", "-p", "/notes"]);
    assert_eq!(
        out.ok().stdout.trim(),
        "notes= rows=none messages=0 name=nil"
    );
    let out = run(&dir, &fake, &["-p", "/notes"]);
    assert_eq!(
        out.ok().stdout.trim(),
        "notes= rows=none messages=0 name=nil"
    );
    assert!(
        session_files(&dir).is_empty(),
        "a command alone writes no session"
    );
}
