//! The request bodies of the two model APIs as serde types that borrow the request. One
//! serialization gives either the bytes to send (no JSON value in between, so a long
//! conversation is held once, plus its encoding) or, when a `before_provider_request` handler
//! wants to see it, the JSON value. The shapes are pinned by the providers' payload tests.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::Value;

use super::ModelRequest;
use crate::vocab::protocol::{Image, Message, Role, ThinkingBlock, ToolCall};

/// A Chat Completions body.
#[derive(Serialize)]
pub struct OpenAiBody<'a> {
    model: &'a str,
    stream: bool,
    stream_options: StreamOptions,
    messages: Vec<OpenAiMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<OpenAiTool<'a>>,
    /// Sent as `max_completion_tokens` to OpenAI's own API (its reasoning models refuse
    /// `max_tokens`), as `max_tokens` to others.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
    /// The thinking level (`minimal` to `high`); nothing when thinking is off.
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'static str>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct OpenAiMessage<'a> {
    role: &'static str,
    /// `null` only for an assistant message that is nothing but tool calls.
    content: Option<OpenAiContent<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<OpenAiCall<'a>>,
}

/// A message's content: its text, or (a user message with images) text and image parts.
#[derive(Serialize)]
#[serde(untagged)]
enum OpenAiContent<'a> {
    Text(&'a str),
    Parts(Vec<OpenAiPart<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum OpenAiPart<'a> {
    Text { text: &'a str },
    ImageUrl { image_url: DataUrl<'a> },
}

/// An image as a `data:` URL, written while serializing (the base64 is not copied first).
struct DataUrl<'a>(&'a Image);

impl Serialize for DataUrl<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        /// The URL's text, written piece by piece into the serializer's string.
        struct Url<'a>(&'a Image);
        impl std::fmt::Display for Url<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "data:{};base64,{}", self.0.mime_type, self.0.data)
            }
        }
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry("url", &format_args!("{}", Url(self.0)))?;
        map.end()
    }
}

/// A user message's content for Chat Completions: a string, or with images, a text part
/// (when there is text) and an `image_url` part per image.
fn openai_user_content(m: &Message) -> OpenAiContent<'_> {
    if m.images.is_empty() {
        return OpenAiContent::Text(&m.content);
    }
    let text = (!m.content.is_empty()).then(|| OpenAiPart::Text { text: &m.content });
    let images = m.images.iter().map(|image| OpenAiPart::ImageUrl {
        image_url: DataUrl(image),
    });
    OpenAiContent::Parts(text.into_iter().chain(images).collect())
}

#[derive(Serialize)]
struct OpenAiCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: OpenAiFunction<'a>,
}

#[derive(Serialize)]
struct OpenAiFunction<'a> {
    name: &'a str,
    arguments: ArgumentsText<'a>,
}

/// A call's arguments as the JSON text the API wants, made while serializing.
struct ArgumentsText<'a>(&'a ToolCall);

impl Serialize for ArgumentsText<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.arguments_text())
    }
}

#[derive(Serialize)]
struct OpenAiTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: OpenAiToolFunction<'a>,
}

#[derive(Serialize)]
struct OpenAiToolFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

impl<'a> OpenAiBody<'a> {
    /// `keyed`: send the request's cache key as `prompt_cache_key` (OpenAI's own API; other
    /// servers may refuse a field they do not know).
    pub fn new(request: &'a ModelRequest<'_>, keyed: bool) -> Self {
        let system = (!request.system_prompt.is_empty()).then(|| OpenAiMessage {
            role: "system",
            content: Some(OpenAiContent::Text(&request.system_prompt)),
            tool_call_id: None,
            tool_calls: Vec::new(),
        });
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        messages.extend(system);
        messages.extend(request.messages.iter().map(openai_message));
        let tools = request
            .tools
            .iter()
            .map(|t| OpenAiTool {
                kind: "function",
                function: OpenAiToolFunction {
                    name: &t.name,
                    description: &t.description,
                    parameters: &t.parameters,
                },
            })
            .collect();
        OpenAiBody {
            model: &request.model,
            stream: true,
            stream_options: StreamOptions {
                include_usage: true,
            },
            messages,
            tools,
            max_tokens: request.max_tokens.filter(|_| !keyed),
            max_completion_tokens: request.max_tokens.filter(|_| keyed),
            prompt_cache_key: request.cache_key.as_deref().filter(|_| keyed),
            reasoning_effort: Some(request.thinking.level)
                .filter(|l| l.is_on())
                .map(|l| l.name()),
        }
    }
}

