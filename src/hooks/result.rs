//! [`HookResult`]: the result fields a handler may return, parsed leniently from JSON (a field
//! of the wrong type is reported and ignored, never fatal) and applied to the event.

use serde_json::Value;

use super::{EventKind, HookEvent};
use crate::vocab::owner::Owner;
use crate::vocab::protocol::Message;

/// The result fields of the design doc. Each is honoured only by the events that list it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookResult {
    pub block: bool,
    pub reason: Option<String>,
    pub updated_input: Option<String>,
    pub updated_system_prompt: Option<String>,
    pub updated_messages: Option<Vec<Message>>,
    pub updated_payload: Option<Value>,
    pub updated_args: Option<Value>,
    pub updated_result: Option<String>,
    /// `session_before_compact`: the summary to use instead of the model's.
    pub summary: Option<String>,
    /// `user_shell`: the command to run instead.
    pub updated_command: Option<String>,
    /// `user_shell`: the output to show instead of running the command.
    pub updated_output: Option<String>,
}

/// The result fields each event honours.
fn honoured(kind: EventKind) -> &'static [&'static str] {
    match kind {
        EventKind::Input => &["block", "reason", "updated_input"],
        EventKind::BeforeAgentStart => &["updated_system_prompt"],
        EventKind::Context => &["updated_messages"],
        EventKind::BeforeProviderRequest => &["updated_payload"],
        EventKind::MessageUpdate => &["block", "reason"],
        EventKind::ToolCall => &["block", "reason", "updated_args"],
        EventKind::ToolResult => &["updated_result"],
        EventKind::SessionBeforeCompact => &["cancel", "reason", "summary"],
        EventKind::SessionBeforeNew | EventKind::SessionBeforeResume | EventKind::BeforeQuit => {
            &["cancel", "reason"]
        }
        EventKind::UserShell => &["block", "reason", "updated_command", "updated_output"],
        _ => &[],
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "nil",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "table",
    }
}

impl HookResult {
    /// Parses a handler's return value for an event of `kind`. Returns the fields that
    /// could be used and one message per field that could not.
    pub fn from_value(value: Value, kind: EventKind) -> (HookResult, Vec<String>) {
        let mut result = HookResult::default();
        let mut problems = Vec::new();
        let Value::Object(map) = value else {
            problems.push(format!(
                "the handler returned a {}, expected a table of result fields or nothing; ignored",
                type_name(&value)
            ));
            return (result, problems);
        };
        let allowed = honoured(kind);
        for (key, v) in map {
            if v.is_null() {
                continue;
            }
            if !allowed.contains(&key.as_str()) {
                let hint = if allowed.is_empty() {
                    "this event takes no result fields".to_string()
                } else {
                    format!("it takes {}", allowed.join(", "))
                };
                problems.push(format!(
                    "result field '{key}' is not used by {}: {hint}; ignored",
                    kind.name()
                ));
                continue;
            }
            if let Err(problem) = result.set(&key, v) {
                problems.push(problem);
            }
        }
        (result, problems)
    }

    /// Sets the field `key` (one the event honours) from `v`; the problem when `v` does not
    /// fit it.
    fn set(&mut self, key: &str, v: Value) -> Result<(), String> {
        let wrong = |expected: &str, v: &Value| {
            format!(
                "result field '{key}' must be {expected}, got a {}; ignored",
                type_name(v)
            )
        };
        let text = |v: Value| match v {
            Value::String(s) => Ok(s),
            other => Err(wrong("a string", &other)),
        };
        let table = |v: Value| match v {
            Value::Object(_) => Ok(v),
            other => Err(wrong("a table", &other)),
        };
        match key {
            // `cancel` is how a `session_before_*` event is stopped: a block by its name.
            "block" | "cancel" => self.block = v.as_bool().ok_or_else(|| wrong("a boolean", &v))?,
            "summary" => self.summary = Some(text(v)?),
            "reason" => self.reason = Some(text(v)?),
            "updated_input" => self.updated_input = Some(text(v)?),
            "updated_system_prompt" => self.updated_system_prompt = Some(text(v)?),
            "updated_result" => self.updated_result = Some(text(v)?),
            "updated_command" => {
                let command = text(v)?;
                if command.trim().is_empty() {
                    return Err(format!(
                        "result field '{key}' is empty: there would be nothing to run; ignored"
                    ));
                }
                self.updated_command = Some(command);
            }
            "updated_output" => self.updated_output = Some(text(v)?),
            "updated_args" => self.updated_args = Some(table(v)?),
            "updated_payload" => self.updated_payload = Some(table(v)?),
            "updated_messages" => {
                let messages = parse_messages(v)
                    .map_err(|e| format!("result field 'updated_messages': {e}; ignored"))?;
                self.updated_messages = Some(messages);
            }
            _ => {}
        }
        Ok(())
    }

