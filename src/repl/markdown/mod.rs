//! Assistant markdown for the terminal, rendered as it streams ([`Markdown`]). Text is
//! rendered a line at a time, when its newline arrives: headings, lists (`•`, numbers, task
//! boxes), quotes, rules, tables (as written), and fenced code blocks with their language
//! shown on the fence's line; inline emphasis, code and links by [`inline`]. Lines are
//! wrapped at the terminal's width without breaking words, the width read again for every
//! line so a resize re-flows what is still to come. A paragraph line that grows past the
//! width is committed row by row as it fills, so a long line shows while it streams.
//!
//! Without colour (a pipe, `NO_COLOR`) the layout is the same and markers are still taken
//! out, except a heading's `#`s, which then are the only sign of a heading.

mod inline;

use inline::{render_row, words, wrap, Look};
use unicode_width::UnicodeWidthStr;

/// A streaming markdown renderer: feed it text with [`Markdown::push`], take the rows.
pub struct Markdown {
    colour: bool,
    /// The width to wrap at, read for every line (`None`: no wrapping).
    width: fn() -> Option<usize>,
    /// The width read when the line being rendered began (not once per delta).
    cols: Option<usize>,
    /// Text of the line not ended yet.
    pending: String,
    /// An open code fence: its character and length.
    fence: Option<(char, usize)>,
    /// Rows of the line still streaming were committed: the rest goes on with this prefix
    /// and look.
    cont: Option<(String, Look)>,
    /// The last row printed was blank (blank lines are folded into one).
    blank: bool,
    /// Nothing was printed yet for this message (leading blank lines are dropped).
    fresh: bool,
}

/// How one source line shows.
struct Block<'a> {
    /// Prefix of the first row and of the rows after it.
    first: String,
    rest: String,
    look: Look,
    content: &'a str,
    /// Byte offset of `content` in the line.
    at: usize,
    /// Wrapped at the width (tables are not).
    wraps: bool,
}

impl Markdown {
    pub fn new(colour: bool, width: fn() -> Option<usize>) -> Self {
        Markdown {
            colour,
            width,
            cols: width(),
            pending: String::new(),
            fence: None,
            cont: None,
            blank: false,
            fresh: true,
        }
    }

    /// Takes streamed text; returns the rows now complete.
    pub fn push(&mut self, delta: &str) -> Vec<String> {
        if self.pending.is_empty() {
            self.cols = (self.width)();
        }
        self.pending.push_str(delta);
        let mut rows = Vec::new();
        while let Some(i) = self.pending.find('\n') {
            let line: String = self.pending.drain(..=i).collect();
            self.line(line.trim_end_matches(['\n', '\r']), &mut rows);
            self.cols = (self.width)();
        }
        self.commit_long(&mut rows);
        rows
    }

    /// The message ended: the rest of its text, and a code block left open closed.
    pub fn finish(&mut self) -> Vec<String> {
        let mut rows = Vec::new();
        if !self.pending.is_empty() {
            let line = std::mem::take(&mut self.pending);
            self.line(&line, &mut rows);
        }
        if self.fence.take().is_some() {
            rows.push(self.dim("──"));
        }
        self.cont = None;
        self.blank = false;
        self.fresh = true;
        rows
    }

    fn dim(&self, text: &str) -> String {
        Look::DIM.paint(text, self.colour)
    }

    fn emit(&mut self, row: String, rows: &mut Vec<String>) {
        self.blank = row.is_empty();
        self.fresh = false;
        rows.push(row);
    }

    /// One whole source line.
    fn line(&mut self, line: &str, rows: &mut Vec<String>) {
        if let Some((c, len)) = self.fence {
            let t = line.trim();
            if t.len() >= len && t.chars().all(|x| x == c) {
                self.fence = None;
                let footer = self.dim("──");
                self.emit(footer, rows);
            } else {
                let code = Look::CODE.paint(&line.replace('\t', "    "), self.colour);
                self.emit(code, rows);
            }
            return;
        }
        if let Some((prefix, look)) = self.cont.take() {
            let block = Block {
                first: prefix.clone(),
                rest: prefix,
                look,
                content: line,
                at: 0,
                wraps: true,
            };
            for row in self.layout(&block, None).0 {
                self.emit(row, rows);
            }
            return;
        }
        if line.trim().is_empty() {
            if !self.blank && !self.fresh {
                self.emit(String::new(), rows);
            }
            return;
        }
        if let Some((c, len, info)) = fence_open(line) {
            self.fence = Some((c, len));
            let header = if info.is_empty() {
                "──".to_string()
            } else {
                format!("── {info}")
            };
            let header = self.dim(&header);
            self.emit(header, rows);
            return;
        }
        if is_rule(line) {
            let n = self.cols.unwrap_or(40).min(60);
            let rule = self.dim(&"─".repeat(n));
            self.emit(rule, rows);
            return;
        }
        let block = self.block(line);
        for row in self.layout(&block, None).0 {
            self.emit(row, rows);
        }
    }

