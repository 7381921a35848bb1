//! The vocabulary every other module speaks: messages, tool calls, tool specs and outputs,
//! usage, and the agent events a front end renders. No I/O happens here.
//!
//! The JSON shapes of these types are part of the contract (session files, `--json` output,
//! hook payloads) and are pinned by the tests at the bottom of this file.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a progress report is: output of the call so far (`bash`), or a message about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UpdateKind {
    Output,
    Progress,
}

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// One tool call requested by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The parsed arguments (an object for a well-formed call).
    #[serde(default)]
    pub arguments: Value,
    /// Set when the model sent arguments that are not valid JSON: the raw text it sent. The
    /// call is then answered with an error result and never executed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid_arguments: Option<String>,
}

impl ToolCall {
    /// Builds a call from the raw argument text a model streamed.
    pub fn from_raw(id: String, name: String, raw: &str) -> Self {
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            return ToolCall {
                id,
                name,
                arguments: Value::Object(Default::default()),
                invalid_arguments: None,
            };
        }
        match serde_json::from_str::<Value>(trimmed) {
            Ok(arguments) => ToolCall {
                id,
                name,
                arguments,
                invalid_arguments: None,
            },
            Err(_) => ToolCall {
                id,
                name,
                arguments: Value::Null,
                invalid_arguments: Some(raw.to_string()),
            },
        }
    }

    /// The argument text to send back to a model API that wants a string.
    pub fn arguments_text(&self) -> String {
        match &self.invalid_arguments {
            Some(raw) => raw.clone(),
            None => self.arguments.to_string(),
        }
    }
}

/// A message of the conversation, as stored in the session and sent to providers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    #[serde(default)]
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For tool results: the name of the tool that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// For tool results: whether the tool failed.
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_error: bool,
    /// For tool results: images the tool returned (an MCP tool's image content), sent as
    /// images to providers that take them in tool results; the text names them either way.
    /// For user messages: the images of the prompt (an editor's, in `mypi acp`), sent as
    /// image blocks (Anthropic) or `image_url` parts (OpenAI) beside the text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
    /// For assistant messages: the tokens the request that produced it used (kept in the
    /// session, so a resumed session's totals are right).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// For tool results: what the tool returned beside its text (a script tool's
    /// `details`), kept in the session for extensions and renderers, never sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
    /// For assistant messages: the signed thinking blocks the Messages API streamed, as they
    /// came, sent back (first) in the next request of the turn; never the reply's text and
    /// never sent to other APIs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thinking: Vec<ThinkingBlock>,
}

/// A thinking block of the Messages API, in its own shape: the reasoning with its
/// signature, or a redacted block's opaque data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ThinkingBlock {
    Thinking { thinking: String, signature: String },
    RedactedThinking { data: String },
}

/// An image, base64-encoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Image {
    pub mime_type: String,
    pub data: String,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Message {
    pub fn user(text: impl Into<String>) -> Self {
        Self::plain(Role::User, text)
    }

    pub fn system(text: impl Into<String>) -> Self {
        Self::plain(Role::System, text)
    }

    pub fn assistant(text: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Message {
            tool_calls,
            ..Self::plain(Role::Assistant, text)
        }
    }

    pub fn tool_result(call: &ToolCall, output: &ToolOutput) -> Self {
        Message {
            tool_call_id: Some(call.id.clone()),
            name: Some(call.name.clone()),
            is_error: output.is_error,
            images: output.images.clone(),
            details: output.details.clone(),
            ..Self::plain(Role::Tool, output.content.clone())
        }
    }

    fn plain(role: Role, text: impl Into<String>) -> Self {
        Message {
            role,
            content: text.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
            is_error: false,
            images: Vec::new(),
            usage: None,
            details: None,
            thinking: Vec::new(),
        }
    }
}

/// What a tool offers the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// A JSON Schema object describing the arguments.
    pub parameters: Value,
}

/// What a tool returns: text for the model, and whether it is an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    pub content: String,
    #[serde(default)]
    pub is_error: bool,
    /// Images for the model (see [`Message::images`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
    /// Data for extensions and renderers beside the text (see [`Message::details`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
}

impl ToolOutput {
    pub fn ok(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: false,
            images: Vec::new(),
            details: None,
        }
    }

    pub fn error(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: true,
            images: Vec::new(),
            details: None,
        }
    }
}

