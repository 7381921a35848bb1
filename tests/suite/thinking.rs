//! Thinking levels (issue 38, point 2): `--thinking`, `thinking = "…"` in the configuration
//! and `MYPI_THINKING`, `/thinking` in the REPL, and what each wire sends for a level (the
//! request bodies are pinned level by level in the providers' unit tests).

use crate::common::{FakeAnthropic, FakeOpenAi, Mypi, Reply, TestDir};

use super::ext_util::{faux, install, quit, WAIT};

#[test]
fn a_level_that_is_not_one_is_a_usage_error_naming_the_levels() {
    let dir = TestDir::new();
    let out = Mypi::new(&dir)
        .args(["--thinking", "max", "-p", "hi"])
        .run();
    out.expect_code(2);
    for level in ["off", "minimal", "low", "medium", "high"] {
        assert!(out.stderr.contains(level), "{}", out.describe());
    }
    let out = Mypi::new(&dir)
        .env("MYPI_THINKING", "lots")
        .args(["-p", "hi"])
        .run();
    out.expect_code(2);
    assert!(
        out.stderr.contains(
            "\"lots\" is not a thinking level: the levels are off, minimal, low, medium and high"
        ),
        "{}",
        out.describe()
    );
}

#[test]
fn the_level_from_the_flag_or_the_file_is_sent_unless_the_model_cannot_think() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![Reply::text("a"), Reply::text("b"), Reply::text("c")]);
    dir.write(
        "home/.agents/config.toml",
        &format!(
            "provider = \"local\"\nthinking = \"low\"\n[providers.local]\napi = \"openai\"\n\
             base_url = \"{}\"\nmodels = [\"thinker\", {{ name = \"plain\", thinking = false }}]\n",
            fake.url()
        ),
    );
    let run = |args: &[&str]| {
        Mypi::new(&dir)
            .args(["--no-session"])
            .args(args)
            .args(["-p", "hello"])
            .run()
            .ok();
    };
    run(&[]);
    run(&["--thinking", "high"]);
    run(&["--model", "plain"]);
    let bodies: Vec<_> = fake.requests().into_iter().map(|r| r.body).collect();
    assert_eq!(bodies[0]["reasoning_effort"], "low", "from the file");
    assert_eq!(bodies[1]["reasoning_effort"], "high", "the flag wins");
    assert!(bodies[2].get("reasoning_effort").is_none(), "{}", bodies[2]);
}

#[test]
fn anthropic_gets_a_thinking_budget_under_max_tokens_and_no_temperature() {
    let dir = TestDir::new();
    let fake = FakeAnthropic::with_replies(vec![Reply::text("ok")]);
    Mypi::new(&dir)
        .anthropic(&fake)
        .model("claude-sonnet-4-5")
        .args(["--no-session", "--thinking", "high", "-p", "hi"])
        .run()
        .ok();
    let body = &fake.requests()[0].body;
    assert_eq!(
        body["thinking"],
        serde_json::json!({"type": "enabled", "budget_tokens": 32000})
    );
    assert!(body["max_tokens"].as_u64().unwrap() > 32000, "{body}");
    assert!(body.get("temperature").is_none(), "{body}");
}

#[test]
fn the_repl_shows_sets_and_prints_the_last_reasoning() {
    let dir = TestDir::new();
    let replies = [serde_json::json!({
        "thinking": "First line of thought.\nSecond line of thought.",
        "text": "Done."
    })];
    let mut m = faux(&dir, &replies)
        .args(["--no-session", "--no-watch"])
        .spawn();
    m.send_line("/thinking");
    m.wait_for_line("Thinking: off", WAIT);
    m.send_line("/thinking medium");
    m.wait_for_line("Thinking: medium", WAIT);
    m.send_line("/thinking lots");
    m.wait_for_text("\"lots\" is not a thinking level", WAIT);
    m.send_line("/thinking show");
    m.wait_for_line("no reasoning in the last turn", WAIT);
    m.send_line("go");
    m.wait_for_line("Done.", WAIT);
    m.send_line("/thinking show");
    m.wait_for_line("Second line of thought.", WAIT);
    m.send_line("/quit");
    let out = m.wait();
    out.ok();
    let shown = out.stdout.rfind("First line of thought.").unwrap();
    assert!(
        shown > out.stdout.find("Done.").unwrap(),
        "{}",
        out.describe()
    );
}

