//! Tool round trips through the real binary: the fake model asks for a tool, mypi runs it for
//! real in the test folder, and the next request carries the result (with the call's id).
//! Each built-in tool against both APIs, parallel reads, and malformed arguments.

use serde_json::{json, Value};

use crate::common::{Recorded, Reply, TestDir};

use super::wire::{no_panic, run_api, tool_results, Api, SentResult, BOTH};

/// The assistant's tool calls in a request as `(id, name, arguments)`, either API's shape.
fn sent_calls(req: &Recorded) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for m in req.body["messages"].as_array().unwrap() {
        if m["role"] != "assistant" {
            continue;
        }
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            let args = c["function"]["arguments"].as_str().unwrap_or("");
            out.push((
                c["id"].as_str().unwrap().to_string(),
                c["function"]["name"].as_str().unwrap().to_string(),
                serde_json::from_str(args).unwrap_or(Value::String(args.to_string())),
            ));
        }
        for b in m["content"].as_array().into_iter().flatten() {
            if b["type"] == "tool_use" {
                out.push((
                    b["id"].as_str().unwrap().to_string(),
                    b["name"].as_str().unwrap().to_string(),
                    b["input"].clone(),
                ));
            }
        }
    }
    out
}

/// One tool call then a final text; returns the single tool result the second request
/// carried, after checking the run and the echo of the call.
fn round_trip(api: Api, dir: &TestDir, id: &str, tool: &str, args: Value) -> SentResult {
    let replies = vec![
        Reply::tool_calls(vec![(id, tool, args.clone())]),
        Reply::text("All done."),
    ];
    let (out, reqs) = run_api(api, dir, replies, &["-p", "do it"]);
    out.ok();
    no_panic(&out.stderr);
    assert_eq!(out.stdout, "All done.\n", "{api:?}: {}", out.describe());
    assert_eq!(reqs.len(), 2, "{api:?}");
    assert!(tool_results(&reqs[0]).is_empty());
    assert_eq!(
        sent_calls(&reqs[1]),
        vec![(id.to_string(), tool.to_string(), args)],
        "{api:?}: the assistant's call is sent back"
    );
    let results = tool_results(&reqs[1]);
    assert_eq!(results.len(), 1, "{api:?}: {}", reqs[1].raw_body);
    assert_eq!(results[0].id, id, "{api:?}");
    results.into_iter().next().unwrap()
}

#[test]
fn read_round_trip() {
    for api in BOTH {
        let dir = TestDir::new();
        dir.write("src/notes.txt", "first line\nsecond line\n");
        let r = round_trip(
            api,
            &dir,
            "call_r1",
            "read",
            json!({"path": "src/notes.txt"}),
        );
        assert!(r.content.contains("first line"), "{api:?}: {r:?}");
        assert!(r.content.contains("second line"), "{api:?}: {r:?}");
        assert!(!r.is_error);
    }
}

#[test]
fn write_round_trip_creates_the_file() {
    for api in BOTH {
        let dir = TestDir::new();
        let args = json!({"path": "out/deep/new.txt", "content": "fresh content\n"});
        let r = round_trip(api, &dir, "call_w1", "write", args);
        assert_eq!(dir.read("out/deep/new.txt"), "fresh content\n", "{api:?}");
        assert!(r.content.contains("wrote 14 bytes"), "{api:?}: {r:?}");
        assert!(r.content.contains("new.txt"), "{api:?}: {r:?}");
        assert!(!r.is_error);
    }
}

#[test]
fn edit_round_trip_changes_the_file() {
    for api in BOTH {
        let dir = TestDir::new();
        dir.write("lib.rs", "fn main() {\n    println!(\"old\");\n}\n");
        let args = json!({"path": "lib.rs", "old_text": "\"old\"", "new_text": "\"new\""});
        let r = round_trip(api, &dir, "call_e1", "edit", args);
        assert_eq!(
            dir.read("lib.rs"),
            "fn main() {\n    println!(\"new\");\n}\n",
            "{api:?}"
        );
        assert!(r.content.contains("edited"), "{api:?}: {r:?}");
        assert!(!r.is_error);
    }
}

#[test]
fn edit_of_missing_text_is_an_error_result_and_the_file_is_unchanged() {
    for api in BOTH {
        let dir = TestDir::new();
        dir.write("a.txt", "alpha\n");
        let args = json!({"path": "a.txt", "old_text": "omega", "new_text": "x"});
        let r = round_trip(api, &dir, "call_e2", "edit", args);
        assert!(r.content.contains("not found"), "{api:?}: {r:?}");
        if api == Api::Anthropic {
            assert!(r.is_error);
        }
        assert_eq!(dir.read("a.txt"), "alpha\n");
    }
}

