//! Rust-level tests of the loop's decision points, with a scripted provider that records every
//! request body and Rust hook handlers.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use super::queue::{Delivery, Queues};
use super::session::SessionSlot;
use super::*;
use crate::hooks::{EventKind, HookError, HookHandler};
use crate::providers::{EventStream, Payload, StreamEvent};
use crate::tools::{Tool, ToolContext};
use crate::vocab::owner::Owner;
use crate::vocab::protocol::{Role, ToolSpec};
use crate::vocab::run::RunContext;
use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

struct Scripted {
    replies: Mutex<VecDeque<Vec<StreamEvent>>>,
    requests: Mutex<Vec<Value>>,
}

struct VecStream(VecDeque<StreamEvent>);

impl EventStream for VecStream {
    fn next(&mut self) -> BoxFuture<'_, Option<Result<StreamEvent, ProviderError>>> {
        let e = self.0.pop_front().map(Ok);
        Box::pin(async move { e })
    }
}

impl Provider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    fn model(&self) -> &str {
        "m"
    }
    fn stream<'a>(
        &'a self,
        payload: &'a Payload,
    ) -> BoxFuture<'a, Result<Box<dyn EventStream>, ProviderError>> {
        self.requests
            .lock()
            .unwrap()
            .push(payload.to_json().into_owned());
        let events = self.replies.lock().unwrap().pop_front().unwrap_or_default();
        Box::pin(async move { Ok(Box::new(VecStream(events.into())) as Box<dyn EventStream>) })
    }
}

fn text(t: &str) -> Vec<StreamEvent> {
    let mut v: Vec<StreamEvent> = t
        .split_inclusive(' ')
        .map(|w| StreamEvent::TextDelta(w.into()))
        .collect();
    v.push(StreamEvent::Done { stop_reason: None });
    v
}

fn calls(list: &[(&str, &str, Value)]) -> Vec<StreamEvent> {
    let mut v = Vec::new();
    for (i, (id, name, args)) in list.iter().enumerate() {
        v.push(StreamEvent::ToolCallStart {
            index: i,
            id: id.to_string(),
            name: name.to_string(),
        });
        v.push(StreamEvent::ToolCallDelta {
            index: i,
            arguments: args.to_string(),
        });
    }
    v.push(StreamEvent::Done { stop_reason: None });
    v
}

/// A test tool: echoes its `text` argument after `sleep_ms`, tracking how many run at once.
struct Echo {
    spec: ToolSpec,
    parallel: bool,
    running: Arc<AtomicUsize>,
    peak: Arc<AtomicUsize>,
}

impl Tool for Echo {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn parallel_safe(&self) -> bool {
        self.parallel
    }
    fn call(
        &self,
        args: Value,
        _ctx: ToolContext,
    ) -> BoxFuture<'static, crate::vocab::protocol::ToolOutput> {
        let (running, peak) = (self.running.clone(), self.peak.clone());
        Box::pin(async move {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            let ms = args["sleep_ms"].as_u64().unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            running.fetch_sub(1, Ordering::SeqCst);
            crate::vocab::protocol::ToolOutput::ok(args["text"].as_str().unwrap_or("").to_string())
        })
    }
}

struct Rig {
    agent: Agent,
    provider: Arc<Scripted>,
    hooks: Arc<HookBus>,
    queues: Arc<Queues>,
    peak: Arc<AtomicUsize>,
    dir: PathBuf,
}

