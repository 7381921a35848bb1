//! Session files: written as the conversation happens, resumed by `--continue` (also after a
//! torn last line), absent with `--no-session`.

use std::io::Write;

use serde_json::{json, Value};

use crate::common::{Reply, TestDir};

use super::wire::{
    assistant_texts, no_panic, only_session, run_api, session_files, session_messages,
    tool_results, user_texts, Api, BOTH,
};

fn roles(messages: &[Value]) -> Vec<&str> {
    messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect()
}

#[test]
fn a_run_writes_a_session_and_continue_resumes_it() {
    for api in BOTH {
        let dir = TestDir::new();
        let replies = vec![Reply::text("The first answer.")];
        let (out, _) = run_api(api, &dir, replies, &["-p", "first question"]);
        out.ok();
        let path = only_session(&dir);
        let text = std::fs::read_to_string(&path).unwrap();
        let first_line: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(first_line["type"], "session");
        assert_eq!(first_line["cwd"], dir.path().display().to_string());
        let stored = session_messages(&path);
        assert_eq!(
            stored,
            vec![
                json!({"role": "user", "content": "first question"}),
                // Each assistant message keeps the usage of its request.
                json!({"role": "assistant", "content": "The first answer.",
                       "usage": {"input_tokens": 10, "output_tokens": 5}}),
            ]
        );

        let replies = vec![Reply::text("The second answer.")];
        let (out, reqs) = run_api(api, &dir, replies, &["--continue", "-p", "second question"]);
        out.ok();
        assert_eq!(out.stdout, "The second answer.\n");
        assert_eq!(
            user_texts(&reqs[0]),
            vec!["first question", "second question"],
            "{api:?}"
        );
        assert_eq!(assistant_texts(&reqs[0]), vec!["The first answer."]);
        assert_eq!(
            only_session(&dir),
            path,
            "--continue appends to the same file"
        );
        let stored = session_messages(&path);
        assert_eq!(
            roles(&stored),
            vec!["user", "assistant", "user", "assistant"]
        );
        assert_eq!(stored[3]["content"], "The second answer.");
    }
}

#[test]
fn without_continue_a_new_session_starts() {
    let dir = TestDir::new();
    run_api(Api::OpenAi, &dir, vec![Reply::text("a")], &["-p", "one"])
        .0
        .ok();
    let (out, reqs) = run_api(Api::OpenAi, &dir, vec![Reply::text("b")], &["-p", "two"]);
    out.ok();
    assert_eq!(user_texts(&reqs[0]), vec!["two"]);
    assert_eq!(session_files(&dir).len(), 2);
}

#[test]
fn continue_replays_tool_calls_and_results_across_providers() {
    let dir = TestDir::new();
    dir.write("data.txt", "forty-two\n");
    let replies = vec![
        Reply::tool_calls(vec![("call_x", "read", json!({"path": "data.txt"}))]),
        Reply::text("It says forty-two."),
    ];
    run_api(Api::OpenAi, &dir, replies, &["-p", "read data.txt"])
        .0
        .ok();

    // Resume the same conversation against the other API: the ids must survive.
    let replies = vec![Reply::text("Still forty-two.")];
    let (out, reqs) = run_api(Api::Anthropic, &dir, replies, &["-c", "-p", "again?"]);
    out.ok();
    let results = tool_results(&reqs[0]);
    assert_eq!(results.len(), 1, "{}", reqs[0].raw_body);
    assert_eq!(results[0].id, "call_x");
    assert!(results[0].content.contains("forty-two"));
    let uses: Vec<&Value> = reqs[0].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().into_iter().flatten())
        .filter(|b| b["type"] == "tool_use")
        .collect();
    assert_eq!(uses.len(), 1);
    assert_eq!(uses[0]["id"], "call_x");
    assert_eq!(uses[0]["input"], json!({"path": "data.txt"}));
}

#[test]
fn no_session_writes_no_file() {
    let dir = TestDir::new();
    let replies = vec![
        Reply::tool_calls(vec![("c", "bash", json!({"command": "true"}))]),
        Reply::text("done"),
    ];
    let (out, _) = run_api(Api::OpenAi, &dir, replies, &["--no-session", "-p", "hi"]);
    out.ok();
    assert!(!dir.exists(".agents/sessions"), "{:?}", session_files(&dir));
    assert!(!super::wire::sessions_dir(&dir).exists());
    assert!(session_files(&dir).is_empty());
}

#[test]
fn a_command_alone_writes_no_session() {
    let dir = TestDir::new();
    let (out, _) = run_api(Api::OpenAi, &dir, vec![], &["-p", "/tools"]);
    out.ok();
    assert!(session_files(&dir).is_empty());
}

#[test]
fn continue_without_a_session_fails_clearly() {
    let dir = TestDir::new();
    let (out, reqs) = run_api(Api::OpenAi, &dir, vec![], &["--continue", "-p", "hi"]);
    assert_ne!(out.code, 0, "{}", out.describe());
    no_panic(&out.stderr);
    assert!(reqs.is_empty());
    assert!(
        out.stderr.contains("no session to continue"),
        "{}",
        out.describe()
    );
}

#[test]
fn torn_last_line_is_skipped_with_a_warning() {
    for api in BOTH {
        let dir = TestDir::new();
        let replies = vec![Reply::text("Answer before the crash.")];
        run_api(api, &dir, replies, &["-p", "before the crash"])
            .0
            .ok();
        let path = only_session(&dir);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"half wri")
            .unwrap();
        drop(f);

        let replies = vec![Reply::text("Resumed fine.")];
        let (out, reqs) = run_api(api, &dir, replies, &["--continue", "-p", "after"]);
        out.ok();
        no_panic(&out.stderr);
        assert_eq!(out.stdout, "Resumed fine.\n");
        assert!(
            out.stderr.contains("the last line was incomplete"),
            "{api:?}: {}",
            out.describe()
        );
        assert!(out.stderr.contains(&path.display().to_string()));
        assert_eq!(user_texts(&reqs[0]), vec!["before the crash", "after"]);
        assert_eq!(assistant_texts(&reqs[0]), vec!["Answer before the crash."]);
        assert!(!reqs[0].raw_body.contains("half wri"));

        // The torn line was cut off: every line of the file is JSON again.
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines() {
            serde_json::from_str::<Value>(line)
                .unwrap_or_else(|e| panic!("bad line after resume ({e}): {line:?}"));
        }
        assert_eq!(session_messages(&path).len(), 4);
    }
}

#[test]
fn session_command_in_print_mode_says_nothing_was_created() {
    let dir = TestDir::new();
    let (out, _) = run_api(Api::OpenAi, &dir, vec![], &["-p", "/session"]);
    out.ok();
    assert!(out.stdout.contains("Session:"), "{}", out.describe());
    assert!(out.stdout.contains("Messages: 0"), "{}", out.describe());
}

#[test]
fn torn_line_warning_is_a_notice_event_in_json_mode() {
    let dir = TestDir::new();
    run_api(Api::OpenAi, &dir, vec![Reply::text("a")], &["-p", "one"])
        .0
        .ok();
    let path = only_session(&dir);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(b"{\"type\":\"mess").unwrap();
    drop(f);
    let (out, _) = run_api(
        Api::OpenAi,
        &dir,
        vec![Reply::text("b")],
        &["-c", "-p", "two", "--json"],
    );
    out.ok();
    let events: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
        .collect();
    assert_eq!(events[0]["type"], "notice", "{}", out.describe());
    assert!(events[0]["message"]
        .as_str()
        .unwrap()
        .contains("the last line was incomplete"));
    assert_eq!(events.last().unwrap()["text"], "b");
}
