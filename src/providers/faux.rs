//! The offline `faux` model: replies from a script (a JSONL file, one reply per line) or,
//! without one, echoes the last user message (its images named: `[image image/png, 68
//! bytes]`, so a test sees what reached the model; a script's `"echo": true` reply does the
//! same). It streams like a real provider (text word by
//! word, tool calls, usage, done) so the whole agent loop runs without a network. Nothing
//! happens at start-up beyond reading the script file.

use futures_util::future::BoxFuture;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::faux_read::Read;
use super::{EventStream, ModelRequest, Payload, Provider, ProviderError, StreamEvent};
use crate::vocab::protocol::Usage;

/// The text a scripted model sends once its script has run out.
pub const EXHAUSTED: &str = "(faux script exhausted)";

/// One scripted reply: text and/or tool calls.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FauxReply {
    #[serde(default)]
    pub text: Option<String>,
    /// Reasoning streamed before the text (as a thinking model's).
    #[serde(default)]
    pub thinking: Option<String>,
    #[serde(default)]
    pub tool_calls: Option<Vec<FauxToolCall>>,
    /// Pause between streamed pieces, in milliseconds.
    #[serde(default)]
    pub delay_ms: u64,
    /// Reply with the last user message, as the model without a script does (after `text`).
    #[serde(default)]
    pub echo: bool,
}

/// A scripted tool call. `arguments` is an object, or a string sent as raw argument text
/// (to script malformed arguments).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FauxToolCall {
    pub name: String,
    #[serde(default)]
    pub arguments: Option<Value>,
    #[serde(default)]
    pub id: Option<String>,
}

impl FauxReply {
    /// A reply with just text.
    pub fn text(text: impl Into<String>) -> Self {
        FauxReply {
            text: Some(text.into()),
            ..FauxReply::default()
        }
    }

    fn check(&self) -> Result<(), String> {
        if self.text.is_none() && self.tool_calls.is_none() && !self.echo {
            return Err("a reply needs \"text\", \"tool_calls\" and/or \"echo\"".to_string());
        }
        for (n, call) in self.tool_calls.iter().flatten().enumerate() {
            if call.name.trim().is_empty() {
                return Err(format!("tool call {}: \"name\" is empty", n + 1));
            }
            match &call.arguments {
                None | Some(Value::Object(_)) | Some(Value::String(_)) => {}
                Some(_) => {
                    return Err(format!(
                    "tool call {} ({}): \"arguments\" must be an object (or a string of raw text)",
                    n + 1,
                    call.name
                ))
                }
            }
        }
        Ok(())
    }
}

/// The offline model.
#[derive(Debug, Default)]
pub struct FauxProvider {
    script: Option<Vec<FauxReply>>,
    /// The next script entry.
    next: AtomicUsize,
    /// Numbering for generated tool call ids.
    ids: AtomicUsize,
}

impl FauxProvider {
    /// With a script, each `stream` call sends the next reply; without one, it echoes.
    pub fn new(script: Option<Vec<FauxReply>>) -> Self {
        FauxProvider {
            script,
            ..FauxProvider::default()
        }
    }

    /// Reads a JSONL script. Errors read `FILE:LINE: what is wrong`.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, String> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read the faux script: {e}", path.display()))?;
        let script = parse_script(&text, &path.display().to_string())?;
        Ok(FauxProvider::new(Some(script)))
    }

    /// The reply for the next request.
    fn reply_for(&self, read: &Read) -> FauxReply {
        match &self.script {
            Some(script) => {
                let n = self.next.fetch_add(1, Ordering::Relaxed);
                let mut reply = script
                    .get(n)
                    .cloned()
                    .unwrap_or_else(|| FauxReply::text(EXHAUSTED));
                if reply.echo {
                    let text = reply.text.take().unwrap_or_default();
                    reply.text = Some(text + read.last_user.as_str());
                }
                reply
            }
            None => FauxReply::text(read.last_user.clone()),
        }
    }

    /// The stream events of `reply`, in order.
    fn events_for(&self, reply: &FauxReply, read: &Read) -> Vec<StreamEvent> {
        let text = reply.text.as_deref().unwrap_or("");
        let thinking = reply.thinking.as_deref().unwrap_or("");
        let mut events: Vec<StreamEvent> = split_words(thinking)
            .into_iter()
            .map(|w| StreamEvent::ThinkingDelta(w.to_string()))
            .collect();
        events.extend(
            split_words(text)
                .into_iter()
                .map(|w| StreamEvent::TextDelta(w.to_string())),
        );
        let mut output_chars = text.len();
        let calls = reply.tool_calls.as_deref().unwrap_or(&[]);
        for (index, call) in calls.iter().enumerate() {
            let id = call.id.clone().unwrap_or_else(|| {
                format!("faux_{}", self.ids.fetch_add(1, Ordering::Relaxed) + 1)
            });
            let arguments = match &call.arguments {
                Some(Value::String(raw)) => raw.clone(),
                Some(v) => v.to_string(),
                None => "{}".to_string(),
            };
            output_chars += call.name.len() + arguments.len();
            events.push(StreamEvent::ToolCallStart {
                index,
                id,
                name: call.name.clone(),
            });
            events.push(StreamEvent::ToolCallDelta { index, arguments });
        }
        events.push(StreamEvent::Usage(Usage::tokens(
            (read.messages_chars as u64).div_ceil(4),
            (output_chars as u64).div_ceil(4),
        )));
        let stop = if calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        events.push(StreamEvent::Done {
            stop_reason: Some(stop.to_string()),
        });
        events
    }
}

