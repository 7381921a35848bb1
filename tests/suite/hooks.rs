//! The hook decision points, driven through the library (`App::build` + `handle_line`) with
//! Rust handlers, against the fake OpenAI server. The script runtime that will register such
//! handlers from Lua and Rhai does not exist yet, so these cannot go through the binary.
//! What counts is what reached the server (recorded bodies), the files on disk and the
//! session file.

use std::sync::{Arc, Mutex};

use clap::Parser;
use serde_json::{json, Value};

use mypi::agent::EventSink;
use mypi::app::{App, LineOutcome};
use mypi::config::Config;
use mypi::hooks::{EventKind, HookError, HookEvent, HookHandler};
use mypi::repl::cli::Cli;
use mypi::vocab::owner::Owner;
use mypi::vocab::protocol::AgentEvent;
use tokio_util::sync::CancellationToken;

use crate::common::{FakeAnthropic, FakeOpenAi, Reply, TestDir};

use super::wire::{
    only_session, session_files, session_messages, system_prompt, tool_results, user_texts,
};

/// Collects the events of a run.
#[derive(Default)]
struct Events(Mutex<Vec<AgentEvent>>);

impl EventSink for Events {
    fn emit(&self, event: AgentEvent) {
        self.0.lock().unwrap().push(event);
    }
}

impl Events {
    fn all(&self) -> Vec<AgentEvent> {
        self.0.lock().unwrap().clone()
    }
}

/// An app pointed at a fake server, the notices it reported, and its working folder.
struct Rig {
    app: App,
    notices: Arc<Mutex<Vec<String>>>,
    dir: TestDir,
}

fn rig_for(provider: &str, url: &str, key_var: &'static str) -> Rig {
    let dir = TestDir::new();
    let cli = Cli::try_parse_from([
        "mypi",
        "--provider",
        provider,
        "--base-url",
        url,
        "--model",
        "test-model",
        "-p",
        "unused",
    ])
    .unwrap();
    let home = dir.home().display().to_string();
    let env = move |k: &str| match k {
        k if k == key_var => Some("test-key".to_string()),
        "MYPI_RETRY_BASE_MS" => Some("1".to_string()),
        "HOME" => Some(home.clone()),
        _ => None,
    };
    let config = Config::resolve(&cli.overrides(), &env, dir.path().to_path_buf()).unwrap();
    let notices = Arc::new(Mutex::new(Vec::new()));
    let n = notices.clone();
    let app = App::build(config, Arc::new(Outlet(n))).unwrap();
    Rig { app, notices, dir }
}

/// The test's front-end outlet: keeps the notice lines.
struct Outlet(Arc<Mutex<Vec<String>>>);

impl mypi::agent::EventSink for Outlet {
    fn emit(&self, event: mypi::vocab::protocol::AgentEvent) {
        if let Some(text) = mypi::repl::render::notice_text(&event) {
            self.0.lock().unwrap().push(text);
        }
    }
}

fn rig(fake: &FakeOpenAi) -> Rig {
    rig_for("openai", &fake.url(), "OPENAI_API_KEY")
}

impl Rig {
    fn on(&self, kind: EventKind, f: impl Fn(&HookEvent) -> Option<Value> + Send + Sync + 'static) {
        let h: Arc<dyn HookHandler> =
            Arc::new(move |e: &HookEvent| -> Result<Option<Value>, HookError> { Ok(f(e)) });
        // The handle is dropped: registrations live until removed explicitly.
        self.app.hooks.on(kind, Owner::new("test", 1), h);
    }

    async fn line(&mut self, text: &str) -> (LineOutcome, Vec<AgentEvent>) {
        let sink = Events::default();
        let out = self
            .app
            .handle_line(text, &sink, &CancellationToken::new())
            .await
            .unwrap_or_else(|e| panic!("handle_line({text:?}) failed: {e}"));
        (out, sink.all())
    }

    fn session(&self) -> Vec<Value> {
        session_messages(&only_session(&self.dir))
    }

    fn assert_no_notices(&self) {
        let n = self.notices.lock().unwrap();
        assert!(n.is_empty(), "unexpected notices: {n:?}");
    }
}

fn ran(out: LineOutcome) -> mypi::agent::RunOutcome {
    match out {
        LineOutcome::Ran(o) => o,
        other => panic!("expected a model run, got {other:?}"),
    }
}

#[tokio::test]
async fn input_rewrite_reaches_the_model_and_the_session() {
    let fake = FakeOpenAi::with_replies(vec![Reply::text("ok")]);
    let mut r = rig(&fake);
    r.on(EventKind::Input, |e| match e {
        HookEvent::Input { text, .. } => {
            Some(json!({"updated_input": format!("[rewritten] {text}")}))
        }
        _ => None,
    });
    let out = ran(r.line("original prompt").await.0);
    assert_eq!(out.text, "ok");
    assert_eq!(
        user_texts(&fake.requests()[0]),
        vec!["[rewritten] original prompt"]
    );
    assert_eq!(r.session()[0]["content"], "[rewritten] original prompt");
    r.assert_no_notices();
}

