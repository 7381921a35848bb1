//! What a renderer's text may put on the terminal ([`clean`]): at most [`MAX_RENDERED_BYTES`]
//! (longer text is cut in the middle with a note), colours as plain SGR (`ESC [ 1;31 m`)
//! parsed and emitted again, and every other control character or escape sequence shown
//! visibly, by the one rule of [`crate::vocab::text::inert`](mod@crate::vocab::text::inert). A renderer can colour its lines but
//! cannot move the cursor, clear the screen, set the window title or rewrite a line with
//! `\r`, so the REPL's own lines (and the prompt) stay where they are. Colours are reset at
//! the end, so a renderer that forgets to reset does not colour what follows.

use crate::vocab::text::{inert_sgr, truncate_middle};

/// The most text one rendered line (or block of lines) may have.
pub const MAX_RENDERED_BYTES: usize = 8 * 1024;

/// `text` cut to [`MAX_RENDERED_BYTES`], its colours kept and every other control character
/// or escape sequence shown visibly; trailing newlines are dropped.
pub fn clean(text: &str) -> String {
    let cut = truncate_middle(text, MAX_RENDERED_BYTES);
    inert_sgr(cut.trim_end_matches('\n'), true).into_owned()
}

/// Cleaned text without its colours (for a terminal without colour, `NO_COLOR`, or a line
/// that is cut to the terminal's width).
pub fn without_colours(text: &str) -> String {
    inert_sgr(text, false).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_stay_and_everything_else_is_shown() {
        assert_eq!(clean("plain text"), "plain text");
        assert_eq!(clean("two\nlines\n\n"), "two\nlines");
        assert_eq!(
            clean("\x1b[1;32mok\x1b[0m done"),
            "\x1b[1;32mok\x1b[0m done"
        );
        // Cursor moves, clearing, private modes, a title, a charset switch, a reset: shown.
        assert_eq!(clean("a\x1b[2J\x1b[H\x1b[10;5Hb"), "a^[[2J^[[H^[[10;5Hb");
        assert_eq!(clean("a\x1b[?25lb\x1b[?1049hc"), "a^[[?25lb^[[?1049hc");
        assert_eq!(
            clean("a\x1b]0;owned\x07b\x1b]8;;http://x\x1b\\c"),
            "a^[]0;owned^Gb^[]8;;http://x^[\\c"
        );
        assert_eq!(clean("a\x1b(Bb\x1bcc\x1b7d"), "a^[(Bb^[cc^[7d");
        // Carriage return, backspace, bell, the one-byte CSI.
        assert_eq!(clean("abc\rX\x08\x07y\u{9b}2Jz"), "abc^MX^H^Gy\\x9b2Jz");
        // A tab stays; a broken sequence is shown as it is.
        assert_eq!(clean("a\tb\x1b[12"), "a\tb^[[12");
        assert_eq!(clean("a\x1b[38:5:1mb"), "a^[[38:5:1mb");
        assert_eq!(clean("end\x1b"), "end^[");
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
