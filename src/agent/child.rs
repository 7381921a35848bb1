//! Child agents and one-off model calls, as the rest of mypi asks for them: a [`ChildSpec`]
//! (what `api.run_agent{...}` says), a [`CompleteRequest`] (`api.complete{...}`), and the
//! [`Spawner`] the front end provides to run them. [`run_many`] fans several children out in
//! Rust, a bounded number at a time, and gives their outcomes back in order.
//!
//! A child is an [`Agent`](super::Agent) of its own: fresh messages, a subset of the tools,
//! the same hooks, a context one level deeper whose cancellation is a child of the parent's.
//! Its transcript goes to the parent's session as one nested record under the tool call
//! that ran it ([`crate::vocab::protocol::ChildRecord`]).

use std::sync::Arc;

use futures_util::future::BoxFuture;
use futures_util::stream::{self, StreamExt};
use serde_json::Value;

use crate::vocab::protocol::{ChildOutcome, ChildRecord, Usage};
use crate::vocab::run::RunContext;
use crate::vocab::thinking::Thinking;

/// How deep children may nest by default (the user's agent is depth 0).
pub const MAX_DEPTH: u32 = 3;
/// Most children [`run_many`] takes in one call.
pub const MAX_CHILDREN: usize = 64;
/// Most children running at once, whatever a script asks for.
pub const MAX_CONCURRENCY: usize = 16;

/// One child agent to run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChildSpec {
    pub task: String,
    /// What the user sees the child called (status lines, the session record).
    pub name: Option<String>,
    /// The child's system prompt (default: the agent's).
    pub system_prompt: Option<String>,
    /// The tools it may use, by name (default: the parent's).
    pub tools: Option<Vec<String>>,
    pub model: Option<String>,
    /// `openai`, `anthropic` or `faux` (default: the parent's).
    pub provider: Option<String>,
    pub max_turns: Option<u32>,
    /// The child's thinking level (default: the parent run's).
    pub thinking: Option<Thinking>,
}

/// One model call without tools.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompleteRequest {
    /// The conversation (`{role, content}` items); a `prompt` is one user message.
    pub messages: Vec<crate::vocab::protocol::Message>,
    pub system_prompt: Option<String>,
    pub model: Option<String>,
    pub provider: Option<String>,
    pub max_tokens: Option<u64>,
    /// The thinking asked for (default: none).
    pub thinking: Option<Thinking>,
}

/// A script's `thinking` field: a level's name, or an error naming the levels.
pub fn thinking_from_json(value: Option<&Value>) -> Result<Option<Thinking>, String> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_str()
            .and_then(Thinking::parse)
            .map(Some)
            .ok_or_else(|| {
                format!(
                    "'thinking' must be a level ({}), not {v}",
                    crate::vocab::thinking::LEVELS.join(", ")
                )
            }),
    }
}

/// What [`Spawner::complete`] answers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Completion {
    pub text: String,
    pub usage: Usage,
}

/// Runs children and model calls for the scripts.
pub trait Spawner: Send + Sync {
    /// Runs one child of the run `parent`; `waiting` is the extension worker that blocks
    /// until it ends (its handlers are skipped and its tools left out in the child). The
    /// record is the child's transcript (none when it never started).
    fn run(
        &self,
        spec: ChildSpec,
        parent: Arc<RunContext>,
        waiting: Option<u64>,
    ) -> BoxFuture<'static, (ChildOutcome, Option<ChildRecord>)>;

    /// One model call with no tools.
    fn complete(
        &self,
        request: CompleteRequest,
        ctx: Arc<RunContext>,
    ) -> BoxFuture<'static, Result<Completion, String>>;
}

/// Runs `specs` as children of `parent`, at most `concurrency` at once, and returns their
/// outcomes in the order of `specs`; their records are added to `parent` in that order too.
pub async fn run_many(
    spawner: Arc<dyn Spawner>,
    specs: Vec<ChildSpec>,
    concurrency: usize,
    parent: Arc<RunContext>,
    waiting: Option<u64>,
) -> Vec<ChildOutcome> {
    let limit = concurrency.clamp(1, MAX_CONCURRENCY);
    let done: Vec<(ChildOutcome, Option<ChildRecord>)> = stream::iter(specs)
        .map(|spec| spawner.run(spec, parent.clone(), waiting))
        .buffered(limit)
        .collect()
        .await;
    done.into_iter()
        .map(|(outcome, record)| {
            if let Some(record) = record {
                parent.add_record(record);
            }
            outcome
        })
        .collect()
}

/// An outcome that never ran: `error` says why.
pub fn failed(error: impl Into<String>) -> ChildOutcome {
    ChildOutcome {
        error: Some(error.into()),
        ..ChildOutcome::default()
    }
}

/// A spec from a script's table: `{task, system_prompt?, tools?, model?, provider?,
/// max_turns?}`; the error names the field.
pub fn spec_from_json(value: &Value) -> Result<ChildSpec, String> {
    let Value::Object(map) = value else {
        return Err(format!("an agent must be a table with a task, not {value}"));
    };
    let text = |key: &str| -> Result<Option<String>, String> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(other) => Err(format!("'{key}' must be a string, not {other}")),
        }
    };
    const FIELDS: [&str; 8] = [
        "task",
        "name",
        "system_prompt",
        "tools",
        "model",
        "provider",
        "max_turns",
        "thinking",
    ];
    if let Some(unknown) = map.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(format!(
            "unknown field '{unknown}'; the fields are {}",
            FIELDS.join(", ")
        ));
    }
    let task = text("task")?.ok_or("'task' (a string) is required")?;
    let tools = match map.get("tools") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .ok_or("'tools' must be a list of names")
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        // Lua cannot tell an empty list from an empty table.
        Some(Value::Object(o)) if o.is_empty() => Some(Vec::new()),
        Some(_) => return Err("'tools' must be a list of names".into()),
    };
    let max_turns = match map.get("max_turns") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64() {
            Some(n) if (1..=1000).contains(&n) => Some(n as u32),
            _ => {
                return Err(format!(
                    "'max_turns' must be a whole number from 1 to 1000, not {v}"
                ))
            }
        },
    };
    Ok(ChildSpec {
        task,
        name: text("name")?,
        system_prompt: text("system_prompt")?,
        tools,
        model: text("model")?,
        provider: text("provider")?,
        max_turns,
        thinking: thinking_from_json(map.get("thinking"))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn specs_are_read_with_clear_errors() {
        let s = spec_from_json(&json!({"task": "t", "tools": ["read"], "max_turns": 3})).unwrap();
        assert_eq!(s.tools, Some(vec!["read".to_string()]));
        assert_eq!(s.max_turns, Some(3));
        let e = spec_from_json(&json!({"tsk": "t"})).unwrap_err();
        assert!(e.starts_with("unknown field 'tsk'"), "{e}");
        let e = spec_from_json(&json!({"system_prompt": "x"})).unwrap_err();
        assert_eq!(e, "'task' (a string) is required");
        let s = spec_from_json(&json!({"task": "t", "thinking": "high"})).unwrap();
        assert_eq!(s.thinking, Some(Thinking::High));
        let e = spec_from_json(&json!({"task": "t", "thinking": "max"})).unwrap_err();
        assert!(
            e.starts_with("'thinking' must be a level (off, minimal"),
            "{e}"
        );
        let e = spec_from_json(&json!({"task": "t", "max_turns": 0})).unwrap_err();
        assert!(e.contains("from 1 to 1000"), "{e}");
        assert!(spec_from_json(&json!("t")).is_err());
    }
}