    /// What kind of line `line` is, and how its rows start.
    fn block<'a>(&self, line: &'a str) -> Block<'a> {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let plain = |first: String, rest: String, look, at: usize| Block {
            first,
            rest,
            look,
            content: &line[at..],
            at,
            wraps: true,
        };
        let hashes = trimmed.bytes().take_while(|b| *b == b'#').count();
        if (1..=6).contains(&hashes) && trimmed[hashes..].starts_with(' ') {
            let at = line.len() - trimmed[hashes..].trim_start().len();
            let (first, look) = match (self.colour, hashes) {
                (false, _) => (format!("{} ", &trimmed[..hashes]), Look::PLAIN),
                (true, 1) => (String::new(), Look::BOLD.with(Look::UNDERLINE)),
                (true, _) => (String::new(), Look::BOLD),
            };
            let rest = " ".repeat(first.width());
            return plain(first, rest, look, at);
        }
        if let Some(rest) = trimmed.strip_prefix('>') {
            let at = line.len() - rest.trim_start().len();
            let bar = self.dim("│ ");
            return plain(bar.clone(), bar, Look::ITALIC, at);
        }
        if let Some(marker) = list_marker(trimmed) {
            let at = indent.len() + marker.len();
            let shown = match marker.trim() {
                "-" | "*" | "+" => "•".to_string(),
                m => m.to_string(),
            };
            let first = format!("{indent}{shown} ");
            let rest = " ".repeat(first.width());
            return plain(first, rest, Look::PLAIN, at);
        }
        if trimmed.starts_with('|') {
            let mut block = plain(String::new(), String::new(), Look::PLAIN, 0);
            block.wraps = false;
            if trimmed.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ')) {
                block.look = Look::DIM;
            }
            return block;
        }
        let indent = &indent[..indent.len().min(4)];
        plain(
            indent.to_string(),
            indent.to_string(),
            Look::PLAIN,
            indent.len(),
        )
    }

    /// The block's rows; with `keep_last`, the source offset where the last row starts
    /// (`None` when it cannot be told or a marker is still open before it).
    fn layout(&self, block: &Block, keep_last: Option<()>) -> (Vec<String>, Option<usize>) {
        let words = words(block.content, block.look);
        let width = if block.wraps {
            self.cols
                .map(|w| w.saturating_sub(block.first.width().max(block.rest.width())))
        } else {
            None
        };
        let rows = wrap(words, width);
        let mut split = None;
        let mut shown = rows.as_slice();
        if keep_last.is_some() {
            let (last, done) = rows
                .split_last()
                .map_or((None, &rows[..0]), |(l, d)| (Some(l), d));
            // A marker still open anywhere may change how the words before it fit.
            let open = rows.iter().flatten().any(inline::Word::has_open_marker);
            split = last
                .and_then(|l| l.first())
                // Split only outside any span: before a word in the block's own look.
                .filter(|w| w.frags.iter().all(|(_, look)| *look == block.look))
                .and_then(|w| w.src)
                .filter(|_| !open && !done.is_empty())
                .map(|s| s + block.at);
            shown = if split.is_some() { done } else { &rows[..0] };
        }
        let out = shown
            .iter()
            .enumerate()
            .map(|(i, row)| {
                let prefix = if i == 0 { &block.first } else { &block.rest };
                render_row(prefix, row, self.colour)
            })
            .collect();
        (out, split)
    }

    /// A paragraph line still streaming that is wider than the terminal: its full rows are
    /// printed now, the last (still filling) kept.
    fn commit_long(&mut self, rows: &mut Vec<String>) {
        let Some(width) = self.cols else { return };
        if self.fence.is_some() || self.pending.width() <= width || self.pending.contains('|') {
            return;
        }
        let pending = std::mem::take(&mut self.pending);
        let cont = self.cont.take();
        let block = match &cont {
            Some((prefix, look)) => Block {
                first: prefix.clone(),
                rest: prefix.clone(),
                look: *look,
                content: &pending,
                at: 0,
                wraps: true,
            },
            None if fence_open(&pending).is_some() || is_rule(&pending) => {
                self.pending = pending;
                return;
            }
            None => self.block(&pending),
        };
        let (done, split) = self.layout(&block, Some(()));
        let Some(at) = split else {
            // Not safe to split yet: wait for more text or the newline.
            self.cont = cont;
            self.pending = pending;
            return;
        };
        self.cont = Some((block.rest.clone(), block.look));
        for row in done {
            self.emit(row, rows);
        }
        self.pending = pending[at..].to_string();
    }
}

/// An opening code fence: its character, length and info string (the language).
fn fence_open(line: &str) -> Option<(char, usize, &str)> {
    let t = line.trim_start();
    let c = t.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let len = t.chars().take_while(|x| *x == c).count();
    let info = t[len..].trim();
    (len >= 3 && !(c == '`' && info.contains('`'))).then_some((c, len, info))
}

/// `---`, `***`, `___` (three or more, spaces allowed).
fn is_rule(line: &str) -> bool {
    let t: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    t.len() >= 3 && ['-', '*', '_'].iter().any(|m| t.chars().all(|c| c == *m))
}

/// The list marker a line starts with, with its space: `- `, `* `, `+ `, `1. `, `2) `.
fn list_marker(t: &str) -> Option<&str> {
    let b = t.as_bytes();
    if matches!(b.first(), Some(b'-' | b'*' | b'+')) && b.get(1) == Some(&b' ') {
        return Some(&t[..2]);
    }
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if (1..=9).contains(&digits)
        && matches!(b.get(digits), Some(b'.' | b')'))
        && b.get(digits + 1) == Some(&b' ')
    {
        return Some(&t[..digits + 2]);
    }
    None
}

#[cfg(test)]
mod tests;