/// What input read from Anthropic's prompt cache costs, as a share of the input price.
pub const CACHE_READ_RATE: f64 = 0.1;
/// What input written to Anthropic's prompt cache costs, as a share of the input price.
pub const CACHE_WRITE_RATE: f64 = 1.25;
/// What cached input costs at an OpenAI-compatible API, as a share of the input price, when
/// neither the configuration nor [`openai_read_rate`]'s models say otherwise.
pub const OPENAI_CACHE_READ_RATE: f64 = 0.5;

/// OpenAI's own models' cached-input discount, as a share of the input price: a tenth for
/// GPT-5, a quarter for GPT-4.1 and the o-series, else [`OPENAI_CACHE_READ_RATE`].
pub fn openai_read_rate(model: &str) -> f64 {
    const KNOWN: &[(&str, f64)] = &[
        ("gpt-5", 0.1),
        ("gpt-4.1", 0.25),
        ("o3", 0.25),
        ("o4-mini", 0.25),
    ];
    KNOWN
        .iter()
        .find(|(prefix, _)| model.starts_with(prefix))
        .map_or(OPENAI_CACHE_READ_RATE, |(_, rate)| *rate)
}

/// A model's prices, US dollars per million tokens: input, output, and input read from or
/// written to the prompt cache.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Prices {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

impl Prices {
    /// Input and output prices, the cache's at Anthropic's rates ([`CACHE_READ_RATE`],
    /// [`CACHE_WRITE_RATE`]); see [`Prices::cached_at`] for others.
    pub fn new(input: f64, output: f64) -> Prices {
        Prices {
            input,
            output,
            cache_read: input * CACHE_READ_RATE,
            cache_write: input * CACHE_WRITE_RATE,
        }
    }

    /// With the cache's prices given (each one that is `None` kept).
    pub fn cached_at(mut self, read: Option<f64>, write: Option<f64>) -> Prices {
        self.cache_read = read.unwrap_or(self.cache_read);
        self.cache_write = write.unwrap_or(self.cache_write);
        self
    }
}

/// Token counts reported by a provider, and what they cost when the model's prices are
/// configured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Of the input, how many tokens the provider read from its prompt cache (when it says).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_tokens: u64,
    /// Of the input, how many tokens the provider wrote to its prompt cache (Anthropic's
    /// `cache_creation_input_tokens`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
    /// US dollars, at the prices configured for the model (`input_price`, `output_price`,
    /// `cache_read_price`, `cache_write_price`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cached_tokens += other.cached_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
    }

    /// Just the token counts.
    pub fn tokens(input: u64, output: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        }
    }

    /// With its cost at `prices`: input read from the prompt cache at the cache's read
    /// price, input written to it at its write price, the rest at the input price.
    pub fn priced(mut self, prices: Option<Prices>) -> Usage {
        if let Some(p) = prices {
            let (read, write) = (self.cached_tokens, self.cache_write_tokens);
            let plain = self.input_tokens.saturating_sub(read + write) as f64;
            let input_cost =
                plain * p.input + read as f64 * p.cache_read + write as f64 * p.cache_write;
            self.cost_usd = Some((input_cost + self.output_tokens as f64 * p.output) / 1e6);
        }
        self
    }
}

/// What a child agent run (`api.run_agent`) produced, as a script gets it back.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChildOutcome {
    pub text: String,
    pub turns: u32,
    pub usage: Usage,
    /// Why the child did not finish (cancelled, a model error, the turn limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A child agent's run as the session keeps it: nested under the tool call that ran it,
/// never part of the parent's conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChildRecord {
    /// The parent's tool call that ran the child (none when a command or handler did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    pub depth: u32,
    pub model: String,
    pub task: String,
    pub messages: Vec<Message>,
    pub outcome: ChildOutcome,
    /// The child's own children.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<ChildRecord>,
}

/// How a queued message is delivered (`deliver_as` in `api.send_message`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    Steer,
    FollowUp,
}

impl Delivery {
    /// Parses `"steer"` / `"follow_up"` (also `"followup"` and `"follow-up"`).
    pub fn parse(s: &str) -> Option<Delivery> {
        match s {
            "steer" => Some(Delivery::Steer),
            "follow_up" | "followup" | "follow-up" => Some(Delivery::FollowUp),
            _ => None,
        }
    }
}

/// A part of a run's usage and what spent it (see `AgentEvent::Final`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpentBy {
    pub by: String,
    pub usage: Usage,
}

/// Which child agent an event came from ([`AgentEvent::Child`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildTag {
    /// The child's name (its agent file's), or the start of its task.
    pub name: String,
    /// 1 for a child of the user's agent, 2 for its child, ...
    pub depth: u32,
    /// The child's model turn when the event happened (0 before its first).
    pub turn: u32,
}