#[tokio::test]
async fn input_block_answers_without_a_request() {
    let fake = FakeOpenAi::start();
    let mut r = rig(&fake);
    r.on(EventKind::Input, |e| match e {
        HookEvent::Input { text, .. } if text == "ping" => {
            Some(json!({"block": true, "reason": "pong (answered by a hook)"}))
        }
        _ => None,
    });
    let (out, events) = r.line("ping").await;
    let out = ran(out);
    assert_eq!(out.blocked.as_deref(), Some("pong (answered by a hook)"));
    assert_eq!(out.text, "pong (answered by a hook)");
    assert_eq!(out.turns, 0);
    assert_eq!(fake.request_count(), 0);
    assert!(session_files(&r.dir).is_empty(), "nothing was said");
    assert!(
        matches!(events.last(), Some(AgentEvent::Final { text, .. }) if text.starts_with("pong"))
    );
}

#[tokio::test]
async fn before_agent_start_rewrites_the_system_prompt_for_that_run_only() {
    let fake = FakeOpenAi::with_replies(vec![Reply::text("one"), Reply::text("two")]);
    let mut r = rig(&fake);
    r.on(EventKind::BeforeAgentStart, |e| match e {
        HookEvent::BeforeAgentStart {
            prompt,
            system_prompt,
        } if prompt == "first" => Some(
            json!({"updated_system_prompt": format!("{system_prompt}\n\nEXTRA RULE: be terse")}),
        ),
        _ => None,
    });
    r.line("first").await;
    r.line("second").await;
    let reqs = fake.requests();
    let (first, second) = (system_prompt(&reqs[0]), system_prompt(&reqs[1]));
    assert!(first.starts_with("You are mypi"), "{first}");
    assert!(first.ends_with("EXTRA RULE: be terse"), "{first}");
    assert!(!second.contains("EXTRA RULE"), "{second}");
    r.assert_no_notices();
}

#[tokio::test]
async fn context_rewrite_reaches_the_server_but_the_session_keeps_the_original() {
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls(vec![("call_s", "read", json!({"path": "secret.txt"}))]),
        Reply::text("done"),
    ]);
    let mut r = rig(&fake);
    r.dir.write("secret.txt", "API_TOKEN=hunter2\n");
    r.on(EventKind::Context, |e| match e {
        HookEvent::Context { messages } => {
            let mut messages = messages.clone();
            for m in &mut messages {
                m.content = m.content.replace("hunter2", "[hidden]");
            }
            Some(json!({"updated_messages": messages}))
        }
        _ => None,
    });
    ran(r.line("read secret.txt").await.0);
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 2);
    let sent = &tool_results(&reqs[1])[0];
    assert_eq!(sent.id, "call_s");
    assert!(sent.content.contains("API_TOKEN=[hidden]"), "{sent:?}");
    assert!(!reqs[1].raw_body.contains("hunter2"));
    let stored = r.session();
    let tool = stored.iter().find(|m| m["role"] == "tool").unwrap();
    assert!(
        tool["content"]
            .as_str()
            .unwrap()
            .contains("API_TOKEN=hunter2"),
        "{tool}"
    );
    r.assert_no_notices();
}

#[tokio::test]
async fn before_provider_request_rewrites_the_body() {
    let fake = FakeOpenAi::with_replies(vec![Reply::text("ok")]);
    let mut r = rig(&fake);
    let seen = Arc::new(Mutex::new(None));
    let s = seen.clone();
    r.on(EventKind::BeforeProviderRequest, move |e| match e {
        HookEvent::BeforeProviderRequest { provider, payload } => {
            *s.lock().unwrap() = Some((provider.clone(), payload.clone()));
            let mut p = payload.clone();
            p["temperature"] = json!(0.1);
            Some(json!({"updated_payload": p}))
        }
        _ => None,
    });
    ran(r.line("hi").await.0);
    let req = &fake.requests()[0];
    assert_eq!(req.body["temperature"], json!(0.1));
    assert_eq!(req.body["model"], "test-model");
    let (provider, payload) = seen.lock().unwrap().clone().unwrap();
    assert_eq!(provider, "openai");
    let mut expected = payload;
    expected["temperature"] = json!(0.1);
    assert_eq!(req.body, expected, "the rewritten payload is sent as is");
    r.assert_no_notices();
}

#[tokio::test]
async fn before_provider_request_rewrites_the_anthropic_body() {
    let fake = FakeAnthropic::with_replies(vec![Reply::text("ok")]);
    let mut r = rig_for("anthropic", &fake.url(), "ANTHROPIC_API_KEY");
    r.on(EventKind::BeforeProviderRequest, |e| match e {
        HookEvent::BeforeProviderRequest { provider, payload } if provider == "anthropic" => {
            let mut p = payload.clone();
            p["max_tokens"] = json!(123);
            p["metadata"] = json!({"user_id": "u-1"});
            Some(json!({"updated_payload": p}))
        }
        _ => None,
    });
    ran(r.line("hi").await.0);
    let req = &fake.requests()[0];
    assert_eq!(req.body["max_tokens"], 123);
    assert_eq!(req.body["metadata"]["user_id"], "u-1");
}

