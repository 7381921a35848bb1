//! Reading a stream event's JSON where it lies, as leniently as a `serde_json::Value` would.
//!
//! A streamed reply is thousands of small events, and reading each into a `Value` (a map per
//! object, a hashed and allocated key per field) was most of a delta's cost. Here an event is
//! checked once as JSON and then read as borrowed [`RawValue`]s: [`fields`] takes the fields
//! it names and skips the rest, and each field is read when asked for, with the shape it must
//! have. A field of another shape (a number where text belongs, an array where an object
//! does) reads as absent, exactly as `Value::as_str`, `as_u64` and `get` would: servers that
//! send odd fields are not turned away.

use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;

/// Fields of an object as they were sent, by the names asked for (`null` reads as absent).
pub(crate) type Fields<'a, const N: usize> = [Option<&'a RawValue>; N];

/// A whole data line's fields `names`: `Ok(None)` when it is valid JSON but not an object, an
/// error when it is not JSON at all.
pub(crate) fn event<'a, const N: usize>(
    data: &'a str,
    names: [&str; N],
) -> serde_json::Result<Option<Fields<'a, N>>> {
    // One pass: an object's fields are picked as it is checked, anything else is skipped.
    let mut de = serde_json::Deserializer::from_str(data);
    let picked = de.deserialize_any(Pick { names })?;
    de.end()?;
    Ok(picked)
}

/// The fields `names` of `raw` when it is a JSON object (each `None` when absent or `null`);
/// `None` for anything else. A field sent twice counts the last time, as in a `Value`.
pub(crate) fn fields<'a, const N: usize>(
    raw: Option<&'a RawValue>,
    names: [&str; N],
) -> Option<Fields<'a, N>> {
    let mut de = serde_json::Deserializer::from_str(raw?.get());
    de.deserialize_map(Pick { names }).ok().flatten()
}

/// `raw` as text when it is a JSON string; `None` for anything else (`Value::as_str`).
/// Borrowed unless the string has escapes.
pub(crate) fn text<'a>(raw: Option<&'a RawValue>) -> Option<Cow<'a, str>> {
    let raw = raw?.get();
    if !raw.starts_with('"') {
        return None;
    }
    serde_json::from_str::<Text>(raw).ok().map(|t| t.0)
}

/// `raw` as a non-negative integer (`Value::as_u64`); `None` for anything else.
pub(crate) fn count(raw: Option<&RawValue>) -> Option<u64> {
    // A float (`3.0`, `1e3`) does not read as one.
    serde_json::from_str(raw?.get()).ok()
}

/// The elements of `raw` when it is a JSON array; `None` for anything else.
pub(crate) fn items(raw: Option<&RawValue>) -> Option<Vec<&RawValue>> {
    let raw = raw?.get();
    if !raw.starts_with('[') {
        return None;
    }
    serde_json::from_str(raw).ok()
}

/// The first element of `raw` when it is a non-empty JSON array (`Value::pointer("/0")`);
/// the rest of the array is skipped, not kept.
pub(crate) fn first(raw: Option<&RawValue>) -> Option<&RawValue> {
    let mut de = serde_json::Deserializer::from_str(raw?.get());
    de.deserialize_seq(First).ok().flatten()
}

/// `raw` as a whole JSON value (for the rare paths that need one: an error object, arguments
/// sent as an object).
pub(crate) fn value(raw: &RawValue) -> Option<Value> {
    serde_json::from_str(raw.get()).ok()
}

/// Reads an object's fields named in `names` and skips the others; any other value is
/// skipped whole and reads as `None`.
struct Pick<'n, const N: usize> {
    names: [&'n str; N],
}

impl<'de, const N: usize> Visitor<'de> for Pick<'_, N> {
    type Value = Option<Fields<'de, N>>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = [None; N];
        while let Some(Text(key)) = map.next_key()? {
            match self.names.iter().position(|name| *name == key) {
                Some(i) => found[i] = map.next_value()?,
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Some(found))
    }
}

/// Reads an array's first element and skips the others.
struct First;

impl<'de> Visitor<'de> for First {
    type Value = Option<&'de RawValue>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let head = seq.next_element()?;
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(head)
    }
}

/// A string, borrowed unless it has escapes.
#[derive(Deserialize)]
struct Text<'a>(#[serde(borrow)] Cow<'a, str>);

#[cfg(test)]
mod tests {
    use super::*;

    /// Values of every shape, and the edges of each reader.
    const VALUES: &[&str] = &[
        r#""a""#,
        r#""a\"b\u00e9""#,
        r#""""#,
        "0",
        "3",
        "-1",
        "3.0",
        "1e3",
        "18446744073709551615",
        "18446744073709551616",
        "null",
        "true",
        "[]",
        "[1, 2]",
        "[null, 1]",
        r#"[{"a": 1}]"#,
        "{}",
        r#"{"a": 1, "b": "x"}"#,
        r#"{"a": null}"#,
        r#"{"a\u0062": 2, "a": [1], "c": {"a": 3}}"#,
        r#"{"a": 1, "a": 2}"#,
    ];

    fn raw(text: &str) -> &RawValue {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn each_reader_reads_as_a_value_would() {
        for text in VALUES {
            let value: Value = serde_json::from_str(text).unwrap();
            let raw = Some(raw(text));
            assert_eq!(
                super::text(raw).as_deref(),
                value.as_str(),
                "text of {text}"
            );
            assert_eq!(count(raw), value.as_u64(), "count of {text}");
            let read = |r: &RawValue| serde_json::from_str::<Value>(r.get()).unwrap();
            let items: Option<Vec<Value>> = items(raw).map(|v| v.into_iter().map(read).collect());
            assert_eq!(items.as_ref(), value.as_array(), "items of {text}");
            assert_eq!(
                first(raw).map(read).as_ref(),
                value.pointer("/0"),
                "first of {text}"
            );
            let picked = fields(raw, ["a", "ab", "c"]);
            assert_eq!(picked.is_some(), value.is_object(), "fields of {text}");
            for (field, name) in picked.unwrap_or_default().into_iter().zip(["a", "ab", "c"]) {
                let want = value.get(name).filter(|v| !v.is_null());
                assert_eq!(field.map(read).as_ref(), want, "{name} of {text}");
            }
            assert_eq!(raw.and_then(super::value), Some(value));
        }
        assert_eq!(count(None), None);
        assert_eq!(super::text(None), None);
    }

    #[test]
    fn text_is_borrowed_unless_it_has_escapes() {
        assert!(matches!(
            super::text(Some(raw(r#""plain""#))),
            Some(Cow::Borrowed("plain"))
        ));
        assert!(matches!(super::text(Some(raw(r#""a\nb""#))), Some(Cow::Owned(t)) if t == "a\nb"));
    }

    #[test]
    fn a_line_that_is_not_json_is_an_error_and_other_json_no_object() {
        assert!(event("{\"a\": ", ["a"]).is_err());
        assert!(event("nope", ["a"]).is_err());
        assert!(event("{\"a\": 1} x", ["a"]).is_err());
        for text in ["[1]", "3", "\"a\"", "null"] {
            assert!(event(text, ["a"]).unwrap().is_none(), "{text}");
        }
        let [a, b] = event(" {\"b\": [true], \"a\": \"x\"} ", ["a", "b"])
            .unwrap()
            .unwrap();
        assert_eq!((a.unwrap().get(), b.unwrap().get()), ("\"x\"", "[true]"));
    }
}
