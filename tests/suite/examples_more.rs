//! The examples added with subagents (issue 10), each loaded from `examples/` and driven
//! through one turn of the binary in both languages: the permission gate, git context and
//! the session summary (`api.complete`); and the example agents under the shipped
//! `subagent` tool.

use std::path::PathBuf;
use std::process::Command;

use serde_json::json;

use super::ext_util::{install_example, BUDGET_MS, WAIT};
use super::wire::{system_prompt, tool_results, user_texts};
use crate::common::{FakeOpenAi, Mypi, Reply, TestDir};

fn openai(dir: &TestDir, fake: &FakeOpenAi) -> Mypi {
    Mypi::new(dir)
        .openai(fake)
        .env("MYPI_EXT_BUDGET_MS", BUDGET_MS)
}

/// The model asks for `bash`; in print mode nobody can allow it, so it is blocked.
fn gate_blocks_in_print_mode(file: &str) {
    let dir = TestDir::new();
    install_example(&dir, file);
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([("c1", "bash", json!({"command": "echo hi > out.txt"}))]),
        Reply::text("ok, I will not"),
    ]);
    let out = openai(&dir, &fake).args(["-p", "make a file"]).run();
    out.ok();
    assert!(!dir.exists("out.txt"), "bash ran");
    let sent = &tool_results(&fake.requests()[1])[0];
    assert_eq!(
        sent.content,
        "blocked: the user did not allow bash echo hi > out.txt"
    );
}

/// In the REPL the user says yes, and `write` runs.
fn gate_asks_in_the_repl(file: &str) {
    let dir = TestDir::new();
    install_example(&dir, file);
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls([("c1", "write", json!({"path": "w.txt", "content": "x"}))]),
        Reply::text("written"),
    ]);
    let mut m = openai(&dir, &fake).arg("--no-watch").spawn();
    m.send_line("write it");
    m.wait_for_text("allow write w.txt?", WAIT);
    m.send_line("y");
    m.wait_for_line("written", WAIT);
    m.send_line("/quit");
    m.wait().ok();
    assert_eq!(dir.read("w.txt"), "x");
}

#[test]
fn the_permission_gate_blocks_bash_when_nobody_can_answer_in_lua() {
    gate_blocks_in_print_mode("permission_gate.lua");
}

#[test]
fn the_permission_gate_blocks_bash_when_nobody_can_answer_in_rhai() {
    gate_blocks_in_print_mode("permission_gate.rhai");
}

#[test]
fn the_permission_gate_asks_before_write_in_lua() {
    gate_asks_in_the_repl("permission_gate.lua");
}

#[test]
fn the_permission_gate_asks_before_write_in_rhai() {
    gate_asks_in_the_repl("permission_gate.rhai");
}

fn git(dir: &TestDir, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir.path())
        .env("HOME", dir.home())
        .output()
        .expect("git")
        .status
        .success();
    assert!(ok, "git {args:?}");
}

fn git_context(file: &str) {
    let dir = TestDir::new();
    install_example(&dir, file);
    git(&dir, &["init", "-q", "-b", "work"]);
    dir.write("a.txt", "new\n");
    let fake = FakeOpenAi::with_replies(vec![Reply::text("ok"), Reply::text("ok")]);
    openai(&dir, &fake).args(["-p", "hi"]).run().ok();
    let system = system_prompt(&fake.requests()[0]);
    assert!(system.contains("\n\nGit branch: work\n"), "{system}");
    assert!(system.contains("Git status --short:\n"), "{system}");
    assert!(system.contains("?? a.txt"), "{system}");
    // Outside a git work tree nothing is added.
    let plain = TestDir::new();
    install_example(&plain, file);
    openai(&plain, &fake).args(["-p", "hi"]).run().ok();
    assert!(!system_prompt(&fake.requests()[1]).contains("Git branch"));
}

