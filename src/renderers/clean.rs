//! What a renderer's text may put on the terminal ([`clean`]): at most [`MAX_RENDERED_BYTES`]
//! (longer text is cut in the middle with a note), and no control character or escape
//! sequence except SGR colours (`ESC [ 1;31 m`). A renderer can colour its lines but cannot
//! move the cursor, clear the screen, set the window title or rewrite a line with `\r`, so the
//! REPL's own lines (and the prompt) stay where they are. Colours are reset at the end, so a
//! renderer that forgets to reset does not colour what follows.

use std::iter::Peekable;
use std::str::Chars;

use crate::text::truncate_middle;

/// The most text one rendered line (or block of lines) may have.
pub const MAX_RENDERED_BYTES: usize = 8 * 1024;

/// SGR "reset": ends the colours a renderer set.
const RESET: &str = "\x1b[0m";

/// `text` cut to [`MAX_RENDERED_BYTES`] and stripped of every control character and escape
/// sequence but newlines, tabs and SGR colours; trailing newlines are dropped.
pub fn clean(text: &str) -> String {
    let cut = truncate_middle(text, MAX_RENDERED_BYTES);
    let mut out = String::with_capacity(cut.len());
    let mut chars = cut.chars().peekable();
    let mut coloured = false;
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => {
                if let Some(sgr) = escape(&mut chars) {
                    out.push_str(&sgr);
                    coloured = true;
                }
            }
            '\n' | '\t' => out.push(c),
            // C0 and C1 controls (CR, backspace, bell, DEL, the one-byte CSI U+009B, ...).
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    let kept = out.trim_end_matches('\n').len();
    out.truncate(kept);
    if coloured {
        out.push_str(RESET);
    }
    out
}

/// Cleaned text without its colours (for a terminal without colour, `NO_COLOR`, or a line
/// that is cut to the terminal's width).
pub fn without_colours(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => {
                escape(&mut chars);
            }
            c => out.push(c),
        }
    }
    out
}

/// Reads the escape sequence after an `ESC`; returns it when it is an SGR sequence (to keep),
/// `None` when it is anything else (dropped whole). A broken sequence ends at the first
/// character that cannot be part of it, which is left to be read as text.
fn escape(chars: &mut Peekable<Chars<'_>>) -> Option<String> {
    match chars.peek().copied()? {
        '[' => {
            chars.next();
            csi(chars)
        }
        // Strings: OSC (title, hyperlinks, clipboard), DCS, SOS, PM, APC, up to their
        // terminator (BEL or ESC \); a newline ends a broken one.
        ']' | 'P' | 'X' | '^' | '_' => {
            chars.next();
            while let Some(&c) = chars.peek() {
                match c {
                    '\x07' => {
                        chars.next();
                        break;
                    }
                    '\x1b' => {
                        chars.next();
                        if chars.peek() == Some(&'\\') {
                            chars.next();
                        }
                        break;
                    }
                    '\n' => break,
                    _ => {
                        chars.next();
                    }
                }
            }
            None
        }
        // `ESC ( B` and the like: intermediates, then one final character.
        c if ('\x20'..='\x2f').contains(&c) => {
            while chars.peek().is_some_and(|c| ('\x20'..='\x2f').contains(c)) {
                chars.next();
            }
            if chars.peek().is_some_and(|c| ('\x30'..='\x7e').contains(c)) {
                chars.next();
            }
            None
        }
        // `ESC 7`, `ESC c` (reset), `ESC M` (reverse index), ...: two characters.
        c if ('\x30'..='\x7e').contains(&c) => {
            chars.next();
            None
        }
        _ => None,
    }
}

/// A control sequence after `ESC [`: parameters, intermediates, a final character. Kept only
/// when it is SGR (`m`) with plain numeric parameters.
fn csi(chars: &mut Peekable<Chars<'_>>) -> Option<String> {
    let mut params = String::new();
    while let Some(&c) = chars.peek() {
        if !('\x30'..='\x3f').contains(&c) {
            break;
        }
        params.push(c);
        chars.next();
    }
    let mut intermediates = false;
    while chars.peek().is_some_and(|c| ('\x20'..='\x2f').contains(c)) {
        intermediates = true;
        chars.next();
    }
    let last = chars
        .peek()
        .copied()
        .filter(|c| ('\x40'..='\x7e').contains(c))?;
    chars.next();
    let plain = params.chars().all(|c| c.is_ascii_digit() || c == ';');
    (last == 'm' && plain && !intermediates).then(|| format!("\x1b[{params}m"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_stay_and_everything_else_goes() {
        assert_eq!(clean("plain text"), "plain text");
        assert_eq!(clean("two\nlines\n\n"), "two\nlines");
        assert_eq!(
            clean("\x1b[1;32mok\x1b[0m done"),
            "\x1b[1;32mok\x1b[0m done\x1b[0m"
        );
        // Cursor moves, clearing, private modes, a title, a charset switch, a reset.
        assert_eq!(clean("a\x1b[2J\x1b[H\x1b[10;5Hb"), "ab");
        assert_eq!(clean("a\x1b[?25lb\x1b[?1049hc"), "abc");
        assert_eq!(clean("a\x1b]0;owned\x07b\x1b]8;;http://x\x1b\\c"), "abc");
        assert_eq!(clean("a\x1b(Bb\x1bcc\x1b7d"), "abcd");
        // Carriage return, backspace, bell, the one-byte CSI.
        assert_eq!(clean("abc\rX\x08\x07y\u{9b}2Jz"), "abcXy2Jz");
        // A tab stays; a broken sequence gives its text back.
        assert_eq!(clean("a\tb\x1b[12"), "a\tb");
        assert_eq!(clean("a\x1b[3\nb"), "a\nb");
        assert_eq!(clean("a\x1b[38:5:1mb"), "ab");
        assert_eq!(clean("end\x1b"), "end");
    }

    #[test]
    fn colours_can_be_taken_out() {
        let cleaned = clean("\x1b[1;32mok\x1b[0m done");
        assert_eq!(without_colours(&cleaned), "ok done");
        assert_eq!(without_colours("plain"), "plain");
    }

    #[test]
    fn long_text_is_cut_in_the_middle() {
        let long = "x".repeat(3 * MAX_RENDERED_BYTES);
        let out = clean(&long);
        assert!(out.len() <= MAX_RENDERED_BYTES + 100, "{}", out.len());
        assert!(out.contains("omitted"), "{out}");
    }
}
