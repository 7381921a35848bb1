//! The model's reasoning as the REPL shows it ([`Thoughts`]): while it streams, its last few
//! lines above the status line; once something else follows, one line, its first, with how
//! many more there were (`/thinking show` prints them all). Reasoning is the model's text:
//! it is made inert like the reply.

use super::tool_lines::fit;
use crate::vocab::text::inert;

/// The rows of reasoning shown above the status line while it streams.
const ROWS: usize = 3;
/// The most of the reasoning's end kept to show those rows.
const TAIL: usize = 4096;

/// The reasoning of the stretch streaming now.
#[derive(Default)]
pub struct Thoughts {
    /// Its first line with text (once complete, `first_done`).
    first: String,
    first_done: bool,
    /// Its end, for the rows shown while it streams.
    tail: String,
    /// Lines with text so far (the one being written not counted yet).
    lines: usize,
    /// Whether the line being written has text.
    open: bool,
}

impl Thoughts {
    pub fn push(&mut self, delta: &str) {
        for c in delta.chars() {
            if c == '\n' {
                self.lines += usize::from(self.open);
                self.first_done |= self.open;
                self.open = false;
            } else {
                self.open |= !c.is_whitespace();
                if !self.first_done {
                    self.first.push(c);
                }
            }
        }
        self.tail.push_str(delta);
        if self.tail.len() > TAIL {
            self.tail = crate::vocab::text::tail_bytes(&self.tail, TAIL / 2).to_string();
        }
    }

    /// The last lines with text, marked and fitted to `width`.
    pub fn last_rows(&self, width: usize) -> Vec<String> {
        let lines: Vec<&str> = self.tail.lines().filter(|l| !l.trim().is_empty()).collect();
        let start = lines.len().saturating_sub(ROWS);
        lines[start..]
            .iter()
            .map(|l| fit(&format!("  ┆ {}", inert(l.trim())), width))
            .collect()
    }

    /// The one line the reasoning folds to, fitted to `width`: none without any.
    pub fn folded(self, width: usize) -> Option<String> {
        let first = inert(self.first.trim());
        if first.is_empty() {
            return None;
        }
        let more = (self.lines + usize::from(self.open)).saturating_sub(1);
        let line = match more {
            0 => format!("┆ {first}"),
            n => format!(
                "┆ {first} … (+{n} line{} of reasoning: /thinking show)",
                if n == 1 { "" } else { "s" }
            ),
        };
        Some(fit(&line, width))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasoning_folds_to_its_first_line_and_a_count() {
        let mut t = Thoughts::default();
        for piece in ["\nWhich ", "file?\n", "\nThe red", " one.\nDone"] {
            t.push(piece);
        }
        assert_eq!(
            t.last_rows(80),
            ["  ┆ Which file?", "  ┆ The red one.", "  ┆ Done"]
        );
        assert_eq!(
            t.folded(80).unwrap(),
            "┆ Which file? … (+2 lines of reasoning: /thinking show)"
        );
        let mut one = Thoughts::default();
        one.push("Just this.\n");
        assert_eq!(one.folded(80).unwrap(), "┆ Just this.");
        assert_eq!(Thoughts::default().folded(80), None);
    }
}