/// With thinking on, the fake Messages API (like the real one) refuses a tool loop whose
/// assistant turn does not start with the thinking block it signed: mypi sends it back, as
/// it came, before the tool call.
#[test]
fn anthropic_thinking_blocks_go_back_signed_in_the_tool_loop() {
    let dir = TestDir::new();
    dir.write("a.txt", "hi from a\n");
    let fake = FakeAnthropic::with_replies(vec![
        Reply::tool_calls([("toolu_1", "read", serde_json::json!({"path": "a.txt"}))])
            .thinking("I should read a.txt.", "sig-1"),
        Reply::text("It says hi.").thinking("Done reading.", "sig-2"),
    ]);
    let out = Mypi::new(&dir)
        .anthropic(&fake)
        .model("claude-sonnet-4-5")
        .args([
            "--no-session",
            "--thinking",
            "low",
            "-p",
            "what is in a.txt?",
        ])
        .run();
    out.ok();
    assert_eq!(out.stdout.trim(), "It says hi.", "{}", out.describe());
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let assistant = &requests[1].body["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(
        assistant["content"][0],
        serde_json::json!({"type": "thinking", "thinking": "I should read a.txt.",
                           "signature": "sig-1"})
    );
    assert_eq!(assistant["content"][1]["type"], "tool_use");
    assert_eq!(assistant["content"][1]["id"], "toolu_1");
}

const LUA: &str = r#"
api.command("deep", function() api.set_thinking("high") return "asked" end)
api.command("level", function(_, ctx) return "level=" .. ctx.thinking end)
api.command("bogus", function() api.set_thinking("max") end)
"#;

const RHAI: &str = r#"
api.command("deep", |args, ctx| { api.set_thinking("high"); "asked" });
api.command("level", |args, ctx| "level=" + ctx.thinking);
api.command("bogus", |args, ctx| { api.set_thinking("max"); });
"#;

/// `api.set_thinking` sets the level after the call (the next request asks for it, `/thinking`
/// says it) and `ctx.thinking` reads it, in Lua and in Rhai.
fn scripts_scenario(file: &str, source: &str) {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![Reply::text("thought hard")]);
    install(&dir, file, source);
    let mut m = Mypi::new(&dir)
        .openai(&fake)
        .args(["--no-session", "--no-watch"])
        .spawn();
    m.send_line("/level");
    m.wait_for_line("level=off", WAIT);
    m.send_line("/deep");
    m.wait_for_line("asked", WAIT);
    m.send_line("/level");
    m.wait_for_line("level=high", WAIT);
    m.send_line("/thinking");
    m.wait_for_line("Thinking: high", WAIT);
    m.send_line("hello");
    m.wait_for_line("thought hard", WAIT);
    assert_eq!(fake.requests()[0].body["reasoning_effort"], "high");
    m.send_line("/bogus");
    m.wait_for_text(
        "\"max\" is not a thinking level; the levels are off, minimal, low, medium, high",
        WAIT,
    );
    quit(m);
}

#[test]
fn lua_sets_and_reads_the_thinking_level() {
    scripts_scenario("think.lua", LUA);
}

#[test]
fn rhai_sets_and_reads_the_thinking_level() {
    scripts_scenario("think.rhai", RHAI);
}