    /// Whether this result rewrites something (an `updated_*` field).
    pub fn rewrites(&self) -> bool {
        self.updated_input.is_some()
            || self.updated_system_prompt.is_some()
            || self.updated_messages.is_some()
            || self.updated_payload.is_some()
            || self.updated_args.is_some()
            || self.updated_result.is_some()
            || self.summary.is_some()
            || self.updated_command.is_some()
            || self.updated_output.is_some()
    }

    /// Rewrites the event with this result. Returns the block reason when it blocks.
    pub fn apply(mut self, event: &mut HookEvent, owner: &Owner) -> Option<String> {
        let verdict = HookResult {
            block: self.block,
            reason: self.reason.take(),
            ..HookResult::default()
        };
        match event {
            HookEvent::Input { text, .. } => {
                if let Some(t) = self.updated_input {
                    *text = t;
                }
            }
            HookEvent::BeforeAgentStart { system_prompt, .. } => {
                if let Some(s) = self.updated_system_prompt {
                    *system_prompt = s;
                }
            }
            HookEvent::Context { messages } => {
                if let Some(m) = self.updated_messages {
                    *messages = m;
                }
            }
            HookEvent::BeforeProviderRequest { payload, .. } => {
                if let Some(p) = self.updated_payload {
                    *payload = p;
                }
            }
            HookEvent::ToolCall { args, .. } => {
                if let Some(a) = self.updated_args {
                    *args = a;
                }
            }
            HookEvent::ToolResult { result, .. } => {
                if let Some(r) = self.updated_result {
                    *result = r;
                }
            }
            HookEvent::SessionBeforeCompact { summary, .. } => {
                if let Some(s) = self.summary {
                    *summary = Some(s);
                }
            }
            HookEvent::UserShell {
                command, output, ..
            } => {
                if let Some(c) = self.updated_command {
                    *command = c;
                }
                if let Some(o) = self.updated_output {
                    *output = Some(o);
                }
            }
            _ => {}
        }
        verdict.verdict(owner)
    }

    /// The block reason when this result blocks.
    pub fn verdict(self, owner: &Owner) -> Option<String> {
        self.block
            .then(|| self.reason.unwrap_or_else(|| format!("blocked by {owner}")))
    }

    /// A copy of `event` for this result to rewrite: the big fields it replaces (messages,
    /// arguments, payloads, tool results, texts) are left empty instead of copied.
    pub fn copy_for(&self, event: &HookEvent) -> HookEvent {
        match event {
            HookEvent::Context { .. } if self.updated_messages.is_some() => HookEvent::Context {
                messages: Vec::new(),
            },
            HookEvent::ToolCall {
                id, name, about, ..
            } if self.updated_args.is_some() => HookEvent::ToolCall {
                id: id.clone(),
                name: name.clone(),
                args: Value::Null,
                about: about.clone(),
            },
            HookEvent::ToolResult {
                id,
                name,
                args,
                is_error,
                details,
                about,
                ..
            } if self.updated_result.is_some() => HookEvent::ToolResult {
                id: id.clone(),
                name: name.clone(),
                args: args.clone(),
                result: String::new(),
                is_error: *is_error,
                details: details.clone(),
                about: about.clone(),
            },
            HookEvent::BeforeProviderRequest { provider, .. } if self.updated_payload.is_some() => {
                HookEvent::BeforeProviderRequest {
                    provider: provider.clone(),
                    payload: Value::Null,
                }
            }
            HookEvent::Input { source, .. } if self.updated_input.is_some() => HookEvent::Input {
                text: String::new(),
                source: *source,
            },
            HookEvent::BeforeAgentStart { prompt, .. } if self.updated_system_prompt.is_some() => {
                HookEvent::BeforeAgentStart {
                    prompt: prompt.clone(),
                    system_prompt: String::new(),
                }
            }
            other => other.clone(),
        }
    }
}

fn parse_messages(v: Value) -> Result<Vec<Message>, String> {
    let Value::Array(items) = v else {
        return Err(format!(
            "must be an array of messages, got a {}",
            type_name(&v)
        ));
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, m)| {
            serde_json::from_value::<Message>(m)
                .map_err(|e| format!("message {} is not a message ({e})", i + 1))
        })
        .collect()
}
