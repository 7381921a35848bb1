//! Keeping the conversation inside the model's context window. The agent knows how big the
//! context is (the provider's reported usage of the last request, plus an estimate of what
//! came after; an estimate alone before the first answer) and how big the window is (the
//! configuration's `context_window`, else [`known_window`], else [`DEFAULT_WINDOW`]). Before a
//! request would not fit, the older turns are compacted ([`plan`]): their long tool outputs
//! are trimmed first, and when that is not enough they are replaced by a summary the model
//! writes; the recent turns are kept whole. `/compact [instructions]` does it on demand.
//!
//! A compaction is a session entry ([`Compaction`]) applied to the messages before it, so the
//! file keeps every message and resuming rebuilds the same context ([`apply`]).

use serde::{Deserialize, Serialize};

use crate::vocab::protocol::{Message, Role};

/// The window when nothing says otherwise.
pub const DEFAULT_WINDOW: u64 = 128_000;

/// Tool outputs longer than this are trimmed in compacted turns.
const TRIM_OVER: usize = 2048;
/// What a trimmed output keeps of each end.
const TRIM_KEEP: usize = 512;

/// The longest reply of a known model, in tokens (by the start of its name; the most
/// particular name wins).
pub fn known_output(model: &str) -> Option<u64> {
    const KNOWN: &[(&str, u64)] = &[
        ("claude-3-5-haiku", 8_192),
        ("claude-3-5-sonnet", 8_192),
        ("claude-3-7-sonnet", 64_000),
        ("claude-haiku-4", 64_000),
        ("claude-sonnet-4", 64_000),
        ("claude-opus-4-1", 32_000),
        ("claude-opus-4-5", 64_000),
        ("claude-opus-4", 32_000),
        ("gpt-4o-mini", 16_384),
        ("gpt-4o", 16_384),
        ("gpt-4.1", 32_768),
        ("gpt-5", 128_000),
        ("o3", 100_000),
        ("o4-mini", 100_000),
        ("deepseek-chat", 8_192),
        ("deepseek-reasoner", 65_536),
    ];
    KNOWN
        .iter()
        .filter(|(prefix, _)| model.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, n)| *n)
}

/// The windows of model families whose size is well known.
pub fn known_window(model: &str) -> Option<u64> {
    let m = model.to_ascii_lowercase();
    let table: [(&str, u64); 8] = [
        ("gpt-4.1", 1_047_576),
        ("gpt-5", 400_000),
        ("gpt-4o", 128_000),
        ("o3", 200_000),
        ("o4", 200_000),
        ("claude", 200_000),
        ("qwen2.5-coder", 32_768),
        ("llama3", 131_072),
    ];
    table
        .iter()
        .find(|(prefix, _)| m.starts_with(prefix))
        .map(|(_, w)| *w)
}

/// What an image counts for in [`estimate`]: about what a large one costs (Anthropic bills
/// width x height / 750 tokens, about 1,600 for the largest it keeps whole).
const IMAGE_TOKENS: u64 = 1_600;

/// A rough token count of messages: a token for every four bytes, [`IMAGE_TOKENS`] an image,
/// and a few per message.
pub fn estimate(messages: &[Message]) -> u64 {
    messages
        .iter()
        .map(|m| {
            let args: usize = m
                .tool_calls
                .iter()
                .map(|c| c.name.len() + crate::vocab::text::json_len(&c.arguments))
                .sum();
            ((m.content.len() + args) / 4 + 8) as u64 + m.images.len() as u64 * IMAGE_TOKENS
        })
        .sum()
}

/// One compaction, as the session stores it: of the messages before it, the last `keep_last`
/// stay whole; the others get their long tool outputs trimmed (`trimmed`) and, with a
/// `summary`, are replaced by it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compaction {
    pub keep_last: usize,
    #[serde(default)]
    pub trimmed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The estimated tokens before and after (for the user; not needed to apply it).
    #[serde(default)]
    pub tokens_before: u64,
    #[serde(default)]
    pub tokens_after: u64,
}

/// The messages after `c`.
pub fn apply(mut messages: Vec<Message>, c: &Compaction) -> Vec<Message> {
    let split = messages.len().saturating_sub(c.keep_last);
    if let Some(summary) = &c.summary {
        let kept = messages.split_off(split);
        let mut out = summary_messages(summary);
        out.extend(kept);
        return out;
    }
    if c.trimmed {
        trim_outputs(&mut messages[..split]);
    }
    messages
}

/// How a summary stands in for the turns it replaces: a user message with it, and the
/// assistant's acknowledgement (so the roles still alternate for every API).
pub fn summary_messages(summary: &str) -> Vec<Message> {
    vec![
        Message::user(format!(
            "[The earlier part of this conversation, summarised to fit the context window]\n\n{summary}"
        )),
        Message::assistant("Understood. I will go on from that summary.".to_string(), vec![]),
    ]
}