impl Provider for FauxProvider {
    fn name(&self) -> &str {
        "faux"
    }

    fn model(&self) -> &str {
        "faux"
    }

    /// The request as JSON bytes (what a `before_provider_request` handler would see),
    /// encoded straight from the request like a real provider's body.
    fn encode(&self, request: &ModelRequest) -> Option<Vec<u8>> {
        serde_json::to_vec(request).ok()
    }

    fn stream<'a>(
        &'a self,
        payload: &'a Payload,
    ) -> BoxFuture<'a, Result<Box<dyn EventStream>, ProviderError>> {
        let read = super::faux_read::read(payload);
        let reply = self.reply_for(&read);
        let events = self.events_for(&reply, &read);
        Box::pin(async move {
            Ok(Box::new(FauxStream {
                events: events.into(),
                delay: Duration::from_millis(reply.delay_ms),
                started: false,
            }) as Box<dyn EventStream>)
        })
    }
}

/// Parses a JSONL script; `origin` names the file in errors.
pub fn parse_script(text: &str, origin: &str) -> Result<Vec<FauxReply>, String> {
    let mut replies = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let at = format!("{origin}:{}", n + 1);
        let reply: FauxReply =
            serde_json::from_str(line).map_err(|e| format!("{at}: {}", describe_json_error(&e)))?;
        reply.check().map_err(|e| format!("{at}: {e}"))?;
        replies.push(reply);
    }
    Ok(replies)
}

/// serde's message without its "at line 1 column N" tail (the line is ours to report).
fn describe_json_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let message = match text.rfind(" at line ") {
        Some(i) => &text[..i],
        None => &text,
    };
    format!("{message} (column {})", e.column())
}

/// Splits text into pieces that each end after a run of whitespace ("a b" -> "a ", "b"), so
/// joining them gives the text back.
fn split_words(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut in_space = false;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            in_space = true;
        } else if in_space {
            pieces.push(&text[start..i]);
            start = i;
            in_space = false;
        }
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

struct FauxStream {
    events: VecDeque<StreamEvent>,
    delay: Duration,
    started: bool,
}