#[tokio::test]
async fn tool_call_block_and_argument_rewrite() {
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls(vec![
            (
                "call_rm",
                "bash",
                json!({"command": "touch must-not-exist.txt"}),
            ),
            (
                "call_w",
                "write",
                json!({"path": "out.txt", "content": "from the model"}),
            ),
        ]),
        Reply::text("done"),
    ]);
    let mut r = rig(&fake);
    r.on(EventKind::ToolCall, |e| match e {
        HookEvent::ToolCall { name, .. } if name == "bash" => {
            Some(json!({"block": true, "reason": "no shell today"}))
        }
        HookEvent::ToolCall { name, args, .. } if name == "write" => {
            let mut a = args.clone();
            a["content"] = json!("from the hook");
            Some(json!({"updated_args": a}))
        }
        _ => None,
    });
    let (out, events) = r.line("go").await;
    ran(out);
    assert!(
        !r.dir.exists("must-not-exist.txt"),
        "a blocked call never runs"
    );
    assert_eq!(r.dir.read("out.txt"), "from the hook");
    let results = tool_results(&fake.requests()[1]);
    assert_eq!(results[0].id, "call_rm");
    assert_eq!(results[0].content, "blocked: no shell today");
    assert_eq!(results[1].id, "call_w");
    assert!(
        results[1].content.contains("wrote 13 bytes"),
        "{:?}",
        results[1]
    );
    let shown = events.iter().find_map(|e| match e {
        AgentEvent::ToolCall { id, arguments, .. } if id == "call_w" => Some(arguments.clone()),
        _ => None,
    });
    assert_eq!(
        shown.unwrap()["content"],
        "from the hook",
        "events show the args that ran"
    );
    r.assert_no_notices();
}

#[tokio::test]
async fn tool_result_rewrite_is_what_the_model_and_the_session_see() {
    let fake = FakeOpenAi::with_replies(vec![
        Reply::tool_calls(vec![(
            "call_r",
            "bash",
            json!({"command": "echo key=sk-12345"}),
        )]),
        Reply::text("done"),
    ]);
    let mut r = rig(&fake);
    r.on(EventKind::ToolResult, |e| match e {
        HookEvent::ToolResult {
            result, name, args, ..
        } => {
            assert_eq!(name, "bash");
            assert_eq!(args["command"], "echo key=sk-12345");
            Some(json!({"updated_result": result.replace("sk-12345", "[redacted]")}))
        }
        _ => None,
    });
    ran(r.line("go").await.0);
    let sent = &tool_results(&fake.requests()[1])[0];
    assert_eq!(sent.content, "key=[redacted]\nexit code: 0");
    let stored = r.session();
    let tool = stored.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(tool["content"], "key=[redacted]\nexit code: 0");
    r.assert_no_notices();
}

#[tokio::test]
async fn message_update_block_cuts_the_stream() {
    let fake = FakeOpenAi::with_replies(vec![Reply::text(
        "this reply contains a forbidden word and more text after it",
    )]);
    let mut r = rig(&fake);
    r.on(EventKind::MessageUpdate, |e| match e {
        HookEvent::MessageUpdate { text, .. } if text.contains("forbidden") => {
            Some(json!({"block": true, "reason": "cut: forbidden word"}))
        }
        _ => None,
    });
    let (out, events) = r.line("go").await;
    let out = ran(out);
    assert_eq!(out.blocked.as_deref(), Some("cut: forbidden word"));
    assert_eq!(fake.request_count(), 1, "no further request after the cut");
    let streamed: String = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TextDelta { delta } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        !streamed.contains("forbidden"),
        "the blocked delta is not shown: {streamed:?}"
    );
    assert!(events.iter().any(
        |e| matches!(e, AgentEvent::Notice { message } if message.contains("cut: forbidden word"))
    ));
    let stored = r.session();
    assert_eq!(
        stored,
        vec![json!({"role": "user", "content": "go"})],
        "partial text never stored"
    );

    // The next prompt does not carry the partial text either.
    fake.push(Reply::text("clean answer"));
    ran(r.line("again").await.0);
    let body = &fake.requests()[1].raw_body;
    assert!(!body.contains("this reply contains"), "{body}");
    r.assert_no_notices();
}

#[tokio::test]
async fn bad_result_fields_are_reported_not_fatal() {
    let fake = FakeOpenAi::with_replies(vec![Reply::text("ok")]);
    let mut r = rig(&fake);
    r.on(EventKind::Input, |_| {
        Some(json!({"updated_input": 5, "updated_args": {}}))
    });
    ran(r.line("unchanged").await.0);
    assert_eq!(user_texts(&fake.requests()[0]), vec!["unchanged"]);
    let notices = r.notices.lock().unwrap().clone();
    assert_eq!(notices.len(), 2, "{notices:?}");
    assert!(notices.iter().any(|n| n.contains("updated_input")));
    assert!(notices.iter().any(|n| n.contains("updated_args")));
}
