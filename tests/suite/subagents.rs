//! Child agents from scripts (issue 10): `api.run_agent`, `api.run_agents`, `api.complete`,
//! driven through the binary against the fake model servers: the child's own conversation,
//! its record in the session file, overlap of parallel children, the depth limit, cancel,
//! a guard in a child; the calls from a script's own commands and tools are in
//! `subagents_api.rs`.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::ext_util::{install, BUDGET_MS};
use super::wire::{tool_results, user_texts};
use crate::common::{FakeOpenAi, Mypi, Recorded, Reply, TestDir};

/// A tool `delegate{task}` that runs one child with that task and returns its outcome.
pub(super) const DELEGATE: &str = r#"
api.tool{
  name = "delegate",
  description = "run a child agent",
  parameters = { type = "object", properties = { task = { type = "string" } }, required = { "task" } },
  execute = function(args, ctx)
    local r = api.run_agent{ task = args.task, system_prompt = "you are the child", tools = { "read" } }
    if r.error then return { content = "child failed: " .. r.error, is_error = true } end
    return "child said: " .. r.text .. " (turns " .. r.turns .. ", depth seen " .. ctx.depth .. ")"
  end,
}
"#;

/// The lines of the project's only session file.
pub(super) fn session_lines(dir: &TestDir) -> Vec<Value> {
    let sessions = super::wire::sessions_dir(dir);
    let files: Vec<_> = std::fs::read_dir(&sessions)
        .expect("sessions dir")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    std::fs::read_to_string(&files[0])
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The roles of a Chat Completions request's messages, in order.
pub(super) fn roles(body: &Value) -> Vec<&str> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect()
}

#[test]
fn a_child_runs_with_its_own_conversation_and_is_kept_under_its_tool_call() {
    let dir = TestDir::new();
    install(&dir, "delegate.lua", DELEGATE);
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([("call_1", "delegate", json!({"task": "count the files"}))]),
        Reply::text("three files"),
        Reply::text("parent done"),
    ]);
    let out = Mypi::new(&dir).openai(&fake).args(["-p", "go"]).run();
    out.ok();
    assert_eq!(out.stdout.trim(), "parent done", "{}", out.describe());
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 3);
    // The child's request: its own system prompt, its task alone, only the tools it was given.
    let child = &reqs[1].body;
    assert_eq!(child["messages"][0]["content"], "you are the child");
    assert_eq!(user_texts(&reqs[1]), ["count the files"]);
    let tools: Vec<&str> = child["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["read"]);
    // The parent's next request has the tool result, never the child's messages.
    let parent = &reqs[2].body;
    assert_eq!(user_texts(&reqs[2]), ["go"]);
    let result = parent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("the tool result");
    assert_eq!(
        result["content"],
        "child said: three files (turns 1, depth seen 0)"
    );
    // The session: the child's record sits before the result of the call that ran it.
    let lines = session_lines(&dir);
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["session", "message", "message", "child", "message", "message", "totals"]
    );
    let record = &lines[3]["child"];
    assert_eq!(record["tool_call_id"], "call_1");
    assert_eq!(record["depth"], 1);
    assert_eq!(record["task"], "count the files");
    assert_eq!(record["outcome"]["text"], "three files");
    assert_eq!(record["messages"][0]["content"], "count the files");
    assert_eq!(record["messages"][1]["content"], "three files");

    // --continue resumes the parent's conversation only.
    fake.push(Reply::text("resumed"));
    let out = Mypi::new(&dir)
        .openai(&fake)
        .args(["--continue", "-p", "again"])
        .run();
    out.ok();
    assert!(!out.stderr.contains("skipped a line"), "{}", out.describe());
    let reqs = fake.requests();
    let resumed = &reqs[3].body;
    assert_eq!(user_texts(&reqs[3]), ["go", "again"]);
    assert_eq!(
        roles(resumed),
        ["system", "user", "assistant", "tool", "assistant", "user"]
    );
}

/// The text of the first tool result a request sends.
pub(super) fn tool_result(req: &Recorded) -> String {
    tool_results(req)
        .first()
        .map(|r| r.content.clone())
        .unwrap_or_default()
}

/// Writes the agent `name` as `.agents/agents/NAME.md`.
fn agent(dir: &TestDir, name: &str, tools: &str, prompt: &str) {
    dir.write(
        &format!(".agents/agents/{name}.md"),
        &format!("---\nname: {name}\ndescription: the {name}\ntools: {tools}\n---\n{prompt}\n"),
    );
}

