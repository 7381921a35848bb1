//! What an MCP result becomes for the model: the content blocks of a tool result or a
//! resource read as text (images and other binary data as a note and a temp file; images,
//! a tool's or a resource's, also go along as images, for providers that take them in tool
//! results),
//! `structuredContent` as JSON when there is no text, `isError`
//! as an error result, and text over [`MAX_TEXT`] cut in the middle with a note naming the
//! size and a temp file that holds all of it.
//!
//! It works on the JSON shape of the protocol, so no SDK type is needed here.

use std::path::PathBuf;

use serde_json::Value;

use crate::vocab::protocol::{Image, ToolOutput};
use crate::vocab::text::truncate_middle;

/// Most text of one result the model gets; the rest is in a temp file.
pub const MAX_TEXT: usize = 20 * 1024;
/// Images of one result sent to the model as images (more are only named).
pub const MAX_IMAGES: usize = 4;
/// The largest image (base64 bytes) sent to the model as an image (5 MiB decoded is the
/// common provider limit).
pub const MAX_IMAGE_BYTES: usize = 7 * 1024 * 1024;

/// Writes `bytes` to a new private temp file named after `what` with `ext` (see
/// [`super::spill`]).
fn spill(what: &str, ext: &str, bytes: &[u8]) -> Result<PathBuf, String> {
    let stem: String = super::naming::sanitize(what).chars().take(40).collect();
    super::spill::write(&format!("{stem}.{ext}"), bytes)
}

/// Cuts `text` to [`MAX_TEXT`] (head and tail kept), saving the whole of it to a temp file
/// named in the note.
pub fn limit(what: &str, text: String) -> String {
    if text.len() <= MAX_TEXT {
        return text;
    }
    let whole = match spill(what, "txt", text.as_bytes()) {
        Ok(p) => format!("the whole text is in {}", p.display()),
        Err(e) => format!("it could not be saved: {e}"),
    };
    let note = format!("[the result was {}; {whole}]", size_text(text.len()));
    format!("{}\n{note}", truncate_middle(&text, MAX_TEXT))
}

/// A size for the cut note: `20 MiB (20971520 bytes)`, or `60000 bytes` once (a size that is
/// no whole number of KiB or MiB is said in bytes only).
fn size_text(bytes: usize) -> String {
    let size = crate::vocab::text::mib(bytes);
    if size.ends_with(" bytes") {
        size
    } else {
        format!("{size} ({bytes} bytes)")
    }
}

/// The extension for a MIME type's file (`image/png` -> `png`).
fn extension(mime: &str) -> String {
    let sub = mime.rsplit('/').next().unwrap_or("bin");
    let sub = sub.split(['+', ';']).next().unwrap_or("bin");
    let clean = super::naming::sanitize(sub);
    if clean.is_empty() {
        "bin".into()
    } else {
        clean
    }
}

/// Binary data (base64 in the protocol) as a note naming a temp file that holds it.
fn binary(what: &str, kind: &str, mime: &str, base64: &str) -> String {
    match decode_base64(base64) {
        Some(bytes) => match spill(what, &extension(mime), &bytes) {
            Ok(p) => format!(
                "[{kind} {mime}, {} bytes, saved to {}]",
                bytes.len(),
                p.display()
            ),
            Err(e) => format!("[{kind} {mime}, {} bytes: {e}]", bytes.len()),
        },
        None => format!("[{kind} {mime}: the data is not valid base64]"),
    }
}

/// One content block as text.
fn block(what: &str, item: &Value) -> String {
    let s = |k: &str| item.get(k).and_then(Value::as_str).unwrap_or("");
    match s("type") {
        "text" => s("text").to_string(),
        "image" | "audio" => binary(what, s("type"), s("mimeType"), s("data")),
        "resource_link" => {
            let mut line = format!("[resource link: {}", s("uri"));
            for key in ["name", "mimeType", "description"] {
                if !s(key).is_empty() {
                    line.push_str(&format!("; {key}: {}", s(key)));
                }
            }
            line.push(']');
            line
        }
        "resource" => item
            .get("resource")
            .map(|r| resource_contents(what, r))
            .unwrap_or_default(),
        other => format!("[content of type {other:?}: {}]", item),
    }
}

