//! Making a stored conversation valid for model APIs again. Every tool call needs a result:
//! a call whose result is missing (mypi was stopped while the batch ran) gets one saying it was
//! interrupted, and the results of one batch are put in call order (they are stored as they
//! finish, which for calls that run together may be another order).

use std::borrow::Cow;
use std::collections::HashSet;

use crate::vocab::protocol::{Message, Role};

/// The result given to a tool call that has none.
pub const INTERRUPTED: &str = "interrupted: this tool call did not finish (mypi was stopped \
     while it ran or before it started), so its output is lost; it may have partly run, so check \
     its effects before repeating it";

/// Whether some tool call in `messages` has no result.
pub fn has_unanswered(messages: &[Message]) -> bool {
    let answered = answered_ids(messages);
    messages
        .iter()
        .flat_map(|m| m.tool_calls.iter())
        .any(|c| !answered.contains(c.id.as_str()))
}

/// `messages` as a provider may receive them: borrowed when every call has its result.
pub fn for_request(messages: &[Message]) -> Cow<'_, [Message]> {
    if has_unanswered(messages) {
        Cow::Owned(complete(messages.to_vec()).0)
    } else {
        Cow::Borrowed(messages)
    }
}

/// Whether [`complete`] would change `messages`: some batch is not followed by exactly its
/// results in call order. Cheap, so a long conversation in order is never rebuilt.
pub fn needs_repair(messages: &[Message]) -> bool {
    messages.iter().enumerate().any(|(i, m)| {
        !m.tool_calls.is_empty()
            && m.tool_calls.iter().enumerate().any(|(k, call)| {
                messages.get(i + 1 + k).is_none_or(|r| {
                    r.role != Role::Tool || r.tool_call_id.as_deref() != Some(call.id.as_str())
                })
            })
    })
}

/// Gives every unanswered tool call an [`INTERRUPTED`] result right after its batch's other
/// results, and orders each batch's results like its calls. Messages are moved, not copied.
/// Returns the messages and how many results were added.
pub fn complete(messages: Vec<Message>) -> (Vec<Message>, usize) {
    if !needs_repair(&messages) {
        return (messages, 0);
    }
    let answered: HashSet<String> = answered_ids(&messages)
        .into_iter()
        .map(str::to_string)
        .collect();
    let mut out = Vec::with_capacity(messages.len());
    let mut added = 0;
    let mut rest = messages.into_iter().peekable();
    while let Some(message) = rest.next() {
        let calls: Vec<(String, String)> = message
            .tool_calls
            .iter()
            .map(|c| (c.id.clone(), c.name.clone()))
            .collect();
        out.push(message);
        if calls.is_empty() {
            continue;
        }
        let mut results = Vec::new();
        while let Some(result) = rest.next_if(|m| m.role == Role::Tool) {
            results.push(result);
        }
        for (id, name) in calls {
            let found = results
                .iter()
                .position(|r| r.tool_call_id.as_deref() == Some(id.as_str()));
            match found {
                Some(i) => out.push(results.remove(i)),
                // Answered further on: leave that result where it is.
                None if answered.contains(&id) => {}
                None => {
                    out.push(interrupted(id, name));
                    added += 1;
                }
            }
        }
        out.extend(results);
    }
    (out, added)
}

fn answered_ids(messages: &[Message]) -> HashSet<&str> {
    messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect()
}

fn interrupted(id: String, name: String) -> Message {
    Message {
        role: Role::Tool,
        content: INTERRUPTED.to_string(),
        tool_calls: Vec::new(),
        tool_call_id: Some(id),
        name: Some(name),
        is_error: true,
        images: Vec::new(),
        usage: None,
        details: None,
        thinking: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::protocol::{ToolCall, ToolOutput};
    use serde_json::json;

    fn call(id: &str) -> ToolCall {
        ToolCall::from_raw(id.into(), "bash".into(), "{}")
    }

    fn result(id: &str, text: &str) -> Message {
        Message::tool_result(&call(id), &ToolOutput::ok(text))
    }

    fn ids(messages: &[Message]) -> Vec<String> {
        messages
            .iter()
            .map(|m| match (&m.tool_call_id, m.role) {
                (Some(id), _) => format!("r:{id}"),
                (None, r) => format!("{r:?}"),
            })
            .collect()
    }

    #[test]
    fn a_missing_result_is_added_after_the_finished_ones_in_call_order() {
        let msgs = vec![
            Message::user("u"),
            Message::assistant("", vec![call("a"), call("b"), call("c")]),
            result("c", "C"),
            result("a", "A"),
            Message::user("next"),
        ];
        assert!(has_unanswered(&msgs));
        assert!(needs_repair(&msgs));
        let (fixed, added) = complete(msgs);
        assert!(!needs_repair(&fixed));
        assert_eq!(added, 1);
        assert_eq!(
            ids(&fixed),
            vec!["User", "Assistant", "r:a", "r:b", "r:c", "User"]
        );
        assert_eq!(fixed[3].content, INTERRUPTED);
        assert!(fixed[3].is_error);
        assert_eq!(fixed[3].name.as_deref(), Some("bash"));
        assert_eq!(fixed[2].content, "A");
    }

    #[test]
    fn a_complete_conversation_is_borrowed_unchanged() {
        let msgs = vec![
            Message::user("u"),
            Message::assistant("", vec![call("a")]),
            result("a", "A"),
            Message::assistant("done", vec![]),
        ];
        assert!(matches!(for_request(&msgs), Cow::Borrowed(_)));
        assert!(!needs_repair(&msgs));
        let (same, added) = complete(msgs.clone());
        assert_eq!((same, added), (msgs, 0));
    }

    #[test]
    fn a_result_stored_further_on_is_not_doubled() {
        let msgs = vec![
            Message::assistant("", vec![call("a")]),
            Message::user("steer"),
            result("a", "A"),
        ];
        let (fixed, added) = complete(msgs.clone());
        assert_eq!(added, 0);
        assert_eq!(fixed, msgs);
        assert_eq!(
            serde_json::to_value(&fixed[2]).unwrap()["tool_call_id"],
            json!("a")
        );
    }
}
