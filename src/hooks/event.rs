//! The events of the hook bus: their names ([`EventKind`]) and payloads ([`HookEvent`]), whose
//! JSON is what a script handler receives.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{LazyField, SharedMessages, SharedText};
use crate::vocab::protocol::Message;

/// Names of the events, as scripts write them in `api.on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    SessionStart,
    SessionShutdown,
    Input,
    BeforeAgentStart,
    TurnStart,
    Context,
    BeforeProviderRequest,
    MessageUpdate,
    MessageEnd,
    ToolCall,
    ToolResult,
    TurnEnd,
    AgentEnd,
    ExtensionLoaded,
    SessionBeforeCompact,
    SessionBeforeNew,
    SessionBeforeResume,
    BeforeQuit,
    ModelSelect,
    UserShell,
}

impl EventKind {
    pub const ALL: [EventKind; 20] = [
        EventKind::SessionStart,
        EventKind::SessionShutdown,
        EventKind::Input,
        EventKind::BeforeAgentStart,
        EventKind::TurnStart,
        EventKind::Context,
        EventKind::BeforeProviderRequest,
        EventKind::MessageUpdate,
        EventKind::MessageEnd,
        EventKind::ToolCall,
        EventKind::ToolResult,
        EventKind::TurnEnd,
        EventKind::AgentEnd,
        EventKind::ExtensionLoaded,
        EventKind::SessionBeforeCompact,
        EventKind::SessionBeforeNew,
        EventKind::SessionBeforeResume,
        EventKind::BeforeQuit,
        EventKind::ModelSelect,
        EventKind::UserShell,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EventKind::SessionStart => "session_start",
            EventKind::SessionShutdown => "session_shutdown",
            EventKind::SessionBeforeCompact => "session_before_compact",
            EventKind::Input => "input",
            EventKind::BeforeAgentStart => "before_agent_start",
            EventKind::TurnStart => "turn_start",
            EventKind::Context => "context",
            EventKind::BeforeProviderRequest => "before_provider_request",
            EventKind::MessageUpdate => "message_update",
            EventKind::MessageEnd => "message_end",
            EventKind::ToolCall => "tool_call",
            EventKind::ToolResult => "tool_result",
            EventKind::TurnEnd => "turn_end",
            EventKind::AgentEnd => "agent_end",
            EventKind::ExtensionLoaded => "extension_loaded",
            EventKind::SessionBeforeNew => "session_before_new",
            EventKind::SessionBeforeResume => "session_before_resume",
            EventKind::BeforeQuit => "before_quit",
            EventKind::ModelSelect => "model_select",
            EventKind::UserShell => "user_shell",
        }
    }

    /// Parses an event name; `None` for an unknown one.
    pub fn parse(name: &str) -> Option<EventKind> {
        EventKind::ALL.into_iter().find(|k| k.name() == name)
    }

    pub(super) fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

/// Why a session started or stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    Startup,
    Reload,
    New,
    Resume,
    Quit,
}

/// Where an input line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputSource {
    User,
    Extension,
}

