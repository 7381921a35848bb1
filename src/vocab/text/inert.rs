//! The one rule that makes text mypi did not write itself safe to show on a terminal.
//!
//! Model text, tool output, MCP strings, file and session names, script notices and dialog
//! texts may carry control characters: an OSC 52 clipboard write, an OSC 0 title, an OSC 8
//! hyperlink, a screen clear, a cursor jump, a carriage return that hides what came before.
//! [`inert`] shows every control character visibly instead of emitting it:
//!
//! - C0 controls and DEL in caret notation (`ESC` is `^[`, `BEL` is `^G`, `CR` is `^M`,
//!   DEL is `^?`), except newline and tab, which stay; a `CR` right before a newline (a
//!   Windows line ending) is dropped;
//! - C1 controls (U+0080..U+009F, among them the one-character CSI U+009B) as `\x9b`;
//! - the bidirectional overrides and isolates (U+202A..U+202E, U+2066..U+2069), which can
//!   make a line read differently from what it is, as `<U+202E>`.
//!
//! [`inert_sgr`] is the same rule for text whose colours may stay: a plain SGR sequence
//! (`ESC [ 1;31 m`) is parsed and emitted again by mypi (only the attributes that change
//! colour or weight, never blink or concealed text), or dropped; every other escape sequence
//! is shown visibly like any control character. Colours it kept are reset at the end.
//!
//! Every front end's writer goes through these functions (the REPL's printer, print mode's
//! stdout and stderr on a terminal); mypi's own escape codes (its colours, the status block,
//! bracketed paste, the window title) are added after, by the writer itself.

use std::borrow::Cow;
use std::fmt::Write;

/// SGR "reset".
pub const RESET: &str = "\x1b[0m";

/// Whether `c` is shown visibly by [`inert`] (newline and tab are not).
fn is_unsafe(c: char) -> bool {
    match c {
        '\n' | '\t' => false,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

/// Whether `text` has nothing [`inert`] would change (a fast scan over bytes).
fn is_inert(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' | b'\t' => {}
            0..=0x1f | 0x7f => return false,
            // U+0080..U+009F.
            0xc2 if matches!(bytes.get(i + 1), Some(0x80..=0x9f)) => return false,
            // U+202A..U+202E and U+2066..U+2069.
            0xe2 => match (bytes.get(i + 1), bytes.get(i + 2)) {
                (Some(0x80), Some(0xaa..=0xae)) | (Some(0x81), Some(0xa6..=0xa9)) => return false,
                _ => {}
            },
            _ => {}
        }
        i += 1;
    }
    true
}

/// Appends `c` as [`inert`] shows it.
fn push_visible(out: &mut String, c: char) {
    match c {
        c if !is_unsafe(c) => out.push(c),
        '\u{7f}' => out.push_str("^?"),
        c if (c as u32) < 0x20 => {
            out.push('^');
            out.push(char::from(c as u8 + 0x40));
        }
        c if (c as u32) <= 0x9f => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c => {
            let _ = write!(out, "<U+{:04X}>", c as u32);
        }
    }
}

/// `text` with every control character but newline and tab shown visibly (see the module
/// docs); text that has none is borrowed as it is.
pub fn inert(text: &str) -> Cow<'_, str> {
    if is_inert(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        push_visible(&mut out, c);
    }
    Cow::Owned(out)
}

/// [`inert`], but a plain SGR colour sequence is emitted again by mypi (`keep`) or dropped
/// (`!keep`) instead of shown; colours kept are reset at the end.
pub fn inert_sgr(text: &str, keep: bool) -> Cow<'_, str> {
    if is_inert(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut coloured = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '\x1b' {
            if let Some((params, len)) = sgr_at(rest) {
                if keep {
                    if let Some(open) = push_sgr(&mut out, params) {
                        coloured = open;
                    }
                }
                rest = &rest[len..];
                continue;
            }
        }
        rest = &rest[c.len_utf8()..];
        if c == '\r' && rest.starts_with('\n') {
            continue;
        }
        push_visible(&mut out, c);
    }
    if coloured {
        out.push_str(RESET);
    }
    Cow::Owned(out)
}

/// The parameters of the plain SGR sequence `text` starts with (`ESC [` digits and `;` `m`),
/// and the sequence's length.
fn sgr_at(text: &str) -> Option<(&str, usize)> {
    let body = text.strip_prefix("\x1b[")?;
    let end = body.find(|c: char| !(c.is_ascii_digit() || c == ';'))?;
    (body[end..].starts_with('m') && end <= 64).then(|| (&body[..end], 2 + end + 1))
}