/// One entry of a resource's contents (`{uri, mimeType?, text | blob}`) as text.
pub fn resource_contents(what: &str, r: &Value) -> String {
    let s = |k: &str| r.get(k).and_then(Value::as_str);
    let uri = s("uri").unwrap_or("");
    if let Some(text) = s("text") {
        return format!("[resource {uri}]\n{text}");
    }
    let mime = s("mimeType").unwrap_or("application/octet-stream");
    format!(
        "[resource {uri}] {}",
        binary(what, "data", mime, s("blob").unwrap_or(""))
    )
}

/// A `tools/call` result as the model's tool output.
pub fn tool_output(what: &str, result: &Value) -> ToolOutput {
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let parts: Vec<String> = blocks.iter().map(|b| block(what, b)).collect();
    let has_text = blocks
        .iter()
        .any(|b| b.get("type").and_then(Value::as_str) == Some("text"));
    let mut text = parts.join("\n");
    if !has_text {
        if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
            let json = serde_json::to_string_pretty(structured).unwrap_or_default();
            text = if text.is_empty() {
                json
            } else {
                format!("{text}\n{json}")
            };
        }
    }
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    if text.is_empty() && !is_error {
        text = "(the tool returned no content)".into();
    }
    let text = limit(what, text);
    let mut out = if is_error {
        ToolOutput::error(text)
    } else {
        ToolOutput::ok(text)
    };
    out.images = images(blocks);
    out
}

/// The image blocks (at most [`MAX_IMAGES`], each at most [`MAX_IMAGE_BYTES`] of base64), for
/// providers that take images in tool results; the text names every one either way.
fn images(blocks: &[Value]) -> Vec<Image> {
    let s = |b: &Value, k: &str| b.get(k).and_then(Value::as_str).map(str::to_string);
    take_images(
        blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("image"))
            .filter_map(|b| Some((s(b, "mimeType")?, s(b, "data")?))),
    )
}

/// The image entries (`blob` with an `image/*` MIME type) of a resource's contents, as
/// [`images`] takes them.
fn resource_images(contents: &[Value]) -> Vec<Image> {
    let s = |b: &Value, k: &str| b.get(k).and_then(Value::as_str).map(str::to_string);
    take_images(
        contents
            .iter()
            .filter_map(|r| Some((s(r, "mimeType")?, s(r, "blob")?)))
            .filter(|(mime, _)| mime.starts_with("image/")),
    )
}

/// `(MIME type, base64)` pairs as images: valid, not too big, not too many.
fn take_images(found: impl Iterator<Item = (String, String)>) -> Vec<Image> {
    found
        .filter(|(_, data)| data.len() <= MAX_IMAGE_BYTES && decode_base64(data).is_some())
        .map(|(mime_type, data)| Image { mime_type, data })
        .take(MAX_IMAGES)
        .collect()
}

/// A `resources/read` result as text for the model.
pub fn read_output(what: &str, result: &Value) -> String {
    let parts: Vec<String> = contents(result)
        .iter()
        .map(|r| resource_contents(what, r))
        .collect();
    limit(what, parts.join("\n"))
}

/// A `resources/read` result as the model's tool output: [`read_output`]'s text, and its
/// images as images (see [`images`]).
pub fn read_tool_output(what: &str, result: &Value) -> ToolOutput {
    let mut out = ToolOutput::ok(read_output(what, result));
    out.images = resource_images(contents(result));
    out
}

