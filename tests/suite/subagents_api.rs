//! Child agents and completions called from a script's own commands and tools (issue 10):
//! `api.complete` on both wire formats and with a conversation, `api.run_agents` from Lua and
//! Rhai commands, a Rhai tool running a child, an aborted run's children, and usage counted
//! across children. The rest of the subagent tests are in `subagents.rs`.

use std::time::Duration;

use serde_json::{json, Value};

use super::ext_util::install;
use super::subagents::{roles, session_lines, tool_result, DELEGATE};
use super::wire::user_texts;
use crate::common::{FakeAnthropic, FakeOpenAi, Mypi, Reply, TestDir};

/// `/sum TEXT` summarizes TEXT with one model call.
const SUMMARY: &str = r#"api.command("sum", function(text)
  local r = api.complete{ prompt = "Summarize: " .. text, system_prompt = "be short", max_tokens = 50 }
  return r.text .. " [" .. r.usage.input_tokens .. "/" .. r.usage.output_tokens .. "]"
end)"#;

#[test]
fn complete_makes_one_call_without_tools_on_chat_completions() {
    let dir = TestDir::new();
    install(&dir, "sum.lua", SUMMARY);
    let fake = FakeOpenAi::with_replies(vec![Reply::text("short").usage(7, 3)]);
    let out = Mypi::new(&dir)
        .openai(&fake)
        .args(["-p", "/sum the long story"])
        .run();
    out.ok();
    assert_eq!(out.stdout.trim(), "short [7/3]");
    let body = &fake.requests()[0].body;
    assert_eq!(body["max_tokens"], 50);
    assert!(body.get("tools").is_none(), "{body}");
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "be short"})
    );
    assert_eq!(
        user_texts(&fake.requests()[0]),
        ["Summarize: the long story"]
    );
}

#[test]
fn complete_makes_one_call_without_tools_on_anthropic() {
    let dir = TestDir::new();
    install(&dir, "sum.lua", SUMMARY);
    let fake = FakeAnthropic::with_replies(vec![Reply::text("brief").usage(9, 2)]);
    let out = Mypi::new(&dir)
        .anthropic(&fake)
        .args(["-p", "/sum a tale"])
        .run();
    out.ok();
    assert_eq!(out.stdout.trim(), "brief [9/2]");
    let body = &fake.requests()[0].body;
    assert_eq!(body["max_tokens"], 50);
    assert_eq!(body["system"][0]["text"], "be short");
    assert!(body.get("tools").is_none(), "{body}");
    assert_eq!(
        body["messages"][0]["content"][0]["text"],
        "Summarize: a tale"
    );
}

/// `/fan` runs two children two at a time and joins their answers, in Lua and in Rhai.
const LUA_FAN: &str = r#"api.command("fan", function()
  local rs = api.run_agents{ { task = "first", name = "one" }, { task = "second" }, concurrency = 2 }
  return rs[1].text .. "+" .. rs[2].text .. " turns=" .. rs[1].turns
end)"#;
const RHAI_FAN: &str = r#"api.command("fan", |args| {
  let rs = api.run_agents([#{ task: "first", name: "one" }, #{ task: "second" }], #{ concurrency: 2 });
  `${rs[0].text}+${rs[1].text} turns=${rs[0].turns}`
});"#;

fn fan(file: &str, source: &str) {
    let dir = TestDir::new();
    install(&dir, file, source);
    let fake = FakeOpenAi::with_replies(vec![
        Reply::text("same").after(Duration::from_millis(100)),
        Reply::text("same").after(Duration::from_millis(100)),
    ]);
    let out = Mypi::new(&dir).openai(&fake).args(["-p", "/fan"]).run();
    out.ok();
    assert_eq!(out.stdout.trim(), "same+same turns=1", "{}", out.describe());
    let mut tasks: Vec<String> = fake
        .requests()
        .iter()
        .map(|r| user_texts(r)[0].clone())
        .collect();
    tasks.sort();
    assert_eq!(tasks, ["first", "second"]);
    // A command's children are kept too, in order, with no tool call to sit under.
    let lines = session_lines(&dir);
    let children: Vec<&Value> = lines.iter().filter(|l| l["type"] == "child").collect();
    assert_eq!(children.len(), 2, "{lines:?}");
    assert_eq!(children[0]["child"]["task"], "first");
    assert!(children[0]["child"].get("tool_call_id").is_none());
}

#[test]
fn run_agents_from_a_lua_command() {
    fan("fan.lua", LUA_FAN);
}

#[test]
fn run_agents_from_a_rhai_command() {
    fan("fan.rhai", RHAI_FAN);
}

