//! MCP from the user's side with a well-behaved test server (tests/common/mcp_server.py): its
//! tools for the model, `api.mcp.*` from Lua and Rhai (the same hooks as the model's calls,
//! with `origin`), prompts as slash commands, resources, and tools that change while mypi
//! runs. (`/mcp`, `mypi mcp list`, `--no-mcp` and the trust gate: `mcp_status.rs`.)

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use serde_json::{json, Value};

use super::ext_util::faux;
use crate::common::mcp::{mcp_json, slow_test_server};
use crate::common::{FakeAnthropic, FakeOpenAi, Mypi, Reply, TestDir};

/// `mypi -p LINE` with the faux model (which echoes the prompt it got).
fn command(dir: &TestDir, line: &str) -> crate::common::Output {
    Mypi::new(dir)
        .args(["--provider", "faux", "--no-session", "-p", line])
        .run()
}

/// The JSON events of a `--json` run.
fn events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The tool results in call order (calls that run together finish in any order).
fn tool_results(stdout: &str) -> Vec<Value> {
    let mut results: Vec<Value> = events(stdout)
        .into_iter()
        .filter(|e| e["type"] == "tool_result")
        .collect();
    results.sort_by_key(|r| r["id"].as_str().unwrap_or("").to_string());
    results
}

#[test]
fn the_model_calls_server_tools_and_gets_text_and_errors() {
    let dir = TestDir::new();
    mcp_json(&dir, json!({}));
    let out = faux(
        &dir,
        &[
            json!({"tool_calls": [
                {"name": "mcp__t__add", "arguments": {"a": 2, "b": 40}},
                {"name": "mcp__t__fail", "arguments": {}},
                {"name": "mcp__t__add", "arguments": {"a": "x"}}
            ]}),
            json!({"text": "done"}),
        ],
    )
    .args(["--no-session", "--json", "-p", "go"])
    .run();
    out.ok();
    let results = tool_results(&out.stdout);
    assert_eq!(results[0]["content"], "42", "{}", out.describe());
    assert_eq!(results[0]["is_error"], false);
    assert_eq!(results[1]["content"], "it failed on purpose");
    assert_eq!(results[1]["is_error"], true);
    // The server's schema is checked before the call: "b" is missing, "a" is no number.
    assert_eq!(results[2]["is_error"], true);
    assert!(
        results[2]["content"]
            .as_str()
            .unwrap()
            .contains("invalid arguments for 'mcp__t__add'"),
        "{}",
        out.describe()
    );
}

const GUARD: &str = r#"
api.on("tool_call", function(ev, ctx)
  local who = ev.origin and ev.origin.extension or "model"
  api.notify("seen " .. ev.name .. " from " .. who .. " read_only=" .. tostring(ev.hints and ev.hints.readOnlyHint))
  if ev.name == "mcp__t__echo" and ev.args.text == "secret" then
    return {block = true, reason = "no secrets"}
  end
end)
api.on("tool_result", function(ev, ctx)
  if ev.name == "mcp__t__add" then return {updated_result = ev.result .. " (checked)"} end
end)
"#;