fn rig(tag: &str, replies: Vec<Vec<StreamEvent>>) -> Rig {
    let provider = Arc::new(Scripted {
        replies: Mutex::new(replies.into()),
        requests: Mutex::new(Vec::new()),
    });
    let tools = ToolRegistry::new();
    let peak = Arc::new(AtomicUsize::new(0));
    for (name, parallel) in [("echo", true), ("serial", false)] {
        tools.register(
            Owner::core(),
            Arc::new(Echo {
                spec: ToolSpec {
                    name: name.into(),
                    description: "echo".into(),
                    parameters: json!({"type":"object","properties":{
                        "text":{"type":"string"},"sleep_ms":{"type":"integer"}},
                        "required":["text"]}),
                },
                parallel,
                running: Arc::new(AtomicUsize::new(0)),
                peak: peak.clone(),
            }),
        );
    }
    let hooks = HookBus::new(Arc::new(|_| {}));
    let queues = Arc::new(Queues::new());
    let dir = std::env::temp_dir().join(format!("mypi-agent-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let session = SessionWriter::create(&dir, &dir, &session::new_id(), None).unwrap();
    let agent = Agent::new(AgentParts {
        provider: provider.clone(),
        tools,
        hooks: hooks.clone(),
        cwd: dir.clone(),
        system_prompt: "SYS".into(),
        session: SessionSlot::Open(session),
        messages: Vec::new(),
    });
    Rig {
        agent,
        provider,
        hooks,
        queues,
        peak,
        dir,
    }
}

struct Events(Mutex<Vec<AgentEvent>>);

impl EventSink for Events {
    fn emit(&self, event: AgentEvent) {
        self.0.lock().unwrap().push(event);
    }
}

impl Rig {
    fn ctx(&self, cancel: CancellationToken) -> Arc<RunContext> {
        let mut ctx = RunContext::detached(self.dir.clone()).with_cancel(cancel);
        ctx.queues = self.queues.clone();
        Arc::new(ctx)
    }

    async fn prompt(&mut self, text: &str) -> (Result<RunOutcome, AgentError>, Vec<AgentEvent>) {
        let sink = Events(Mutex::new(Vec::new()));
        let out = self
            .agent
            .prompt(
                text,
                InputSource::User,
                &sink,
                &self.ctx(CancellationToken::new()),
            )
            .await;
        (out, sink.0.into_inner().unwrap())
    }

    fn on(&self, kind: EventKind, f: impl Fn(&HookEvent) -> Option<Value> + Send + Sync + 'static) {
        let h: Arc<dyn HookHandler> =
            Arc::new(move |e: &HookEvent| -> Result<Option<Value>, HookError> { Ok(f(e)) });
        self.hooks.on(kind, Owner::new("test", 1), h);
    }

    fn request(&self, n: usize) -> Sent {
        let v = self.provider.requests.lock().unwrap()[n].clone();
        Sent {
            system_prompt: v["system_prompt"].as_str().unwrap().into(),
            messages: serde_json::from_value(v["messages"].clone()).unwrap(),
        }
    }

    fn stored(&self) -> Vec<Message> {
        let path = self.agent.session().unwrap().path().to_path_buf();
        session::read_messages(&path).unwrap()
    }
}

/// What the scripted provider was sent (the default payload: the request as JSON).
struct Sent {
    system_prompt: String,
    messages: Vec<Message>,
}

impl Drop for Rig {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[tokio::test]
async fn input_block_answers_without_the_model() {
    let mut r = rig("inblock", vec![]);
    r.on(EventKind::Input, |e| match e {
        HookEvent::Input { text, .. } if text == "ping" => {
            Some(json!({"block":true,"reason":"pong"}))
        }
        _ => None,
    });
    let (out, _) = r.prompt("ping").await;
    assert_eq!(out.unwrap().text, "pong");
    assert!(r.provider.requests.lock().unwrap().is_empty());
    assert!(r.stored().is_empty());
}

/// Streamed reasoning is a `thinking` event of its own: never the reply's text, never
/// stored, never sent back to the model.
#[tokio::test]
async fn thinking_is_shown_but_never_the_reply_or_sent_back() {
    let mut first = vec![StreamEvent::ThinkingDelta("Let me think. ".into())];
    first.extend(calls(&[("c1", "echo", json!({"text": "x"}))]));
    let mut r = rig("thinking", vec![first, text("done")]);
    let (out, events) = r.prompt("go").await;
    assert_eq!(out.unwrap().text, "done");
    let thoughts: Vec<&AgentEvent> = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::Thinking { .. }))
        .collect();
    assert_eq!(
        thoughts,
        vec![&AgentEvent::Thinking {
            delta: "Let me think. ".into()
        }]
    );
    let second = serde_json::to_string(&r.request(1).messages).unwrap();
    assert!(!second.contains("Let me think"), "{second}");
    let stored = serde_json::to_string(&r.stored()).unwrap();
    assert!(!stored.contains("Let me think"), "{stored}");
}

#[tokio::test]
async fn input_rewrite_and_system_prompt_rewrite_reach_the_model() {
    let mut r = rig("inrw", vec![text("ok")]);
    r.on(EventKind::Input, |_| {
        Some(json!({"updated_input":"rewritten"}))
    });
    r.on(EventKind::BeforeAgentStart, |e| match e {
        HookEvent::BeforeAgentStart { system_prompt, .. } => {
            Some(json!({"updated_system_prompt": format!("{system_prompt}\nEXTRA")}))
        }
        _ => None,
    });
    let (out, _) = r.prompt("?foo").await;
    assert_eq!(out.unwrap().text, "ok");
    let req = r.request(0);
    assert_eq!(req.system_prompt, "SYS\nEXTRA");
    assert_eq!(req.messages[0].content, "rewritten");
    assert_eq!(r.stored()[0].content, "rewritten");
}

#[tokio::test]
async fn context_rewrite_reaches_the_model_but_not_the_session() {
    let mut r = rig(
        "ctx",
        vec![
            calls(&[("c1", "echo", json!({"text":"SECRET"}))]),
            text("done"),
        ],
    );
    r.on(EventKind::Context, |e| match e {
        HookEvent::Context { messages } => {
            let kept: Vec<_> = messages.iter().filter(|m| m.role != Role::Tool).collect();
            Some(json!({"updated_messages": kept}))
        }
        _ => None,
    });
    let (out, _) = r.prompt("go").await;
    assert_eq!(out.unwrap().text, "done");
    let second = r.request(1);
    assert!(second.messages.iter().all(|m| m.role != Role::Tool));
    let stored = r.stored();
    assert!(stored
        .iter()
        .any(|m| m.role == Role::Tool && m.content == "SECRET"));
}

#[tokio::test]
async fn tool_call_block_and_argument_rewrite() {
    let mut r = rig(
        "tc",
        vec![
            calls(&[
                ("c1", "echo", json!({"text":"rm -rf /"})),
                ("c2", "echo", json!({"text":"plain"})),
            ]),
            text("done"),
        ],
    );
    r.on(EventKind::ToolCall, |e| match e {
        HookEvent::ToolCall { args, .. } if args["text"] == "rm -rf /" => {
            Some(json!({"block": true, "reason": "dangerous"}))
        }
        HookEvent::ToolCall { .. } => Some(json!({"updated_args": {"text": "rewritten"}})),
        _ => None,
    });
    r.prompt("go").await.0.unwrap();
    let results: Vec<_> = r
        .request(1)
        .messages
        .into_iter()
        .filter(|m| m.role == Role::Tool)
        .collect();
    assert_eq!(results[0].content, "blocked: dangerous");
    assert!(results[0].is_error);
    assert_eq!(results[1].content, "rewritten");
}

#[tokio::test]
async fn tool_result_rewrite_is_what_the_model_and_session_see() {
    let mut r = rig(
        "tr",
        vec![
            calls(&[("c1", "echo", json!({"text":"key=sk-123"}))]),
            text("done"),
        ],
    );
    r.on(EventKind::ToolResult, |e| match e {
        HookEvent::ToolResult { result, .. } => {
            Some(json!({"updated_result": result.replace("sk-123", "[redacted]")}))
        }
        _ => None,
    });
    r.prompt("go").await.0.unwrap();
    let tool = |msgs: Vec<Message>| msgs.into_iter().find(|m| m.role == Role::Tool).unwrap();
    assert_eq!(tool(r.request(1).messages).content, "key=[redacted]");
    assert_eq!(tool(r.stored()).content, "key=[redacted]");
}

#[tokio::test]
async fn message_update_block_cuts_the_stream_and_stores_nothing_of_it() {
    let mut r = rig("mu", vec![text("this has a forbidden word in it")]);
    r.on(EventKind::MessageUpdate, |e| match e {
        HookEvent::MessageUpdate { text, .. } if text.contains("forbidden") => {
            Some(json!({"block": true, "reason": "cut: forbidden word"}))
        }
        _ => None,
    });
    let (out, events) = r.prompt("go").await;
    let out = out.unwrap();
    assert_eq!(out.blocked.as_deref(), Some("cut: forbidden word"));
    let streamed: String = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TextDelta { delta } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    // The handlers see each piece before the user does; pieces that came while a hand-over
    // ran reach them (and the user) together, so the cut falls at or before "forbidden".
    assert!("this has a ".starts_with(&streamed), "{streamed:?}");
    let stored = r.stored();
    assert_eq!(stored.len(), 1, "only the user message: {stored:?}");
}

#[tokio::test]
async fn steer_during_a_tool_batch_is_in_the_next_request() {
    let mut r = rig(
        "steer",
        vec![calls(&[("c1", "echo", json!({"text":"x"}))]), text("done")],
    );
    let q = r.queues.clone();
    r.on(EventKind::ToolCall, move |_| {
        q.push("also check the tests", Delivery::Steer).unwrap();
        None
    });
    r.prompt("go").await.0.unwrap();
    let second = r.request(1).messages;
    let last = second.last().unwrap();
    assert_eq!(
        (last.role, last.content.as_str()),
        (Role::User, "also check the tests")
    );
    let stored = r.stored();
    assert_eq!(stored[3].content, "also check the tests");
}

#[tokio::test]
async fn follow_up_runs_after_the_agent_is_idle() {
    let mut r = rig("follow", vec![text("first"), text("second")]);
    let q = r.queues.clone();
    r.on(EventKind::AgentEnd, move |e| {
        if let HookEvent::AgentEnd { messages } = e {
            if messages.len() == 2 {
                q.push("now the follow-up", Delivery::FollowUp).unwrap();
            }
        }
        None
    });
    let (out, _) = r.prompt("go").await;
    assert_eq!(out.unwrap().text, "second");
    let contents: Vec<_> = r.stored().into_iter().map(|m| m.content).collect();
    assert_eq!(contents, vec!["go", "first", "now the follow-up", "second"]);
}

#[tokio::test]
async fn parallel_safe_calls_run_together_and_results_keep_call_order() {
    let mut r = rig(
        "par",
        vec![
            calls(&[
                ("a", "echo", json!({"text":"slow","sleep_ms":150})),
                ("b", "echo", json!({"text":"fast","sleep_ms":10})),
                ("c", "serial", json!({"text":"alone"})),
            ]),
            text("done"),
        ],
    );
    r.prompt("go").await.0.unwrap();
    assert_eq!(r.peak.load(Ordering::SeqCst), 2);
    let results: Vec<_> = r
        .request(1)
        .messages
        .into_iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| (m.tool_call_id.unwrap(), m.content))
        .collect();
    assert_eq!(
        results,
        vec![
            ("a".to_string(), "slow".to_string()),
            ("b".into(), "fast".into()),
            ("c".into(), "alone".into())
        ]
    );
}

#[tokio::test]
async fn bad_arguments_and_unknown_tools_are_answered_with_precise_errors() {
    let mut r = rig(
        "badargs",
        vec![
            calls(&[("a", "echo", json!({"text": 5})), ("b", "nope", json!({}))]),
            text("done"),
        ],
    );
    r.prompt("go").await.0.unwrap();
    let results: Vec<_> = r
        .request(1)
        .messages
        .into_iter()
        .filter(|m| m.role == Role::Tool)
        .collect();
    assert!(
        results[0]
            .content
            .contains("invalid arguments for 'echo': /text"),
        "{}",
        results[0].content
    );
    assert!(results[1].content.contains("unknown tool 'nope'"));
    assert!(results[1].content.contains("echo, serial"));
}

#[test]
fn interrupted_tool_calls_get_a_result_before_the_next_request() {
    let call = crate::vocab::protocol::ToolCall::from_raw("x".into(), "echo".into(), "{}");
    let msgs = vec![Message::user("u"), Message::assistant("", vec![call])];
    let fixed = turn::repair_transcript(&msgs);
    assert_eq!(fixed.len(), 3);
    assert_eq!(fixed[2].tool_call_id.as_deref(), Some("x"));
}
