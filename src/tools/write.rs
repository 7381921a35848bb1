//! The built-in `write` tool: creates or replaces a whole file. Parent folders are created as
//! needed and the file is replaced atomically (see [`super::replace`]), so readers never see a
//! half-written file. Only regular files are replaced: a directory, named pipe, socket or device
//! at the path (or at the end of a symbolic link) is refused and left untouched. A symbolic link
//! is written through and kept; a dangling one creates the file it points to.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};

use super::files::{unless_cancelled, writing, Files, TextFiles};
use super::fsguard::{Action, Kind, Target};
use super::replace::{self, CommitError};
use super::{Tool, ToolContext};
use crate::vocab::protocol::{ToolOutput, ToolSpec};
use futures_util::future::BoxFuture;

const DESCRIPTION: &str = "\
Write a file to the local filesystem, replacing it completely if it exists.

- `path` is relative to the working folder, or absolute. Missing parent folders are created.
- `content` is the complete new text of the file: nothing of the old file is kept.
- Prefer `edit` to change part of an existing file; use `write` for new files or full rewrites.
- Read an existing file before overwriting it, so nothing you did not mean to drop is lost.
- The file is replaced atomically and keeps its permissions; a symbolic link is written through.
- Only regular files are written: a directory, named pipe, socket or device is refused.";

pub struct WriteTool {
    spec: ToolSpec,
    files: Files,
}

impl WriteTool {
    /// `write` to the disk.
    pub fn new() -> Self {
        Self::through(None)
    }

    /// `write` through `files` (see [`super::files`]).
    pub fn through(files: Files) -> Self {
        WriteTool {
            files,
            spec: ToolSpec {
                name: "write".into(),
                description: DESCRIPTION.into(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "path": {
                            "type": "string",
                            "minLength": 1,
                            "description": "File to write, relative to the working folder or absolute"
                        },
                        "content": {
                            "type": "string",
                            "description": "The complete content of the file"
                        }
                    },
                    "required": ["path", "content"],
                    "additionalProperties": false
                }),
            },
        }
    }
}

impl Default for WriteTool {
    fn default() -> Self {
        Self::new()
    }
}

impl Tool for WriteTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, ToolOutput> {
        let files = writing(&self.files);
        Box::pin(async move {
            let path = args.get("path").and_then(Value::as_str).unwrap_or("");
            let Some(content) = args.get("content").and_then(Value::as_str) else {
                return ToolOutput::error("missing string argument `content`");
            };
            if path.is_empty() {
                return ToolOutput::error("missing string argument `path`");
            }
            let display = path.to_string();
            let target = ctx.resolve(path);
            if let Some(files) = files {
                let written = write_through(files, &target, &display, content);
                return unless_cancelled(&ctx.cancel, written).await;
            }
            let bytes = content.as_bytes().to_vec();
            tokio::task::spawn_blocking(move || write_file(&target, &display, &bytes))
                .await
                .unwrap_or_else(|e| ToolOutput::error(format!("write failed: {e}")))
        })
    }
}

/// `write` through `files`: what is at the path must be a regular file or nothing; missing
/// folders are made on disk, the text goes to the editor. The message is `write`'s, saying
/// where the text went.
async fn write_through(
    files: Arc<dyn TextFiles>,
    path: &Path,
    display: &str,
    content: &str,
) -> ToolOutput {
    let target = match Target::resolve(path, display, Action::Write) {
        Ok(t) => t,
        Err(msg) => return ToolOutput::error(msg),
    };
    if target.kind().is_some_and(|k| k != Kind::Regular) {
        return ToolOutput::error(target.refusal(Action::Write));
    }
    if let Err(msg) = make_parent(&target) {
        return ToolOutput::error(msg);
    }
    match files.write(&target.path, content).await {
        Ok(()) => ToolOutput::ok(format!(
            "{}, in the editor",
            written(&target, content.len())
        )),
        Err(e) => ToolOutput::error(format!("could not write {display} in the editor: {e}")),
    }
}