/// An event with its payload. Serialized, it is what a script handler receives (plus `type`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HookEvent {
    SessionStart {
        reason: Reason,
    },
    SessionShutdown {
        reason: Reason,
    },
    Input {
        text: String,
        source: InputSource,
    },
    BeforeAgentStart {
        prompt: String,
        system_prompt: String,
    },
    TurnStart {
        turn: u32,
    },
    Context {
        messages: Vec<Message>,
    },
    BeforeProviderRequest {
        provider: String,
        payload: Value,
    },
    MessageUpdate {
        /// `text` (a piece of the reply) or `thinking` (a piece of the model's reasoning).
        kind: UpdateKind,
        /// The new piece of the reply's text; empty in a thinking update, so a handler that
        /// reads `delta` and `text` never sees reasoning.
        delta: String,
        /// The new piece of reasoning (thinking updates only).
        #[serde(skip_serializing_if = "Option::is_none")]
        thinking: Option<String>,
        /// The reply so far; shared, not copied, per delta.
        text: SharedText,
    },
    MessageEnd {
        message: Message,
    },
    ToolCall {
        id: String,
        name: String,
        args: Value,
        #[serde(flatten)]
        about: CallAbout,
    },
    ToolResult {
        id: String,
        name: String,
        args: Value,
        result: String,
        is_error: bool,
        /// A script tool's `details`, when it gave some.
        #[serde(skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        #[serde(flatten)]
        about: CallAbout,
    },
    TurnEnd {
        turn: u32,
        message: Message,
        tool_results: Vec<Message>,
    },
    AgentEnd {
        /// The conversation; shared, not copied, per handler.
        messages: SharedMessages,
    },
    ExtensionLoaded {
        name: String,
        path: String,
        reason: Reason,
    },
    /// The conversation is about to be compacted: a handler may cancel it or give the
    /// summary itself.
    SessionBeforeCompact {
        /// `auto` (the next request would not fit), `manual` (`/compact`), `overflow` (the
        /// provider said it was over the window).
        reason: CompactReason,
        tokens: u64,
        window: u64,
        /// The older messages to compact, and how many recent ones stay whole.
        messages: Vec<Message>,
        keep_last: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        instructions: Option<String>,
        /// Set by a handler's `summary`: used instead of asking the model.
        #[serde(skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
    },
    /// A new session is about to start (`/new`, `ctx.new_session()`): a handler may cancel.
    SessionBeforeNew {
        /// The session being left.
        session_id: String,
    },
    /// Another session is about to be resumed (`/resume`): a handler may cancel.
    SessionBeforeResume {
        session_id: String,
        /// The session to resume and its file.
        target_id: String,
        target_path: String,
    },
    /// mypi is about to leave (`/quit`, Ctrl-D, `ctx.shutdown()`): a handler may cancel,
    /// except when the input has ended.
    BeforeQuit {
        /// `command`, `eof`, `extension`.
        source: String,
    },
    /// The model changed (`/model`, `api.set_model`, a resumed session's).
    ModelSelect {
        provider: String,
        model: String,
        previous_provider: String,
        previous_model: String,
        /// `command`, `extension`, `resume`.
        source: String,
    },
    /// The user typed `!cmd` (or `!!cmd`) and `command` is about to run in the shell: a
    /// handler may block it, rewrite it, or give its output itself.
    UserShell {
        command: String,
        /// `true` for `!cmd` (the output goes to the model with the next prompt), `false`
        /// for `!!cmd`.
        add_to_context: bool,
        /// Set by a handler's `updated_output`: shown (and kept) instead of running the
        /// command.
        #[serde(skip_serializing_if = "Option::is_none")]
        output: Option<String>,
    },
}

/// Why the conversation is compacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactReason {
    Auto,
    Manual,
    Overflow,
}

/// What else a `tool_call` / `tool_result` event says about the call, when known.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CallAbout {
    /// The tool's annotations (MCP `readOnlyHint`, `destructiveHint`, ...): hints from the
    /// tool's author, to be trusted for nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hints: Option<Value>,
    /// Who made the call when it was not the model: `{extension = NAME}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
    /// The `code` call whose script made this call (its id), when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_tool_call_id: Option<String>,
}

/// The maker of a call that did not come from the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Origin {
    pub extension: String,
}