/// Emits an SGR sequence with the attributes of `params` that only change colour or weight;
/// `None` when nothing was emitted, else whether colours are left on (not a plain reset).
fn push_sgr(out: &mut String, params: &str) -> Option<bool> {
    let mut kept: Vec<&str> = Vec::new();
    let mut parts = params.split(';').peekable();
    while let Some(p) = parts.next() {
        let n: u32 = match p {
            "" => 0,
            p => match p.parse() {
                Ok(n) => n,
                Err(_) => return None,
            },
        };
        match n {
            // Reset, bold, dim, italic, underline, reverse, strike, and their undoings
            // (21..=29 without 25 and 28: blink and conceal are not kept, nor undone).
            0..=4 | 7 | 9 | 21..=24 | 27 | 29 => kept.push(if p.is_empty() { "0" } else { p }),
            30..=37 | 39 | 40..=47 | 49 | 90..=97 | 100..=107 => kept.push(p),
            // 38/48;5;N and 38/48;2;R;G;B.
            38 | 48 => {
                let mode = parts.next();
                let count = match mode {
                    Some("5") => 1,
                    Some("2") => 3,
                    _ => return None,
                };
                let args: Vec<&str> = parts.by_ref().take(count).collect();
                let valid = args.len() == count && args.iter().all(|a| a.parse::<u8>().is_ok());
                if !valid {
                    return None;
                }
                kept.push(p);
                kept.extend(mode);
                kept.extend(args);
            }
            _ => {}
        }
    }
    if kept.is_empty() {
        return None;
    }
    out.push_str("\x1b[");
    out.push_str(&kept.join(";"));
    out.push('m');
    Some(kept != ["0"])
}

/// `text` for a JSON line that may reach a terminal: the characters [`inert`] shows visibly
/// that JSON leaves as they are (C1 controls, bidirectional overrides) as `\uXXXX` escapes.
/// Only valid for serialized JSON, where such characters can only be inside strings.
pub fn inert_json(json: &str) -> Cow<'_, str> {
    if is_inert(json) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if is_unsafe(c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed() {
        for t in [
            "",
            "plain",
            "two\nlines\tand a tab",
            "héllo 日本 \u{2028} ✓",
        ] {
            assert!(matches!(inert(t), Cow::Borrowed(_)), "{t:?}");
            assert!(matches!(inert_sgr(t, true), Cow::Borrowed(_)), "{t:?}");
        }
    }

    #[test]
    fn controls_are_shown_not_emitted() {
        assert_eq!(inert("a\x1b]52;c;aGk=\x07b"), "a^[]52;c;aGk=^Gb");
        assert_eq!(inert("\x1b]0;title\x07"), "^[]0;title^G");
        assert_eq!(
            inert("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"),
            "^[]8;;http://x^[\\link^[]8;;^[\\"
        );
        assert_eq!(inert("x\x1b[2J\x1b[10;5H"), "x^[[2J^[[10;5H");
        assert_eq!(inert("del\x7f bs\x08 nul\0"), "del^? bs^H nul^@");
        assert_eq!(inert("csi\u{9b}2J"), "csi\\x9b2J");
        assert_eq!(inert("a\u{202e}cba"), "a<U+202E>cba");
        assert_eq!(inert("crlf\r\nok\rX"), "crlf\nok^MX");
        assert_eq!(inert("\x1b[31mred"), "^[[31mred", "colours too");
    }

    #[test]
    fn colours_are_kept_or_dropped_and_the_rest_shown() {
        assert_eq!(
            inert_sgr("\x1b[1;31mred\x1b[0m ok", true),
            "\x1b[1;31mred\x1b[0m ok",
            "reset already"
        );
        assert_eq!(inert_sgr("\x1b[1mbold", true), "\x1b[1mbold\x1b[0m");
        assert_eq!(inert_sgr("\x1b[1;31mred\x1b[0m ok", false), "red ok");
        assert_eq!(inert_sgr("\x1b[mreset", true), "\x1b[0mreset");
        assert_eq!(
            inert_sgr("\x1b[38;5;208mo\x1b[48;2;1;2;3mb", true),
            "\x1b[38;5;208mo\x1b[48;2;1;2;3mb\x1b[0m"
        );
        // Blink and conceal go; a broken extended colour goes whole.
        assert_eq!(inert_sgr("\x1b[5;8;32mx", true), "\x1b[32mx\x1b[0m");
        assert_eq!(inert_sgr("\x1b[8mhidden", true), "hidden");
        assert_eq!(inert_sgr("\x1b[38;5;999mx", true), "x");
        // Anything but plain SGR is shown.
        assert_eq!(inert_sgr("a\x1b[2Jb", true), "a^[[2Jb");
        assert_eq!(inert_sgr("a\x1b[38:5:1mb", true), "a^[[38:5:1mb");
        assert_eq!(inert_sgr("a\x1b]0;t\x07", true), "a^[]0;t^G");
        assert_eq!(inert_sgr("end\x1b", true), "end^[");
        assert_eq!(inert_sgr("a\x1b[?25lb", false), "a^[[?25lb");
    }

    #[test]
    fn json_keeps_its_escapes_valid() {
        let line = serde_json::to_string(&serde_json::json!({"t": "a\x1b]0;x\x07\u{9b}\u{202e}"}))
            .unwrap_or_default();
        let safe = inert_json(&line);
        assert!(!safe.contains(is_unsafe), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap_or_default();
        assert_eq!(back["t"], "a\x1b]0;x\x07\u{9b}\u{202e}");
    }
}
