//! Chaining rules of the hook bus.

use super::*;
use crate::vocab::protocol::Message;
use serde_json::json;
use std::sync::Mutex;

fn bus() -> (Arc<HookBus>, Arc<Mutex<Vec<String>>>) {
    let notices = Arc::new(Mutex::new(Vec::new()));
    let n = notices.clone();
    (
        HookBus::new(Arc::new(move |m| n.lock().unwrap().push(m))),
        notices,
    )
}

fn handler(
    f: impl Fn(&HookEvent) -> Result<Option<Value>, HookError> + Send + Sync + 'static,
) -> Arc<dyn HookHandler> {
    Arc::new(f)
}

fn input(text: &str) -> HookEvent {
    HookEvent::Input {
        text: text.into(),
        source: InputSource::User,
    }
}

#[tokio::test]
async fn no_subscribers_means_no_dispatch() {
    let (bus, _) = bus();
    assert!(!bus.has(EventKind::MessageUpdate));
    let h = bus.on(
        EventKind::MessageUpdate,
        Owner::core(),
        handler(|_| Ok(None)),
    );
    assert!(bus.has(EventKind::MessageUpdate));
    assert!(h.remove());
    assert!(!bus.has(EventKind::MessageUpdate));
}

#[tokio::test]
async fn rewrites_chain_in_load_then_registration_order() {
    let (bus, _) = bus();
    let late = Owner::new("late", 2);
    let early = Owner::new("early", 1);
    bus.on(
        EventKind::Input,
        late,
        handler(|e| match e {
            HookEvent::Input { text, .. } => {
                Ok(Some(json!({"updated_input": format!("{text}+late")})))
            }
            _ => Ok(None),
        }),
    );
    for tag in ["a", "b"] {
        bus.on(
            EventKind::Input,
            early.clone(),
            handler(move |e| match e {
                HookEvent::Input { text, .. } => {
                    Ok(Some(json!({"updated_input": format!("{text}+{tag}")})))
                }
                _ => Ok(None),
            }),
        );
    }
    let out = bus.emit(input("x"), &ctx()).await;
    assert_eq!(out.event, input("x+a+b+late"));
    assert_eq!(out.blocked, None);
}

#[tokio::test]
async fn first_block_wins_and_stops_the_chain() {
    let (bus, _) = bus();
    let calls = Arc::new(Mutex::new(0));
    bus.on(
        EventKind::ToolCall,
        Owner::new("g1", 1),
        handler(|_| Ok(Some(json!({"block": true, "reason": "no rm"})))),
    );
    let c = calls.clone();
    bus.on(
        EventKind::ToolCall,
        Owner::new("g2", 2),
        handler(move |_| {
            *c.lock().unwrap() += 1;
            Ok(Some(json!({"block": true, "reason": "second"})))
        }),
    );
    let out = bus
        .emit(
            HookEvent::ToolCall {
                id: "1".into(),
                name: "bash".into(),
                args: json!({"command": "rm -rf /"}),
                about: Default::default(),
            },
            &ctx(),
        )
        .await;
    assert_eq!(out.blocked.as_deref(), Some("no rm"));
    assert_eq!(*calls.lock().unwrap(), 0);
}

#[tokio::test]
async fn failing_handler_is_reported_and_skipped_but_fails_closed_for_tool_call() {
    let (bus, notices) = bus();
    let owner = Owner::new("broken", 1);
    let fail = || handler(|_| Err(HookError::new("guard.lua:3: boom")));
    bus.on(EventKind::Input, owner.clone(), fail());
    bus.on(
        EventKind::Input,
        Owner::new("ok", 2),
        handler(|_| Ok(Some(json!({"updated_input": "rewritten"})))),
    );
    let out = bus.emit(input("x"), &ctx()).await;
    assert_eq!(out.event, input("rewritten"));
    assert!(notices.lock().unwrap()[0].contains("guard.lua:3: boom"));

    bus.on(EventKind::ToolCall, owner, fail());
    let out = bus
        .emit(
            HookEvent::ToolCall {
                id: "1".into(),
                name: "read".into(),
                args: json!({}),
                about: Default::default(),
            },
            &ctx(),
        )
        .await;
    assert!(out.blocked.unwrap().contains("guard.lua:3: boom"));
}

#[tokio::test]
async fn wrong_result_types_are_reported_and_ignored() {
    let (bus, notices) = bus();
    bus.on(
        EventKind::ToolCall,
        Owner::new("x", 1),
        handler(|_| {
            Ok(Some(
                json!({"updated_args": "not a table", "block": "yes", "updated_input": "x"}),
            ))
        }),
    );
    let ev = HookEvent::ToolCall {
        id: "1".into(),
        name: "read".into(),
        args: json!({"path": "a"}),
        about: Default::default(),
    };
    let out = bus.emit(ev.clone(), &ctx()).await;
    assert_eq!(out.event, ev);
    assert_eq!(out.blocked, None);
    let n = notices.lock().unwrap();
    assert_eq!(n.len(), 3, "{n:?}");
    assert!(n
        .iter()
        .any(|m| m.contains("'updated_args' must be a table")));
    assert!(n
        .iter()
        .any(|m| m.contains("'updated_input' is not used by tool_call")));
}