fn openai_message(m: &Message) -> OpenAiMessage<'_> {
    let text = Some(OpenAiContent::Text(&m.content));
    let (role, content, tool_call_id) = match m.role {
        Role::System => ("system", text, None),
        Role::User => ("user", Some(openai_user_content(m)), None),
        Role::Tool => (
            "tool",
            text,
            Some(m.tool_call_id.as_deref().unwrap_or_default()),
        ),
        Role::Assistant if !m.tool_calls.is_empty() && m.content.is_empty() => {
            ("assistant", None, None)
        }
        Role::Assistant => ("assistant", text, None),
    };
    let tool_calls = m
        .tool_calls
        .iter()
        .map(|c| OpenAiCall {
            id: &c.id,
            kind: "function",
            function: OpenAiFunction {
                name: &c.name,
                arguments: ArgumentsText(c),
            },
        })
        .collect();
    OpenAiMessage {
        role,
        content,
        tool_call_id,
        tool_calls,
    }
}

/// A Messages API body, with prompt-cache breakpoints (`cache_control`, at most the API's
/// four): after the tools, after the system prompt, and after the last block of the newest
/// turn and of the user turn before it. The prefix up to each is stable as the conversation
/// grows, so each request reads the last one's prefix from the cache and writes only what is
/// new; a rewritten conversation (a `context` handler, compaction) costs one cache write.
#[derive(Serialize)]
pub struct AnthropicBody<'a> {
    model: &'a str,
    max_tokens: u64,
    stream: bool,
    messages: Vec<Turn<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<[SystemText; 1]>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<AnthropicTool<'a>>,
    /// Extended thinking, with a budget below `max_tokens` (no `temperature` is ever sent:
    /// the API refuses one with thinking).
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<ThinkingParam>,
}

/// `{"type": "enabled", "budget_tokens": B}`.
#[derive(Serialize)]
struct ThinkingParam {
    #[serde(rename = "type")]
    kind: &'static str,
    budget_tokens: u64,
}

/// `{"type": "ephemeral"}`: a cache breakpoint.
#[derive(Serialize, Clone, Copy)]
struct Ephemeral {
    #[serde(rename = "type")]
    kind: &'static str,
}

const EPHEMERAL: Ephemeral = Ephemeral { kind: "ephemeral" };

/// The system prompt as one text block, cached.
#[derive(Serialize)]
struct SystemText {
    #[serde(rename = "type")]
    kind: &'static str,
    text: String,
    cache_control: Ephemeral,
}

#[derive(Serialize)]
struct Turn<'a> {
    role: &'static str,
    content: TurnContent<'a>,
}

/// A block, and whether the cache's breakpoint follows it.
#[derive(Serialize)]
struct Marked<'a> {
    #[serde(flatten)]
    block: Block<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<Ephemeral>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum TurnContent<'a> {
    /// A user turn that is one piece of text is sent as a plain string.
    Text(&'a str),
    Blocks(Vec<Marked<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Text {
        text: &'a str,
    },
    Image {
        source: ImageSource<'a>,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Input<'a>,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: ResultContent<'a>,
        is_error: bool,
    },
    /// A thinking block sent back as it came (its own `type`, signature or data).
    #[serde(untagged)]
    Thought(&'a ThinkingBlock),
}

/// An image block's source: the image's base64, as it is stored.
#[derive(Serialize)]
struct ImageSource<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: &'a str,
    data: &'a str,
}

impl<'a> ImageSource<'a> {
    fn of(image: &'a Image) -> Self {
        ImageSource {
            kind: "base64",
            media_type: &image.mime_type,
            data: &image.data,
        }
    }
}

/// A user message's blocks: its images, then its text (Anthropic's advice: images before
/// the text about them); no empty text block (the API refuses one).
fn user_blocks(m: &Message) -> Vec<Block<'_>> {
    let images = m.images.iter().map(|image| Block::Image {
        source: ImageSource::of(image),
    });
    let text =
        (!m.content.is_empty() || m.images.is_empty()).then_some(Block::Text { text: &m.content });
    images.chain(text).collect()
}

/// A tool result's content: its text, or (with images) a text block and image blocks.
struct ResultContent<'a> {
    text: &'a str,
    images: &'a [crate::vocab::protocol::Image],
}

impl Serialize for ResultContent<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        if self.images.is_empty() {
            return self.text.serialize(s);
        }
        let mut seq = s.serialize_seq(Some(self.images.len() + 1))?;
        seq.serialize_element(&serde_json::json!({"type": "text", "text": self.text}))?;
        for image in self.images {
            seq.serialize_element(&Block::Image {
                source: ImageSource::of(image),
            })?;
        }
        seq.end()
    }
}

/// A tool call's input: its arguments when they are an object, else `{}`.
struct Input<'a>(Option<&'a Value>);

