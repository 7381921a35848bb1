//! The built-in `read` tool: shows a text file (or part of it, by line), lists a directory, and
//! refuses binary files and anything that is not a regular file (named pipes, sockets, devices:
//! never opened, so a read never blocks). Output is bounded by a line count and
//! [`MAX_OUTPUT_BYTES`] and memory by [`super::page`]; when output is cut, a last line says which
//! lines were shown and which `offset` continues.

use std::fs;
use std::io::{self, BufReader, Read};
use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};

use super::files::{fits, reading, unless_cancelled, Files, TextFiles};
use super::fsguard::{Action, Kind, Target};
use super::page::{read_page, render_page};
use super::{Tool, ToolContext, MAX_OUTPUT_BYTES};
use crate::vocab::protocol::{ToolOutput, ToolSpec};
use crate::vocab::text::truncate_middle;
use futures_util::future::BoxFuture;

/// Lines shown when the call gives no `limit`.
const DEFAULT_LIMIT: usize = 2000;
/// How much of the start of a file is checked for NUL bytes.
const BINARY_SNIFF_BYTES: usize = 8192;
/// Room left under [`MAX_OUTPUT_BYTES`] for the continuation note.
const NOTE_ROOM: usize = 200;
/// Bytes read from the file at a time.
const READ_BUFFER: usize = 64 * 1024;

const DESCRIPTION: &str = "\
Read a file from the local filesystem.

- `path` is relative to the working folder, or absolute.
- Returns the file's text exactly as stored (bytes that are not UTF-8 show as U+FFFD), without \
line numbers.
- At most 2000 lines or 50 KiB are returned per call. When the output is cut, its last line says \
which lines were shown and the `offset` to pass to read on, e.g. \
\"[showing lines 1-2000 of 5230; call read with offset=2001 to continue]\".
- `offset` is the 1-based line to start at and `limit` the number of lines to return; use them \
to read a long file in parts, or just the region you need.
- Reading a directory lists its entries, sorted, with folders ending in /.
- Binary files are not shown, nor named pipes, sockets or devices.
- Read a file before editing it, so you can copy the text to replace exactly.";

pub struct ReadTool {
    spec: ToolSpec,
    files: Files,
}

impl ReadTool {
    /// `read` of the disk.
    pub fn new() -> Self {
        Self::through(None)
    }

    /// `read` through `files` (see [`super::files`]).
    pub fn through(files: Files) -> Self {
        ReadTool {
            files,
            spec: ToolSpec {
                name: "read".into(),
                description: DESCRIPTION.into(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "path": {
                            "type": "string",
                            "minLength": 1,
                            "description": "File or directory to read, relative to the working folder or absolute"
                        },
                        "offset": {
                            "type": "integer",
                            "minimum": 1,
                            "description": "1-based line number to start reading at (default 1)"
                        },
                        "limit": {
                            "type": "integer",
                            "minimum": 1,
                            "description": "Most lines to return (default 2000)"
                        }
                    },
                    "required": ["path"],
                    "additionalProperties": false
                }),
            },
        }
    }
}

impl Default for ReadTool {
    fn default() -> Self {
        Self::new()
    }
}

impl Tool for ReadTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, ToolOutput> {
        let files = self.files.clone();
        Box::pin(async move {
            let Some(path) = args.get("path").and_then(Value::as_str) else {
                return ToolOutput::error("missing string argument `path`");
            };
            let offset = usize_arg(&args, "offset").unwrap_or(1).max(1);
            let limit = usize_arg(&args, "limit").unwrap_or(DEFAULT_LIMIT).max(1);
            let display = path.to_string();
            let target = ctx.resolve(path);
            let disk = {
                let (target, display) = (target.clone(), display.clone());
                move || async move {
                    tokio::task::spawn_blocking(move || read_path(&target, &display, offset, limit))
                        .await
                        .unwrap_or_else(|e| ToolOutput::error(format!("read failed: {e}")))
                }
            };
            if let Some(files) = reading(&files).filter(|_| fits(&target)) {
                let through = (offset, limit, NOTE_ROOM);
                let read = read_through(files, &target, &display, through);
                if let Some(out) = unless_cancelled(&ctx.cancel, read).await {
                    return out;
                }
            }
            disk().await
        })
    }
}

