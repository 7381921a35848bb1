//! One block's inline markdown (emphasis, strong, strikethrough, inline code, links) turned
//! into styled words by `pulldown-cmark`, and those words wrapped at a width without breaking
//! a word (a word wider than the whole row is the only one cut). Each word remembers where it
//! starts in the source, so a long line still streaming can be committed row by row.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// How a piece of text looks; several can hold at once (bold italic code…).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Look(u8);

impl Look {
    pub const PLAIN: Look = Look(0);
    pub const BOLD: Look = Look(1);
    pub const ITALIC: Look = Look(2);
    pub const CODE: Look = Look(4);
    pub const STRIKE: Look = Look(8);
    pub const LINK: Look = Look(16);
    pub const DIM: Look = Look(32);
    pub const UNDERLINE: Look = Look(64);

    pub fn with(self, other: Look) -> Look {
        Look(self.0 | other.0)
    }

    pub fn has(self, other: Look) -> bool {
        self.0 & other.0 == other.0
    }

    /// `text` in this look (unchanged without colour).
    pub fn paint(self, text: &str, colour: bool) -> String {
        if !colour || self == Look::PLAIN || text.is_empty() {
            return text.to_string();
        }
        use anstyle::{AnsiColor, Effects};
        let mut style = anstyle::Style::new();
        let mut effects = Effects::new();
        for (look, effect) in [
            (Look::BOLD, Effects::BOLD),
            (Look::ITALIC, Effects::ITALIC),
            (Look::STRIKE, Effects::STRIKETHROUGH),
            (Look::DIM, Effects::DIMMED),
            (Look::UNDERLINE, Effects::UNDERLINE),
            (Look::LINK, Effects::UNDERLINE),
        ] {
            if self.has(look) {
                effects = effects.insert(effect);
            }
        }
        style = style.effects(effects);
        if self.has(Look::CODE) {
            style = style.fg_color(Some(AnsiColor::Yellow.into()));
        } else if self.has(Look::LINK) {
            style = style.fg_color(Some(AnsiColor::Blue.into()));
        }
        format!("{}{text}{}", style.render(), style.render_reset())
    }
}

/// A word: fragments with no space between them (`**bold**,` is two), its width in columns,
/// where it starts in the source (when the text is the source's own), and whether a space
/// comes before it.
#[derive(Debug, Clone, Default)]
pub struct Word {
    pub frags: Vec<(String, Look)>,
    pub width: usize,
    pub src: Option<usize>,
    pub space_before: bool,
}

impl Word {
    /// Whether a markdown marker shows as literal text in it: an emphasis or a code span
    /// still open while the line streams (it may close later, so the word must not be
    /// committed yet).
    pub fn has_open_marker(&self) -> bool {
        self.frags.iter().any(|(t, look)| {
            !look.has(Look::CODE) && (t.contains(['*', '`', '[', '~']) || t.starts_with('_'))
        })
    }
}

/// Collects words from styled text.
#[derive(Default)]
struct Words {
    words: Vec<Word>,
    /// The next text starts a new word (a space came).
    space: bool,
}

impl Words {
    fn push(&mut self, text: &str, look: Look, src: Option<usize>) {
        let mut at = 0;
        for piece in text.split_inclusive(char::is_whitespace) {
            let word = piece.trim_end_matches(char::is_whitespace);
            let spaced = word.len() < piece.len();
            if !word.is_empty() {
                let start = src.map(|s| s + at);
                match self.words.last_mut() {
                    Some(last) if !self.space => {
                        last.frags.push((word.to_string(), look));
                        last.width += word.width();
                    }
                    _ => self.words.push(Word {
                        frags: vec![(word.to_string(), look)],
                        width: word.width(),
                        src: start,
                        space_before: !self.words.is_empty(),
                    }),
                }
                self.space = false;
            }
            if spaced {
                self.space = true;
            }
            at += piece.len();
        }
    }
}

/// Escapes what would make pulldown-cmark read a block's content as another block (`- x`,
/// `1. x`, `# x`, `> x`): the content is inline text already.
fn guard(content: &str) -> (String, usize) {
    let bytes = content.as_bytes();
    let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    let starts_block = match bytes.first() {
        Some(b'-' | b'+' | b'*' | b'#') => bytes.get(1).is_none_or(|b| *b == b' '),
        Some(b'>') => true,
        Some(b'~' | b'`') => content.starts_with("```") || content.starts_with("~~~"),
        _ => digits > 0 && matches!(bytes.get(digits), Some(b'.' | b')')),
    };
    match (starts_block, digits) {
        (false, _) => (content.to_string(), 0),
        (true, 0) => (format!("\\{content}"), 1),
        (true, d) => (format!("{}\\{}", &content[..d], &content[d..]), 1),
    }
}

