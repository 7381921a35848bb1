//! The page `read` shows: up to `limit` lines from `offset` on, at most a byte budget, with a
//! note saying what was left out and how to continue. Memory stays bounded whatever the file
//! holds: a line is read in chunks and only its first and last part are kept ([`Line`]), so a
//! single 300 MB line costs a few hundred KiB and is shown cut in the middle.

use std::borrow::Cow;
use std::io::{self, BufRead, Read};

use crate::vocab::protocol::ToolOutput;
use crate::vocab::text::truncate_middle;

/// Bytes taken from the reader per step while looking for the end of a line.
const CHUNK: u64 = 64 * 1024;

/// The lines of one call, and what is needed to describe the cut.
#[derive(Debug)]
pub(super) struct Page {
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

/// One line held in bounded memory: its first `keep` bytes, its last bytes (between `keep` and
/// twice that), and how many bytes in between were dropped.
struct Line {
    keep: usize,
    head: Vec<u8>,
    tail: Vec<u8>,
    dropped: u64,
}

impl Line {
    fn new(keep: usize) -> Line {
        Line {
            keep,
            head: Vec::new(),
            tail: Vec::new(),
            dropped: 0,
        }
    }

    fn clear(&mut self) {
        self.head.clear();
        self.tail.clear();
        self.dropped = 0;
    }

    /// The line's length in bytes, dropped ones included.
    fn len(&self) -> u64 {
        (self.head.len() + self.tail.len()) as u64 + self.dropped
    }

    fn ends_with_newline(&self) -> bool {
        let last = self.tail.last().or(self.head.last());
        last == Some(&b'\n')
    }

    fn push(&mut self, mut chunk: &[u8]) {
        if self.tail.is_empty() {
            let take = self.keep.saturating_sub(self.head.len()).min(chunk.len());
            self.head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        self.tail.extend_from_slice(chunk);
        if self.tail.len() > 2 * self.keep {
            let cut = self.tail.len() - self.keep;
            self.tail.drain(..cut);
            self.dropped += cut as u64;
        }
    }

    /// The whole line as text, when nothing of it was dropped.
    fn whole(&self) -> Option<Cow<'_, str>> {
        if self.dropped > 0 {
            return None;
        }
        if self.tail.is_empty() {
            return Some(String::from_utf8_lossy(&self.head));
        }
        let all = [self.head.as_slice(), self.tail.as_slice()].concat();
        Some(Cow::Owned(String::from_utf8_lossy(&all).into_owned()))
    }

    /// The first and last `max / 2` bytes of a line too long to keep whole, with a note
    /// between them saying how much was left out.
    fn cut(&self, max: usize) -> String {
        let half = (max / 2).min(self.keep);
        let front = &self.head[..half.min(self.head.len())];
        let back = &self.tail[self.tail.len().saturating_sub(half)..];
        let omitted = self.len() - (front.len() + back.len()) as u64;
        format!(
            "{}\n[... {omitted} bytes of this line omitted ...]\n{}",
            lossy_front(front),
            lossy_back(back)
        )
    }
}

/// Text of bytes cut off at their end: a character split by the cut is dropped.
fn lossy_front(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Err(e) if e.error_len().is_none() => String::from_utf8_lossy(&bytes[..e.valid_up_to()]),
        _ => String::from_utf8_lossy(bytes),
    }
}

/// Text of bytes cut off at their start: continuation bytes of a split character are dropped.
fn lossy_back(bytes: &[u8]) -> Cow<'_, str> {
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|&&b| b & 0xC0 == 0x80)
        .count();
    String::from_utf8_lossy(&bytes[skip..])
}

/// Reads the next line into `line`; returns its length in bytes (0 at the end).
fn read_line(reader: &mut impl BufRead, line: &mut Line, chunk: &mut Vec<u8>) -> io::Result<u64> {
    line.clear();
    loop {
        chunk.clear();
        if reader.by_ref().take(CHUNK).read_until(b'\n', chunk)? == 0 {
            break;
        }
        line.push(chunk);
        if chunk.last() == Some(&b'\n') {
            break;
        }
    }
    Ok(line.len())
}

