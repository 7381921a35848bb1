//! The shipped `subagent` extension as a user meets it: a file of the user's own with the
//! same name replaces it, `--no-builtin-extensions` turns it off, a project agent wins over a
//! user agent of the same name, and a child can use the parent's MCP tools.

use serde_json::{json, Value};

use super::ext_util::install;
use crate::common::{FakeOpenAi, Mypi, Reply, TestDir};

fn agent_file(name: &str, description: &str, prompt: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n{prompt}\n")
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_shipped_subagent_can_be_replaced_or_turned_off() {
    let dir = TestDir::new();
    dir.write(
        ".agents/agents/scout.md",
        &agent_file("scout", "scouts", "You scout."),
    );
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "/extensions"])
        .run();
    out.ok();
    assert!(
        out.stdout
            .contains("subagent (lua, builtin:scripts/subagent.lua)"),
        "{}",
        out.stdout
    );

    let out = Mypi::new(&dir)
        .args([
            "--provider",
            "faux",
            "--no-builtin-extensions",
            "-p",
            "/agents",
        ])
        .run();
    out.expect_code(1);
    assert!(
        out.stderr.contains("unknown command /agents"),
        "{}",
        out.describe()
    );
    let fake = FakeOpenAi::with_replies(vec![Reply::text("ok")]);
    Mypi::new(&dir)
        .openai(&fake)
        .args(["--no-builtin-extensions", "-p", "hi"])
        .run()
        .ok();
    assert!(!tool_names(&fake.requests()[0].body).contains(&"subagent".to_string()));

    // A user file of the same name wins.
    install(
        &dir,
        "subagent.lua",
        r#"api.command("agents", function() return "my own" end)"#,
    );
    let out = agents(&dir);
    out.ok();
    assert_eq!(out.stdout.trim(), "my own");
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "/extensions"])
        .run();
    assert!(!out.stdout.contains("builtin:"), "{}", out.stdout);
}

/// A project scout and a user scout of the same name.
fn scouts(dir: &TestDir) {
    dir.write(
        ".agents/agents/scout.md",
        &agent_file("scout", "project scout", "P"),
    );
    dir.write(
        "home/.agents/agents/scout.md",
        &agent_file("scout", "user scout", "U"),
    );
}

/// `mypi -p /agents` on the faux model.
fn agents(dir: &TestDir) -> crate::common::Output {
    Mypi::new(dir)
        .args(["--provider", "faux", "-p", "/agents"])
        .run()
}

#[test]
fn a_project_agent_wins_over_a_user_agent_of_the_same_name() {
    let dir = TestDir::new();
    scouts(&dir);
    dir.write(
        "home/.agents/agents/helper.md",
        &agent_file("helper", "user helper", "H"),
    );
    let out = agents(&dir);
    out.ok();
    assert_eq!(
        out.stdout.trim(),
        "helper - user helper (~/.agents/agents/helper.md)\n\
         scout - project scout (.agents/agents/scout.md)"
    );
}

/// A tool whose child may use only the MCP server's echo.
const VIA_CHILD: &str = r#"api.tool{ name = "ask_child", description = "d", parameters = { type = "object" },
  execute = function()
    local r = api.run_agent{ task = "echo hi", tools = { "mcp__t__echo" } }
    return r.error or r.text
  end }"#;

#[test]
fn a_child_calls_the_parents_mcp_tools() {
    let dir = TestDir::new();
    let server = format!("{}/tests/common/mcp_server.py", env!("CARGO_MANIFEST_DIR"));
    dir.write(
        ".mcp.json",
        &json!({"mcpServers": {"t": {"command": "python3", "args": [server]}}}).to_string(),
    );
    install(&dir, "via.lua", VIA_CHILD);
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([("p1", "ask_child", json!({}))]),
        Reply::tool_calls([("c1", "mcp__t__echo", json!({"text": "from the child"}))]),
        Reply::text("the child heard it"),
        Reply::text("done"),
    ]);
    let out = Mypi::new(&dir).openai(&fake).args(["-p", "go"]).run();
    out.ok();
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 4, "{}", out.describe());
    assert_eq!(tool_names(&reqs[1].body), ["mcp__t__echo"]);
    let echoed = super::wire::tool_results(&reqs[2])[0].content.clone();
    assert!(echoed.contains("from the child"), "{echoed}");
}

/// `/ls DIR` lists a folder with `api.read_dir` (what the subagent extension reads agents
/// with), in Lua and in Rhai.
fn read_dir(file: &str, source: &str) {
    let dir = TestDir::new();
    install(&dir, file, source);
    dir.write("d/b.md", "");
    dir.write("d/a.md", "");
    dir.write("d/sub/x", "");
    dir.write("home/mine/u.md", "");
    let ls = |arg: &str| {
        Mypi::new(&dir)
            .args(["--provider", "faux", "-p", &format!("/ls {arg}")])
            .run()
    };
    assert_eq!(ls("d").stdout.trim(), "a.md,b.md,sub/");
    assert_eq!(ls("~/mine").stdout.trim(), "u.md");
    assert_eq!(ls("missing").stdout.trim(), "");
    let out = ls("d/a.md");
    out.expect_code(1);
    assert!(
        out.stderr.contains("api.read_dir: cannot list ") && out.stderr.contains("d/a.md"),
        "{}",
        out.describe()
    );
}