#[tokio::test]
async fn user_shell_rewrites_chain_and_an_empty_command_is_refused() {
    let (bus, notices) = bus();
    bus.on(
        EventKind::UserShell,
        Owner::new("a", 1),
        handler(|e| match e {
            HookEvent::UserShell { command, .. } => Ok(Some(
                json!({"updated_command": format!("{command} --short")}),
            )),
            _ => Ok(None),
        }),
    );
    bus.on(
        EventKind::UserShell,
        Owner::new("b", 2),
        handler(|_| {
            Ok(Some(
                json!({"updated_command": "  ", "updated_output": "canned"}),
            ))
        }),
    );
    let ev = HookEvent::UserShell {
        command: "git status".into(),
        add_to_context: false,
        output: None,
    };
    let out = bus.emit(ev, &ctx()).await;
    assert_eq!(
        out.event,
        HookEvent::UserShell {
            command: "git status --short".into(),
            add_to_context: false,
            output: Some("canned".into()),
        }
    );
    assert_eq!(out.blocked, None);
    let n = notices.lock().unwrap();
    assert_eq!(n.len(), 1, "{n:?}");
    assert!(n[0].contains("'updated_command' is empty"), "{n:?}");
}

#[tokio::test]
async fn remove_owner_removes_exactly_its_handlers() {
    let (bus, _) = bus();
    let a = Owner::new("a", 1);
    bus.on(EventKind::Input, a.clone(), handler(|_| Ok(None)));
    bus.on(EventKind::ToolCall, a.clone(), handler(|_| Ok(None)));
    bus.on(EventKind::Input, Owner::new("b", 2), handler(|_| Ok(None)));
    assert_eq!(bus.count_owner(&a), 2);
    assert_eq!(bus.remove_owner(&a), 2);
    assert!(bus.has(EventKind::Input));
    assert!(!bus.has(EventKind::ToolCall));
}

#[test]
fn event_payload_shapes_are_pinned() {
    let mut covered = std::collections::BTreeSet::new();
    for (event, shape) in pinned_events() {
        assert_eq!(event.to_value(), shape);
        // Handlers get the same JSON, with `message_update`'s text and `agent_end`'s
        // messages handed over on their own.
        let (script, lazy) = event.to_script();
        if let Some(lazy) = lazy {
            let mut without = shape.clone();
            without.as_object_mut().unwrap().remove(lazy.name());
            assert_eq!(without, script);
            assert_eq!(lazy.to_json(), shape[lazy.name()]);
        } else {
            assert_eq!(script, shape);
        }
        covered.insert(event.kind().name());
    }
    let all: std::collections::BTreeSet<&str> = EventKind::ALL.iter().map(|k| k.name()).collect();
    assert_eq!(covered, all, "every hook event's shape is pinned");
    for kind in EventKind::ALL {
        assert_eq!(EventKind::parse(kind.name()), Some(kind));
    }
}