/// What `read` would give for `path` from its start, within its limits (`@file` mentions);
/// the error is its message.
pub fn read_whole(path: &Path, display: &str) -> Result<String, String> {
    let out = read_path(path, display, 1, DEFAULT_LIMIT);
    if out.is_error {
        Err(out.content)
    } else {
        Ok(out.content)
    }
}

/// A non-negative integer argument (saturating for huge values).
fn usize_arg(args: &Value, key: &str) -> Option<usize> {
    let v = args.get(key)?;
    v.as_u64().map(|n| usize::try_from(n).unwrap_or(usize::MAX))
}

/// Reads a regular file or lists a directory; anything else (a named pipe, socket or device,
/// also at the end of a symbolic link) is refused without being opened.
fn read_path(path: &Path, display: &str, offset: usize, limit: usize) -> ToolOutput {
    let target = match Target::resolve(path, display, Action::Read) {
        Ok(t) => t,
        Err(msg) => return ToolOutput::error(msg),
    };
    match target.kind() {
        None => ToolOutput::error(target.missing()),
        Some(Kind::Directory) => list_dir(path, display),
        Some(Kind::Regular) => read_file(&target, offset, limit),
        Some(_) => ToolOutput::error(target.refusal(Action::Read)),
    }
}

/// `read` through `files`: a regular file's text from them, paged as from disk; `None` for
/// anything else (a folder, nothing, a pipe), which is read as the disk has it.
async fn read_through(
    files: Arc<dyn TextFiles>,
    path: &Path,
    display: &str,
    (offset, limit, note_room): (usize, usize, usize),
) -> Option<ToolOutput> {
    let target = match Target::resolve(path, display, Action::Read) {
        Ok(t) => t,
        Err(msg) => return Some(ToolOutput::error(msg)),
    };
    if target.kind() != Some(Kind::Regular) {
        return None;
    }
    let text = match files.read(&target.path).await {
        Ok(text) => text,
        Err(e) => {
            let why = format!("could not read {display} from the editor: {e}");
            return Some(ToolOutput::error(why));
        }
    };
    if text.contains('\0') {
        return Some(ToolOutput::error(format!(
            "{display} is a binary file ({} bytes); read only shows text",
            text.len()
        )));
    }
    let reader = io::Cursor::new(text.into_bytes());
    Some(
        match read_page(reader, offset, limit, MAX_OUTPUT_BYTES - note_room) {
            Ok(p) => render_page(p, display, offset),
            Err(e) => ToolOutput::error(format!("could not read {display}: {e}")),
        },
    )
}

/// Lists a directory's entries, sorted, folders with a trailing `/`.
fn list_dir(target: &Path, display: &str) -> ToolOutput {
    let entries = match fs::read_dir(target) {
        Ok(it) => it,
        Err(e) => return ToolOutput::error(format!("could not list directory {display}: {e}")),
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|entry| {
            let mut name = entry.file_name().to_string_lossy().into_owned();
            // Follow symlinks so a link to a folder is shown as a folder.
            if entry.path().is_dir() {
                name.push('/');
            }
            name
        })
        .collect();
    names.sort();
    if names.is_empty() {
        return ToolOutput::ok(format!("{display} is an empty directory"));
    }
    let listing = names.join("\n");
    ToolOutput::ok(format!(
        "{display} is a directory with {} entries:\n{}",
        names.len(),
        truncate_middle(&listing, MAX_OUTPUT_BYTES - NOTE_ROOM)
    ))
}

