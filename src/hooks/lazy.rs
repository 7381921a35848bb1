//! The fields of an event that a script handler reads on demand ([`LazyField`]), not
//! converted into its engine with the rest of the payload: `message_update`'s `text` (the
//! reply so far, which grows with every delta) and `agent_end`'s `messages` (the whole
//! conversation, which grows with every prompt). A handler that never looks at them costs
//! the same at the thousandth prompt as at the first, and its VM keeps no copy of the
//! conversation. [`SharedMessages`] is the conversation as `agent_end` carries it: built once
//! per event and shared by every handler.
//!
//! A handler gets `messages` as a weak reference: readable while the event is being handled
//! (the event holds the conversation until its last handler returns), `nil` when read from an
//! event table a script kept after that. A strong one would keep each prompt's copy of the
//! conversation alive in every VM until that VM's garbage collector got round to the
//! table, which a handler that allocates little may not do for hundreds of prompts.

use std::ops::Deref;
use std::sync::{Arc, Weak};

use serde::{Serialize, Serializer};
use serde_json::Value;

use super::SharedText;
use crate::vocab::protocol::Message;

/// Messages shared without copying; serialised as the plain array.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SharedMessages(Arc<Vec<Message>>);

impl From<Vec<Message>> for SharedMessages {
    fn from(messages: Vec<Message>) -> Self {
        SharedMessages(Arc::new(messages))
    }
}

impl Deref for SharedMessages {
    type Target = [Message];

    fn deref(&self) -> &[Message] {
        &self.0
    }
}

impl SharedMessages {
    /// The messages back: moved out when nobody else holds them, else copied.
    pub fn into_inner(self) -> Vec<Message> {
        Arc::unwrap_or_clone(self.0)
    }

    /// A reference that does not keep the messages alive.
    pub fn downgrade(&self) -> Weak<Vec<Message>> {
        Arc::downgrade(&self.0)
    }
}

impl Serialize for SharedMessages {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// A field handed to a script on its own, to be read when the script looks at it.
#[derive(Clone, Debug)]
pub enum LazyField {
    /// `message_update`'s `text`.
    Text(SharedText),
    /// `agent_end`'s `messages`, while its event lasts.
    Messages(Weak<Vec<Message>>),
}

impl LazyField {
    /// The field's name in the payload.
    pub fn name(&self) -> &'static str {
        match self {
            LazyField::Text(_) => "text",
            LazyField::Messages(_) => "messages",
        }
    }

    /// The value as JSON (a string, or the array of messages; `null` once the event that
    /// had the messages is over).
    pub fn to_json(&self) -> Value {
        match self {
            LazyField::Text(text) => Value::String(text.to_string_lossless()),
            LazyField::Messages(_) => match self.messages() {
                Some(messages) => serde_json::to_value(&*messages).unwrap_or(Value::Null),
                None => Value::Null,
            },
        }
    }

    /// The messages, when this is `messages` and its event is not over.
    pub fn messages(&self) -> Option<Arc<Vec<Message>>> {
        match self {
            LazyField::Text(_) => None,
            LazyField::Messages(messages) => messages.upgrade(),
        }
    }

    /// The reply so far, when this is `text` (an engine makes its string without a copy).
    pub fn text(&self) -> Option<&SharedText> {
        match self {
            LazyField::Text(text) => Some(text),
            LazyField::Messages(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_serialise_as_the_payload_has_them() {
        let text = LazyField::Text(SharedText::from("so far"));
        assert_eq!((text.name(), text.to_json()), ("text", json!("so far")));
        let shared = SharedMessages::from(vec![Message::user("u")]);
        let messages = LazyField::Messages(shared.downgrade());
        assert_eq!(messages.name(), "messages");
        assert_eq!(
            messages.to_json(),
            json!([{"role": "user", "content": "u"}])
        );
        // A kept field does not keep the conversation.
        drop(shared);
        assert_eq!(messages.to_json(), Value::Null);
    }
}
