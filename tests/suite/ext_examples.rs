//! Each example script in `examples/` installed in a project and driven through the binary:
//! what the model received (the fake OpenAI server's recorded requests), what the user saw,
//! and what the session file kept.

use serde_json::{json, Value};

use crate::common::{FakeOpenAi, Mypi, Output, Reply, TestDir};

use super::ext_features::{events, of_type};
use super::ext_util::{faux, install_example, BUDGET_MS};
use super::wire::{
    messages, no_panic, only_session, session_messages, system_prompt, tool_results, user_texts,
};

/// `mypi -p PROMPT` against `fake` in `dir`.
fn run(dir: &TestDir, fake: &FakeOpenAi, prompt: &str) -> Output {
    let out = Mypi::new(dir)
        .openai(fake)
        .env("MYPI_EXT_BUDGET_MS", BUDGET_MS)
        .args(["-p", prompt])
        .run();
    no_panic(&out.stderr);
    out
}

/// The `content` of a session or request message as text.
fn text(m: &Value) -> String {
    m["content"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_default()
}

#[test]
fn guard_blocks_rm_rf_and_the_model_gets_the_reason() {
    let dir = TestDir::new();
    install_example(&dir, "guard.lua");
    dir.write("build/keep.txt", "precious");
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls(vec![("c1", "bash", json!({"command": "rm -rf build"}))]),
        Reply::tool_calls(vec![("c2", "bash", json!({"command": "echo harmless"}))]),
        Reply::text("I will not delete it."),
    ]);
    let out = run(&dir, &fake, "clean up");
    out.ok();
    assert_eq!(out.stdout.trim(), "I will not delete it.");
    assert!(dir.exists("build/keep.txt"), "the guard let rm -rf run");
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 3);
    let blocked = &tool_results(&reqs[1])[0];
    assert_eq!(blocked.id, "c1");
    assert!(
        blocked
            .content
            .starts_with("blocked: the guard refuses `rm -rf build`: destructive command"),
        "{blocked:?}"
    );
    // Other commands pass.
    assert!(tool_results(&reqs[2])[1].content.contains("harmless"));
}

#[test]
fn cap_timeouts_rewrites_the_arguments_of_bash_calls() {
    let dir = TestDir::new();
    install_example(&dir, "cap_timeouts.lua");
    let replies = [
        json!({"tool_calls": [
            {"name": "bash", "arguments": {"command": "echo one", "timeout_ms": 600000}},
            {"name": "bash", "arguments": {"command": "echo two"}},
            {"name": "bash", "arguments": {"command": "echo three", "timeout_ms": 5000}}
        ]}),
        json!({"text": "done"}),
    ];
    let out = faux(&dir, &replies)
        .args(["--no-session", "--json", "-p", "run them"])
        .run();
    out.ok();
    let ev = events(&out.stdout);
    let calls: Vec<Value> = of_type(&ev, "tool_call")
        .into_iter()
        .map(|c| c["arguments"].clone())
        .collect();
    assert_eq!(
        calls,
        vec![
            json!({"command": "echo one", "timeout_ms": 60000}),
            json!({"command": "echo two", "timeout_ms": 60000}),
            json!({"command": "echo three", "timeout_ms": 5000}),
        ],
        "{}",
        out.describe()
    );
    let results = of_type(&ev, "tool_result");
    assert_eq!(results.len(), 3);
    assert!(
        results.iter().all(|r| r["is_error"] == false),
        "{results:?}"
    );
}

#[test]
fn redact_hides_secrets_from_the_model_and_the_session_file() {
    redact_hides_secrets("redact.lua");
}

#[test]
fn redact_in_rhai_hides_secrets_from_the_model_and_the_session_file() {
    redact_hides_secrets("redact.rhai");
}

fn redact_hides_secrets(file: &str) {
    let dir = TestDir::new();
    install_example(&dir, file);
    dir.write(
        "config.env",
        "API_KEY=sk-live_abc123DEF\nUSER=me\nGH=ghp_XyZ09 and AWS=AKIAABC123.\n",
    );
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls(vec![("c1", "read", json!({"path": "config.env"}))]),
        Reply::text("Read it."),
    ]);
    run(&dir, &fake, "show the config").ok();
    let sent = &tool_results(&fake.requests()[1])[0];
    assert!(sent.content.contains("API_KEY=[redacted]"), "{sent:?}");
    assert!(sent.content.contains("USER=me"), "{sent:?}");
    assert!(!sent.content.contains("sk-live"), "{sent:?}");
    assert!(
        sent.content.contains("GH=[redacted] and AWS=[redacted]."),
        "{sent:?}"
    );
    let file = std::fs::read_to_string(only_session(&dir)).unwrap();
    assert!(!file.contains("sk-live"), "{file}");
    assert!(file.contains("API_KEY=[redacted]"), "{file}");
}

#[test]
fn shortcuts_rewrite_question_marks_and_answer_ping_without_the_model() {
    let dir = TestDir::new();
    install_example(&dir, "shortcuts.lua");
    let fake = FakeOpenAi::with_replies(vec![Reply::text("Lifetimes are ...")]);
    let out = run(&dir, &fake, "?lifetimes");
    out.ok();
    assert_eq!(out.stdout.trim(), "Lifetimes are ...");
    assert_eq!(
        user_texts(&fake.requests()[0]),
        vec!["Explain lifetimes in three sentences, with one example."]
    );

    let fake = FakeOpenAi::start();
    let out = run(&dir, &fake, "ping");
    out.ok();
    assert_eq!(out.stdout.trim(), "pong", "{}", out.describe());
    assert_eq!(fake.request_count(), 0);
}