/// The words of one block's inline content, each fragment in its look (`base` added to all).
/// A word's `src` is its byte offset in `content`.
pub fn words(content: &str, base: Look) -> Vec<Word> {
    let (source, shift) = guard(content);
    let mut out = Words::default();
    let mut look = base;
    let mut links: Vec<String> = Vec::new();
    let parser = Parser::new_ext(&source, Options::ENABLE_STRIKETHROUGH).into_offset_iter();
    for (event, range) in parser {
        // Offsets are in `content` when the text is the source's own (no escape in it).
        let verbatim = |text: &str| {
            (source.get(range.clone()) == Some(text))
                .then(|| range.start.checked_sub(shift))
                .flatten()
        };
        match event {
            Event::Text(t) => out.push(&t, look, verbatim(&t)),
            Event::Code(c) => out.push(&c, look.with(Look::CODE), None),
            Event::Html(h) | Event::InlineHtml(h) => out.push(&h, look, verbatim(&h)),
            Event::SoftBreak | Event::HardBreak => out.space = true,
            Event::TaskListMarker(done) => out.push(if done { "☑" } else { "☐" }, look, None),
            Event::Start(tag) => match tag {
                Tag::Emphasis => look = look.with(Look::ITALIC),
                Tag::Strong => look = look.with(Look::BOLD),
                Tag::Strikethrough => look = look.with(Look::STRIKE),
                Tag::Link { dest_url, .. } => {
                    look = look.with(Look::LINK);
                    links.push(dest_url.to_string());
                }
                _ => {}
            },
            Event::End(tag) => {
                let off = match tag {
                    TagEnd::Emphasis => Look::ITALIC,
                    TagEnd::Strong => Look::BOLD,
                    TagEnd::Strikethrough => Look::STRIKE,
                    TagEnd::Link => {
                        let url = links.pop().unwrap_or_default();
                        let shown = out.words.last().map(word_text).unwrap_or_default();
                        look = Look(look.0 & !Look::LINK.0);
                        if !url.is_empty() && !shown.contains(&url) {
                            out.space = true;
                            out.push(&format!("({url})"), base.with(Look::DIM), None);
                        }
                        continue;
                    }
                    _ => Look::PLAIN,
                };
                look = Look((look.0 & !off.0) | (base.0 & off.0));
            }
            _ => {}
        }
    }
    out.words
}

fn word_text(w: &Word) -> String {
    w.frags.iter().map(|(t, _)| t.as_str()).collect()
}

/// Words laid out in rows of at most `width` columns (`None`: one row). A word wider than a
/// row is cut across rows; no other word is broken.
pub fn wrap(words: Vec<Word>, width: Option<usize>) -> Vec<Vec<Word>> {
    let Some(width) = width.map(|w| w.max(8)) else {
        return vec![words];
    };
    let mut rows: Vec<Vec<Word>> = Vec::new();
    let mut row: Vec<Word> = Vec::new();
    let mut used = 0;
    for word in words {
        for piece in cut(word, width) {
            let gap = usize::from(!row.is_empty() && piece.space_before);
            if !row.is_empty() && used + gap + piece.width > width {
                rows.push(std::mem::take(&mut row));
                used = piece.width;
            } else {
                used += gap + piece.width;
            }
            row.push(piece);
        }
    }
    rows.push(row);
    rows
}

/// A word wider than `width` in pieces that fit; any other word as it is.
fn cut(word: Word, width: usize) -> Vec<Word> {
    if word.width <= width {
        return vec![word];
    }
    let mut pieces = Vec::new();
    let mut current = Word {
        src: word.src,
        space_before: word.space_before,
        ..Word::default()
    };
    for (text, look) in word.frags {
        for c in text.chars() {
            let w = c.width().unwrap_or(0);
            if current.width + w > width {
                pieces.push(std::mem::take(&mut current));
            }
            match current.frags.last_mut() {
                Some((t, l)) if *l == look => t.push(c),
                _ => current.frags.push((c.to_string(), look)),
            }
            current.width += w;
        }
    }
    pieces.push(current);
    pieces
}

/// A row as terminal text: `prefix`, then the words with one space where the source had one.
pub fn render_row(prefix: &str, row: &[Word], colour: bool) -> String {
    let mut out = prefix.to_string();
    for (i, word) in row.iter().enumerate() {
        if i > 0 && word.space_before {
            out.push(' ');
        }
        for (text, look) in &word.frags {
            out.push_str(&look.paint(text, colour));
        }
    }
    out
}