/// One event of every kind with its pinned JSON (also for the engines' conversion tests).
pub(crate) fn pinned_events() -> Vec<(HookEvent, Value)> {
    vec![
        (
            HookEvent::SessionStart {
                reason: Reason::Reload,
            },
            json!({"type":"session_start","reason":"reload"}),
        ),
        (
            input("hi"),
            json!({"type":"input","text":"hi","source":"user"}),
        ),
        (
            HookEvent::BeforeAgentStart {
                prompt: "p".into(),
                system_prompt: "s".into(),
            },
            json!({"type":"before_agent_start","prompt":"p","system_prompt":"s"}),
        ),
        (
            HookEvent::Context {
                messages: vec![Message::user("u")],
            },
            json!({"type":"context","messages":[{"role":"user","content":"u"}]}),
        ),
        (
            HookEvent::MessageUpdate {
                kind: UpdateKind::Text,
                delta: "b".into(),
                thinking: None,
                text: "ab".into(),
            },
            json!({"type":"message_update","kind":"text","delta":"b","text":"ab"}),
        ),
        (
            HookEvent::MessageUpdate {
                kind: UpdateKind::Thinking,
                delta: String::new(),
                thinking: Some("hm".into()),
                text: "ab".into(),
            },
            json!({"type":"message_update","kind":"thinking","delta":"","thinking":"hm",
                   "text":"ab"}),
        ),
        (
            HookEvent::ToolResult {
                id: "1".into(),
                name: "bash".into(),
                args: json!({"command":"ls"}),
                result: "out".into(),
                is_error: false,
                details: Some(json!({"rows": 2})),
                about: Default::default(),
            },
            json!({"type":"tool_result","id":"1","name":"bash","args":{"command":"ls"},
                   "result":"out","is_error":false,"details":{"rows":2}}),
        ),
        (
            HookEvent::ExtensionLoaded {
                name: "git/guard".into(),
                path: "/x/git/guard.lua".into(),
                reason: Reason::Startup,
            },
            json!({"type":"extension_loaded","name":"git/guard","path":"/x/git/guard.lua",
                   "reason":"startup"}),
        ),
        (
            HookEvent::SessionShutdown {
                reason: Reason::Quit,
            },
            json!({"type":"session_shutdown","reason":"quit"}),
        ),
        (
            HookEvent::TurnStart { turn: 2 },
            json!({"type":"turn_start","turn":2}),
        ),
        (
            HookEvent::BeforeProviderRequest {
                provider: "openai".into(),
                payload: json!({"model":"m"}),
            },
            json!({"type":"before_provider_request","provider":"openai","payload":{"model":"m"}}),
        ),
        (
            HookEvent::MessageEnd {
                message: Message::assistant("done", vec![]),
            },
            json!({"type":"message_end","message":{"role":"assistant","content":"done"}}),
        ),
        (
            HookEvent::ToolCall {
                id: "1".into(),
                name: "read".into(),
                args: json!({"path":"a"}),
                about: Default::default(),
            },
            json!({"type":"tool_call","id":"1","name":"read","args":{"path":"a"}}),
        ),
        (
            HookEvent::TurnEnd {
                turn: 1,
                message: Message::assistant("a", vec![]),
                tool_results: vec![],
            },
            json!({"type":"turn_end","turn":1,"message":{"role":"assistant","content":"a"},
                   "tool_results":[]}),
        ),
        (
            HookEvent::AgentEnd {
                messages: vec![Message::user("u")].into(),
            },
            json!({"type":"agent_end","messages":[{"role":"user","content":"u"}]}),
        ),
        (
            HookEvent::SessionBeforeCompact {
                reason: crate::hooks::CompactReason::Manual,
                tokens: 900,
                window: 1000,
                messages: vec![Message::user("u")],
                keep_last: 2,
                instructions: Some("keep paths".into()),
                summary: None,
            },
            json!({"type":"session_before_compact","reason":"manual","tokens":900,"window":1000,
                   "messages":[{"role":"user","content":"u"}],"keep_last":2,
                   "instructions":"keep paths"}),
        ),
        (
            HookEvent::SessionBeforeNew {
                session_id: "s1".into(),
            },
            json!({"type":"session_before_new","session_id":"s1"}),
        ),
        (
            HookEvent::SessionBeforeResume {
                session_id: "s1".into(),
                target_id: "s2".into(),
                target_path: "/x/s2.jsonl".into(),
            },
            json!({"type":"session_before_resume","session_id":"s1","target_id":"s2",
                   "target_path":"/x/s2.jsonl"}),
        ),
        (
            HookEvent::BeforeQuit {
                source: "command".into(),
            },
            json!({"type":"before_quit","source":"command"}),
        ),
        (
            HookEvent::ModelSelect {
                provider: "p".into(),
                model: "m2".into(),
                previous_provider: "p".into(),
                previous_model: "m1".into(),
                source: "extension".into(),
            },
            json!({"type":"model_select","provider":"p","model":"m2","previous_provider":"p",
                   "previous_model":"m1","source":"extension"}),
        ),
        (
            HookEvent::UserShell {
                command: "git status".into(),
                add_to_context: true,
                output: None,
            },
            json!({"type":"user_shell","command":"git status","add_to_context":true}),
        ),
    ]
}

fn ctx() -> std::sync::Arc<crate::vocab::run::RunContext> {
    std::sync::Arc::new(crate::vocab::run::RunContext::detached(
        std::path::PathBuf::from("/w"),
    ))
}

#[test]
fn a_shared_event_is_rewritten_as_a_copy_would_be() {
    let results = [
        json!({"updated_messages": [{"role": "user", "content": "new"}]}),
        json!({"updated_args": {"command": "pwd"}}),
        json!({"updated_payload": {"model": "m"}}),
        json!({"updated_input": "new input", "block": false}),
        json!({"updated_system_prompt": "new prompt"}),
        json!({"updated_result": "new result"}),
        json!({"summary": "short"}),
        json!({"updated_command": "ls", "updated_output": "out"}),
        json!({"block": true, "reason": "no"}),
        json!({"updated_args": "not a table"}),
    ];
    let owner = Owner::new("x", 1);
    let notice: NoticeFn = Arc::new(|_| {});
    for (event, _) in pinned_events() {
        for result in &results {
            let mut copy = event.clone();
            let expected = apply_outcome(&mut copy, &owner, Ok(Some(result.clone())), &notice);
            let original = Arc::new(event.clone());
            let mut shared = original.clone();
            let step = apply_outcome_shared(&mut shared, &owner, Ok(Some(result.clone())), &notice);
            assert_eq!(step, expected, "{} with {result}", event.kind().name());
            assert_eq!(*shared, copy, "{} with {result}", event.kind().name());
            assert_eq!(*original, event, "the other holder's event is untouched");
            // Unchanged results leave the event shared, not copied.
            if step != Step::Changed {
                assert!(Arc::ptr_eq(&shared, &original), "{}", event.kind().name());
            }
        }
    }
}
