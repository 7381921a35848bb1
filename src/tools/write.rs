//! The built-in `write` tool: creates or replaces a whole file. Parent folders are created as
//! needed and the file is replaced atomically (a temporary file in the same folder, flushed, then
//! renamed over the target), so readers never see a half-written file.
//!
//! [`write_atomic`] is shared with the `edit` tool.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{json, Value};

use super::{Tool, ToolContext};
use crate::protocol::{ToolOutput, ToolSpec};
use futures_util::future::BoxFuture;

const DESCRIPTION: &str = "\
Write a file to the local filesystem, replacing it completely if it exists.

- `path` is relative to the working folder, or absolute. Missing parent folders are created.
- `content` is the complete new text of the file: nothing of the old file is kept.
- Prefer `edit` to change part of an existing file; use `write` for new files or full rewrites.
- Read an existing file before overwriting it, so nothing you did not mean to drop is lost.
- The file is replaced atomically and keeps its permissions.";

pub struct WriteTool {
    spec: ToolSpec,
}

impl WriteTool {
    pub fn new() -> Self {
        WriteTool {
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
            let bytes = content.as_bytes().to_vec();
            tokio::task::spawn_blocking(move || write_file(&target, &display, &bytes))
                .await
                .unwrap_or_else(|e| ToolOutput::error(format!("write failed: {e}")))
        })
    }
}

/// Creates parent folders and writes the file; the message says whether it was new.
fn write_file(target: &Path, display: &str, bytes: &[u8]) -> ToolOutput {
    let previous = match fs::metadata(target) {
        Ok(meta) if meta.is_dir() => {
            return ToolOutput::error(format!(
                "{display} is a directory; give the path of a file to write"
            ))
        }
        Ok(meta) => Some(meta.len()),
        Err(_) => None,
    };
    if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
        if let Err(e) = fs::create_dir_all(parent) {
            return ToolOutput::error(format!("could not create folder {}: {e}", parent.display()));
        }
    }
    if let Err(e) = write_atomic(target, bytes) {
        return ToolOutput::error(format!("could not write {display}: {e}"));
    }
    let n = bytes.len();
    match previous {
        None => ToolOutput::ok(format!("wrote {n} bytes to {display} (created new file)")),
        Some(old) => ToolOutput::ok(format!(
            "wrote {n} bytes to {display} (overwrote existing file of {old} bytes)"
        )),
    }
}

/// Writes `bytes` to `path` atomically: a temporary file in the same folder is written, flushed
/// and renamed over `path`. A replaced file's permissions are kept; a symlink at `path` is
/// followed, so its target is replaced, not the link. The parent folder must exist.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = resolve_symlink(path);
    let name = target
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let tmp = dir.join(temp_name(&name.to_string_lossy()));
    let permissions = fs::metadata(&target).ok().map(|m| m.permissions());
    let result = (|| {
        let mut file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        file.write_all(bytes)?;
        if let Some(p) = permissions {
            file.set_permissions(p)?;
        }
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, &target)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// The file a symlink at `path` points to (if it resolves), else `path` itself.
fn resolve_symlink(path: &Path) -> PathBuf {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// A hidden, unique temporary name next to the file, short enough for any file system.
fn temp_name(file_name: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut stem: String = file_name.chars().take(64).collect();
    while stem.len() > 100 {
        stem.pop();
    }
    format!(".{stem}.mypi-{}-{n}.tmp", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempDir;

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

    #[test]
    fn temp_names_are_short_and_unique() {
        let long = "x".repeat(300);
        let a = temp_name(&long);
        assert!(a.len() < 140);
        assert_ne!(a, temp_name(&long));
    }
}
