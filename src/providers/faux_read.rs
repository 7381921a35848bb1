//! What the offline `faux` model reads of a request body: the last user message (its text,
//! its images named) and how long the messages are as JSON (for its token counts).
//!
//! The body is read where it lies, from its bytes: each message's fields are left as raw JSON
//! and only the last user message's are decoded. Decoding the body into JSON values made every
//! turn build the whole conversation as thousands of small blocks, which grew with the
//! conversation and left the heap a little larger each prompt (`bench-prompts.py` measured
//! the faux model's garbage instead of mypi). A body a `before_provider_request` handler
//! rewrote is encoded first and read the same way. Shapes other than the ones mypi sends (a
//! handler's `content: 3`) read as no text rather than as an error.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::Payload;

/// What the faux model reads of a request.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Read {
    /// The last user message's text, then its images named (`[image image/png, 68 bytes]`).
    pub last_user: String,
    /// Characters of the `messages` array as compact JSON.
    pub messages_chars: usize,
}

/// Reads `payload` (an unreadable body reads as empty).
pub(super) fn read(payload: &Payload) -> Read {
    let Ok(bytes) = payload.to_bytes() else {
        return Read::default();
    };
    let Some(messages) = serde_json::from_slice::<Body>(&bytes)
        .ok()
        .and_then(|b| b.messages)
    else {
        return Read::default();
    };
    let list: Vec<&RawValue> = serde_json::from_str(messages.get()).unwrap_or_default();
    let last_user = list
        .iter()
        .filter_map(|m| serde_json::from_str::<Seen>(m.get()).ok())
        .rfind(|m| text(m.role) == "user");
    Read {
        last_user: last_user.map(|m| m.text()).unwrap_or_default(),
        messages_chars: messages.get().len(),
    }
}

/// The body, its messages left as they are.
#[derive(Deserialize)]
struct Body<'a> {
    #[serde(borrow, default)]
    messages: Option<&'a RawValue>,
}

/// The fields of a message the model reads, each left raw until read.
#[derive(Deserialize)]
struct Seen<'a> {
    #[serde(borrow, default)]
    role: Option<&'a RawValue>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    images: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct SeenImage<'a> {
    #[serde(borrow, default)]
    mime_type: Option<&'a RawValue>,
    #[serde(borrow, default)]
    data: Option<&'a RawValue>,
}

/// A string borrowed from the body where it has no escapes.
#[derive(Deserialize)]
struct Str<'a>(#[serde(borrow)] Cow<'a, str>);

/// The string `raw` holds, or "" when it holds anything else.
fn text(raw: Option<&RawValue>) -> Cow<'_, str> {
    raw.and_then(|r| serde_json::from_str::<Str>(r.get()).ok())
        .map_or(Cow::Borrowed(""), |s| s.0)
}

impl Seen<'_> {
    /// The text, then the images named (none when `images` is not a list of objects).
    fn text(&self) -> String {
        let mut out = text(self.content).into_owned();
        let images: Vec<SeenImage> = self
            .images
            .and_then(|r| serde_json::from_str(r.get()).ok())
            .unwrap_or_default();
        for image in images {
            let data = text(image.data);
            let bytes = data.trim_end_matches('=').len() * 3 / 4;
            let mime = match text(image.mime_type) {
                m if m.is_empty() => Cow::Borrowed("?"),
                m => m,
            };
            let gap = if out.is_empty() { "" } else { " " };
            out.push_str(&format!("{gap}[image {mime}, {bytes} bytes]"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn both(body: serde_json::Value) -> (Read, Read) {
        let bytes = serde_json::to_vec(&body).unwrap();
        (
            read(&Payload::Encoded(bytes.into())),
            read(&Payload::Json(body)),
        )
    }

    #[test]
    fn the_last_user_message_with_its_images_named() {
        let body = json!({"model": "faux", "messages": [
            {"role": "user", "content": "first"},
            {"role": "user", "content": "look \"here\"",
             "images": [{"mime_type": "image/png", "data": "AAAAAA=="}]},
            {"role": "assistant", "content": "ok", "tool_calls": [{"id": "1"}]},
        ]});
        let chars = body["messages"].to_string().len();
        let (encoded, json) = both(body);
        assert_eq!(
            encoded.last_user,
            "look \"here\" [image image/png, 4 bytes]"
        );
        assert_eq!(encoded.messages_chars, chars);
        assert_eq!(encoded, json);
    }

    #[test]
    fn other_shapes_read_as_no_text_not_as_errors() {
        for body in [
            json!({}),
            json!({"messages": 3}),
            json!({"messages": [1, "x", null, {"role": "user", "content": {"a": [1]}}]}),
            json!({"messages": [{"role": "user", "content": "hi", "images": "none"}]}),
        ] {
            let (encoded, json) = both(body.clone());
            assert_eq!(encoded.last_user, json.last_user, "{body}");
            assert!(
                encoded.last_user.is_empty() || encoded.last_user == "hi",
                "{body}"
            );
        }
        assert_eq!(
            read(&Payload::Encoded(b"{not json".to_vec().into())),
            Read::default()
        );
    }
}