#[test]
fn four_parallel_children_overlap_and_come_back_in_order() {
    let dir = TestDir::new();
    agent(&dir, "scout", "read", "You scout.");
    let tasks: Vec<Value> = (1..=4)
        .map(|i| json!({"agent": "scout", "task": format!("look at part {i}")}))
        .collect();
    let mut replies = vec![Reply::tool_calls([(
        "call_1",
        "subagent",
        json!({"tasks": tasks}),
    )])];
    // Each child's answer takes a second: one after the other, the fourth child's request
    // would come three seconds after the first's; together, they all come at once.
    for _ in 0..4 {
        replies.push(Reply::text("part seen").after(Duration::from_secs(1)));
    }
    replies.push(Reply::text("all four done"));
    let fake = FakeOpenAi::with_replies(replies);
    let m = Mypi::new(&dir).openai(&fake).args(["-p", "go"]).spawn();
    fake.wait_for_requests(2, Duration::from_secs(30));
    let first_child = Instant::now();
    fake.wait_for_requests(5, Duration::from_secs(30));
    let spread = first_child.elapsed();
    let out = m.wait();
    out.ok();
    assert_eq!(out.stdout.trim(), "all four done", "{}", out.describe());
    assert!(
        spread < Duration::from_secs(2),
        "the four requests came over {spread:?}: they did not overlap"
    );
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 6);
    let mut child_tasks: Vec<String> = reqs[1..5]
        .iter()
        .map(|r| user_texts(r)[0].clone())
        .collect();
    child_tasks.sort();
    assert_eq!(
        child_tasks,
        [
            "look at part 1",
            "look at part 2",
            "look at part 3",
            "look at part 4"
        ]
    );
    for r in &reqs[1..5] {
        assert_eq!(r.body["messages"][0]["content"], "You scout.");
    }
    let result = tool_result(&reqs[5]);
    let heads: Vec<&str> = result.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        heads,
        ["## 1. scout", "## 2. scout", "## 3. scout", "## 4. scout"],
        "{result}"
    );
}

#[test]
fn a_chain_passes_each_output_on_as_previous() {
    let dir = TestDir::new();
    agent(&dir, "scout", "read", "You scout.");
    agent(&dir, "reviewer", "read", "You review.");
    let chain = json!({"chain": [
        {"agent": "scout", "task": "find the config"},
        {"agent": "reviewer", "task": "review this: {previous}"},
    ]});
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([("call_1", "subagent", chain)]),
        Reply::text("it is in src/config.rs"),
        Reply::text("looks fine"),
        Reply::text("chain done"),
    ]);
    let out = Mypi::new(&dir).openai(&fake).args(["-p", "go"]).run();
    out.ok();
    assert_eq!(out.stdout.trim(), "chain done");
    let reqs = fake.requests();
    assert_eq!(user_texts(&reqs[1]), ["find the config"]);
    assert_eq!(reqs[2].body["messages"][0]["content"], "You review.");
    assert_eq!(
        user_texts(&reqs[2]),
        ["review this: it is in src/config.rs"]
    );
    assert_eq!(tool_result(&reqs[3]), "looks fine");
}

#[test]
fn a_chain_stops_at_the_child_that_fails() {
    let dir = TestDir::new();
    agent(&dir, "scout", "read", "You scout.");
    let chain = json!({"chain": [
        {"agent": "scout", "task": "one"},
        {"agent": "scout", "task": "two: {previous}"},
        {"agent": "scout", "task": "three: {previous}"},
    ]});
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([("call_1", "subagent", chain)]),
        Reply::text("first output"),
        Reply::error(400, "the model is gone"),
        Reply::text("the parent carries on"),
    ]);
    let out = Mypi::new(&dir).openai(&fake).args(["-p", "go"]).run();
    out.ok();
    assert_eq!(out.stdout.trim(), "the parent carries on");
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 4, "the third step never ran");
    let last = reqs[3].body["messages"].as_array().unwrap();
    let result = last.iter().find(|m| m["role"] == "tool").unwrap();
    let text = result["content"].as_str().unwrap();
    assert!(text.starts_with("step 2 (scout) failed: "), "{text}");
    assert!(text.contains("the model is gone"), "{text}");
    assert!(text.contains("output of step 1:\nfirst output"), "{text}");
}

/// `dig_X` runs a child that may use only `dig_NEXT`, and returns what the child said (or
/// the child's error).
fn digger(me: &str, next: &str) -> String {
    format!(
        r#"api.tool{{ name = "dig_{me}", description = "dig", parameters = {{ type = "object" }},
  execute = function(args, ctx)
    local r = api.run_agent{{ task = "dig from {me} at depth " .. ctx.depth, tools = {{ "dig_{next}" }} }}
    return r.error and ("error: " .. r.error) or r.text
  end }}"#
    )
}