/// Long tool outputs cut to their two ends, with how much went.
pub fn trim_outputs(messages: &mut [Message]) {
    for m in messages.iter_mut().filter(|m| m.role == Role::Tool) {
        if m.content.len() <= TRIM_OVER {
            continue;
        }
        let head_end = crate::vocab::text::floor_char_boundary(&m.content, TRIM_KEEP);
        let tail_start =
            crate::vocab::text::ceil_char_boundary(&m.content, m.content.len() - TRIM_KEEP);
        let gone = tail_start - head_end;
        m.content = format!(
            "{}\n[… {gone} bytes of this output were trimmed to save context …]\n{}",
            &m.content[..head_end],
            &m.content[tail_start..]
        );
    }
}

/// Where each turn starts: the indices of the user's messages.
pub fn turn_starts(messages: &[Message]) -> Vec<usize> {
    messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::User)
        .map(|(i, _)| i)
        .collect()
}

/// How many of the last messages to keep whole: from the start of a user turn, as many as fit
/// in `keep_tokens` (at least the last turn). `None` when nothing older is left to compact.
pub fn plan(messages: &[Message], keep_tokens: u64) -> Option<usize> {
    let starts = turn_starts(messages);
    let last = *starts.last()?;
    let mut split = last;
    for &s in starts.iter().rev().skip(1) {
        if estimate(&messages[s..]) > keep_tokens {
            break;
        }
        split = s;
    }
    (split > 0).then(|| messages.len() - split)
}

/// What the model is asked when it summarises.
pub const SUMMARY_SYSTEM: &str = "You summarise the earlier part of a coding agent's \
conversation so that the agent can go on with your summary in place of those messages. Keep \
what the rest of the work needs: the user's goals and constraints, decisions made and why, \
files read or changed (with their paths), commands run and what they showed, errors still \
open, and what was about to happen next. Be brief: short bullet points, no preamble.";

/// The last message of a summary request.
pub fn summary_request(instructions: Option<&str>) -> Message {
    let mut text = String::from("Summarise the conversation above, as the instructions say.");
    if let Some(extra) = instructions.filter(|i| !i.trim().is_empty()) {
        text.push_str(&format!("\nAlso: {}", extra.trim()));
    }
    Message::user(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::protocol::ToolCall;

    fn turn(n: usize, output: usize) -> Vec<Message> {
        let call = ToolCall {
            id: format!("c{n}"),
            name: "read".into(),
            arguments: serde_json::json!({"path": "f"}),
            invalid_arguments: None,
        };
        let result = Message {
            role: Role::Tool,
            content: "x".repeat(output),
            tool_call_id: Some(format!("c{n}")),
            name: Some("read".into()),
            ..Message::user(String::new())
        };
        vec![
            Message::user(format!("prompt {n}")),
            Message::assistant(String::new(), vec![call]),
            result,
            Message::assistant(format!("answer {n}"), vec![]),
        ]
    }

    #[test]
    fn the_plan_keeps_whole_turns_from_a_user_message() {
        let msgs: Vec<Message> = (0..5).flat_map(|n| turn(n, 400)).collect();
        let keep = plan(&msgs, estimate(&msgs[12..]) + 1).unwrap();
        assert_eq!(keep, 8, "the last two turns fit");
        assert_eq!(msgs[msgs.len() - keep].role, Role::User);
        // Only one turn: nothing older to compact.
        assert_eq!(plan(&turn(0, 10), 1), None);
        // The last turn is kept even when it alone is over the budget.
        assert_eq!(plan(&msgs, 1), Some(4));
    }

    #[test]
    fn applying_trims_or_summarises_the_older_turns_only() {
        let msgs: Vec<Message> = (0..3).flat_map(|n| turn(n, 10_000)).collect();
        let trimmed = apply(
            msgs.clone(),
            &Compaction {
                keep_last: 4,
                trimmed: true,
                summary: None,
                tokens_before: 0,
                tokens_after: 0,
            },
        );
        assert_eq!(trimmed.len(), msgs.len());
        assert!(trimmed[2].content.len() < 1200 && trimmed[2].content.contains("trimmed"));
        assert_eq!(trimmed[10].content.len(), 10_000, "the kept turn is whole");
        let summarised = apply(
            msgs,
            &Compaction {
                keep_last: 4,
                trimmed: true,
                summary: Some("did things".into()),
                tokens_before: 0,
                tokens_after: 0,
            },
        );
        assert_eq!(summarised.len(), 6);
        assert!(summarised[0].content.ends_with("did things"));
        assert_eq!(summarised[2].content, "prompt 2");
    }

    #[test]
    fn known_outputs() {
        assert_eq!(known_output("claude-sonnet-4-5-20250929"), Some(64_000));
        assert_eq!(known_output("claude-opus-4-1"), Some(32_000));
        assert_eq!(known_output("gpt-4o-mini"), Some(16_384));
        assert_eq!(known_output("mystery"), None);
    }

    #[test]
    fn known_windows() {
        assert_eq!(known_window("claude-sonnet-4-5"), Some(200_000));
        assert_eq!(known_window("mystery"), None);
    }
}