/// Collects up to `limit` lines from line `offset` on, at most `max_bytes`, and counts all lines.
pub(super) fn read_page(
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
    let mut line = Line::new(max_bytes);
    let mut chunk = Vec::new();
    loop {
        if read_line(&mut reader, &mut line, &mut chunk)? == 0 {
            return Ok(page);
        }
        page.total += 1;
        if page.total < offset {
            continue;
        }
        if page.shown >= limit || page.byte_limited {
            page.total += count_lines(&mut reader, line.ends_with_newline())?;
            return Ok(page);
        }
        let text = line.whole();
        match text {
            Some(text) if page.text.len() + text.len() <= max_bytes => {
                page.text.push_str(&text);
                page.shown += 1;
                continue;
            }
            Some(text) if page.shown == 0 => page.text = truncate_middle(&text, max_bytes),
            None if page.shown == 0 => page.text = line.cut(max_bytes),
            _ => {
                page.byte_limited = true;
                page.total += count_lines(&mut reader, line.ends_with_newline())?;
                return Ok(page);
            }
        }
        page.shown = 1;
        page.cut_line = true;
        page.byte_limited = true;
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
pub(super) fn render_page(page: Page, display: &str, offset: usize) -> ToolOutput {
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

    /// A reader of `n` bytes of `byte` then `rest`, produced as it is read (never held whole).
    fn long_line(n: u64, byte: u8, rest: &'static [u8]) -> impl BufRead {
        io::BufReader::new(io::repeat(byte).take(n).chain(rest))
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
    fn huge_line_keeps_its_ends_and_counts_what_was_left_out() {
        let reader = long_line(10_000_000, b'x', b"END\nnext\n");
        let page = read_page(reader, 1, 10, 1000).unwrap();
        assert!(page.cut_line && page.byte_limited);
        assert_eq!((page.shown, page.total), (1, 2));
        let (front, back) = page.text.split_once('\n').unwrap();
        assert_eq!(front, "x".repeat(500));
        let omitted = 10_000_004 - 1000;
        assert!(
            back.starts_with(&format!("[... {omitted} bytes of this line omitted ...]\n")),
            "{back}"
        );
        assert!(back.ends_with("xEND\n"), "{back}");
        let out = render_page(page, "big", 1);
        assert!(out
            .content
            .ends_with("call read with offset=2 to continue]"));
    }

    #[test]
    fn huge_lines_before_the_offset_are_skipped() {
        let reader = long_line(5_000_000, b'z', b"\nwanted\n");
        let page = read_page(reader, 2, 10, 1000).unwrap();
        assert_eq!(page.text, "wanted\n");
        assert_eq!((page.shown, page.total, page.cut_line), (1, 2, false));
    }

    #[test]
    fn line_memory_stays_bounded() {
        let mut line = Line::new(100);
        let mut chunk = Vec::new();
        let mut reader = long_line(1_000_000, b'a', b"\n");
        assert_eq!(
            read_line(&mut reader, &mut line, &mut chunk).unwrap(),
            1_000_001
        );
        assert!(line.head.len() + line.tail.len() <= 300);
        assert!(line.ends_with_newline());
        assert!(line.whole().is_none());
    }

    #[test]
    fn line_just_over_the_budget_is_cut_from_its_whole_text() {
        let text = format!("{}\n", "q".repeat(150));
        let page = read_page(io::Cursor::new(text), 1, 10, 100).unwrap();
        assert!(page.cut_line);
        assert!(page.text.contains("omitted"), "{}", page.text);
        assert!(page.text.len() < 200, "{}", page.text);
    }

    #[test]
    fn cut_never_splits_a_character() {
        let mut line = Line::new(10);
        line.push("é".repeat(20).as_bytes());
        line.push("é".repeat(19).as_bytes());
        // Five bytes from each end: two and a half characters.
        let text = line.cut(10);
        assert!(!text.contains('\u{fffd}'), "{text}");
        assert!(text.starts_with("éé\n[... "), "{text}");
        assert!(text.ends_with(" omitted ...]\néé"), "{text}");
    }

    #[test]
    fn counts_last_line_without_newline() {
        let page = read_page(io::Cursor::new("a\nb\nc"), 1, 1, 1000).unwrap();
        assert_eq!((page.shown, page.total), (1, 3));
        let page = read_page(io::Cursor::new("a\nb\nc\n"), 1, 1, 1000).unwrap();
        assert_eq!(page.total, 3);
    }
}
