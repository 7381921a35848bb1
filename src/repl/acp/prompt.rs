//! An editor's prompt (ACP content blocks) as mypi's: text blocks are the prompt's text; a
//! resource link to a file is named in the text (`` `src/a.rs` ``) and the file attached as
//! an `@path` mention would be (`<file path="...">`, read like the `read` tool reads);
//! another link stays a link; an embedded text resource is attached as it came (the editor's
//! buffer, saved or not). Images (an `image` block, or an embedded resource whose blob is a
//! PNG, JPEG, GIF or WebP image, named in the text like a file) go to the model as images
//! beside the text ([`crate::vocab::protocol::Message::images`]), each checked (valid
//! base64, at most [`MAX_IMAGE_BYTES`], at most [`MAX_IMAGES`] a prompt). Audio and other
//! binary resources are refused with a clear error.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    ContentBlock, EmbeddedResource, EmbeddedResourceResource, ResourceLink,
};

use crate::vocab::protocol::Image;

/// The most text one prompt may carry, attachments included.
pub const MAX_PROMPT_BYTES: usize = 8 * 1024 * 1024;

/// The largest image mypi takes (decoded): beyond what the model APIs take (Anthropic's 5
/// MB, OpenAI's 20 MB) a prompt's line could not arrive anyway
/// ([`super::transport::MAX_LINE`] holds 10 MiB once in base64, with room to spare).
pub const MAX_IMAGE_BYTES: usize = 10 * 1024 * 1024;

/// The most images one prompt may carry.
pub const MAX_IMAGES: usize = 20;

/// The image types both model APIs take.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// A prompt for [`crate::app::App::handle_line`] and what goes after it.
#[derive(Debug, Default, PartialEq)]
pub struct Prompt {
    pub text: String,
    pub attached: Vec<String>,
    /// The images, for the user message.
    pub images: Vec<Image>,
}

/// The prompt `blocks` make, or why mypi cannot take it.
pub fn from_blocks(blocks: &[ContentBlock], cwd: &Path) -> Result<Prompt, String> {
    let mut prompt = Prompt::default();
    for block in blocks {
        prompt.add(block, cwd)?;
    }
    let size = prompt.text.len() + prompt.attached.iter().map(String::len).sum::<usize>();
    if size > MAX_PROMPT_BYTES {
        return Err(format!(
            "the prompt is {}, over the {} mypi takes",
            mib(size),
            mib(MAX_PROMPT_BYTES)
        ));
    }
    if prompt.images.len() > MAX_IMAGES {
        return Err(format!(
            "the prompt has {} images; mypi takes at most {MAX_IMAGES}",
            prompt.images.len()
        ));
    }
    if prompt.text.trim().is_empty() && prompt.attached.is_empty() && prompt.images.is_empty() {
        return Err("the prompt is empty".into());
    }
    Ok(prompt)
}

impl Prompt {
    /// Adds one content block.
    fn add(&mut self, block: &ContentBlock, cwd: &Path) -> Result<(), String> {
        match block {
            ContentBlock::Text(t) => self.text.push_str(&t.text),
            ContentBlock::ResourceLink(link) => self.link(link, cwd)?,
            ContentBlock::Resource(r) => self.resource(r, cwd)?,
            ContentBlock::Image(i) => {
                let what = i.uri.as_deref().unwrap_or("an image");
                self.images.push(image(what, &i.mime_type, &i.data)?);
            }
            ContentBlock::Audio(_) => {
                return Err("audio is not taken (mypi sends the model text and images)".into())
            }
            _ => return Err("a content block of a kind mypi does not know".into()),
        }
        Ok(())
    }

    /// A link: a file named in the text and attached; another link kept as a link.
    fn link(&mut self, link: &ResourceLink, cwd: &Path) -> Result<(), String> {
        match file_path(&link.uri) {
            Some(path) => {
                let shown = shown(&path, cwd);
                let content = crate::tools::read::read_whole(&path, &shown)
                    .map_err(|e| format!("{}: {e} (nothing was sent)", link.uri))?;
                self.text.push_str(&format!("`{shown}`"));
                self.attached.push(file_block(&shown, &content));
            }
            None => self
                .text
                .push_str(&format!("[{}]({})", link.name, link.uri)),
        }
        Ok(())
    }

    /// An embedded resource: text attached as it came, an image as an image (both named in
    /// the text).
    fn resource(&mut self, r: &EmbeddedResource, cwd: &Path) -> Result<(), String> {
        let name = |uri: &str| match file_path(uri) {
            Some(path) => shown(&path, cwd),
            None => uri.to_string(),
        };
        match &r.resource {
            EmbeddedResourceResource::TextResourceContents(t) => {
                let shown = name(&t.uri);
                self.text.push_str(&format!("`{shown}`"));
                self.attached.push(file_block(&shown, &t.text));
            }
            EmbeddedResourceResource::BlobResourceContents(b) => {
                let mime = b.mime_type.as_deref().unwrap_or_default();
                if !mime.starts_with("image/") {
                    return Err(format!(
                        "{}: binary resources other than images are not taken",
                        b.uri
                    ));
                }
                self.images.push(image(&b.uri, mime, &b.blob)?);
                self.text.push_str(&format!("`{}`", name(&b.uri)));
            }
            _ => return Err("a resource of a kind mypi does not know".into()),
        }
        Ok(())
    }
}

