//! The model's markdown on a terminal (issue 11, point 1): rendered as it streams (no raw
//! `**` or fences; headings, lists, inline code, code blocks with their language), wrapped at
//! the terminal's width without breaking words, re-flowed after a resize for what comes next.

use std::time::Duration;

use serde_json::json;

use super::ext_util::faux;
use crate::common::pty::{visible_lines, Pty};
use crate::common::TestDir;

const T: Duration = Duration::from_secs(20);

const REPLY: &str = "# Plan\n\nThis **matters**: run `cargo test` first, then read the *long* \
explanation that follows here, because it is long enough to wrap at sixty columns for sure.\n\n\
- one item\n- two item\n\n```rust\nfn main() {}\n```\nDone.";

/// The paragraph's words, as a reader sees them.
const PARAGRAPH: &str = "This matters: run cargo test first, then read the long explanation \
that follows here, because it is long enough to wrap at sixty columns for sure.";

/// The reply's lines on a terminal `cols` wide, and the raw screen.
fn reply_on_a_terminal(cols: u16, colour: bool) -> (Vec<String>, String) {
    let dir = TestDir::new();
    let mut m = faux(&dir, &[json!({ "text": REPLY })]).args(["--no-session", "--no-watch"]);
    if colour {
        m = m.env_remove("NO_COLOR");
    }
    let mut pty = Pty::spawn_sized(m.command(), cols);
    let at = pty.wait_for("/help for commands", 0, T);
    let at = pty.wait_for("> ", at, T);
    pty.type_keys("go\r");
    let at = pty.wait_for("Done.", at, T);
    pty.wait_for(" s", at, T);
    pty.type_keys("/quit\r");
    pty.wait(T);
    let screen = pty.screen();
    let lines = visible_lines(&screen);
    let start = lines
        .iter()
        .position(|l| l.ends_with("Plan"))
        .expect("heading");
    let end = lines.iter().position(|l| l == "Done.").expect("last line");
    (lines[start..=end].to_vec(), screen)
}

fn check_layout(lines: &[String], cols: usize) {
    let text = lines.join("\n");
    for raw in ["**", "```", "`cargo", "*long*"] {
        assert!(!text.contains(raw), "raw {raw:?} shown:\n{text}");
    }
    for line in lines {
        assert!(
            unicode_width::UnicodeWidthStr::width(line.as_str()) <= cols,
            "wider than {cols}: {line:?}"
        );
    }
    let para: Vec<&String> = lines
        .iter()
        .skip_while(|l| !l.starts_with("This matters"))
        .take_while(|l| !l.is_empty())
        .collect();
    let joined = para
        .iter()
        .map(|l| l.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(joined, PARAGRAPH, "no word broken or lost:\n{text}");
    assert!(lines.contains(&"• one item".to_string()), "{text}");
    assert!(lines.contains(&"── rust".to_string()), "{text}");
    assert!(lines.contains(&"fn main() {}".to_string()), "{text}");
}

#[test]
fn markdown_is_rendered_and_wrapped_at_60_columns_without_colour() {
    let (lines, screen) = reply_on_a_terminal(60, false);
    check_layout(&lines, 60);
    assert_eq!(
        lines[0], "# Plan",
        "a heading keeps its marks without colour"
    );
    let para = lines
        .iter()
        .filter(|l| l.starts_with("This") || l.starts_with("explanation") || l.starts_with("wrap"))
        .count();
    assert!(para >= 2, "wrapped at 60: {lines:#?}");
    assert!(!screen.contains("\u{1b}[1m"), "no colour with NO_COLOR");
}

#[test]
fn markdown_is_styled_and_wrapped_at_120_columns_with_colour() {
    let (lines, screen) = reply_on_a_terminal(120, true);
    check_layout(&lines, 120);
    assert_eq!(lines[0], "Plan", "the heading is styled, not marked");
    let rows = lines
        .iter()
        .skip_while(|l| !l.starts_with("This matters"))
        .take_while(|l| !l.is_empty())
        .count();
    assert_eq!(rows, 2, "{lines:#?}");
    assert!(screen.contains("\u{1b}[1mmatters"), "bold: {screen:?}");
    assert!(
        screen.contains("\u{1b}[33mcargo"),
        "inline code: {screen:?}"
    );
}

#[test]
fn after_a_resize_the_next_reply_wraps_at_the_new_width() {
    let dir = TestDir::new();
    let long = "word ".repeat(40);
    let m = faux(
        &dir,
        &[
            json!({ "text": format!("first {long}end1") }),
            json!({ "text": format!("second {long}end2") }),
        ],
    )
    .args(["--no-session", "--no-watch"]);
    let mut pty = Pty::spawn_sized(m.command(), 100);
    let at = pty.wait_for("> ", 0, T);
    pty.type_keys("one\r");
    let at = pty.wait_for("end1", at, T);
    let at = pty.wait_for(" s", at, T);
    pty.resize(40);
    pty.type_keys("two\r");
    let at2 = pty.wait_for("end2", at, T);
    pty.wait_for(" s", at2, T);
    pty.type_keys("/quit\r");
    pty.wait(T);
    let screen = pty.screen();
    let widths = |part: &str, first: &str| -> Vec<usize> {
        visible_lines(part)
            .iter()
            .skip_while(|l| !l.starts_with(first))
            .take_while(|l| l.starts_with("word") || l.starts_with(first))
            .map(|l| l.trim_end().len())
            .collect()
    };
    let before = widths(&screen[..at], "first");
    let after = widths(&screen[at..], "second");
    assert!(
        before.iter().all(|w| *w <= 100) && before.iter().any(|w| *w > 60),
        "{before:?}"
    );
    assert!(
        after.len() >= 5 && after.iter().all(|w| *w <= 40),
        "{after:?}\n{screen}"
    );
}
