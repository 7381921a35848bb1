//! Small text helpers shared by tools, providers and renderers: cutting long text in the
//! middle with a note, or to its end, on character boundaries; and [`inert`](mod@inert), the one rule
//! that makes text mypi did not write itself safe for a terminal.

pub mod inert;

pub use inert::{inert, inert_json, inert_sgr};

/// The length of `value` as compact JSON text, counted without building the text (a
/// conversation or a schema can be large); 0 for a value that does not serialize.
pub fn json_len<T: serde::Serialize + ?Sized>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        Err(_) => 0,
    }
}

/// Keeps the first and last part of `text` so that the result has at most about `max` bytes,
/// with a note in the middle saying how much was left out. Text within the limit is returned
/// unchanged.
pub fn truncate_middle(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let keep = max / 2;
    let head_end = floor_char_boundary(text, keep);
    let tail_start = ceil_char_boundary(text, text.len() - keep);
    let omitted = tail_start - head_end;
    let omitted_lines = text[head_end..tail_start].matches('\n').count();
    format!(
        "{}\n[... {omitted} bytes ({omitted_lines} lines) omitted ...]\n{}",
        &text[..head_end],
        &text[tail_start..]
    )
}

/// `text` on one line (runs of whitespace as one space), cut to `max` characters with `…`.
pub fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

/// `text` with its first letter upper case.
pub fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The last `max` bytes of `text` or fewer (starting on a character boundary).
pub fn tail_bytes(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    &text[ceil_char_boundary(text, text.len() - max)..]
}

/// `line` in rows of at most `width` columns, broken between words (a word wider than a row
/// is cut); rows after the first keep the line's indent.
pub fn wrap_line(line: &str, width: usize) -> Vec<String> {
    use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};
    if line.width() <= width {
        return vec![line.to_string()];
    }
    let indent = &line[..line.len() - line.trim_start().len()];
    let width = width.max(indent.width() + 8);
    let mut rows = Vec::new();
    let mut row = indent.to_string();
    let mut used = indent.width();
    for word in line.trim_start().split(' ') {
        let w = word.width();
        let gap = usize::from(used > indent.width());
        if used + gap + w > width && used > indent.width() {
            rows.push(std::mem::replace(&mut row, indent.to_string()));
            used = indent.width();
        } else if gap == 1 {
            row.push(' ');
            used += 1;
        }
        for c in word.chars() {
            let cw = c.width().unwrap_or(0);
            if used + cw > width {
                rows.push(std::mem::replace(&mut row, indent.to_string()));
                used = indent.width();
            }
            row.push(c);
            used += cw;
        }
    }
    rows.push(row);
    rows
}

/// `text` with every character outside `[A-Za-z0-9_]` as `_` (the characters tool names
/// may have everywhere).
pub fn identifier(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `1 line`, `2 lines`: a count and its noun, singular or plural (nouns with a plain `s`).
pub fn plural(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Parts as a sentence lists them: `a`, `a and b`, `a, b and c`.
pub fn and_list(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// `16 MiB`, `512 KiB`, `100 bytes` (in `mypi-crossing`, whose limit messages say sizes too).
pub use mypi_crossing::mib;

/// Levenshtein distance over characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

pub fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

pub fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    #[test]
    fn json_len_is_the_length_of_the_json_text() {
        let v = serde_json::json!({"a": [1, "two", null], "é": "x\n"});
        assert_eq!(super::json_len(&v), v.to_string().len());
        assert_eq!(super::json_len("plain"), "\"plain\"".len());
    }

    use super::*;

    #[test]
    fn lists_read_as_a_sentence() {
        let parts = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(and_list(&parts(&[])), "");
        assert_eq!(and_list(&parts(&["a"])), "a");
        assert_eq!(and_list(&parts(&["a", "b"])), "a and b");
        assert_eq!(and_list(&parts(&["a", "b", "c"])), "a, b and c");
    }

    #[test]
    fn the_tail_starts_on_a_character() {
        assert_eq!(tail_bytes("abc", 5), "abc");
        assert_eq!(tail_bytes("aé", 1), "");
        assert_eq!(tail_bytes("aéz", 3), "éz");
    }

    #[test]
    fn lines_wrap_between_words_and_keep_their_indent() {
        assert_eq!(wrap_line("short", 20), ["short"]);
        assert_eq!(
            wrap_line("  one two three four five", 14),
            ["  one two", "  three four", "  five"]
        );
        assert_eq!(
            wrap_line("abcdefghijklmnop q", 8),
            ["abcdefgh", "ijklmnop", "q"]
        );
    }

    #[test]
    fn counts_read_well() {
        assert_eq!(plural(1u64, "line"), "1 line");
        assert_eq!(plural(0u64, "line"), "0 lines");
        assert_eq!(plural(3u32, "diff line"), "3 diff lines");
    }

    #[test]
    fn short_text_is_unchanged() {
        assert_eq!(truncate_middle("abc", 10), "abc");
    }

    #[test]
    fn long_text_keeps_both_ends_with_a_note() {
        let text = format!("{}{}", "a\n".repeat(100), "z".repeat(100));
        let out = truncate_middle(&text, 40);
        assert!(out.starts_with("a\na\n"));
        assert!(out.ends_with("zzzz"));
        assert!(out.contains("bytes ("), "{out}");
        assert!(out.len() < 120);
    }

    #[test]
    fn multibyte_text_is_cut_on_boundaries() {
        let text = "é".repeat(100);
        let out = truncate_middle(&text, 21);
        assert!(out.contains("omitted"));
    }
}
