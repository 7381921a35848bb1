//! Streaming details a user notices: multi-byte text cut at arbitrary byte positions by the
//! wire, tool arguments with escapes and non-ASCII split across deltas, provider selection
//! from the environment, and the turn limit.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::{FakeAnthropic, FakeOpenAi, Mypi, Reply, TestDir};

use super::wire::{no_panic, run_api, tool_results, user_texts, Api, BOTH};

const UNICODE: &str = "Grüße — naïve café ✓ 日本語のテキスト 🎉🦀 done";

#[test]
fn multibyte_text_survives_the_seven_byte_chunks() {
    for api in BOTH {
        let dir = TestDir::new();
        let text = format!("{UNICODE} {UNICODE}");
        let (out, _) = run_api(api, &dir, vec![Reply::text(text.clone())], &["-p", "hi"]);
        out.ok();
        assert_eq!(out.stdout, format!("{text}\n"), "{api:?}");
        assert!(!out.stdout.contains('\u{fffd}'));
    }
}

#[test]
fn multibyte_and_escaped_tool_arguments_arrive_intact() {
    for api in BOTH {
        let dir = TestDir::new();
        let content = format!("{UNICODE}\n\"quoted\" \\ back\\slash\ttab\n");
        let replies = vec![
            Reply::tool_calls(vec![(
                "call_u",
                "write",
                json!({"path": "ünï/cödé.txt", "content": content}),
            )]),
            Reply::text("written"),
        ];
        let (out, reqs) = run_api(api, &dir, replies, &["-p", UNICODE]);
        out.ok();
        assert_eq!(dir.read("ünï/cödé.txt"), content, "{api:?}");
        assert_eq!(user_texts(&reqs[0]), vec![UNICODE]);
        assert!(tool_results(&reqs[1])[0].content.contains("cödé.txt"));
    }
}

#[test]
fn provider_is_picked_from_the_environment() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![Reply::text("from env openai")]);
    let out = Mypi::new(&dir)
        .env("OPENAI_API_KEY", "env-key")
        .env("OPENAI_BASE_URL", fake.url())
        .env("MYPI_MODEL", "env-model")
        .args(["-p", "hi"])
        .run();
    out.ok();
    assert_eq!(out.stdout, "from env openai\n");
    let req = &fake.requests()[0];
    assert_eq!(req.body["model"], "env-model");
    assert_eq!(req.header("authorization"), Some("Bearer env-key"));

    let fake = FakeAnthropic::with_replies(vec![Reply::text("from env anthropic")]);
    let out = Mypi::new(&dir)
        .env("ANTHROPIC_API_KEY", "env-key")
        .env("ANTHROPIC_BASE_URL", fake.url())
        .args(["-p", "hi"])
        .run();
    out.ok();
    assert_eq!(out.stdout, "from env anthropic\n");
    assert_eq!(fake.requests()[0].header("x-api-key"), Some("env-key"));
}

#[test]
fn local_server_needs_no_key() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![Reply::text("no key needed")]);
    let out = Mypi::new(&dir)
        .args([
            "--provider",
            "openai",
            "--base-url",
            &fake.url(),
            "-p",
            "hi",
        ])
        .run();
    out.ok();
    assert_eq!(out.stdout, "no key needed\n");
    assert_eq!(fake.requests()[0].header("authorization"), None);
}

#[test]
fn model_flag_switches_the_request_model() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![Reply::text("ok")]);
    let out = Mypi::new(&dir)
        .env("OPENAI_API_KEY", "k")
        .args(["--provider", "openai", "--base-url", &fake.url()])
        .args(["--model", "gpt-custom", "-p", "hi"])
        .run();
    out.ok();
    assert_eq!(fake.requests()[0].body["model"], "gpt-custom");
}

#[test]
fn a_model_that_never_stops_calling_tools_ends_with_exit_1() {
    let dir = TestDir::new();
    dir.write("f.txt", "x");
    let replies = (0..50)
        .map(|i| Reply::tool_calls(vec![(format!("c{i}"), "read", json!({"path": "f.txt"}))]))
        .collect();
    let (out, reqs) = run_api(Api::OpenAi, &dir, replies, &["-p", "loop"]);
    out.expect_code(1);
    no_panic(&out.stderr);
    assert_eq!(reqs.len(), 50);
    assert!(out.stderr.contains("50 turns"), "{}", out.describe());
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.describe());
}

#[test]
fn bash_timeout_kills_the_command() {
    let dir = TestDir::new();
    let replies = vec![
        Reply::tool_calls(vec![(
            "c_t",
            "bash",
            json!({"command": "echo started; sleep 20", "timeout_ms": 300}),
        )]),
        Reply::text("gave up"),
    ];
    let t = Instant::now();
    let (out, reqs) = run_api(Api::Anthropic, &dir, replies, &["-p", "x"]);
    out.ok();
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    let r = &tool_results(&reqs[1])[0];
    assert!(r.content.contains("started"), "{r:?}");
    assert!(r.is_error, "{r:?}");
}

#[test]
fn huge_tool_output_is_cut_in_the_middle() {
    let dir = TestDir::new();
    let replies = vec![
        Reply::tool_calls(vec![("c_big", "bash", json!({"command": "seq 1 200000"}))]),
        Reply::text("ok"),
    ];
    let (out, reqs) = run_api(Api::OpenAi, &dir, replies, &["-p", "x"]);
    out.ok();
    let r = &tool_results(&reqs[1])[0];
    assert!(r.content.len() <= 52 * 1024, "{} bytes", r.content.len());
    assert!(r.content.starts_with("1\n2\n3\n"), "{:.40}", r.content);
    assert!(
        r.content.ends_with("200000\nexit code: 0"),
        "{}",
        &r.content[r.content.len() - 40..]
    );
}