#[test]
fn bash_round_trip_runs_in_the_working_folder() {
    for api in BOTH {
        let dir = TestDir::new();
        let args = json!({"command": "echo hello-from-bash && pwd && touch made-by-bash.txt"});
        let r = round_trip(api, &dir, "call_b1", "bash", args);
        assert!(dir.exists("made-by-bash.txt"), "{api:?}");
        assert!(r.content.starts_with("hello-from-bash\n"), "{api:?}: {r:?}");
        assert!(
            r.content.contains(&dir.path().display().to_string()),
            "{api:?}: {r:?}"
        );
        assert!(r.content.ends_with("exit code: 0"), "{api:?}: {r:?}");
        assert!(!r.is_error);
    }
}

#[test]
fn bash_failure_reports_the_exit_code() {
    for api in BOTH {
        let dir = TestDir::new();
        let args = json!({"command": "echo oops >&2; exit 3"});
        let r = round_trip(api, &dir, "call_b2", "bash", args);
        assert!(r.content.contains("oops"), "{api:?}: {r:?}");
        assert!(r.content.ends_with("exit code: 3"), "{api:?}: {r:?}");
        if api == Api::Anthropic {
            assert!(r.is_error, "a non-zero exit is an error result");
        }
    }
}

#[test]
fn two_parallel_reads_come_back_in_call_order() {
    for api in BOTH {
        let dir = TestDir::new();
        // The first file is much larger, so it is the slower of the two.
        dir.write("big.txt", &"BIG CONTENT\n".repeat(3000));
        dir.write("small.txt", "SMALL CONTENT\n");
        let replies = vec![
            Reply::tool_calls(vec![
                ("call_a", "read", json!({"path": "big.txt"})),
                ("call_b", "read", json!({"path": "small.txt"})),
            ])
            .with_text("Reading both."),
            Reply::text("Both read."),
        ];
        let (out, reqs) = run_api(api, &dir, replies, &["-p", "read both"]);
        out.ok();
        assert_eq!(out.stdout, "Both read.\n", "{api:?}");
        assert_eq!(reqs.len(), 2);
        let results = tool_results(&reqs[1]);
        let ids: Vec<&str> = results.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, vec!["call_a", "call_b"], "{api:?}");
        assert!(results[0].content.contains("BIG CONTENT"), "{api:?}");
        assert!(results[1].content.contains("SMALL CONTENT"), "{api:?}");
        let names: Vec<String> = sent_calls(&reqs[1]).into_iter().map(|c| c.0).collect();
        assert_eq!(names, vec!["call_a", "call_b"]);
    }
}

#[test]
fn malformed_tool_arguments_get_an_error_result_and_the_run_goes_on() {
    for api in BOTH {
        let dir = TestDir::new();
        let replies = vec![
            Reply::raw_tool_args("call_bad", "bash", "{\"command\": "),
            Reply::text("Sorry, retrying later."),
        ];
        let (out, reqs) = run_api(api, &dir, replies, &["-p", "run something"]);
        out.ok();
        no_panic(&out.stderr);
        assert_eq!(out.stdout, "Sorry, retrying later.\n", "{api:?}");
        assert_eq!(reqs.len(), 2, "{api:?}");
        let results = tool_results(&reqs[1]);
        assert_eq!(results.len(), 1, "{api:?}: {}", reqs[1].raw_body);
        assert_eq!(results[0].id, "call_bad");
        assert!(
            results[0].content.contains("not valid JSON"),
            "{api:?}: {:?}",
            results[0]
        );
        assert!(results[0].content.contains("bash"), "{api:?}");
        if api == Api::Anthropic {
            assert!(results[0].is_error);
        }
    }
}

#[test]
fn arguments_that_break_the_schema_get_a_precise_error() {
    let dir = TestDir::new();
    let replies = vec![
        Reply::tool_calls(vec![("call_s", "read", json!({"path": 42}))]),
        Reply::text("ok"),
    ];
    let (out, reqs) = run_api(Api::OpenAi, &dir, replies, &["-p", "x"]);
    out.ok();
    let r = &tool_results(&reqs[1])[0];
    assert!(r.content.contains("invalid arguments for 'read'"), "{r:?}");
}

#[test]
fn unknown_tool_gets_an_error_naming_the_real_ones() {
    let dir = TestDir::new();
    let replies = vec![
        Reply::tool_calls(vec![("call_u", "grep", json!({"pattern": "x"}))]),
        Reply::text("ok"),
    ];
    let (out, reqs) = run_api(Api::Anthropic, &dir, replies, &["-p", "x"]);
    out.ok();
    let r = &tool_results(&reqs[1])[0];
    assert!(r.content.contains("unknown tool 'grep'"), "{r:?}");
    assert!(r.content.contains("read"), "{r:?}");
    assert!(r.is_error);
}