impl Serialize for Input<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Some(args) => args.serialize(s),
            None => s.serialize_map(Some(0))?.end(),
        }
    }
}

#[derive(Serialize)]
struct AnthropicTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<Ephemeral>,
}

impl<'a> AnthropicBody<'a> {
    /// `max_tokens` is the reply length limit sent with each request.
    pub fn new(request: &'a ModelRequest<'_>, max_tokens: u64) -> Self {
        // System messages inside the conversation join the system prompt: the API has no
        // system role.
        let system: Vec<&str> = std::iter::once(request.system_prompt.as_str())
            .chain(
                request
                    .messages
                    .iter()
                    .filter(|m| m.role == Role::System)
                    .map(|m| m.content.as_str()),
            )
            .filter(|s| !s.is_empty())
            .collect();
        let last = request.tools.len().saturating_sub(1);
        let tools = request
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| AnthropicTool {
                name: &t.name,
                description: &t.description,
                input_schema: &t.parameters,
                cache_control: (i == last).then_some(EPHEMERAL),
            })
            .collect();
        let system = (!system.is_empty()).then(|| {
            [SystemText {
                kind: "text",
                text: system.join("\n\n"),
                cache_control: EPHEMERAL,
            }]
        });
        let max_tokens = request.max_tokens.unwrap_or(max_tokens);
        let ask = request.thinking;
        let fitted = ask.level.fit(max_tokens, ask.ceiling);
        AnthropicBody {
            model: &request.model,
            max_tokens: fitted.map_or(max_tokens, |(max, _)| max),
            stream: true,
            messages: turns(&request.messages, fitted.is_some()),
            system,
            tools,
            thinking: fitted.map(|(_, budget_tokens)| ThinkingParam {
                kind: "enabled",
                budget_tokens,
            }),
        }
    }
}

/// The conversation as Messages API turns. Consecutive messages that land on the same role
/// (tool results, then a user message) are merged into one turn, since roles must alternate.
/// `thinking`: the request asks for thinking, so the signed thinking blocks go back.
fn turns(messages: &[Message], thinking: bool) -> Vec<Turn<'_>> {
    let mut turns: Vec<(&'static str, Vec<Block<'_>>)> = Vec::new();
    for m in messages {
        let (role, blocks) = match m.role {
            Role::System => continue,
            Role::User => ("user", user_blocks(m)),
            Role::Tool => (
                "user",
                vec![Block::ToolResult {
                    tool_use_id: m.tool_call_id.as_deref().unwrap_or_default(),
                    content: ResultContent {
                        text: &m.content,
                        images: &m.images,
                    },
                    is_error: m.is_error,
                }],
            ),
            Role::Assistant => ("assistant", assistant_blocks(m, thinking)),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    // The breakpoints: the newest turn, and the user turn before the newest user turn.
    let users: Vec<usize> = (0..turns.len()).filter(|&i| turns[i].0 == "user").collect();
    let marked = [
        turns.len().checked_sub(1),
        users.len().checked_sub(2).map(|i| users[i]),
    ];
    turns
        .into_iter()
        .enumerate()
        .map(|(i, (role, blocks))| {
            let mark = marked.contains(&Some(i));
            let content = match blocks.as_slice() {
                [Block::Text { text }] if role == "user" && !mark => TurnContent::Text(text),
                _ => {
                    let n = blocks.len();
                    let blocks = blocks.into_iter().enumerate().map(|(j, block)| {
                        // Thinking blocks take no breakpoint.
                        let last = mark && j + 1 == n && !matches!(block, Block::Thought(_));
                        Marked {
                            block,
                            cache_control: last.then_some(EPHEMERAL),
                        }
                    });
                    TurnContent::Blocks(blocks.collect())
                }
            };
            Turn { role, content }
        })
        .collect()
}

/// An assistant message's blocks: its signed thinking blocks first, as they came (the API
/// checks them in the tool loop; only when the request asks for thinking), then its text,
/// then its tool calls.
fn assistant_blocks(m: &Message, thinking: bool) -> Vec<Block<'_>> {
    let mut blocks = Vec::with_capacity(m.thinking.len() + m.tool_calls.len() + 1);
    if thinking {
        blocks.extend(m.thinking.iter().map(Block::Thought));
    }
    if !m.content.is_empty() {
        blocks.push(Block::Text { text: &m.content });
    }
    for call in &m.tool_calls {
        let input = match (&call.invalid_arguments, &call.arguments) {
            (None, args @ Value::Object(_)) => Some(args),
            _ => None,
        };
        blocks.push(Block::ToolUse {
            id: &call.id,
            name: &call.name,
            input: Input(input),
        });
    }
    blocks
}