/// Creates parent folders and writes the file; the message says whether it was new. Only a
/// regular file (or nothing) is replaced, through symbolic links; anything else is refused.
fn write_file(path: &Path, display: &str, bytes: &[u8]) -> ToolOutput {
    let target = match Target::resolve(path, display, Action::Write) {
        Ok(t) => t,
        Err(msg) => return ToolOutput::error(msg),
    };
    if target.kind().is_some_and(|k| k != Kind::Regular) {
        return ToolOutput::error(target.refusal(Action::Write));
    }
    if let Err(msg) = make_parent(&target) {
        return ToolOutput::error(msg);
    }
    let staged = match replace::stage(&target.path, bytes, target.meta.as_ref()) {
        Ok(s) => s,
        Err(e) => return ToolOutput::error(format!("could not write {display}: {e}")),
    };
    let committed = match &target.meta {
        None => staged.commit_new(),
        Some(_) => staged.commit_over(|now| match Kind::of(now) {
            Kind::Regular => Ok(()),
            kind => Err(target.refusal_for(kind, Action::Write)),
        }),
    };
    match committed {
        Ok(()) => ToolOutput::ok(written(&target, bytes.len())),
        Err(CommitError::Refused(msg)) => ToolOutput::error(msg),
        Err(CommitError::Exists) => ToolOutput::error(format!(
            "{display} was created by another program while write was writing it, so it was \
             left as that program made it; read it, then call write again"
        )),
        Err(CommitError::Io(e)) => ToolOutput::error(format!("could not write {display}: {e}")),
    }
}

/// Creates the folder a new file goes in. At the far end of a dangling symbolic link no folder
/// is created: the link is followed only to a folder that exists.
fn make_parent(target: &Target) -> Result<(), String> {
    let Some(parent) = target.path.parent().filter(|p| !p.as_os_str().is_empty()) else {
        return Ok(());
    };
    if target.meta.is_some() || parent.is_dir() {
        return Ok(());
    }
    if target.via_link {
        return Err(format!(
            "{} is a symbolic link to {}, whose folder does not exist; create the folder or \
             write to another path",
            target.display,
            target.path.display()
        ));
    }
    fs::create_dir_all(parent)
        .map_err(|e| format!("could not create folder {}: {e}", parent.display()))
}