#[test]
fn read_dir_lists_a_folder_in_lua() {
    read_dir(
        "ls.lua",
        r#"api.command("ls", function(a) return table.concat(api.read_dir(a), ",") end)"#,
    );
}

#[test]
fn read_dir_lists_a_folder_in_rhai() {
    read_dir(
        "ls.rhai",
        r#"api.command("ls", |a| { let names = api.read_dir(a); if names.len() == 0 { "" } else { names.reduce(|acc, n| if acc == () { n } else { acc + "," + n }) } });"#,
    );
}

/// A child given no tool list: everything the parent has, MCP tools included, except the
/// tools of the extension waiting for it (which cannot take a call until the child ends).
#[test]
fn a_childs_default_tools_are_the_parents_without_the_waiting_extensions() {
    let dir = TestDir::new();
    let server = format!("{}/tests/common/mcp_server.py", env!("CARGO_MANIFEST_DIR"));
    dir.write(
        ".mcp.json",
        &json!({"mcpServers": {"t": {"command": "python3", "args": [server]}}}).to_string(),
    );
    install(
        &dir,
        "via.lua",
        r#"api.tool{ name = "ask_child", description = "d", parameters = { type = "object" },
  execute = function() local r = api.run_agent{ task = "look" } return r.error or r.text end }
api.tool{ name = "also_mine", description = "d", parameters = { type = "object" },
  execute = function() return "x" end }"#,
    );
    install(
        &dir,
        "other.lua",
        r#"api.tool{ name = "theirs", description = "d", parameters = { type = "object" },
  execute = function() return "y" end }"#,
    );
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([("p1", "ask_child", json!({}))]),
        Reply::text("looked"),
        Reply::text("done"),
    ]);
    Mypi::new(&dir)
        .openai(&fake)
        .args(["--no-builtin-extensions", "-p", "go"])
        .run()
        .ok();
    let parent = tool_names(&fake.requests()[0].body);
    let child = tool_names(&fake.requests()[1].body);
    assert!(parent.contains(&"ask_child".to_string()), "{parent:?}");
    let expected: Vec<String> = parent
        .iter()
        .filter(|t| *t != "ask_child" && *t != "also_mine")
        .cloned()
        .collect();
    assert_eq!(child, expected);
    for t in ["mcp__t__echo", "theirs", "read", "bash"] {
        assert!(child.contains(&t.to_string()), "{t}: {child:?}");
    }
}

/// `model`, `provider` and `max_turns` of a child are honoured.
#[test]
fn a_child_runs_on_the_model_provider_and_turn_limit_it_is_given() {
    let dir = TestDir::new();
    install(
        &dir,
        "kids.lua",
        r#"api.command("kids", function()
  local a = api.run_agent{ task = "on another model", model = "small-model" }
  local b = api.run_agent{ task = "on anthropic", provider = "anthropic", model = "claude-x" }
  local c = api.run_agent{ task = "one turn only", max_turns = 1 }
  return a.text .. " | " .. b.text .. " | " .. tostring(c.error)
end)"#,
    );
    let openai = FakeOpenAi::with_replies(vec![
        Reply::text("small says hi"),
        Reply::tool_calls([("c1", "read", json!({"path": "x"}))]),
    ]);
    let anthropic = crate::common::FakeAnthropic::with_replies(vec![Reply::text("claude says hi")]);
    let out = Mypi::new(&dir)
        .openai(&openai)
        .env("ANTHROPIC_BASE_URL", anthropic.url())
        .env("ANTHROPIC_API_KEY", "k")
        .args(["-p", "/kids"])
        .run();
    out.ok();
    assert_eq!(
        out.stdout.trim(),
        "small says hi | claude says hi | stopped after 1 turns without a final answer (the \
         model kept calling tools)",
        "{}",
        out.describe()
    );
    assert_eq!(openai.requests()[0].body["model"], "small-model");
    assert_eq!(openai.requests()[1].body["model"], "test-model");
    assert_eq!(anthropic.requests()[0].body["model"], "claude-x");
    assert_eq!(
        openai.request_count(),
        2,
        "the one-turn child made one request"
    );
}

