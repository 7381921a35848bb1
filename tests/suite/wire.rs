//! Helpers shared by the binary-driven tests: reading what the fake servers received
//! (messages, tool results, system prompts in either API's shape) and the session files a
//! run left behind.

use std::path::PathBuf;

use serde_json::Value;

use crate::common::{FakeAnthropic, FakeOpenAi, Mypi, Output, Recorded, Reply, TestDir};

/// A tool result as a model API received it.
#[derive(Debug, Clone, PartialEq)]
pub struct SentResult {
    pub id: String,
    pub content: String,
    /// Anthropic sends `is_error`; OpenAI has no such field (always false here).
    pub is_error: bool,
}

/// The `messages` array of a request body.
pub fn messages(req: &Recorded) -> Vec<Value> {
    req.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("request has no messages array: {}", req.raw_body))
}

/// The system prompt: OpenAI's first `system` message or Anthropic's `system` field (text,
/// or text blocks).
pub fn system_prompt(req: &Recorded) -> String {
    if let Some(s) = req.body["system"].as_str() {
        return s.to_string();
    }
    if let Some(blocks) = req.body["system"].as_array() {
        return blocks.iter().filter_map(|b| b["text"].as_str()).collect();
    }
    messages(req)
        .iter()
        .find(|m| m["role"] == "system")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// Every piece of user text in the request, in order (plain strings and `text` blocks).
pub fn user_texts(req: &Recorded) -> Vec<String> {
    let mut out = Vec::new();
    for m in messages(req).iter().filter(|m| m["role"] == "user") {
        match &m["content"] {
            Value::String(s) => out.push(s.clone()),
            Value::Array(blocks) => out.extend(
                blocks
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .filter_map(|b| b["text"].as_str().map(str::to_string)),
            ),
            _ => {}
        }
    }
    out
}

/// Every piece of assistant text in the request, in order.
pub fn assistant_texts(req: &Recorded) -> Vec<String> {
    let mut out = Vec::new();
    for m in messages(req).iter().filter(|m| m["role"] == "assistant") {
        match &m["content"] {
            Value::String(s) if !s.is_empty() => out.push(s.clone()),
            Value::Array(blocks) => out.extend(
                blocks
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .filter_map(|b| b["text"].as_str().map(str::to_string)),
            ),
            _ => {}
        }
    }
    out
}

/// Tool results in the order they appear: OpenAI `role: tool` messages or Anthropic
/// `tool_result` blocks.
pub fn tool_results(req: &Recorded) -> Vec<SentResult> {
    let mut out = Vec::new();
    for m in messages(req) {
        if m["role"] == "tool" {
            out.push(SentResult {
                id: m["tool_call_id"].as_str().unwrap_or_default().to_string(),
                content: m["content"].as_str().unwrap_or_default().to_string(),
                is_error: false,
            });
        }
        for b in m["content"].as_array().into_iter().flatten() {
            if b["type"] == "tool_result" {
                out.push(SentResult {
                    id: b["tool_use_id"].as_str().unwrap_or_default().to_string(),
                    content: text_of_block_content(&b["content"]),
                    is_error: b["is_error"].as_bool().unwrap_or(false),
                });
            }
        }
    }
    out
}

fn text_of_block_content(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// Names of the tools offered in the request (either API's shape).
pub fn tool_names(req: &Recorded) -> Vec<String> {
    req.body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| {
            t["function"]["name"]
                .as_str()
                .or_else(|| t["name"].as_str())
                .map(str::to_string)
        })
        .collect()
}

/// Where mypi keeps the sessions of the project `dir` (with the tests' HOME):
/// `~/.agents/sessions/<project-folder-slug>/`.
pub fn sessions_dir(dir: &TestDir) -> PathBuf {
    let project = dir.path().canonicalize().unwrap();
    dir.home()
        .join(".agents/sessions")
        .join(mypi::config::project_slug(&project))
}

/// The session files of the project `dir`, sorted.
pub fn session_files(dir: &TestDir) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(sessions_dir(dir))
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
}

/// The only session file; panics unless there is exactly one.
pub fn only_session(dir: &TestDir) -> PathBuf {
    let files = session_files(dir);
    assert_eq!(files.len(), 1, "expected one session file: {files:?}");
    files.into_iter().next().unwrap()
}

/// The `message` entries of a session file.
pub fn session_messages(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .filter(|e| e["type"] == "message")
        .map(|e| e["message"].clone())
        .collect()
}

/// Asserts that stderr has no trace of a panic.
pub fn no_panic(stderr: &str) {
    assert!(
        !stderr.contains("panicked"),
        "mypi panicked; stderr:\n{stderr}"
    );
}

/// Which fake API a parametrised test runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    OpenAi,
    Anthropic,
}

pub const BOTH: [Api; 2] = [Api::OpenAi, Api::Anthropic];

/// Runs `mypi ARGS` in `dir` against a fresh fake server of `api` scripted with `replies`;
/// returns the output and every request the server received.
pub fn run_api(
    api: Api,
    dir: &TestDir,
    replies: Vec<Reply>,
    args: &[&str],
) -> (Output, Vec<Recorded>) {
    match api {
        Api::OpenAi => {
            let fake = FakeOpenAi::with_replies(replies);
            let out = Mypi::new(dir).openai(&fake).args(args).run();
            (out, fake.requests())
        }
        Api::Anthropic => {
            let fake = FakeAnthropic::with_replies(replies);
            let out = Mypi::new(dir).anthropic(&fake).args(args).run();
            (out, fake.requests())
        }
    }
}

/// The reply's length limit: a known Anthropic model's own (64k for Claude Sonnet 4.5, not a
/// fixed 8192), `MYPI_MAX_OUTPUT_TOKENS` over it; a Chat Completions server gets one only when
/// it is configured (`max_output_tokens` of the model's table entry).
#[test]
fn max_tokens_comes_from_the_model_and_the_configuration() {
    let dir = TestDir::new();
    let sonnet = |env: Option<&str>| {
        let fake = FakeAnthropic::with_replies(vec![Reply::text("ok")]);
        let mut m = Mypi::new(&dir).anthropic(&fake).model("claude-sonnet-4-5");
        if let Some(n) = env {
            m = m.env("MYPI_MAX_OUTPUT_TOKENS", n);
        }
        m.args(["-p", "hi"]).run().ok();
        fake.requests()[0].body["max_tokens"].clone()
    };
    assert_eq!(sonnet(None), 64_000);
    assert_eq!(sonnet(Some("1000")), 1000);
    let (out, sent) = run_api(Api::OpenAi, &dir, vec![Reply::text("ok")], &["-p", "hi"]);
    out.ok();
    assert!(sent[0].body.get("max_tokens").is_none(), "{}", sent[0].body);
    let openai = FakeOpenAi::with_replies(vec![Reply::text("ok")]);
    dir.write(
        "home/.agents/config.toml",
        &format!(
            "provider = \"local\"\n[providers.local]\napi = \"openai\"\nbase_url = \"{}\"\n\
             models = [{{ name = \"m\", max_output_tokens = 3000 }}]\n",
            openai.url()
        ),
    );
    Mypi::new(&dir)
        .env("OPENAI_API_KEY", "k")
        .args(["-p", "hi"])
        .run()
        .ok();
    assert_eq!(openai.requests()[0].body["max_tokens"], 3000);
}