#[test]
fn children_nest_at_most_three_deep() {
    let dir = TestDir::new();
    for (me, next) in [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")] {
        install(&dir, &format!("{me}.lua"), &digger(me, next));
    }
    let call = |id: &str, name: &str| Reply::tool_calls([(id, name, json!({}))]);
    let fake = FakeOpenAi::with_replies(vec![
        call("p1", "dig_a"),
        call("c1", "dig_b"),
        call("c2", "dig_c"),
        call("c3", "dig_d"),
        Reply::text("depth 3 done"),
        Reply::text("depth 2 done"),
        Reply::text("depth 1 done"),
        Reply::text("top done"),
    ]);
    let out = Mypi::new(&dir).openai(&fake).args(["-p", "go"]).run();
    out.ok();
    assert_eq!(out.stdout.trim(), "top done", "{}", out.describe());
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 8, "no request for a fourth level");
    assert_eq!(user_texts(&reqs[3]), ["dig from c at depth 2"]);
    // dig_d, called at depth 3, could not start a child.
    let refused = tool_result(&reqs[4]);
    assert!(
        refused.starts_with("error: a child agent was not started: agents nest at most 3 deep"),
        "{refused}"
    );
    // Each level got its child's answer.
    assert_eq!(tool_result(&reqs[5]), "depth 3 done");
    assert_eq!(tool_result(&reqs[7]), "depth 1 done");
}

#[test]
fn a_guard_blocks_bash_inside_a_child_and_sees_its_depth() {
    let dir = TestDir::new();
    agent(&dir, "worker", "bash", "You work.");
    install(
        &dir,
        "guard.lua",
        r#"api.on("tool_call", function(e, ctx)
  if e.name == "bash" and ctx.depth > 0 then
    return { block = true, reason = "no bash in children (depth " .. ctx.depth .. ")" }
  end
end)"#,
    );
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([(
            "p1",
            "subagent",
            json!({"agent": "worker", "task": "run it"}),
        )]),
        Reply::tool_calls([("c1", "bash", json!({"command": "echo ran > ran.txt"}))]),
        Reply::text("could not run bash"),
        Reply::text("parent done"),
    ]);
    let out = Mypi::new(&dir).openai(&fake).args(["-p", "go"]).run();
    out.ok();
    assert!(!dir.exists("ran.txt"), "bash ran inside the child");
    let reqs = fake.requests();
    assert_eq!(
        tool_result(&reqs[2]),
        "blocked: no bash in children (depth 1)"
    );
    assert_eq!(tool_result(&reqs[3]), "could not run bash");
    // The user saw the child's tool call as its status line.
    assert!(
        out.stderr.contains("[worker · depth 1 · turn 1] bash {"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_broken_agent_file_is_reported_once_with_its_path_and_skipped() {
    let dir = TestDir::new();
    agent(&dir, "scout", "read", "You scout.");
    dir.write(
        ".agents/agents/broken.md",
        "---\nname scout-two\n---\nbody\n",
    );
    dir.write(".agents/agents/plain.md", "no front matter at all\n");
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "/agents"])
        .run();
    out.ok();
    assert_eq!(
        out.stdout.trim(),
        "scout - the scout (tools: read; .agents/agents/scout.md)"
    );
    let broken: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("broken.md"))
        .collect();
    assert_eq!(broken.len(), 1, "{}", out.stderr);
    assert!(
        broken[0].contains("front matter line 1 is not 'key: value'"),
        "{}",
        broken[0]
    );
    assert_eq!(out.stderr.matches("plain.md").count(), 1, "{}", out.stderr);

    // In a REPL, asking again does not repeat the report.
    let mut m = Mypi::new(&dir)
        .args(["--provider", "faux", "--no-watch"])
        .spawn();
    m.send_line("/agents");
    m.wait_for_line("scout - the scout", Duration::from_secs(15));
    m.send_line("/agents");
    m.wait_for_line("scout - the scout", Duration::from_secs(15));
    m.send_line("/quit");
    let out = m.wait();
    out.ok();
    let all = format!("{}{}", out.stdout, out.stderr);
    assert_eq!(all.matches("broken.md").count(), 1, "{all}");
}

#[test]
fn cancelling_a_parallel_run_stops_every_child() {
    let dir = TestDir::new();
    agent(&dir, "scout", "read", "You scout.");
    let tasks: Vec<Value> = (1..=4)
        .map(|i| json!({"agent": "scout", "task": format!("part {i}")}))
        .collect();
    let mut replies = vec![Reply::tool_calls([(
        "p1",
        "subagent",
        json!({"tasks": tasks}),
    )])];
    for _ in 0..4 {
        replies.push(Reply::hang_then_text(Duration::from_secs(30), "too late"));
    }
    replies.push(Reply::text("after the cancel"));
    let fake = FakeOpenAi::with_replies(replies);
    let mut m = Mypi::new(&dir)
        .openai(&fake)
        .env("MYPI_EXT_BUDGET_MS", BUDGET_MS)
        .arg("--no-watch")
        .spawn();
    m.send_line("go");
    fake.wait_for_requests(5, Duration::from_secs(20));
    let started = Instant::now();
    m.interrupt();
    m.wait_for_text("cancel", Duration::from_secs(5));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(
        fake.request_count(),
        5,
        "a request was sent after the cancel"
    );
    // The agent is idle again: the next prompt gets the next reply.
    m.send_line("still there?");
    m.wait_for_line("after the cancel", Duration::from_secs(10));
    m.send_line("/quit");
    m.wait().ok();
}