/// Everything the agent reports while it works. `--json` prints each as one line; the human
/// renderer prints text deltas as they arrive and a line per tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// A run started for this prompt.
    AgentStart { prompt: String },
    /// A queued message (the user's, typed during a run, or a script's `api.send_message`)
    /// enters the conversation: a steering one after the tool calls under way, a follow-up
    /// (or a steering one while idle) as the prompt of a new run.
    QueuedMessage { text: String, delivery: Delivery },
    /// A model request is about to be made.
    TurnStart { turn: u32 },
    /// A piece of assistant text.
    TextDelta { delta: String },
    /// A piece of the model's reasoning as it streams: shown (dimmed, as the model's
    /// thoughts), never part of the reply or sent back as its text.
    Thinking { delta: String },
    /// The model's message for this turn is complete.
    MessageEnd { message: Message },
    /// A tool is about to run (after `tool_call` hooks).
    ToolCall {
        id: String,
        name: String,
        arguments: Value,
    },
    /// A running tool call's progress: `output` is its output so far as it arrives (`bash`),
    /// `progress` a message about it (MCP progress, a script tool's `ctx.progress`).
    ToolUpdate {
        id: String,
        name: String,
        kind: UpdateKind,
        text: String,
    },
    /// A tool finished (after `tool_result` hooks).
    ToolResult {
        id: String,
        name: String,
        content: String,
        is_error: bool,
        /// A script tool's `details`, when it gave some.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<serde_json::Value>,
    },
    /// A tool call made by a running `code` call's script (`parent_id`), after its
    /// `tool_call` hooks.
    NestedToolCall {
        parent_id: String,
        id: String,
        name: String,
        arguments: Value,
    },
    /// A `code` script's tool call finished (after its `tool_result` hooks).
    NestedToolResult {
        parent_id: String,
        id: String,
        name: String,
        content: String,
        is_error: bool,
    },
    /// The turn's tool results are stored; `usage` is this turn's model request.
    TurnEnd { turn: u32, usage: Usage },
    /// A notice for the user (blocked streams, extension messages).
    Notice { message: String },
    /// What a child agent did: one of its tool calls, results, notices, retries or its
    /// failure (never its streamed text). `call_id` is the parent's tool call that started
    /// it, when one did (the subagent tool; not a hook handler's `api.run_agent`). A
    /// grandchild's events come up as they are, with their own tag.
    Child {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        child: ChildTag,
        event: Box<AgentEvent>,
    },
    /// A model request failed before anything arrived and is sent again after `delay_ms`.
    Retry {
        attempt: u32,
        max_retries: u32,
        delay_ms: u64,
        error: String,
    },
    /// The first event of a `--json` run: what this session runs with.
    Session {
        session_id: String,
        cwd: String,
        provider: String,
        model: String,
        tools: Vec<String>,
        extensions: Vec<String>,
        mcp_servers: Vec<String>,
    },
    /// The run finished: the final assistant text and the usage of the whole run.
    Final {
        text: String,
        turns: u32,
        /// Every model call of the run: its own turns, child agents', compaction summaries',
        /// scripts' `api.complete`.
        usage: Usage,
        /// `usage` by what spent it (`agent`, `subagents`, `compaction`, `api.complete`),
        /// when anything but the agent's own turns did.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        usage_by: Vec<SpentBy>,
        /// The whole session's totals so far.
        session_usage: Usage,
    },
    /// The run failed.
    Error { message: String },
    /// A slash command answered (no model involved).
    Command { name: String, output: String },
    /// A settings hook (Claude Code's, Codex's) ran.
    HookRun(HookRun),
    /// A script set the plan (`ctx.ui.set_plan`): every entry, in order (none: cleared).
    Plan { entries: Vec<PlanEntry> },
}

mod hook_run;
pub use hook_run::{HookOutcome, HookRun};
mod plan;
pub use plan::{PlanEntry, PlanPriority, PlanStatus};

impl AgentEvent {
    /// A retry as the user reads it: `HTTP 503 ...; retrying in 0.5 s (1/3)`.
    pub fn retry_text(&self) -> Option<String> {
        match self {
            AgentEvent::Retry {
                attempt,
                max_retries,
                delay_ms,
                error,
            } => Some(format!(
                "{error}; retrying in {:.1} s ({attempt}/{max_retries})",
                *delay_ms as f64 / 1000.0
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
