//! The built-in `read` tool: shows a text file (or part of it, by line), lists a directory, and
//! refuses binary files. Output is bounded by a line count and [`MAX_OUTPUT_BYTES`]; when it is
//! cut, a last line says which lines were shown and which `offset` continues.

use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use serde_json::{json, Value};

use super::{Tool, ToolContext, MAX_OUTPUT_BYTES};
use crate::protocol::{ToolOutput, ToolSpec};
use crate::text::truncate_middle;
use futures_util::future::BoxFuture;

/// Lines shown when the call gives no `limit`.
const DEFAULT_LIMIT: usize = 2000;
/// How much of the start of a file is checked for NUL bytes.
const BINARY_SNIFF_BYTES: usize = 8192;
/// Room left under [`MAX_OUTPUT_BYTES`] for the continuation note.
const NOTE_ROOM: usize = 200;

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
- Binary files are not shown.
- Read a file before editing it, so you can copy the text to replace exactly.";

pub struct ReadTool {
    spec: ToolSpec,
}

impl ReadTool {
    pub fn new() -> Self {
        ReadTool {
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
        Box::pin(async move {
            let Some(path) = args.get("path").and_then(Value::as_str) else {
                return ToolOutput::error("missing string argument `path`");
            };
            let offset = usize_arg(&args, "offset").unwrap_or(1).max(1);
            let limit = usize_arg(&args, "limit").unwrap_or(DEFAULT_LIMIT).max(1);
            let display = path.to_string();
            let target = ctx.resolve(path);
            tokio::task::spawn_blocking(move || read_path(&target, &display, offset, limit))
                .await
                .unwrap_or_else(|e| ToolOutput::error(format!("read failed: {e}")))
        })
    }
}

/// A non-negative integer argument (saturating for huge values).
fn usize_arg(args: &Value, key: &str) -> Option<usize> {
    let v = args.get(key)?;
    v.as_u64().map(|n| usize::try_from(n).unwrap_or(usize::MAX))
}

/// Reads a file or lists a directory.
fn read_path(target: &Path, display: &str, offset: usize, limit: usize) -> ToolOutput {
    let meta = match fs::metadata(target) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return ToolOutput::error(format!("no such file: {display}"))
        }
        Err(e) => return ToolOutput::error(format!("could not read {display}: {e}")),
    };
    if meta.is_dir() {
        return list_dir(target, display);
    }
    match read_file(target, display, offset, limit, meta.len()) {
        Ok(out) => out,
        Err(e) => ToolOutput::error(format!("could not read {display}: {e}")),
    }
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

/// Reads the requested lines of a regular file, refusing binary content.
fn read_file(
    target: &Path,
    display: &str,
    offset: usize,
    limit: usize,
    size: u64,
) -> io::Result<ToolOutput> {
    let mut file = File::open(target)?;
    let mut head = Vec::with_capacity(BINARY_SNIFF_BYTES);
    (&mut file)
        .take(BINARY_SNIFF_BYTES as u64)
        .read_to_end(&mut head)?;
    if head.contains(&0) {
        return Ok(ToolOutput::error(format!(
            "{display} is a binary file ({size} bytes); read only shows text"
        )));
    }
    let reader = BufReader::new(io::Cursor::new(head).chain(file));
    let page = read_page(reader, offset, limit, MAX_OUTPUT_BYTES - NOTE_ROOM)?;
    Ok(render_page(page, display, offset))
}

/// The lines of one call, and what is needed to describe the cut.
#[derive(Debug)]
struct Page {
    text: String,
    /// Lines shown (0 when `offset` is past the end).
    shown: usize,
    /// Lines in the whole file.
    total: usize,
    /// Whether the last line shown was cut in the middle because it alone was too long.
    cut_line: bool,
    /// Whether lines were left out because of the byte limit (rather than `limit`).
    byte_limited: bool,
}

/// Collects up to `limit` lines from line `offset` on, at most `max_bytes`, and counts all lines.
fn read_page(
    mut reader: impl BufRead,
    offset: usize,
    limit: usize,
    max_bytes: usize,
) -> io::Result<Page> {
    let mut page = Page {
        text: String::new(),
        shown: 0,
        total: 0,
        cut_line: false,
        byte_limited: false,
    };
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Ok(page);
        }
        page.total += 1;
        if page.total < offset {
            continue;
        }
        if page.shown >= limit || page.byte_limited {
            page.total += count_lines(&mut reader, line.ends_with(b"\n"))?;
            return Ok(page);
        }
        let text = String::from_utf8_lossy(&line);
        if page.text.len() + text.len() <= max_bytes {
            page.text.push_str(&text);
            page.shown += 1;
        } else if page.shown == 0 {
            page.text = truncate_middle(&text, max_bytes);
            page.shown = 1;
            page.cut_line = true;
            page.byte_limited = true;
        } else {
            page.byte_limited = true;
            page.total += count_lines(&mut reader, line.ends_with(b"\n"))?;
            return Ok(page);
        }
    }
}

/// Counts the lines left in `reader`; `at_line_start` tells whether the previous byte ended a line.
fn count_lines(reader: &mut impl BufRead, mut at_line_start: bool) -> io::Result<usize> {
    let mut lines = 0;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(lines);
        }
        let n = buf.len();
        for &b in buf {
            if at_line_start {
                lines += 1;
            }
            at_line_start = b == b'\n';
        }
        reader.consume(n);
    }
}

/// The page text plus a note when anything was left out.
fn render_page(page: Page, display: &str, offset: usize) -> ToolOutput {
    if page.total == 0 {
        return ToolOutput::ok(format!("[{display} is empty]"));
    }
    if page.shown == 0 {
        return ToolOutput::error(format!(
            "offset {offset} is past the end of {display} ({} lines)",
            page.total
        ));
    }
    let last = offset + page.shown - 1;
    let mut text = page.text;
    let mut notes = Vec::new();
    if page.cut_line {
        notes.push(format!(
            "line {last} is longer than the output limit and was cut in the middle"
        ));
    }
    if last < page.total {
        let why = if page.byte_limited {
            " (output limit reached)"
        } else {
            ""
        };
        notes.push(format!(
            "showing lines {offset}-{last} of {}{why}; call read with offset={} to continue",
            page.total,
            last + 1
        ));
    }
    if !notes.is_empty() {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!("[{}]", notes.join("; ")));
    }
    ToolOutput::ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempDir;

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

    #[test]
    fn single_overlong_line_is_cut_in_the_middle() {
        let text = format!("{}\nshort\n", "y".repeat(500));
        let page = read_page(io::Cursor::new(text), 1, 10, 100).unwrap();
        assert!(page.cut_line);
        assert_eq!((page.shown, page.total), (1, 2));
        let out = render_page(page, "f", 1);
        assert!(out.content.contains("omitted"), "{}", out.content);
        assert!(out.content.contains("offset=2"), "{}", out.content);
    }

    #[test]
    fn counts_last_line_without_newline() {
        let page = read_page(io::Cursor::new("a\nb\nc"), 1, 1, 1000).unwrap();
        assert_eq!((page.shown, page.total), (1, 3));
        let page = read_page(io::Cursor::new("a\nb\nc\n"), 1, 1, 1000).unwrap();
        assert_eq!(page.total, 3);
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