#[test]
fn an_untrusted_projects_agents_do_not_load_nor_replace_the_users() {
    let dir = TestDir::new();
    dir.untrust();
    scouts(&dir);
    let out = agents(&dir);
    out.ok();
    assert_eq!(
        out.stdout.trim(),
        "scout - user scout (~/.agents/agents/scout.md)"
    );
    assert!(
        out.stderr.contains(&format!(
            "1 agent file (.agents/agents) in {} not loaded: the folder is not trusted (pass \
             --trust",
            dir.path().display()
        )),
        "{}",
        out.describe()
    );
    // Trusted for the run, the project's wins as before.
    let out = Mypi::new(&dir)
        .args(["--trust", "--provider", "faux", "-p", "/agents"])
        .run();
    out.ok();
    assert_eq!(
        out.stdout.trim(),
        "scout - project scout (.agents/agents/scout.md)"
    );
}

#[test]
fn an_agent_listing_the_subagent_tool_is_warned_about_and_runs_without_it() {
    let dir = TestDir::new();
    dir.write(
        ".agents/agents/boss.md",
        "---\nname: boss\ndescription: delegates\ntools: read, subagent\n---\nB\n",
    );
    let warning = "agent file .agents/agents/boss.md: lists the subagent tool, which does not \
                   nest: a child agent cannot run subagents";
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([("p1", "subagent", json!({"agent": "boss", "task": "t"}))]),
        Reply::text("child done"),
        Reply::text("parent done"),
    ]);
    let out = Mypi::new(&dir)
        .openai(&fake)
        .args(["--no-session", "-p", "go"])
        .run();
    out.ok();
    assert!(out.stderr.contains(warning), "{}", out.describe());
    assert_eq!(out.stderr.matches(warning).count(), 1, "{}", out.describe());
    assert_eq!(tool_names(&fake.requests()[1].body), ["read"]);
    // `mypi ext check` says so too.
    let out = Mypi::new(&dir).args(["--trust", "ext", "check"]).run();
    assert!(
        out.stdout.contains(&format!("note: [subagent] {warning}")),
        "{}",
        out.describe()
    );
}

#[test]
fn a_child_asking_for_a_tool_of_the_busy_extension_is_told_it_does_not_nest() {
    let dir = TestDir::new();
    install(
        &dir,
        "via.lua",
        r#"api.tool{ name = "ask_child", description = "d", parameters = { type = "object" },
  execute = function()
    local r = api.run_agent{ task = "look", tools = { "read", "ask_child" } }
    return r.error or r.text
  end }"#,
    );
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([("p1", "ask_child", json!({}))]),
        Reply::text("done"),
    ]);
    let out = Mypi::new(&dir)
        .openai(&fake)
        .args(["--no-builtin-extensions", "--no-session", "-p", "go"])
        .run();
    out.ok();
    let sent = fake.requests()[1].body["messages"].to_string();
    assert!(
        sent.contains("the ask_child tool does not nest: its extension is busy with the call"),
        "{sent}"
    );
    assert!(!sent.contains("unknown tool"), "{sent}");
}

#[test]
fn a_fifo_among_the_agent_files_is_reported_not_waited_on() {
    let dir = TestDir::new();
    dir.write(
        ".agents/agents/scout.md",
        &agent_file("scout", "project scout", "P"),
    );
    dir.mkfifo(".agents/agents/stuck.md");
    let out = Mypi::new(&dir)
        .timeout(std::time::Duration::from_secs(15))
        .args(["--provider", "faux", "-p", "/agents"])
        .run();
    out.ok();
    assert_eq!(
        out.stdout.trim(),
        "scout - project scout (.agents/agents/scout.md)"
    );
    assert!(
        out.stderr
            .contains("agent file .agents/agents/stuck.md: cannot read it:")
            && out.stderr.contains("not a regular file; skipped"),
        "{}",
        out.describe()
    );
}

/// An agent file's `thinking` is its child's level; without one the child thinks at the
/// parent's.
#[test]
fn an_agent_file_may_name_its_thinking_level() {
    let dir = TestDir::new();
    dir.write(
        ".agents/agents/deep.md",
        "---\nname: deep\ndescription: thinks hard\nthinking: high\n---\nThink.\n",
    );
    dir.write(
        ".agents/agents/plain.md",
        &agent_file("plain", "thinks as asked", "Answer."),
    );
    let call = json!({"tasks": [{"agent": "deep", "task": "d"}, {"agent": "plain", "task": "p"}]});
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([("c1", "subagent", call)]),
        Reply::text("x"),
        Reply::text("x"),
        Reply::text("done"),
    ]);
    let out = Mypi::new(&dir)
        .openai(&fake)
        .args(["--no-session", "--thinking", "low", "-p", "go"])
        .run();
    out.ok();
    let effort = |task: &str| {
        let requests = fake.requests();
        let r = requests
            .iter()
            .find(|r| r.body["messages"].as_array().unwrap().last().unwrap()["content"] == task)
            .unwrap_or_else(|| panic!("no request for {task}"));
        r.body["reasoning_effort"].clone()
    };
    assert_eq!(effort("d"), "high");
    assert_eq!(effort("p"), "low");
    assert_eq!(effort("go"), "low");
}