/// The `contents` of a `resources/read` result.
fn contents(result: &Value) -> &[Value] {
    result
        .get("contents")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Standard base64 (with or without padding, whitespace ignored); `None` when invalid.
pub fn decode_base64(text: &str) -> Option<Vec<u8>> {
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    use base64::Engine;
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    let clean: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    LENIENT.decode(clean).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_blocks_join_and_errors_stay_errors() {
        let out = tool_output(
            "t",
            &json!({"content": [{"type":"text","text":"a"},{"type":"text","text":"b"}]}),
        );
        assert_eq!(out, ToolOutput::ok("a\nb"));
        let err = tool_output(
            "t",
            &json!({"content": [{"type":"text","text":"bad"}], "isError": true}),
        );
        assert_eq!(err, ToolOutput::error("bad"));
    }

    #[test]
    fn structured_content_is_used_only_without_text() {
        let only = tool_output("t", &json!({"content": [], "structuredContent": {"n": 3}}));
        assert!(only.content.contains("\"n\": 3"), "{}", only.content);
        let both = tool_output(
            "t",
            &json!({"content": [{"type":"text","text":"3"}], "structuredContent": {"n": 3}}),
        );
        assert_eq!(both.content, "3");
    }

    #[test]
    fn images_and_links_become_notes() {
        let out = tool_output(
            "img",
            &json!({"content": [
                {"type":"image","data":"aGVsbG8=","mimeType":"image/png"},
                {"type":"resource_link","uri":"file:///x","name":"x"},
                {"type":"resource","resource":{"uri":"mem://a","text":"inside"}}
            ]}),
        );
        assert!(out.content.contains("[image image/png, 5 bytes, saved to "));
        assert_eq!(
            out.images,
            [Image {
                mime_type: "image/png".into(),
                data: "aGVsbG8=".into()
            }]
        );
        let path = out.content.split("saved to ").nth(1).unwrap();
        let path = path.split(']').next().unwrap();
        assert!(path.ends_with(".png"));
        assert_eq!(std::fs::read(path).unwrap(), b"hello");
        assert!(out.content.contains("[resource link: file:///x; name: x]"));
        assert!(out.content.contains("[resource mem://a]\ninside"));
    }

    #[test]
    fn an_image_resource_goes_along_as_an_image_and_other_binary_only_as_a_file() {
        let out = read_tool_output(
            "r",
            &json!({"contents": [
                {"uri":"mem://img","mimeType":"image/png","blob":"aGVsbG8="},
                {"uri":"mem://bin","mimeType":"application/octet-stream","blob":"aGk="},
                {"uri":"mem://t","text":"words"}
            ]}),
        );
        assert!(out
            .content
            .contains("[resource mem://img] [data image/png, 5 bytes, saved to "));
        assert!(out
            .content
            .contains("[resource mem://bin] [data application/octet-stream, 2 bytes, saved to "));
        assert_eq!(
            out.images,
            [Image {
                mime_type: "image/png".into(),
                data: "aGVsbG8=".into()
            }]
        );
    }

    #[test]
    fn long_text_is_cut_with_the_whole_in_a_file() {
        let text = format!("{}{}", "h".repeat(30_000), "t".repeat(30_000));
        let out = tool_output("big", &json!({"content": [{"type":"text","text": text}]}));
        assert!(out.content.len() < MAX_TEXT + 400);
        assert!(out.content.starts_with("hhh") && out.content.contains("ttt\n[the result"));
        assert!(
            out.content
                .contains("\n[the result was 60000 bytes; the whole text is in "),
            "the size once: {}",
            out.content.lines().last().unwrap_or("")
        );
        let path = out
            .content
            .rsplit("is in ")
            .next()
            .unwrap()
            .trim_end_matches(']');
        assert_eq!(std::fs::read_to_string(path).unwrap(), text);
    }

    #[test]
    fn the_cut_note_says_the_size_once() {
        assert_eq!(size_text(60_000), "60000 bytes");
        assert_eq!(size_text(60 * 1024), "60 KiB (61440 bytes)");
        assert_eq!(size_text(20 * 1024 * 1024), "20 MiB (20971520 bytes)");
    }

    #[test]
    fn base64_round_trips() {
        assert_eq!(decode_base64("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(decode_base64("aGVsbG8").unwrap(), b"hello");
        assert_eq!(decode_base64("aGk=").unwrap(), b"hi");
        assert_eq!(decode_base64("").unwrap(), b"");
        assert!(decode_base64("a$==").is_none());
    }
}
