use super::*;

fn no_width() -> Option<usize> {
    None
}

fn width_24() -> Option<usize> {
    Some(24)
}

fn render(text: &str, colour: bool, width: fn() -> Option<usize>) -> Vec<String> {
    let mut md = Markdown::new(colour, width);
    let mut rows = md.push(text);
    rows.extend(md.finish());
    rows
}

/// Text with its ANSI escapes taken out.
fn visible(row: &str) -> String {
    let mut out = String::new();
    let mut chars = row.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn emphasis_code_and_links_lose_their_markers() {
    let rows = render(
        "Use **bold**, *it* and `x = 1` — see [the docs](https://e.x/d).\n",
        false,
        no_width,
    );
    assert_eq!(
        rows,
        ["Use bold, it and x = 1 — see the docs (https://e.x/d)."]
    );
    let coloured = render("**bold** `code`\n", true, no_width);
    assert!(coloured[0].contains("\u{1b}[1m"), "{coloured:?}");
    assert_eq!(visible(&coloured[0]), "bold code");
}

#[test]
fn headings_keep_their_hashes_only_without_colour() {
    assert_eq!(render("## Plan\n", false, no_width), ["## Plan"]);
    let rows = render("# Title\n", true, no_width);
    assert_eq!(visible(&rows[0]), "Title");
    assert!(rows[0].contains("\u{1b}["), "{rows:?}");
}

#[test]
fn lists_quotes_and_rules() {
    let rows = render(
        "- one\n* two\n  - nested\n1. first\n10) tenth\n> quoted *text*\n---\n",
        false,
        width_24,
    );
    assert_eq!(
        rows,
        [
            "• one",
            "• two",
            "  • nested",
            "1. first",
            "10) tenth",
            "│ quoted text",
            &"─".repeat(24),
        ]
    );
}

#[test]
fn code_blocks_show_the_language_and_keep_their_text() {
    let rows = render(
        "Look:\n```rust\nfn main() { let x = **y; }\n\n    indented\n```\nafter\n",
        false,
        width_24,
    );
    assert_eq!(
        rows,
        [
            "Look:",
            "── rust",
            "fn main() { let x = **y; }",
            "",
            "    indented",
            "──",
            "after"
        ]
    );
    // A block the message leaves open is closed.
    assert_eq!(render("~~~\ncode", false, no_width), ["──", "code", "──"]);
}

#[test]
fn wrapping_never_breaks_a_word_and_hangs_list_items() {
    let text = "- the quick brown fox jumps over the lazy dog again and again\n";
    let rows = render(text, false, width_24);
    assert_eq!(
        rows,
        [
            "• the quick brown fox",
            "  jumps over the lazy",
            "  dog again and again"
        ]
    );
    for row in &rows {
        assert!(row.width() <= 24, "{row:?}");
    }
    // Only a word wider than the row is cut.
    let long = render(&format!("{}\n", "x".repeat(30)), false, width_24);
    assert_eq!(long, ["x".repeat(24), "x".repeat(6)]);
}

#[test]
fn wide_characters_are_counted_by_columns() {
    let rows = render("漢字 漢字 漢字 漢字 漢字 漢字 漢字\n", false, width_24);
    assert_eq!(rows, ["漢字 漢字 漢字 漢字 漢字", "漢字 漢字"]);
}

#[test]
fn blank_lines_fold_into_one_and_leading_ones_go() {
    assert_eq!(render("\n\na\n\n\n\nb\n", false, no_width), ["a", "", "b"]);
}

#[test]
fn streamed_in_pieces_it_reads_the_same_as_all_at_once() {
    let text = "# Heading here\n\nA paragraph with **strong words** that runs on well past the \
                width of the terminal, with `inline code` and *emphasis* in it.\n\n- an item \
                that is long enough to wrap twice over at this width\n```sh\nls -la\n```\nend";
    let whole = render(text, true, width_24);
    for step in [1, 2, 3, 7] {
        let mut md = Markdown::new(true, width_24);
        let mut rows = Vec::new();
        let chars: Vec<char> = text.chars().collect();
        for chunk in chars.chunks(step) {
            rows.extend(md.push(&chunk.iter().collect::<String>()));
        }
        rows.extend(md.finish());
        assert_eq!(rows, whole, "in pieces of {step}");
    }
}

#[test]
fn a_long_line_is_committed_row_by_row_while_it_streams() {
    let mut md = Markdown::new(false, width_24);
    let rows = md.push("one two three four five six seven eight nine");
    assert_eq!(
        rows,
        ["one two three four five", "six seven eight nine"][..1]
    );
    // An emphasis still open is not committed: it may close later.
    let mut md = Markdown::new(false, width_24);
    assert!(md.push("one **two three four five six seven").is_empty());
    assert_eq!(
        md.push(" eight**\n"),
        ["one two three four five", "six seven eight"]
    );
}

#[test]
fn tables_are_shown_as_written() {
    let rows = render("| a | b |\n|---|---|\n| 1 | 2 |\n", false, width_24);
    assert_eq!(rows, ["| a | b |", "|---|---|", "| 1 | 2 |"]);
}