#[test]
fn git_context_adds_the_branch_and_status_in_lua() {
    git_context("git_context.lua");
}

#[test]
fn git_context_adds_the_branch_and_status_in_rhai() {
    git_context("git_context.rhai");
}

fn session_summary(file: &str) {
    let dir = TestDir::new();
    install_example(&dir, file);
    let fake = FakeOpenAi::with_replies(vec![
        Reply::text("hi there"),
        Reply::text("- the user said hello"),
    ]);
    let mut m = openai(&dir, &fake).arg("--no-watch").spawn();
    m.send_line("/summary");
    m.wait_for_line("nothing to summarize yet", WAIT);
    m.send_line("hello");
    m.wait_for_line("hi there", WAIT);
    m.send_line("/summary");
    m.wait_for_line("- the user said hello", WAIT);
    m.send_line("/quit");
    m.wait().ok();
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 2);
    let call = &reqs[1];
    assert_eq!(call.body["max_tokens"], 400);
    assert!(call.body.get("tools").is_none());
    assert!(system_prompt(call).starts_with("You write short, factual summaries"));
    let asked = &user_texts(call)[0];
    assert!(
        asked.ends_with("\n\nuser: hello\nassistant: hi there"),
        "{asked}"
    );
}

#[test]
fn the_session_summary_is_one_model_call_in_lua() {
    session_summary("session_summary.lua");
}

#[test]
fn the_session_summary_is_one_model_call_in_rhai() {
    session_summary("session_summary.rhai");
}

/// Copies `examples/agents/*.md` into the project's `.agents/agents`.
fn install_agents(dir: &TestDir) -> Vec<String> {
    let from = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/agents");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        dir.write(&format!(".agents/agents/{name}"), &text);
        names.push(name);
    }
    names.sort();
    names
}

#[test]
fn the_example_agents_are_listed_and_run_with_their_prompt_and_tools() {
    let dir = TestDir::new();
    let files = install_agents(&dir);
    assert_eq!(files, ["planner.md", "reviewer.md", "scout.md"]);
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "/agents"])
        .run();
    out.ok();
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", out.describe());
    for (line, name) in lines.iter().zip(["planner", "reviewer", "scout"]) {
        assert!(line.starts_with(&format!("{name} - ")), "{line}");
        assert!(
            line.contains("(tools: read, bash; .agents/agents/"),
            "{line}"
        );
    }
    assert!(out.stderr.is_empty(), "{}", out.stderr);

    // Each agent runs one turn with its file's body as its system prompt and its two tools.
    for (name, opening) in [
        ("scout", "You are a scout in a software project."),
        ("planner", "You are a planner."),
        ("reviewer", "You are a careful code reviewer."),
    ] {
        let fake = FakeOpenAi::with_replies(vec![
            Reply::tool_calls([(
                "c1",
                "subagent",
                json!({"agent": name, "task": "look at main"}),
            )]),
            Reply::text(format!("{name} says: fine")),
            Reply::text("Relayed."),
        ]);
        let out = openai(&dir, &fake).args(["-p", "go"]).run();
        out.ok();
        assert_eq!(out.stdout.trim(), "Relayed.");
        let reqs = fake.requests();
        // The parent's tool lists the agents for the model.
        let tool = reqs[0].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["function"]["name"] == "subagent")
            .expect("the subagent tool");
        let description = tool["function"]["description"].as_str().unwrap();
        for listed in ["- planner: ", "- reviewer: ", "- scout: "] {
            assert!(description.contains(listed), "{description}");
        }
        let child = &reqs[1];
        assert!(
            system_prompt(child).starts_with(opening),
            "{name}: {}",
            system_prompt(child)
        );
        let mut tools: Vec<&str> = child.body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap())
            .collect();
        tools.sort();
        assert_eq!(tools, ["bash", "read"], "{name}");
        assert_eq!(
            tool_results(&reqs[2])[0].content,
            format!("{name} says: fine")
        );
    }
}