const COMPOSE_LUA: &str = r#"
api.command("sum_echo", function(args, ctx)
  local sum = api.mcp.call("t", "add", {a = 1, b = 2})
  local echoed = api.mcp.call("t", "echo", {text = sum.text})
  return echoed.text
end)
api.command("blocked", function(args, ctx)
  local ok, err = pcall(api.mcp.call, "t", "echo", {text = "secret"})
  local ok2, err2 = pcall(api.mcp.call, "t", "fail", {})
  local ok3, err3 = pcall(api.mcp.call, "nope", "x", {})
  return tostring(err) .. "\n" .. tostring(err2) .. "\n" .. tostring(err3)
end)
api.command("listing", function(args, ctx)
  local names = {}
  for _, t in ipairs(api.mcp.tools("t")) do names[#names + 1] = t.agent_name end
  local s = api.mcp.servers()[1]
  local r = api.mcp.read_resource("t", "mem://item/7")
  local p = api.mcp.prompt("t", "greet", {name = "Ann"})
  return s.name .. " " .. s.state .. " | " .. table.concat(names, ",") .. " | " .. r.text .. " | " .. p.text
end)
"#;

const COMPOSE_RHAI: &str = r#"
api.command("rhai_sum", |args, ctx| {
  let sum = api.mcp.call_tool("t", "add", #{a: 20, b: 22});
  let p = api.mcp.prompt("t", "greet", #{name: "Bo", style: "briefly"});
  sum.text + " / " + p.text
});
"#;

#[test]
fn scripts_call_mcp_through_the_same_hooks_as_the_model() {
    let dir = TestDir::new();
    mcp_json(&dir, json!({}));
    dir.write(".agents/extensions/a_guard.lua", GUARD);
    dir.write(".agents/extensions/compose.lua", COMPOSE_LUA);
    dir.write(".agents/extensions/compose_rhai.rhai", COMPOSE_RHAI);
    let run = |cmd: &str| Mypi::new(&dir).args(["--no-session", "-p", cmd]).run();

    let out = run("/sum_echo");
    out.ok();
    // The tool_result hook rewrote the add result before the script saw it.
    assert_eq!(out.stdout.trim(), "echo: 3 (checked)", "{}", out.describe());
    assert!(out
        .stderr
        .contains("seen mcp__t__add from compose read_only=nil"));

    let out = run("/blocked");
    out.ok();
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(
        lines[0].contains("blocked: no secrets"),
        "{}",
        out.describe()
    );
    assert!(
        lines[1].contains("it failed on purpose"),
        "{}",
        out.describe()
    );
    assert!(
        lines[2].contains("no MCP server named 'nope'"),
        "{}",
        out.describe()
    );

    let out = run("/listing");
    out.ok();
    assert_eq!(
        out.stdout.trim(),
        "t connected | mcp__t__echo,mcp__t__add,mcp__t__fail,mcp__t__look,mcp__t__wait,mcp__t__pic,mcp__t__drop_look,mcp__t__add_twins | \
         [resource mem://item/7]\nthe note of mem://item/7 | Greet Ann warmly.",
        "{}",
        out.describe()
    );

    let out = run("/rhai_sum");
    out.ok();
    assert_eq!(
        out.stdout.trim(),
        "42 (checked) / Greet Bo briefly.",
        "{}",
        out.describe()
    );
}

#[test]
fn a_guard_blocks_the_model_too_and_sees_the_hints() {
    let dir = TestDir::new();
    mcp_json(&dir, json!({}));
    dir.write(".agents/extensions/a_guard.lua", GUARD);
    let out = faux(
        &dir,
        &[
            json!({"tool_calls": [
                {"name": "mcp__t__echo", "arguments": {"text": "secret"}},
                {"name": "mcp__t__look", "arguments": {}}
            ]}),
            json!({"text": "done"}),
        ],
    )
    .args(["--no-session", "--json", "-p", "go"])
    .run();
    out.ok();
    let results = tool_results(&out.stdout);
    assert_eq!(results[0]["content"], "blocked: no secrets");
    assert_eq!(results[1]["content"], "nothing changed");
    assert!(
        out.stdout
            .contains("seen mcp__t__look from model read_only=true"),
        "{}",
        out.describe()
    );
    // The blocked call never reached the server.
    let requests = dir.read("requests.jsonl");
    assert!(!requests.contains("secret"), "{requests}");
}

#[test]
fn prompts_are_slash_commands_whose_text_goes_to_the_model() {
    let dir = TestDir::new();
    mcp_json(&dir, json!({}));
    // The faux model without a script echoes the prompt it got.
    let out = command(&dir, "/mcp__t__greet Cy style=loudly");
    out.ok();
    assert!(
        out.stdout.contains("Greet Cy loudly."),
        "{}",
        out.describe()
    );
    let out = command(&dir, "/mcp__t__greet");
    out.expect_code(1);
    assert!(
        out.stderr.contains("missing argument 'name'"),
        "{}",
        out.describe()
    );
}

/// A prompt asked for with no arguments still sends `"arguments": {}` (servers built on the
/// TypeScript SDK refuse a `prompts/get` without it).
#[test]
fn a_prompt_without_arguments_sends_an_empty_object() {
    let dir = TestDir::new();
    mcp_json(&dir, json!({}));
    dir.write(
        ".agents/extensions/bare.lua",
        r#"api.command("bare", function(args, ctx)
  local ok, why = pcall(api.mcp.prompt, "t", "greet")
  api.notify("asked: " .. tostring(ok))
end)"#,
    );
    let out = command(&dir, "/bare");
    out.ok();
    assert!(out.stderr.contains("asked: "), "{}", out.describe());
    let gets: Vec<Value> = dir
        .read("requests.jsonl")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|r| r["method"] == "prompts/get")
        .collect();
    assert_eq!(gets.len(), 1, "{gets:?}");
    assert_eq!(gets[0]["params"]["arguments"], json!({}), "{gets:?}");
}

#[test]
fn a_prompt_command_of_a_server_never_seen_waits_for_it() {
    let dir = TestDir::new();
    slow_test_server(&dir);
    let out = command(&dir, "/mcp__t__greet Cy");
    out.ok();
    assert!(out.stdout.contains("Greet Cy"), "{}", out.describe());
    assert!(
        out.stderr
            .contains("waiting for MCP server t (still connecting; at most 10 s) to call"),
        "{}",
        out.describe()
    );
    // A command no configured server could have is unknown at once.
    let out = command(&dir, "/mcp__u__greet");
    out.expect_code(1);
    assert!(!out.stderr.contains("waiting for"), "{}", out.describe());
}

#[test]
fn the_model_lists_and_reads_resources() {
    let dir = TestDir::new();
    mcp_json(&dir, json!({}));
    let out = faux(
        &dir,
        &[
            json!({"tool_calls": [
                {"name": "list_mcp_resources", "arguments": {}},
                {"name": "list_mcp_resource_templates", "arguments": {"server": "t"}},
                {"name": "read_mcp_resource", "arguments": {"server": "t", "uri": "mem://note"}},
                {"name": "read_mcp_resource", "arguments": {"server": "t", "uri": "mem://gone"}}
            ]}),
            json!({"text": "done"}),
        ],
    )
    .args(["--no-session", "--json", "-p", "go"])
    .run();
    out.ok();
    let r = tool_results(&out.stdout);
    assert!(r[0]["content"]
        .as_str()
        .unwrap()
        .contains("\"uri\": \"mem://note\""));
    assert!(r[1]["content"]
        .as_str()
        .unwrap()
        .contains("mem://item/{id}"));
    assert_eq!(
        r[2]["content"],
        "[resource mem://note]\nthe note of mem://note"
    );
    assert_eq!(r[3]["is_error"], true);
    assert!(r[3]["content"]
        .as_str()
        .unwrap()
        .contains("no resource mem://gone"));
}

#[test]
fn the_compose_example_makes_one_tool_of_two_mcp_calls() {
    let example = super::ext_util::example("mcp_compose.lua").replace(
        r#"local SERVER, ADD, ECHO = "everything", "get-sum", "echo""#,
        r#"local SERVER, ADD, ECHO = "t", "add", "echo""#,
    );
    compose(&example, "mcp_compose.lua");
}

#[test]
fn the_compose_example_in_rhai_makes_one_tool_of_two_mcp_calls() {
    let example = super::ext_util::example("mcp_compose.rhai")
        .replace(r#"const SERVER = "everything";"#, r#"const SERVER = "t";"#)
        .replace(r#"const ADD = "get-sum";"#, r#"const ADD = "add";"#);
    compose(&example, "mcp_compose.rhai");
}

fn compose(example: &str, file: &str) {
    let dir = TestDir::new();
    mcp_json(&dir, json!({}));
    dir.write(&format!(".agents/extensions/{file}"), example);
    dir.write(".agents/extensions/a_guard.lua", GUARD);
    let out = faux(
        &dir,
        &[
            json!({"tool_calls": [{"name": "sum_and_echo", "arguments": {"a": 5, "b": 6}}]}),
            json!({"text": "done"}),
        ],
    )
    .args(["--no-session", "--json", "-p", "go"])
    .run();
    out.ok();
    let r = tool_results(&out.stdout);
    assert_eq!(r[0]["content"], "echo: 11 (checked)", "{}", out.describe());
    assert!(out.stdout.contains("seen mcp__t__echo from mcp_compose"));
}

#[test]
fn a_slow_server_seen_before_does_not_hold_up_a_prompt() {
    let dir = TestDir::new();
    slow_test_server(&dir);
    let replies = [
        json!({"tool_calls": [{"name": "mcp__t__echo", "arguments": {"text": "late"}}]}),
        json!({"text": "done"}),
    ];
    // Never seen: the prompt goes on without it (saying so); the model's call of its tool
    // waits for it (saying so too).
    let first = faux(&dir, &replies)
        .args(["--no-session", "--json", "-p", "go"])
        .run();
    first.ok();
    assert!(
        first
            .stdout
            .contains("not waiting for MCP server t: still connecting")
            && first
                .stdout
                .contains("waiting for MCP server t (still connecting; at most 10 s) to call"),
        "{}",
        first.describe()
    );
    assert_eq!(tool_results(&first.stdout)[0]["content"], "echo: late");
    // Seen before: its tools are offered from the cache at once; the call waits for it.
    let second = faux(&dir, &replies)
        .args(["--no-session", "--json", "-p", "go"])
        .run();
    second.ok();
    assert!(
        !second.stdout.contains("not waiting for")
            && second
                .stdout
                .contains("waiting for MCP server t (still connecting; at most 10 s)"),
        "{}",
        second.describe()
    );
    assert_eq!(tool_results(&second.stdout)[0]["content"], "echo: late");
    // A prompt that calls no tool of it is not held up by it.
    let quick = faux(&dir, &[json!({"text": "hi"})])
        .args(["--no-session", "-p", "go"])
        .timeout(std::time::Duration::from_secs(30))
        .run();
    quick.ok();
    assert_eq!(quick.stdout.trim(), "hi");
}

#[test]
fn a_withdrawn_tool_is_really_gone() {
    let dir = TestDir::new();
    mcp_json(&dir, json!({}));
    let out = faux(
        &dir,
        &[
            // The answer comes once the re-list is in place: the next turn knows.
            json!({"tool_calls": [{"name": "mcp__t__drop_look", "arguments": {}}]}),
            json!({"tool_calls": [{"name": "mcp__t__look", "arguments": {}}]}),
            json!({"text": "done"}),
        ],
    )
    .args(["--no-session", "--json", "-p", "go"])
    .run();
    out.ok();
    let r = tool_results(&out.stdout);
    assert_eq!(r[0]["content"], "look is gone", "{}", out.describe());
    let gone = r[1]["content"].as_str().unwrap();
    assert!(
        gone.starts_with("unknown tool 'mcp__t__look'"),
        "{}",
        out.describe()
    );
    assert!(
        gone.contains("mcp__t__echo") && !gone.contains("mcp__t__look,"),
        "{gone}"
    );
}

const SEEN: &str = r#"api.on("tool_call", function(ev) api.notify("call " .. ev.name) end)"#;
const TWINS: &str = r#"
local function twins()
  local names = {}
  for _, t in ipairs(api.mcp.tools("t")) do
    if t.name == "tw-in" or t.name == "tw_in" then names[#names + 1] = t.name .. "=" .. t.agent_name end
  end
  return names
end
api.command("twins", function()
  -- The answer comes once the re-list that list_changed started is in place.
  api.mcp.call("t", "add_twins", {})
  local names = twins()
  local a, b = api.mcp.call("t", "tw-in", {}), api.mcp.call("t", "tw_in", {})
  return table.concat(names, " ") .. " | " .. a.text .. " | " .. b.text
end)
api.command("quiet_twins", function()
  -- Added without a word: the call to a tool the last list lacks lists the tools again.
  api.mcp.call("t", "add_twins", {quiet = true})
  local a = api.mcp.call("t", "tw_in", {})
  local ok, err = pcall(api.mcp.call, "t", "tw_out", {})
  return a.text .. " | " .. table.concat(twins(), " ") .. " | " .. tostring(err)
end)
"#;

/// A script's call to a tool that came with a list change goes by the new list's agent
/// names, hashed where two tools' names collide, in the hooks as in `api.mcp.tools`.
#[test]
fn a_scripts_call_to_a_new_colliding_tool_carries_its_hashed_agent_name() {
    let dir = TestDir::new();
    mcp_json(&dir, json!({}));
    dir.write(".agents/extensions/twins.lua", TWINS);
    // In another extension: the command's own is busy running it.
    dir.write(".agents/extensions/seen.lua", SEEN);
    let out = Mypi::new(&dir).args(["--no-session", "-p", "/twins"]).run();
    out.ok();
    let (listed, results) = out.stdout.trim().split_once(" | ").expect("two parts");
    assert_eq!(results, "twin tw-in | twin tw_in", "{}", out.describe());
    let names: Vec<(&str, &str)> = listed
        .split(' ')
        .filter_map(|p| p.split_once('='))
        .collect();
    assert_eq!(names.len(), 2, "{}", out.describe());
    assert_ne!(names[0].1, names[1].1);
    for (tool, agent) in names {
        assert!(
            agent.starts_with("mcp__t__tw_in_") && agent.len() == "mcp__t__tw_in_".len() + 8,
            "{tool}: {agent}"
        );
        // The hook saw the call under the same name (notices go to stderr in print mode).
        assert!(
            out.stderr.contains(&format!("call {agent}")),
            "{tool}: {}",
            out.describe()
        );
    }
}

/// A tool the server added without saying so is found by listing again when a script names
/// it; a tool that is not there after that is still an error naming the tools there are.
#[test]
fn a_scripts_call_to_a_tool_added_without_a_word_lists_the_tools_again() {
    let dir = TestDir::new();
    mcp_json(&dir, json!({}));
    dir.write(".agents/extensions/twins.lua", TWINS);
    let out = Mypi::new(&dir)
        .args(["--no-session", "-p", "/quiet_twins"])
        .run();
    out.ok();
    let parts: Vec<&str> = out.stdout.trim().split(" | ").collect();
    assert_eq!(parts.len(), 3, "{}", out.describe());
    assert_eq!(parts[0], "twin tw_in");
    assert_eq!(parts[1].split(' ').count(), 2, "{}", out.describe());
    assert!(
        parts[2].contains("has no tool 'tw_out'") && parts[2].contains("tw-in, tw_in"),
        "{}",
        out.describe()
    );
    // Listed at start, for tw_in, and for tw_out.
    let requests = dir.read("requests.jsonl");
    let lists = requests.matches("\"tools/list\"").count();
    assert_eq!(lists, 3, "{requests}");
}

#[test]
fn a_tools_image_reaches_anthropic_as_an_image_and_chat_completions_as_a_note() {
    let dir = TestDir::new();
    mcp_json(&dir, json!({}));
    let call = || Reply::tool_calls(vec![("c1", "mcp__t__pic", json!({}))]);
    let anthropic = FakeAnthropic::with_replies(vec![call(), Reply::text("seen")]);
    let out = Mypi::new(&dir)
        .anthropic(&anthropic)
        .args(["--no-session", "-p", "look"])
        .run();
    out.ok();
    let second = &anthropic.requests()[1].body;
    let result = &second["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result", "{second}");
    let blocks = result["content"].as_array().expect("blocks with the image");
    assert!(blocks[0]["text"]
        .as_str()
        .unwrap()
        .starts_with("a dot\n[image image/png, "));
    assert_png_block(&blocks[1]);

    let openai = FakeOpenAi::with_replies(vec![call(), Reply::text("seen")]);
    let out = Mypi::new(&dir)
        .openai(&openai)
        .args(["--no-session", "-p", "look"])
        .run();
    out.ok();
    let body = &openai.requests()[1].body;
    let tool = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("the tool message");
    let note = tool["content"].as_str().expect("text only");
    assert!(
        note.contains("saved to ") && note.ends_with(".png]"),
        "{note}"
    );
}

/// `read_mcp_resource` of an image: the note and file as for any binary, and the image itself
/// for a provider that takes images in tool results; other binary is only the note and file.
#[test]
fn an_image_resource_reaches_anthropic_as_an_image_and_other_binary_as_a_file() {
    let dir = TestDir::new();
    mcp_json(&dir, json!({}));
    let read = |uri: &str| {
        Reply::tool_calls(vec![(
            "c1",
            "read_mcp_resource",
            json!({"server": "t", "uri": uri}),
        )])
    };
    let anthropic = FakeAnthropic::with_replies(vec![
        read("mem://img"),
        read("mem://bin"),
        // Time to look at the file while mypi runs.
        Reply::hang_then_text(Duration::from_millis(1500), "seen"),
    ]);
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let running = Mypi::new(&dir)
        .anthropic(&anthropic)
        .env("TMPDIR", &tmp)
        .args(["--no-session", "-p", "look"])
        .spawn();
    let requests = anthropic.wait_for_requests(3, Duration::from_secs(20));
    let result = &requests[1].body["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result", "{result}");
    let blocks = result["content"].as_array().expect("blocks with the image");
    let note = blocks[0]["text"].as_str().unwrap();
    assert!(
        note.starts_with("[resource mem://img] [data image/png, ") && note.ends_with(".png]"),
        "{note}"
    );
    assert_png_block(&blocks[1]);

    let result = &requests[2].body["messages"][4]["content"][0];
    let text = result["content"].to_string();
    assert!(!text.contains("\"image\""), "{text}");
    let path = text
        .split("saved to ")
        .nth(1)
        .and_then(|t| t.split(']').next())
        .unwrap_or_else(|| panic!("no file named: {text}"));
    assert_eq!(
        std::fs::read(path).map_err(|e| format!("{path}: {e}")),
        Ok(vec![0, 1, 2])
    );
    // In a folder of its own that only the user can enter, removed when mypi ends.
    let folder = std::path::Path::new(path).parent().unwrap().to_path_buf();
    assert_eq!(folder.parent(), Some(tmp.as_path()));
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(
        (mode(&folder), mode(std::path::Path::new(path))),
        (0o700, 0o600)
    );
    running.wait().ok();
    assert!(!folder.exists(), "{} is left behind", folder.display());
}

/// An Anthropic image block holding a PNG.
fn assert_png_block(block: &Value) {
    assert_eq!(block["type"], "image");
    assert_eq!(block["source"]["media_type"], "image/png");
    assert!(block["source"]["data"]
        .as_str()
        .unwrap()
        .starts_with("iVBORw0KGgo"));
}