#[test]
fn complete_takes_a_conversation() {
    let dir = TestDir::new();
    install(
        &dir,
        "ask.lua",
        r#"api.command("ask", function()
  local r = api.complete{ messages = {
    { role = "user", content = "what is 2+2?" },
    { role = "assistant", content = "4" },
    { role = "user", content = "and times 3?" },
  } }
  return r.text
end)"#,
    );
    let fake = FakeOpenAi::with_replies(vec![Reply::text("12")]);
    let out = Mypi::new(&dir).openai(&fake).args(["-p", "/ask"]).run();
    out.ok();
    assert_eq!(out.stdout.trim(), "12");
    let body = &fake.requests()[0].body;
    assert_eq!(
        roles(body),
        ["user", "assistant", "user"],
        "no system prompt was given"
    );
    assert_eq!(body["messages"][2]["content"], "and times 3?");
    // A bad role is the script's error, named.
    install(
        &dir,
        "ask.lua",
        r#"api.command("ask", function() return api.complete{ messages = { { role = "robot", content = "x" } } }.text end)"#,
    );
    let out = Mypi::new(&dir).openai(&fake).args(["-p", "/ask"]).run();
    out.expect_code(1);
    assert!(
        out.stderr.contains(
            "api.complete: message 1: the role must be user, assistant or system, not robot"
        ),
        "{}",
        out.describe()
    );
    assert_eq!(fake.request_count(), 1);
}

#[test]
fn children_of_an_aborted_run_send_nothing() {
    let dir = TestDir::new();
    install(
        &dir,
        "fan.lua",
        r#"api.tool{ name = "fan", description = "d", parameters = { type = "object" },
  execute = function(args, ctx)
    ctx.abort()
    local rs = api.run_agents{ { task = "a" }, { task = "b" }, { task = "c" } }
    return rs[1].error .. " / " .. rs[3].error
  end }"#,
    );
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([("p1", "fan", json!({}))]),
        Reply::text("never"),
    ]);
    let out = Mypi::new(&dir).openai(&fake).args(["-p", "go"]).run();
    assert_ne!(out.code, 0, "{}", out.describe());
    assert!(out.stderr.contains("cancelled"), "{}", out.describe());
    assert_eq!(
        fake.request_count(),
        1,
        "a child sent a request after the abort"
    );
}

#[test]
fn a_rhai_tool_runs_a_child_agent() {
    let dir = TestDir::new();
    install(
        &dir,
        "delegate.rhai",
        r#"api.tool(#{ name: "delegate", description: "run a child", parameters: #{ type: "object" },
  execute: |args, ctx| {
    let r = api.run_agent(#{ task: "say hi", name: "helper", tools: [], max_turns: 2 });
    if r.error != () { return `failed: ${r.error}`; }
    `${r.text} (${r.turns} turn, ${r.usage.input_tokens} in)`
  } });"#,
    );
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([("p1", "delegate", json!({}))]),
        Reply::text("hi").usage(11, 2),
        Reply::text("done"),
    ]);
    let out = Mypi::new(&dir).openai(&fake).args(["-p", "go"]).run();
    out.ok();
    let reqs = fake.requests();
    assert!(reqs[1].body.get("tools").is_none(), "no tools were given");
    assert_eq!(tool_result(&reqs[2]), "hi (1 turn, 11 in)");
}

/// Issue 34, point 2: every model call counts. A run with a child and a script's
/// `api.complete` reports what the server billed for all of it, split by what spent it.
#[test]
fn a_runs_usage_counts_its_children_and_completions() {
    let dir = TestDir::new();
    install(&dir, "delegate.lua", DELEGATE);
    install(
        &dir,
        "summarise.lua",
        r#"api.on("agent_end", function(e, ctx)
  if ctx.depth == 0 then api.complete{ prompt = "sum it up" } end
end)"#,
    );
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([("call_1", "delegate", json!({"task": "count the files"}))])
            .usage(1000, 10),
        Reply::text("three files").usage(1100, 50),
        Reply::text("parent done").usage(1100, 5),
        Reply::text("summary").usage(300, 7),
    ]);
    let out = Mypi::new(&dir)
        .openai(&fake)
        .args(["-p", "--json", "go"])
        .run();
    let stdout = &out.ok().stdout;
    let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "final", "{stdout}");
    assert_eq!(fake.requests().len(), 4);
    assert_eq!(last["usage"]["input_tokens"], 3500, "{last}");
    assert_eq!(last["usage"]["output_tokens"], 72, "{last}");
    assert_eq!(
        last["usage_by"],
        json!([
            {"by": "agent", "usage": {"input_tokens": 2100, "output_tokens": 15}},
            {"by": "subagents", "usage": {"input_tokens": 1100, "output_tokens": 50}},
            {"by": "api.complete", "usage": {"input_tokens": 300, "output_tokens": 7}},
        ]),
        "{last}"
    );
    assert_eq!(last["session_usage"], last["usage"], "{last}");
    // A resumed session keeps those totals (its messages alone show only the agent's).
    let out = Mypi::new(&dir)
        .openai(&fake)
        .args(["--continue", "-p", "/session"])
        .run();
    let stdout = &out.ok().stdout;
    assert!(
        stdout.contains("Tokens this session: 3500 in, 72 out"),
        "{stdout}"
    );
}
