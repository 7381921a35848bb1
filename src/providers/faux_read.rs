//! What the offline `faux` model reads of a request body: the last user message (its text,
//! its images named) and how long the messages are as JSON (for its token counts).
//!
//! The body is read where it lies: from the encoded bytes, strings borrowed, one message at a
//! time, keeping only the last user one. Decoding it into JSON values made every turn build
//! the whole conversation as thousands of small blocks, which grew with the conversation and
//! left the heap a little larger each prompt (`benches/scripts/bench-prompts.py` measured the
//! faux model's garbage instead of mypi). A body a `before_provider_request` handler rewrote
//! is JSON already and is read the same way from the value. Shapes other than the ones mypi
//! sends (a handler's `content: 3`) read as no text rather than as an error.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
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
    match payload {
        Payload::Encoded(bytes) => {
            let Ok(body) = serde_json::from_slice::<Body>(bytes) else {
                return Read::default();
            };
            let Some(messages) = body.messages else {
                return Read::default();
            };
            let last = LastUser::deserialize(messages).unwrap_or_default();
            Read {
                last_user: last.0.map(|m| m.text()).unwrap_or_default(),
                messages_chars: messages.get().len(),
            }
        }
        Payload::Json(value) => {
            let Some(messages) = value.get("messages") else {
                return Read::default();
            };
            let last = LastUser::deserialize(messages).unwrap_or_default();
            Read {
                last_user: last.0.map(|m| m.text()).unwrap_or_default(),
                messages_chars: crate::vocab::text::json_len(messages),
            }
        }
    }
}

/// The body, its messages left as they are.
#[derive(Deserialize)]
struct Body<'a> {
    #[serde(borrow, default)]
    messages: Option<&'a RawValue>,
}

/// The fields of a message the model reads.
#[derive(Deserialize)]
struct Seen<'a> {
    #[serde(borrow, default)]
    role: Text<'a>,
    #[serde(borrow, default)]
    content: Text<'a>,
    #[serde(borrow, default)]
    images: Images<'a>,
}

impl Seen<'_> {
    /// The text, then the images named.
    fn text(&self) -> String {
        let mut text = self.content.as_str().to_string();
        for image in &self.images.0 {
            let data = image.data.as_str().trim_end_matches('=');
            let bytes = data.len() * 3 / 4;
            let mime = image.mime_type.0.as_deref().unwrap_or("?");
            let gap = if text.is_empty() { "" } else { " " };
            text.push_str(&format!("{gap}[image {mime}, {bytes} bytes]"));
        }
        text
    }
}

#[derive(Deserialize)]
struct SeenImage<'a> {
    #[serde(borrow, default)]
    mime_type: Text<'a>,
    #[serde(borrow, default)]
    data: Text<'a>,
}

/// A string, or nothing when the value is anything else.
#[derive(Default)]
struct Text<'a>(Option<Cow<'a, str>>);

impl Text<'_> {
    fn as_str(&self) -> &str {
        self.0.as_deref().unwrap_or("")
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TextVisitor(std::marker::PhantomData))
    }
}

struct TextVisitor<'a>(std::marker::PhantomData<Text<'a>>);

impl<'de: 'a, 'a> Visitor<'de> for TextVisitor<'a> {
    type Value = Text<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Text<'a>, E> {
        Ok(Text(Some(Cow::Borrowed(v))))
    }
    fn visit_str<E>(self, v: &str) -> Result<Text<'a>, E> {
        Ok(Text(Some(Cow::Owned(v.to_string()))))
    }
    fn visit_string<E>(self, v: String) -> Result<Text<'a>, E> {
        Ok(Text(Some(Cow::Owned(v))))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Text<'a>, E> {
        Ok(Text(None))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Text<'a>, E> {
        Ok(Text(None))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Text<'a>, E> {
        Ok(Text(None))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Text<'a>, E> {
        Ok(Text(None))
    }
    fn visit_unit<E>(self) -> Result<Text<'a>, E> {
        Ok(Text(None))
    }
    fn visit_none<E>(self) -> Result<Text<'a>, E> {
        Ok(Text(None))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Text<'a>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Text(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Text<'a>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Text(None))
    }
}

/// A message's images, or none when `images` is not a list of objects.
#[derive(Default)]
struct Images<'a>(Vec<SeenImage<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for Images<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Either::<Vec<SeenImage<'a>>>::deserialize(d)? {
            Either::Wanted(v) => Ok(Images(v)),
            Either::Other => Ok(Images::default()),
        }
    }
}

/// The last message whose role is `user`, read one message at a time (none when the
/// messages are not a list of objects).
#[derive(Default)]
struct LastUser<'a>(Option<Seen<'a>>);

impl<'de> Deserialize<'de> for LastUser<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LastUserVisitor)
    }
}

struct LastUserVisitor;

impl<'de> Visitor<'de> for LastUserVisitor {
    type Value = LastUser<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of messages")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<LastUser<'de>, A::Error> {
        let mut last = None;
        while let Some(message) = seq.next_element::<Either<Seen<'de>>>()? {
            if let Either::Wanted(m) = message {
                if m.role.as_str() == "user" {
                    last = Some(m);
                }
            }
        }
        Ok(LastUser(last))
    }
}

/// A `T` read from an object or a list, or `Other` for any other value (skipped).
enum Either<T> {
    Wanted(T),
    Other,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Either<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(EitherVisitor(std::marker::PhantomData))
    }
}

struct EitherVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for EitherVisitor<T> {
    type Value = Either<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Either<T>, A::Error> {
        T::deserialize(serde::de::value::SeqAccessDeserializer::new(seq)).map(Either::Wanted)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Either<T>, A::Error> {
        T::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(Either::Wanted)
    }
    fn visit_borrowed_str<E>(self, _: &'de str) -> Result<Either<T>, E> {
        Ok(Either::Other)
    }
    fn visit_str<E>(self, _: &str) -> Result<Either<T>, E> {
        Ok(Either::Other)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Either<T>, E> {
        Ok(Either::Other)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Either<T>, E> {
        Ok(Either::Other)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Either<T>, E> {
        Ok(Either::Other)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Either<T>, E> {
        Ok(Either::Other)
    }
    fn visit_unit<E>(self) -> Result<Either<T>, E> {
        Ok(Either::Other)
    }
    fn visit_none<E>(self) -> Result<Either<T>, E> {
        Ok(Either::Other)
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