const LUA_UPDATES: &str = r#"
local seen = { kinds = {}, thinking = "", delta = "", mixed = false }
api.on("message_update", function(e)
  if e.kind ~= seen.kinds[#seen.kinds] then table.insert(seen.kinds, e.kind) end
  seen.thinking = seen.thinking .. (e.thinking or "")
  seen.delta = seen.delta .. e.delta
  if e.text:find("Weigh", 1, true) or e.delta:find("Weigh", 1, true) then seen.mixed = true end
end)
api.command("seen", function()
  return "kinds=" .. table.concat(seen.kinds, ",") .. " thinking=[" .. seen.thinking
    .. "] delta=[" .. seen.delta .. "] mixed=" .. tostring(seen.mixed)
end)
"#;

const RHAI_UPDATES: &str = r#"
api.state.kinds = []; api.state.thinking = ""; api.state.delta = ""; api.state.mixed = false;
api.on("message_update", |e| {
  if api.state.kinds.len() == 0 || api.state.kinds[-1] != e.kind { api.state.kinds.push(e.kind); }
  if e.kind == "thinking" { api.state.thinking += e.thinking; }
  api.state.delta += e.delta;
  if e.text.contains("Weigh") || e.delta.contains("Weigh") { api.state.mixed = true; }
});
api.command("seen", |args, ctx| {
  let kinds = api.state.kinds.reduce(|acc, k| if acc == "" { k } else { acc + "," + k }, "");
  `kinds=${kinds} thinking=[${api.state.thinking}] delta=[${api.state.delta}] mixed=${api.state.mixed}`
});
"#;

/// Streamed reasoning reaches scripts as `message_update`s of kind `thinking` (the piece in
/// `thinking`, `delta` empty), before the reply's own of kind `text`: a handler reading
/// `delta` and `text` never sees the reasoning.
fn thinking_updates_scenario(file: &str, source: &str) {
    let dir = TestDir::new();
    install(&dir, file, source);
    let replies = [serde_json::json!({
        "thinking": "Weigh the options first.",
        "text": "The answer is 4."
    })];
    let mut m = faux(&dir, &replies)
        .args(["--no-session", "--no-watch"])
        .spawn();
    m.send_line("what is 2+2?");
    m.wait_for_line("The answer is 4.", WAIT);
    m.send_line("/seen");
    m.wait_for_line(
        "kinds=thinking,text thinking=[Weigh the options first.] delta=[The answer is 4.] \
         mixed=false",
        WAIT,
    );
    quit(m);
}

#[test]
fn lua_gets_thinking_as_message_updates_of_their_own_kind() {
    thinking_updates_scenario("updates.lua", LUA_UPDATES);
}

#[test]
fn rhai_gets_thinking_as_message_updates_of_their_own_kind() {
    thinking_updates_scenario("updates.rhai", RHAI_UPDATES);
}

/// Claude 4 models up to 4.5 think between tool calls only with the interleaved-thinking beta:
/// it is sent when thinking is on and tools are offered, and never to a model that refuses it
/// (the fake, like the real API, answers 400 to it for Claude 3.7 and from 4.6 on).
#[test]
fn the_interleaved_thinking_beta_goes_to_the_models_that_take_it() {
    let dir = TestDir::new();
    let fake = FakeAnthropic::with_replies((0..5).map(|_| Reply::text("ok")).collect());
    let run = |model: &str, level: &str| {
        Mypi::new(&dir)
            .anthropic(&fake)
            .model(model)
            .args(["--no-session", "--thinking", level, "-p", "hi"])
            .run()
            .ok();
    };
    run("claude-sonnet-4-5", "low");
    run("claude-sonnet-4-5", "off");
    run("claude-opus-4-7", "low");
    run("claude-3-7-sonnet-20250219", "low");
    run("claude-opus-4-1-20250805", "high");
    let requests = fake.requests();
    let beta: Vec<Option<&str>> = requests
        .iter()
        .map(|r| r.header("anthropic-beta"))
        .collect();
    let yes = Some("interleaved-thinking-2025-05-14");
    assert_eq!(beta, [yes, None, None, None, yes]);
    assert!(requests[0].body["tools"]
        .as_array()
        .is_some_and(|t| !t.is_empty()));
}

const KIDS: &str = r#"
api.command("kids", function()
  local a = api.run_agent{ task = "inherit" }
  local b = api.run_agent{ task = "own", thinking = "high" }
  local c = api.complete{ prompt = "plain" }
  local d = api.complete{ prompt = "deep", thinking = "minimal" }
  return "kids: " .. a.text .. b.text .. c.text .. d.text
end)
api.command("badkid", function() return api.complete{ prompt = "x", thinking = "max" } end)
"#;

/// A child agent thinks at its parent's level unless `api.run_agent` names one; `api.complete`
/// thinks only when asked to.
#[test]
fn children_inherit_the_level_and_complete_takes_one() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(["1", "2", "3", "4"].map(Reply::text).to_vec());
    install(&dir, "kids.lua", KIDS);
    let mut m = Mypi::new(&dir)
        .openai(&fake)
        .args(["--no-session", "--no-watch", "--thinking", "medium"])
        .spawn();
    m.send_line("/kids");
    m.wait_for_line("kids: 1234", WAIT);
    m.send_line("/badkid");
    m.wait_for_text(
        "'thinking' must be a level (off, minimal, low, medium, high)",
        WAIT,
    );
    quit(m);
    let effort: std::collections::BTreeMap<String, serde_json::Value> = fake
        .requests()
        .into_iter()
        .map(|r| {
            let last = r.body["messages"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()
                .clone();
            let task = last["content"].as_str().unwrap_or_default().to_string();
            (task, r.body["reasoning_effort"].clone())
        })
        .collect();
    let want = serde_json::json!({"inherit": "medium", "own": "high", "plain": null,
                                  "deep": "minimal"});
    assert_eq!(serde_json::to_value(&effort).unwrap(), want);
}