#[test]
fn house_rules_appends_to_the_system_prompt() {
    let dir = TestDir::new();
    install_example(&dir, "house_rules.lua");
    let fake = FakeOpenAi::with_replies(vec![Reply::text("ok"), Reply::text("ok")]);
    run(&dir, &fake, "hi").ok();
    let system = system_prompt(&fake.requests()[0]);
    assert!(
        system.ends_with("\n\nHouse rules: answer in English; never push to main."),
        "{system}"
    );
    // The original prompt is still there, before the rules.
    assert!(system.len() > 100, "{system}");

    // Without the extension the rules are gone.
    let plain = TestDir::new();
    run(&plain, &fake, "hi").ok();
    assert!(!system_prompt(&fake.requests()[1]).contains("House rules"));
}

#[test]
fn trim_context_drops_old_tool_results_from_requests_only() {
    trim_context_drops_old_results("trim_context.lua");
}

#[test]
fn trim_context_in_rhai_drops_old_tool_results_from_requests_only() {
    trim_context_drops_old_results("trim_context.rhai");
}

fn trim_context_drops_old_results(file: &str) {
    let dir = TestDir::new();
    install_example(&dir, file);
    for i in 1..=3 {
        dir.write(&format!("f{i}.txt"), &format!("content of file {i}\n"));
    }
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls(vec![("c1", "read", json!({"path": "f1.txt"}))]),
        Reply::tool_calls(vec![("c2", "read", json!({"path": "f2.txt"}))]),
        Reply::tool_calls(vec![("c3", "read", json!({"path": "f3.txt"}))]),
        Reply::text("All read."),
    ]);
    run(&dir, &fake, "read the three files").ok();
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 4);
    // With two results nothing is dropped yet.
    let second_turn = tool_results(&reqs[2]);
    assert!(
        second_turn[0].content.contains("content of file 1"),
        "{second_turn:?}"
    );
    let last = tool_results(&reqs[3]);
    assert_eq!(last.len(), 3);
    assert_eq!(last[0].content, "[old tool result dropped to save context]");
    assert!(last[1].content.contains("content of file 2"), "{last:?}");
    assert!(last[2].content.contains("content of file 3"), "{last:?}");
    // The session keeps every result in full.
    let session = session_messages(&only_session(&dir));
    let kept: Vec<String> = session
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(text)
        .collect();
    assert_eq!(kept.len(), 3, "{session:?}");
    for (i, k) in kept.iter().enumerate() {
        assert!(
            k.contains(&format!("content of file {}", i + 1)),
            "{kept:?}"
        );
    }
}

#[test]
fn forbidden_words_cuts_the_stream_and_stores_no_partial_text() {
    let dir = TestDir::new();
    install_example(&dir, "forbidden_words.lua");
    let fake = FakeOpenAi::with_replies(vec![Reply::text(
        "Sure thing. The admin password is hunter2, keep it safe.",
    )]);
    let out = run(&dir, &fake, "what is the admin password?");
    out.ok();
    assert!(
        out.stderr
            .contains("the reply was cut: reply cut: it mentioned a forbidden word"),
        "{}",
        out.describe()
    );
    assert!(!out.stdout.contains("Sure thing"), "{}", out.describe());
    assert!(!out.stdout.contains("hunter2"), "{}", out.describe());
    let path = only_session(&dir);
    let file = std::fs::read_to_string(&path).unwrap();
    assert!(!file.contains("Sure thing"), "{file}");
    assert!(!file.contains("hunter2"), "{file}");
    let kept = session_messages(&path);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0]["role"], "user");
}

#[test]
fn steer_reaches_the_next_request_and_the_follow_up_runs_afterwards() {
    let dir = TestDir::new();
    install_example(&dir, "steer.lua");
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls(vec![(
            "c1",
            "bash",
            json!({"command": "echo oops; exit 3"}),
        )]),
        Reply::text("The command failed."),
        Reply::text("I ran one failing command."),
    ]);
    let out = run(&dir, &fake, "run the build");
    out.ok();
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 3, "{}", out.describe());
    const STEER: &str = "The last command failed: read its output before trying again.";
    const FOLLOW: &str = "Summarise what you did in one sentence.";
    // The very next request of the same run ends with the tool result, then the steer.
    let second = messages(&reqs[1]);
    let n = second.len();
    assert_eq!(second[n - 2]["role"], "tool", "{second:?}");
    assert_eq!(second[n - 1]["role"], "user", "{second:?}");
    assert_eq!(text(&second[n - 1]), STEER);
    assert!(!user_texts(&reqs[1]).contains(&FOLLOW.to_string()));
    // The follow-up is a new run after the first answer.
    let third = messages(&reqs[2]);
    assert_eq!(text(third.last().unwrap()), FOLLOW);
    assert!(third.iter().any(|m| text(m) == "The command failed."));

    let session = session_messages(&only_session(&dir));
    let seq: Vec<(String, String)> = session
        .iter()
        .map(|m| (m["role"].as_str().unwrap().to_string(), text(m)))
        .collect();
    let roles: Vec<&str> = seq.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(
        roles,
        vec![
            "user",
            "assistant",
            "tool",
            "user",
            "assistant",
            "user",
            "assistant"
        ],
        "{seq:?}"
    );
    assert_eq!(seq[0].1, "run the build");
    assert_eq!(seq[3].1, STEER);
    assert_eq!(seq[4].1, "The command failed.");
    assert_eq!(seq[5].1, FOLLOW);
    assert_eq!(seq[6].1, "I ran one failing command.");
}