impl HookEvent {
    pub fn kind(&self) -> EventKind {
        match self {
            HookEvent::SessionStart { .. } => EventKind::SessionStart,
            HookEvent::SessionShutdown { .. } => EventKind::SessionShutdown,
            HookEvent::Input { .. } => EventKind::Input,
            HookEvent::BeforeAgentStart { .. } => EventKind::BeforeAgentStart,
            HookEvent::TurnStart { .. } => EventKind::TurnStart,
            HookEvent::Context { .. } => EventKind::Context,
            HookEvent::BeforeProviderRequest { .. } => EventKind::BeforeProviderRequest,
            HookEvent::MessageUpdate { .. } => EventKind::MessageUpdate,
            HookEvent::MessageEnd { .. } => EventKind::MessageEnd,
            HookEvent::ToolCall { .. } => EventKind::ToolCall,
            HookEvent::ToolResult { .. } => EventKind::ToolResult,
            HookEvent::TurnEnd { .. } => EventKind::TurnEnd,
            HookEvent::AgentEnd { .. } => EventKind::AgentEnd,
            HookEvent::ExtensionLoaded { .. } => EventKind::ExtensionLoaded,
            HookEvent::SessionBeforeCompact { .. } => EventKind::SessionBeforeCompact,
            HookEvent::SessionBeforeNew { .. } => EventKind::SessionBeforeNew,
            HookEvent::SessionBeforeResume { .. } => EventKind::SessionBeforeResume,
            HookEvent::BeforeQuit { .. } => EventKind::BeforeQuit,
            HookEvent::ModelSelect { .. } => EventKind::ModelSelect,
            HookEvent::UserShell { .. } => EventKind::UserShell,
        }
    }

    /// Stands in for an event moved out of a chain for a moment.
    pub(super) fn placeholder() -> HookEvent {
        HookEvent::TurnStart { turn: 0 }
    }

    /// The payload as JSON, the way scripts see it.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The payload as JSON for a script, with the field that grows without bound
    /// (`message_update`'s `text`, `agent_end`'s `messages`) left out and handed over as it
    /// is, to be read on demand.
    pub fn to_script(&self) -> (Value, Option<LazyField>) {
        let (payload, lazy) = self.script_parts();
        (serde_json::to_value(payload).unwrap_or(Value::Null), lazy)
    }

    /// [`HookEvent::to_script`] before it becomes JSON: the payload to serialize (an engine
    /// may serialize it straight into its own values) and the field handed over on its own.
    pub fn script_parts(&self) -> (ScriptPayload<'_>, Option<LazyField>) {
        match self {
            HookEvent::MessageUpdate {
                kind,
                delta,
                thinking,
                text,
            } => {
                let update = ScriptPayload::Update {
                    kind: *kind,
                    delta,
                    thinking: thinking.as_deref(),
                };
                (update, Some(LazyField::Text(text.clone())))
            }
            HookEvent::AgentEnd { messages } => (
                ScriptPayload::Bare(EventKind::AgentEnd),
                Some(LazyField::Messages(messages.downgrade())),
            ),
            other => (ScriptPayload::Event(other), None),
        }
    }
}

/// An event's payload as scripts get it: `message_update` without its `text`, `agent_end`
/// without its `messages`.
#[derive(Clone, Copy)]
pub enum ScriptPayload<'a> {
    Event(&'a HookEvent),
    /// Only the event's `type` (its one field goes on its own).
    Bare(EventKind),
    Update {
        kind: UpdateKind,
        delta: &'a str,
        thinking: Option<&'a str>,
    },
}

/// What a `message_update` carries: a piece of the reply's text or of the model's reasoning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UpdateKind {
    Text,
    Thinking,
}

impl Serialize for ScriptPayload<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        match self {
            ScriptPayload::Event(event) => event.serialize(s),
            ScriptPayload::Bare(kind) => {
                let mut m = s.serialize_struct("Event", 1)?;
                m.serialize_field("type", kind.name())?;
                m.end()
            }
            ScriptPayload::Update {
                kind,
                delta,
                thinking,
            } => {
                let mut m = s.serialize_struct("MessageUpdate", 4)?;
                m.serialize_field("type", "message_update")?;
                m.serialize_field("kind", kind)?;
                m.serialize_field("delta", delta)?;
                match thinking {
                    Some(thinking) => m.serialize_field("thinking", thinking)?,
                    None => m.skip_field("thinking")?,
                }
                m.end()
            }
        }
    }
}