/// Reads the requested lines of a regular file, refusing binary content. The file is
/// streamed: memory stays bounded however long the file or its lines are.
fn read_file(target: &Target, offset: usize, limit: usize) -> ToolOutput {
    let display = &target.display;
    let (mut file, meta) = match target.open_regular(Action::Read) {
        Ok(opened) => opened,
        Err(msg) => return ToolOutput::error(msg),
    };
    let mut head = Vec::with_capacity(BINARY_SNIFF_BYTES);
    if let Err(e) = (&mut file)
        .take(BINARY_SNIFF_BYTES as u64)
        .read_to_end(&mut head)
    {
        return ToolOutput::error(format!("could not read {display}: {e}"));
    }
    if head.contains(&0) {
        return ToolOutput::error(format!(
            "{display} is a binary file ({} bytes); read only shows text",
            meta.len()
        ));
    }
    let reader = BufReader::with_capacity(READ_BUFFER, io::Cursor::new(head).chain(file));
    match read_page(reader, offset, limit, MAX_OUTPUT_BYTES - NOTE_ROOM) {
        Ok(page) => render_page(page, display, offset),
        Err(e) => ToolOutput::error(format!("could not read {display}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::fsguard::special;
    use super::*;
    use crate::platform::testutil::TempDir;

    async fn read(dir: &TempDir, args: Value) -> ToolOutput {
        ReadTool::new().call(args, dir.ctx()).await
    }

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[tokio::test]
    async fn reads_whole_small_file_exactly() {
        let dir = TempDir::new("small");
        fs::write(dir.0.join("a.txt"), "one\ntwo\nthree").unwrap();
        let out = read(&dir, json!({"path": "a.txt"})).await;
        assert!(!out.is_error);
        assert_eq!(out.content, "one\ntwo\nthree");
    }

    #[tokio::test]
    async fn long_file_is_cut_at_default_limit_with_continuation() {
        let dir = TempDir::new("long");
        fs::write(dir.0.join("big.txt"), numbered(5230)).unwrap();
        let out = read(&dir, json!({"path": "big.txt"})).await;
        assert!(!out.is_error);
        assert!(out.content.starts_with("line 1\n"));
        assert!(out.content.contains("line 2000\n"));
        assert!(!out.content.contains("line 2001\n"));
        assert!(out
            .content
            .ends_with("[showing lines 1-2000 of 5230; call read with offset=2001 to continue]"));
    }

    #[tokio::test]
    async fn offset_and_limit_select_lines() {
        let dir = TempDir::new("offset");
        fs::write(dir.0.join("f.txt"), numbered(10)).unwrap();
        let out = read(&dir, json!({"path": "f.txt", "offset": 3, "limit": 2})).await;
        assert_eq!(
            out.content,
            "line 3\nline 4\n[showing lines 3-4 of 10; call read with offset=5 to continue]"
        );
        let out = read(&dir, json!({"path": "f.txt", "offset": 9})).await;
        assert_eq!(out.content, "line 9\nline 10\n");
        let out = read(&dir, json!({"path": "f.txt", "offset": 11})).await;
        assert!(out.is_error);
        assert!(out.content.contains("past the end"), "{}", out.content);
    }

    #[tokio::test]
    async fn byte_limit_cuts_on_line_boundary() {
        let dir = TempDir::new("bytes");
        let line = format!("{}\n", "x".repeat(999));
        fs::write(dir.0.join("wide.txt"), line.repeat(200)).unwrap();
        let out = read(&dir, json!({"path": "wide.txt"})).await;
        assert!(!out.is_error);
        assert!(out.content.len() <= MAX_OUTPUT_BYTES);
        assert!(
            out.content.contains("of 200 (output limit reached)"),
            "{}",
            &out.content[out.content.len() - 200..]
        );
        assert!(out.content.contains("call read with offset="));
    }

    #[tokio::test]
    async fn invalid_utf8_is_lossy() {
        let dir = TempDir::new("lossy");
        fs::write(dir.0.join("l.txt"), b"ok \xff\xfe end\n").unwrap();
        let out = read(&dir, json!({"path": "l.txt"})).await;
        assert!(!out.is_error);
        assert_eq!(out.content, "ok \u{fffd}\u{fffd} end\n");
    }

    #[tokio::test]
    async fn empty_file_says_so() {
        let dir = TempDir::new("empty");
        fs::write(dir.0.join("e.txt"), "").unwrap();
        let out = read(&dir, json!({"path": "e.txt"})).await;
        assert!(!out.is_error);
        assert_eq!(out.content, "[e.txt is empty]");
    }

    #[tokio::test]
    async fn missing_file_is_an_error() {
        let dir = TempDir::new("missing");
        let out = read(&dir, json!({"path": "nope.txt"})).await;
        assert!(out.is_error);
        assert_eq!(out.content, "no such file: nope.txt");
    }

    #[tokio::test]
    async fn directory_is_listed_sorted_with_slashes() {
        let dir = TempDir::new("dir");
        fs::create_dir(dir.0.join("zsub")).unwrap();
        fs::create_dir(dir.0.join("asub")).unwrap();
        fs::write(dir.0.join("m.txt"), "").unwrap();
        let out = read(&dir, json!({"path": "."})).await;
        assert!(!out.is_error);
        assert_eq!(
            out.content,
            ". is a directory with 3 entries:\nasub/\nm.txt\nzsub/"
        );
        let out = read(&dir, json!({"path": "asub"})).await;
        assert_eq!(out.content, "asub is an empty directory");
    }

    #[tokio::test]
    async fn binary_file_is_refused_with_size() {
        let dir = TempDir::new("binary");
        fs::write(dir.0.join("b.bin"), b"\x7fELF\x00\x01\x02rest").unwrap();
        let out = read(&dir, json!({"path": "b.bin"})).await;
        assert!(out.is_error);
        assert_eq!(
            out.content,
            "b.bin is a binary file (11 bytes); read only shows text"
        );
    }

    #[tokio::test]
    async fn special_files_are_refused_without_blocking() {
        let dir = TempDir::new("special");
        special::mkfifo(&dir.0.join("pipe"));
        let _sock = std::os::unix::net::UnixListener::bind(dir.0.join("sock")).unwrap();
        std::os::unix::fs::symlink("pipe", dir.0.join("link")).unwrap();
        let mut cases = vec![("pipe", "a named pipe (FIFO)"), ("sock", "a socket")];
        if special::mknod_null(&dir.0.join("null")) {
            cases.push(("null", "a character device"));
        }
        for (name, kind) in cases {
            let out = read(&dir, json!({"path": name})).await;
            assert!(out.is_error);
            assert_eq!(
                out.content,
                format!(
                    "{name} is {kind}, not a regular file; read only shows regular files and \
                     lists directories"
                )
            );
        }
        let out = read(&dir, json!({"path": "link"})).await;
        assert!(out.is_error);
        assert!(
            out.content.contains("which is a named pipe"),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn reads_through_symlinks_and_names_a_dangling_one() {
        let dir = TempDir::new("links");
        fs::write(dir.0.join("real.txt"), "real\n").unwrap();
        std::os::unix::fs::symlink("real.txt", dir.0.join("link")).unwrap();
        std::os::unix::fs::symlink("gone.txt", dir.0.join("dangling")).unwrap();
        let out = read(&dir, json!({"path": "link"})).await;
        assert_eq!(out.content, "real\n");
        let out = read(&dir, json!({"path": "dangling"})).await;
        assert!(out.is_error);
        assert!(
            out.content
                .starts_with("no such file: dangling is a symbolic link to "),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn odd_arguments_do_not_panic() {
        let dir = TempDir::new("odd");
        let out = read(&dir, json!({"path": 1})).await;
        assert!(out.is_error);
        fs::write(dir.0.join("f"), "a\n").unwrap();
        let out = read(&dir, json!({"path": "f", "offset": -3, "limit": 0})).await;
        assert_eq!(out.content, "a\n");
    }

    #[test]
    fn schema_is_complete() {
        let v = jsonschema::validator_for(&ReadTool::new().spec().parameters).unwrap();
        assert!(v.is_valid(&json!({"path": "a", "offset": 2, "limit": 5})));
        assert!(!v.is_valid(&json!({"offset": 2})));
        assert!(!v.is_valid(&json!({"path": "a", "offset": 0})));
        assert!(!v.is_valid(&json!({"path": "a", "extra": true})));
        assert!(ReadTool::new().parallel_safe());
    }
}
