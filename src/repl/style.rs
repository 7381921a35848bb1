//! Colour for the REPL: on when stdout is a terminal and `NO_COLOR` is not set, off
//! otherwise (a pipe, a file, print mode, tests), so what is not a terminal gets plain text.
//! Each kind of line has one [`Role`]; [`Style::paint`] wraps text in its ANSI codes.

use std::io::IsTerminal;

use anstyle::{AnsiColor, Effects};

/// What a piece of text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A tool call line.
    Tool,
    Ok,
    Error,
    /// Notices, the line after a run, context lines.
    Dim,
    Added,
    Removed,
    Notice,
    /// The REPL's `> ` prompt.
    Prompt,
}

/// Whether and how to colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    colour: bool,
}

impl Style {
    /// Colour when stdout is a terminal and `NO_COLOR` is unset or empty.
    pub fn detect() -> Style {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Style {
            colour: !no_color && std::io::stdout().is_terminal(),
        }
    }

    pub fn plain() -> Style {
        Style { colour: false }
    }

    /// Colour on or off as already decided (no look at the terminal).
    pub fn with_colour(colour: bool) -> Style {
        Style { colour }
    }

    pub fn colour(&self) -> bool {
        self.colour
    }

    /// `text` in the colour of `role` (unchanged without colour).
    pub fn paint(&self, role: Role, text: &str) -> String {
        if !self.colour {
            return text.to_string();
        }
        let style = match role {
            Role::Tool => anstyle::Style::new()
                .fg_color(Some(AnsiColor::Cyan.into()))
                .effects(Effects::BOLD),
            Role::Ok => anstyle::Style::new().fg_color(Some(AnsiColor::Green.into())),
            Role::Error => anstyle::Style::new().fg_color(Some(AnsiColor::Red.into())),
            Role::Dim => anstyle::Style::new().effects(Effects::DIMMED),
            Role::Added => anstyle::Style::new().fg_color(Some(AnsiColor::Green.into())),
            Role::Removed => anstyle::Style::new().fg_color(Some(AnsiColor::Red.into())),
            Role::Notice => anstyle::Style::new().fg_color(Some(AnsiColor::Yellow.into())),
            Role::Prompt => anstyle::Style::new()
                .fg_color(Some(AnsiColor::Green.into()))
                .effects(Effects::BOLD),
        };
        format!("{}{text}{}", style.render(), style.render_reset())
    }
}

/// The terminal's width in columns (100 when stdout is not a terminal or it cannot be told).
pub fn term_width() -> usize {
    terminal_width().unwrap_or(100)
}

/// The width of the terminal stdout is, read now (a resize shows at the next call); `None`
/// when stdout is not a terminal.
pub fn terminal_width() -> Option<usize> {
    crate::platform::sys::stdout_columns().filter(|&cols| cols >= 20)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_is_plain_and_colour_wraps() {
        assert_eq!(Style::plain().paint(Role::Error, "x"), "x");
        let c = Style { colour: true }.paint(Role::Error, "x");
        assert!(
            c.starts_with("\u{1b}[") && c.contains('x') && c.ends_with("\u{1b}[0m"),
            "{c:?}"
        );
    }
}
