//! An editor's prompt (ACP content blocks) as mypi's: text blocks are the prompt's text; a
//! resource link to a file is named in the text (`` `src/a.rs` ``) and the file attached as
//! an `@path` mention would be (`<file path="...">`, read like the `read` tool reads);
//! another link stays a link; an embedded text resource is attached as it came (the editor's
//! buffer, saved or not). Images, audio and binary resources are refused with a clear
//! error: mypi's prompts are text (the initialize answer says so).

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};

/// The most text one prompt may carry, attachments included.
pub const MAX_PROMPT_BYTES: usize = 8 * 1024 * 1024;

/// A prompt for [`crate::app::App::handle_line`] and what goes after it.
#[derive(Debug, PartialEq)]
pub struct Prompt {
    pub text: String,
    pub attached: Vec<String>,
}

/// The prompt `blocks` make, or why mypi cannot take it.
pub fn from_blocks(blocks: &[ContentBlock], cwd: &Path) -> Result<Prompt, String> {
    let mut text = String::new();
    let mut attached = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(t) => text.push_str(&t.text),
            ContentBlock::ResourceLink(link) => match file_path(&link.uri) {
                Some(path) => {
                    let shown = shown(&path, cwd);
                    let content = crate::tools::read::read_whole(&path, &shown)
                        .map_err(|e| format!("{}: {e} (nothing was sent)", link.uri))?;
                    text.push_str(&format!("`{shown}`"));
                    attached.push(file_block(&shown, &content));
                }
                None => text.push_str(&format!("[{}]({})", link.name, link.uri)),
            },
            ContentBlock::Resource(r) => match &r.resource {
                EmbeddedResourceResource::TextResourceContents(t) => {
                    let shown = match file_path(&t.uri) {
                        Some(path) => shown(&path, cwd),
                        None => t.uri.clone(),
                    };
                    text.push_str(&format!("`{shown}`"));
                    attached.push(file_block(&shown, &t.text));
                }
                EmbeddedResourceResource::BlobResourceContents(b) => {
                    return Err(format!(
                        "{}: binary resources are not taken (mypi's prompts are text)",
                        b.uri
                    ))
                }
                _ => return Err("a resource of a kind mypi does not know".into()),
            },
            ContentBlock::Image(_) => {
                return Err("images are not taken in prompts yet (mypi's prompts are text)".into())
            }
            ContentBlock::Audio(_) => {
                return Err("audio is not taken (mypi's prompts are text)".into())
            }
            _ => return Err("a content block of a kind mypi does not know".into()),
        }
    }
    let size = text.len() + attached.iter().map(String::len).sum::<usize>();
    if size > MAX_PROMPT_BYTES {
        return Err(format!(
            "the prompt is {:.1} MiB, over the {} MiB mypi takes",
            size as f64 / (1024.0 * 1024.0),
            MAX_PROMPT_BYTES / (1024 * 1024)
        ));
    }
    if text.trim().is_empty() && attached.is_empty() {
        return Err("the prompt is empty".into());
    }
    Ok(Prompt { text, attached })
}

/// An attachment as an `@path` mention's.
fn file_block(path: &str, content: &str) -> String {
    format!("<file path=\"{path}\">\n{content}\n</file>")
}

/// A path as the prompt shows it: relative to the working folder when inside it.
fn shown(path: &Path, cwd: &Path) -> String {
    path.strip_prefix(cwd).unwrap_or(path).display().to_string()
}

/// The local path of a `file:` URI (percent-escapes decoded), or of a bare absolute path.
fn file_path(uri: &str) -> Option<PathBuf> {
    let rest = match uri.strip_prefix("file://") {
        Some(rest) => rest.strip_prefix("localhost").unwrap_or(rest),
        None if uri.starts_with('/') => uri,
        None => return None,
    };
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    let path = PathBuf::from(String::from_utf8(out).ok()?);
    path.is_absolute().then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{
        EmbeddedResource, ImageContent, ResourceLink, TextResourceContents,
    };

    #[test]
    fn text_links_and_embedded_resources_make_the_prompt() {
        let dir = crate::platform::testutil::TempDir::new("acp-prompt");
        std::fs::create_dir_all(dir.0.join("my dir")).unwrap();
        std::fs::write(dir.0.join("my dir/a.rs"), "fn a() {}\n").unwrap();
        let uri = format!("file://{}/my%20dir/a.rs", dir.0.display());
        let blocks = vec![
            ContentBlock::from("explain "),
            ContentBlock::ResourceLink(ResourceLink::new("a.rs", uri)),
            ContentBlock::from(" next to "),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                    "unsaved @x/y.rs text",
                    format!("file://{}/b.rs", dir.0.display()),
                )),
            )),
            ContentBlock::from(" and "),
            ContentBlock::ResourceLink(ResourceLink::new("docs", "https://example.com/d")),
        ];
        let p = from_blocks(&blocks, &dir.0).unwrap();
        assert_eq!(
            p.text,
            "explain `my dir/a.rs` next to `b.rs` and [docs](https://example.com/d)"
        );
        assert_eq!(p.attached.len(), 2);
        assert!(
            p.attached[0].starts_with("<file path=\"my dir/a.rs\">\n"),
            "{:?}",
            p.attached
        );
        assert!(p.attached[0].contains("fn a() {}"));
        assert_eq!(
            p.attached[1],
            "<file path=\"b.rs\">\nunsaved @x/y.rs text\n</file>"
        );
    }

    #[test]
    fn what_mypi_cannot_take_is_refused_with_the_reason() {
        let cwd = Path::new("/nowhere");
        let image = [ContentBlock::Image(ImageContent::new("AAAA", "image/png"))];
        assert!(from_blocks(&image, cwd).unwrap_err().contains("images"));
        let gone = [ContentBlock::ResourceLink(ResourceLink::new(
            "gone",
            "file:///nowhere/gone.rs",
        ))];
        let e = from_blocks(&gone, cwd).unwrap_err();
        assert!(e.starts_with("file:///nowhere/gone.rs: "), "{e}");
        assert_eq!(
            from_blocks(&[ContentBlock::from("  ")], cwd).unwrap_err(),
            "the prompt is empty"
        );
        let big = [ContentBlock::from("x".repeat(MAX_PROMPT_BYTES + 1))];
        assert!(from_blocks(&big, cwd)
            .unwrap_err()
            .contains("over the 8 MiB"));
    }
}