impl EventStream for FauxStream {
    fn next(&mut self) -> BoxFuture<'_, Option<Result<StreamEvent, ProviderError>>> {
        Box::pin(async move {
            if self.events.is_empty() {
                return None;
            }
            if self.started && !self.delay.is_zero() {
                tokio::time::sleep(self.delay).await;
            }
            self.started = true;
            self.events.pop_front().map(Ok)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::Accumulator;
    use crate::vocab::protocol::Message;
    use serde_json::json;

    fn payload(p: &FauxProvider, user: &str) -> Value {
        p.payload(&ModelRequest {
            model: "faux".into(),
            system_prompt: "sys".into(),
            messages: vec![Message::user("first"), Message::user(user)].into(),
            tools: vec![],
            max_tokens: None,
            cache_key: None,
            thinking: Default::default(),
        })
    }

    async fn run(p: &FauxProvider, payload: Value) -> (Vec<StreamEvent>, Accumulator) {
        let mut stream = p.stream(&Payload::Json(payload)).await.unwrap();
        let mut events = Vec::new();
        let mut acc = Accumulator::default();
        while let Some(item) = stream.next().await {
            let event = item.unwrap();
            acc.push(&event);
            events.push(event);
        }
        (events, acc)
    }

    #[tokio::test]
    async fn without_a_script_it_echoes_word_by_word() {
        let p = FauxProvider::new(None);
        let (events, acc) = run(&p, payload(&p, "hello  big world")).await;
        assert_eq!(
            &events[..3],
            &[
                StreamEvent::TextDelta("hello  ".into()),
                StreamEvent::TextDelta("big ".into()),
                StreamEvent::TextDelta("world".into()),
            ]
        );
        assert_eq!(acc.text, "hello  big world");
        assert!(acc.done && acc.usage.input_tokens > 0 && acc.usage.output_tokens == 4);
        assert_eq!((p.name(), p.model()), ("faux", "faux"));
    }

    #[tokio::test]
    async fn script_replies_in_order_then_says_it_is_exhausted() {
        let script = parse_script(
            concat!(
                "{\"text\": \"Reading.\", \"tool_calls\": [{\"name\": \"read\", ",
                "\"arguments\": {\"path\": \"a\"}}, {\"name\": \"bash\", \"arguments\": \"{bad\"}]}\n",
                "\n",
                "{\"text\": \"Done.\", \"delay_ms\": 1}\n",
            ),
            "s.jsonl",
        )
        .unwrap();
        let p = FauxProvider::new(Some(script));
        let (_, acc) = run(&p, json!({})).await;
        assert_eq!(acc.text, "Reading.");
        let calls = acc.tool_calls();
        assert_eq!(calls[0].id, "faux_1");
        assert_eq!(calls[0].arguments, json!({"path": "a"}));
        assert_eq!(calls[1].id, "faux_2");
        assert_eq!(calls[1].invalid_arguments.as_deref(), Some("{bad"));
        assert_eq!(acc.stop_reason.as_deref(), Some("tool_calls"));
        assert_eq!(run(&p, json!({})).await.1.text, "Done.");
        assert_eq!(run(&p, json!({})).await.1.text, EXHAUSTED);
    }

    #[test]
    fn bad_lines_name_file_and_line() {
        let err = |text: &str| parse_script(text, "s.jsonl").unwrap_err();
        assert_eq!(
            err("{\"text\": \"ok\"}\n{\"txt\": \"x\"}"),
            "s.jsonl:2: unknown field `txt`, expected one of `text`, `thinking`, `tool_calls`, `delay_ms`, `echo` (column 6)"
        );
        assert!(err("\n\n{not json").starts_with("s.jsonl:3: key must be a string"));
        assert_eq!(
            err("{}"),
            "s.jsonl:1: a reply needs \"text\", \"tool_calls\" and/or \"echo\""
        );
        assert_eq!(
            err("{\"tool_calls\": [{\"name\": \"x\", \"arguments\": 3}]}"),
            "s.jsonl:1: tool call 1 (x): \"arguments\" must be an object (or a string of raw text)"
        );
    }

    #[test]
    fn from_file_reads_the_script_or_says_why_not() {
        let dir = std::env::temp_dir().join(format!("mypi-faux-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("script.jsonl");
        std::fs::write(&file, "{\"text\": \"hi\"}\n").unwrap();
        let p = FauxProvider::from_file(&file).unwrap();
        assert_eq!(p.script.as_deref(), Some(&[FauxReply::text("hi")][..]));
        let missing = FauxProvider::from_file(dir.join("nope.jsonl")).unwrap_err();
        assert!(
            missing.contains("nope.jsonl: cannot read the faux script"),
            "{missing}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[tokio::test]
    async fn the_echo_names_the_images_the_model_got() {
        let script = parse_script("{\"text\": \"got: \", \"echo\": true}", "s").unwrap();
        let p = FauxProvider::new(Some(script));
        let image = crate::vocab::protocol::Image {
            mime_type: "image/png".into(),
            data: "AAAAAA==".into(),
        };
        let request = ModelRequest {
            model: "faux".into(),
            system_prompt: String::new(),
            messages: vec![Message {
                images: vec![image],
                ..Message::user("look")
            }]
            .into(),
            tools: vec![],
            max_tokens: None,
            cache_key: None,
            thinking: Default::default(),
        };
        let (_, acc) = run(&p, p.payload(&request)).await;
        assert_eq!(acc.text, "got: look [image image/png, 4 bytes]");
    }

    #[test]
    fn split_words_round_trips() {
        for text in ["", " lead", "a b  c ", "é ü\nx"] {
            assert_eq!(split_words(text).concat(), text);
        }
    }
}