/// An image of the prompt, checked: a type the model APIs take, valid base64, not too big.
/// `what` names it in errors. The base64 is kept as it came when it is canonical, else
/// written again (no whitespace, padded), as the APIs want it.
fn image(what: &str, mime: &str, data: &str) -> Result<Image, String> {
    use base64::Engine;
    let mime = match mime {
        "image/jpg" => "image/jpeg",
        other => other,
    };
    if !IMAGE_TYPES.contains(&mime) {
        return Err(format!(
            "{what}: {mime} is not an image type mypi sends (PNG, JPEG, GIF or WebP)"
        ));
    }
    let too_big = |bytes: usize| {
        format!(
            "{what}: the image is {}, over the {} mypi takes",
            mib(bytes),
            mib(MAX_IMAGE_BYTES)
        )
    };
    if data.len() / 4 * 3 > MAX_IMAGE_BYTES + 3 {
        return Err(too_big(data.len() / 4 * 3));
    }
    let bytes = crate::mcp::content::decode_base64(data)
        .ok_or_else(|| format!("{what}: the image's data is not valid base64"))?;
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(too_big(bytes.len()));
    }
    if bytes.is_empty() {
        return Err(format!("{what}: the image is empty"));
    }
    let canonical = data.len().is_multiple_of(4) && !data.bytes().any(|b| b.is_ascii_whitespace());
    let data = match canonical {
        true => data.to_string(),
        false => base64::engine::general_purpose::STANDARD.encode(&bytes),
    };
    Ok(Image {
        mime_type: mime.to_string(),
        data,
    })
}

/// A size in MiB, as errors say it.
fn mib(bytes: usize) -> String {
    let m = bytes as f64 / (1024.0 * 1024.0);
    if m.fract() == 0.0 {
        format!("{m:.0} MiB")
    } else {
        format!("{m:.1} MiB")
    }
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
        BlobResourceContents, ImageContent, TextResourceContents,
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
        let audio = [ContentBlock::Audio(
            agent_client_protocol::v1::schema::AudioContent::new("AAAA", "audio/wav"),
        )];
        assert!(from_blocks(&audio, cwd).unwrap_err().contains("audio"));
    }

    /// A 1x1 PNG.
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==";

    #[test]
    fn images_and_image_resources_go_along_with_the_text() {
        let cwd = Path::new("/work");
        let blocks = vec![
            ContentBlock::from("what is in "),
            ContentBlock::Image(ImageContent::new(PNG, "image/png")),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::BlobResourceContents(
                    BlobResourceContents::new(
                        PNG[..40].to_string() + "\n" + &PNG[40..],
                        "file:///work/shot.jpg",
                    )
                    .mime_type("image/jpg"),
                ),
            )),
        ];
        let p = from_blocks(&blocks, cwd).unwrap();
        assert_eq!(p.text, "what is in `shot.jpg`");
        assert!(p.attached.is_empty());
        let image = |mime: &str| Image {
            mime_type: mime.into(),
            data: PNG.into(),
        };
        assert_eq!(p.images, [image("image/png"), image("image/jpeg")]);
        let alone = [ContentBlock::Image(ImageContent::new(PNG, "image/webp"))];
        assert_eq!(from_blocks(&alone, cwd).unwrap().images.len(), 1);
    }

    #[test]
    fn bad_and_big_images_are_refused_with_the_reason() {
        let cwd = Path::new("/work");
        let err = |mime: &str, data: &str| {
            let blocks = [ContentBlock::Image(ImageContent::new(data, mime))];
            from_blocks(&blocks, cwd).unwrap_err()
        };
        assert_eq!(
            err("image/bmp", PNG),
            "an image: image/bmp is not an image type mypi sends (PNG, JPEG, GIF or WebP)"
        );
        assert_eq!(
            err("image/png", "not base64!"),
            "an image: the image's data is not valid base64"
        );
        assert_eq!(err("image/png", ""), "an image: the image is empty");
        let big = "A".repeat((MAX_IMAGE_BYTES + 1024) / 3 * 4);
        assert_eq!(
            err("image/png", &big),
            "an image: the image is 10.0 MiB, over the 10 MiB mypi takes"
        );
        let blob = [ContentBlock::Resource(EmbeddedResource::new(
            EmbeddedResourceResource::BlobResourceContents(
                BlobResourceContents::new("AAAA", "file:///work/a.bin")
                    .mime_type("application/octet-stream"),
            ),
        ))];
        assert!(from_blocks(&blob, cwd)
            .unwrap_err()
            .contains("other than images"));
        let many = vec![ContentBlock::Image(ImageContent::new(PNG, "image/png")); MAX_IMAGES + 1];
        assert_eq!(
            from_blocks(&many, cwd).unwrap_err(),
            "the prompt has 21 images; mypi takes at most 20"
        );
    }
}