/// The success message.
fn written(target: &Target, n: usize) -> String {
    let display = &target.display;
    let through = if target.via_link {
        format!(", through the symbolic link to {}", target.path.display())
    } else {
        String::new()
    };
    match &target.meta {
        None => format!("wrote {n} bytes to {display} (created new file{through})"),
        Some(old) => format!(
            "wrote {n} bytes to {display} (overwrote existing file of {} bytes{through})",
            old.len()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::fsguard::special;
    use super::*;
    use crate::platform::testutil::TempDir;

    async fn write(dir: &TempDir, path: &str, content: &str) -> ToolOutput {
        WriteTool::new()
            .call(json!({"path": path, "content": content}), dir.ctx())
            .await
    }

    fn no_temp_files(dir: &Path) -> bool {
        fs::read_dir(dir)
            .unwrap()
            .all(|e| !e.unwrap().file_name().to_string_lossy().ends_with(".tmp"))
    }

    #[tokio::test]
    async fn creates_file_and_parent_folders() {
        let dir = TempDir::new("create");
        let out = write(&dir, "a/b/c.txt", "hello\n").await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(out.content, "wrote 6 bytes to a/b/c.txt (created new file)");
        assert_eq!(
            fs::read_to_string(dir.0.join("a/b/c.txt")).unwrap(),
            "hello\n"
        );
        assert!(no_temp_files(&dir.0.join("a/b")));
    }

    #[tokio::test]
    async fn overwrites_and_keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = TempDir::new("overwrite");
        let file = dir.0.join("run.sh");
        fs::write(&file, "old content").unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(0o755)).unwrap();
        let out = write(&dir, file.to_str().unwrap(), "new").await;
        assert!(!out.is_error, "{}", out.content);
        assert!(out.content.contains("overwrote existing file of 11 bytes"));
        assert_eq!(fs::read_to_string(&file).unwrap(), "new");
        let mode = fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
        assert!(no_temp_files(&dir.0));
    }

    #[tokio::test]
    async fn writes_through_a_symlink() {
        let dir = TempDir::new("symlink");
        fs::write(dir.0.join("real.txt"), "x").unwrap();
        std::os::unix::fs::symlink(dir.0.join("real.txt"), dir.0.join("link.txt")).unwrap();
        let out = write(&dir, "link.txt", "through").await;
        assert!(!out.is_error, "{}", out.content);
        assert!(fs::symlink_metadata(dir.0.join("link.txt"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            fs::read_to_string(dir.0.join("real.txt")).unwrap(),
            "through"
        );
    }

    #[tokio::test]
    async fn directory_target_is_an_error() {
        let dir = TempDir::new("dir");
        fs::create_dir(dir.0.join("sub")).unwrap();
        let out = write(&dir, "sub", "x").await;
        assert!(out.is_error);
        assert!(out.content.contains("is a directory"), "{}", out.content);
    }

    #[tokio::test]
    async fn special_files_are_refused_and_left_untouched() {
        use std::os::unix::fs::FileTypeExt;
        let dir = TempDir::new("special");
        special::mkfifo(&dir.0.join("pipe"));
        let _sock = std::os::unix::net::UnixListener::bind(dir.0.join("sock")).unwrap();
        let has_dev = special::mknod_null(&dir.0.join("null"));
        let mut cases = vec![("pipe", "a named pipe (FIFO)"), ("sock", "a socket")];
        if has_dev {
            cases.push(("null", "a character device"));
        }
        for (name, kind) in cases {
            let out = write(&dir, name, "x").await;
            assert!(out.is_error, "{name}: {}", out.content);
            assert_eq!(
                out.content,
                format!(
                    "{name} is {kind}, not a regular file; write only changes regular files, \
                     so it was left untouched"
                )
            );
        }
        let types = |n: &str| fs::symlink_metadata(dir.0.join(n)).unwrap().file_type();
        assert!(types("pipe").is_fifo());
        assert!(types("sock").is_socket());
        assert!(!has_dev || special::is_char_device(&dir.0.join("null")));
        assert!(no_temp_files(&dir.0));
    }

    #[tokio::test]
    async fn symlink_to_a_special_file_is_refused() {
        let dir = TempDir::new("linkspecial");
        special::mkfifo(&dir.0.join("pipe"));
        std::os::unix::fs::symlink("pipe", dir.0.join("link")).unwrap();
        let out = write(&dir, "link", "x").await;
        assert!(out.is_error);
        assert!(
            out.content.starts_with("link is a symbolic link to ")
                && out.content.contains("which is a named pipe (FIFO)"),
            "{}",
            out.content
        );
        assert!(fs::symlink_metadata(dir.0.join("link"))
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[tokio::test]
    async fn symlink_keeps_the_target_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = TempDir::new("linkperm");
        let real = dir.0.join("real.sh");
        fs::write(&real, "old").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o750)).unwrap();
        std::os::unix::fs::symlink("real.sh", dir.0.join("link.sh")).unwrap();
        let out = write(&dir, "link.sh", "new").await;
        assert!(!out.is_error, "{}", out.content);
        assert!(
            out.content.contains("through the symbolic link to"),
            "{}",
            out.content
        );
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
        let mode = fs::metadata(&real).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o750);
    }

    #[tokio::test]
    async fn dangling_symlink_creates_its_target_in_an_existing_folder() {
        let dir = TempDir::new("dangling");
        std::os::unix::fs::symlink("made.txt", dir.0.join("link")).unwrap();
        let out = write(&dir, "link", "hi").await;
        assert!(!out.is_error, "{}", out.content);
        assert!(out.content.contains("created new file"), "{}", out.content);
        assert_eq!(fs::read_to_string(dir.0.join("made.txt")).unwrap(), "hi");
        assert!(fs::symlink_metadata(dir.0.join("link"))
            .unwrap()
            .file_type()
            .is_symlink());
        std::os::unix::fs::symlink("no/such/dir/f", dir.0.join("far")).unwrap();
        let out = write(&dir, "far", "hi").await;
        assert!(out.is_error);
        assert!(
            out.content.contains("whose folder does not exist"),
            "{}",
            out.content
        );
        assert!(!dir.0.join("no").exists());
    }

    #[tokio::test]
    async fn parent_that_is_a_file_is_an_error() {
        let dir = TempDir::new("parentfile");
        fs::write(dir.0.join("plain"), "x").unwrap();
        let out = write(&dir, "plain/child.txt", "x").await;
        assert!(out.is_error);
        assert!(out.content.contains("could not"), "{}", out.content);
    }

    #[tokio::test]
    async fn odd_arguments_do_not_panic() {
        let dir = TempDir::new("odd");
        let out = WriteTool::new().call(json!({"path": 3}), dir.ctx()).await;
        assert!(out.is_error);
        let out = WriteTool::new().call(Value::Null, dir.ctx()).await;
        assert!(out.is_error);
    }

    #[test]
    fn schema_requires_path_and_content() {
        let tool = WriteTool::new();
        let v = jsonschema::validator_for(&tool.spec().parameters).unwrap();
        assert!(v.is_valid(&json!({"path": "a", "content": ""})));
        assert!(!v.is_valid(&json!({"path": "a"})));
        assert!(!v.is_valid(&json!({"path": "a", "content": "", "mode": 1})));
    }
}
