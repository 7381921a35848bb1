//! [`SharedText`]: the text of a reply so far, as `message_update` carries it. The agent
//! appends each delta to one buffer, and every event holds the buffer and the length it had
//! then, so building an event costs the same at the 80,000th delta as at the first; the text is
//! copied only when somebody reads it (a script handler that looks at `e.text`). Serialised, it
//! is the plain string, so the payload's JSON shape is the contract's.

use std::sync::{Arc, RwLock};

use serde::{Serialize, Serializer};

/// A prefix of a growing text, shared without copying.
#[derive(Clone, Debug, Default)]
pub struct SharedText {
    buf: Arc<RwLock<String>>,
    len: usize,
}

impl SharedText {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends `delta` and returns the text as it is now.
    pub fn push(&mut self, delta: &str) -> SharedText {
        let mut buf = self.buf.write().unwrap_or_else(|p| p.into_inner());
        buf.push_str(delta);
        self.len = buf.len();
        self.clone()
    }

    /// The length in bytes of this prefix.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Calls `f` with the text (no copy).
    pub fn with<T>(&self, f: impl FnOnce(&str) -> T) -> T {
        let buf = self.buf.read().unwrap_or_else(|p| p.into_inner());
        f(buf.get(..self.len).unwrap_or(&buf))
    }

    /// The text as an owned string (a copy).
    pub fn to_string_lossless(&self) -> String {
        self.with(str::to_string)
    }

    /// Whether the text contains `pattern`.
    pub fn contains(&self, pattern: &str) -> bool {
        self.with(|t| t.contains(pattern))
    }
}

impl From<&str> for SharedText {
    fn from(text: &str) -> Self {
        SharedText::new().push(text)
    }
}

impl PartialEq for SharedText {
    fn eq(&self, other: &Self) -> bool {
        self.with(|a| other.with(|b| a == b))
    }
}

impl Serialize for SharedText {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.with(|t| s.serialize_str(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_snapshot_keeps_its_prefix_while_the_buffer_grows() {
        let mut text = SharedText::new();
        let first = text.push("hello");
        let second = text.push(" world");
        assert_eq!(first.to_string_lossless(), "hello");
        assert_eq!(second.to_string_lossless(), "hello world");
        assert_eq!(serde_json::to_value(&first).unwrap(), "hello");
        assert!(second.contains("o w") && !first.contains("world"));
        assert_eq!(first, SharedText::from("hello"));
    }
}
