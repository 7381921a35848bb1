//! Tab completion in the REPL: `/name` from the command table, a command's first argument
//! where mypi knows the choices (`/reload NAME`: the extensions), and `@path` file mentions
//! from the working folder (folders end in `/`, hidden files only when the prefix starts
//! with `.`).

use std::path::PathBuf;
use std::sync::Arc;

use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};

use crate::commands::CommandTable;

/// The choices for a command's first argument (by command name), or none.
pub type ArgChoices = Arc<dyn Fn(&str) -> Vec<String> + Send + Sync>;

/// What [`ArgChoices`] is asked for the skills' names (`/skill:NAME` completes them).
pub const SKILLS: &str = "skill:";

/// Most `@path` candidates offered at once.
const MAX_PATHS: usize = 200;

/// The REPL's completer.
pub struct SlashHelper {
    pub commands: Arc<CommandTable>,
    pub cwd: PathBuf,
    pub args: ArgChoices,
    /// The prompt is drawn in colour (the user's own lines stand apart from the reply).
    pub colour: bool,
}

impl SlashHelper {
    /// `/name` at the start of the line.
    fn command(&self, prefix: &str) -> Vec<Pair> {
        let mut names = self.commands.complete(prefix);
        if let Some(skill) = prefix.strip_prefix(SKILLS) {
            let skills = (self.args)(SKILLS).into_iter();
            let unsafe_name = |n: &String| crate::vocab::text::inert(n) != n.as_str();
            let found = skills.filter(|n| n.starts_with(skill) && !unsafe_name(n));
            names.extend(found.map(|n| format!("{SKILLS}{n}")));
        }
        names
            .into_iter()
            .map(|name| Pair {
                // A prompt's candidate shows what it takes and what it does.
                display: match self.prompt_summary(&name) {
                    Some(summary) => format!("/{name} {summary}"),
                    None => format!("/{name}"),
                },
                replacement: format!("/{name} "),
            })
            .collect()
    }

    /// A prompt command's argument hint and description (`<file> — Review a file`), inert;
    /// none for other commands.
    fn prompt_summary(&self, name: &str) -> Option<String> {
        let c = self.commands.lookup(name)?;
        if !matches!(c.action, crate::commands::Action::Prompt(_)) {
            return None;
        }
        let text = match c.hint.is_empty() {
            true => format!("— {}", c.description),
            false => format!("{} — {}", c.hint, c.description),
        };
        Some(crate::vocab::text::inert(&text).into_owned())
    }

    /// `@dir/fil` -> the entries of `dir` starting with `fil`.
    fn path(&self, word: &str) -> Vec<Pair> {
        let (dir, file) = match word.rfind('/') {
            Some(i) => (&word[..=i], &word[i + 1..]),
            None => ("", word),
        };
        let Ok(entries) = std::fs::read_dir(self.cwd.join(dir)) else {
            return Vec::new();
        };
        let mut out: Vec<Pair> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let hidden = name.starts_with('.') && !file.starts_with('.');
                // A name with control characters would put them in the edited line.
                let unsafe_name = crate::vocab::text::inert(&name) != name.as_str();
                if hidden || unsafe_name || !name.starts_with(file) {
                    return None;
                }
                let slash = if e.path().is_dir() { "/" } else { "" };
                Some(Pair {
                    display: format!("{name}{slash}"),
                    replacement: format!("@{dir}{name}{slash}"),
                })
            })
            .take(MAX_PATHS)
            .collect();
        out.sort_by(|a, b| a.display.cmp(&b.display));
        out
    }
}

impl Completer for SlashHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let head = &line[..pos];
        let start = head.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        let word = &head[start..];
        if let Some(path) = word.strip_prefix('@') {
            return Ok((start, self.path(path)));
        }
        let Some(rest) = head.strip_prefix('/') else {
            return Ok((pos, Vec::new()));
        };
        match rest.split_once(char::is_whitespace) {
            None => Ok((0, self.command(rest))),
            // The first argument, when the command has known choices.
            Some((name, arg)) if !arg.contains(char::is_whitespace) => {
                let pairs = (self.args)(name)
                    .into_iter()
                    .filter(|c| c.starts_with(arg))
                    .map(|c| Pair {
                        display: c.clone(),
                        replacement: c,
                    })
                    .collect();
                Ok((start, pairs))
            }
            Some(_) => Ok((pos, Vec::new())),
        }
    }
}

impl Hinter for SlashHelper {
    type Hint = String;

    /// After a prompt command's name (`/review` or `/review `, the cursor at the end), what
    /// it takes and does, dimmed after the cursor (Tab completes the name, then this shows).
    fn hint(&self, line: &str, pos: usize, _ctx: &Context<'_>) -> Option<String> {
        let rest = line.strip_prefix('/')?;
        let name = rest.trim_end();
        if pos < line.len() || name.is_empty() || name.contains(char::is_whitespace) {
            return None;
        }
        let summary = self.prompt_summary(name)?;
        let gap = if rest.ends_with(' ') { "" } else { " " };
        Some(format!("{gap}{summary}"))
    }
}
impl Highlighter for SlashHelper {
    fn highlight_prompt<'b, 's: 'b, 'p: 'b>(
        &'s self,
        prompt: &'p str,
        default: bool,
    ) -> std::borrow::Cow<'b, str> {
        // Only the REPL's own prompt: a question keeps its text as it is.
        if !self.colour || !default || prompt != "> " {
            return std::borrow::Cow::Borrowed(prompt);
        }
        // Decided once at start (`self.colour`): this runs on every redraw of the line.
        let style = super::style::Style::with_colour(true);
        std::borrow::Cow::Owned(style.paint(super::style::Role::Prompt, prompt))
    }

    fn highlight_hint<'h>(&self, hint: &'h str) -> std::borrow::Cow<'h, str> {
        let style = super::style::Style::with_colour(self.colour);
        std::borrow::Cow::Owned(style.paint(super::style::Role::Dim, hint))
    }
}
impl Validator for SlashHelper {}
impl Helper for SlashHelper {}

#[cfg(test)]
mod tests {
    use super::*;
    use rustyline::history::DefaultHistory;

    fn complete(h: &SlashHelper, line: &str) -> (usize, Vec<String>) {
        let history = DefaultHistory::new();
        let ctx = Context::new(&history);
        let (at, pairs) = h.complete(line, line.len(), &ctx).unwrap();
        (at, pairs.into_iter().map(|p| p.replacement).collect())
    }

    #[test]
    fn commands_arguments_and_paths_complete() {
        let dir = crate::platform::testutil::TempDir::new("complete");
        std::fs::create_dir_all(dir.0.join("src/deep")).unwrap();
        std::fs::write(dir.0.join("src/main.rs"), "").unwrap();
        std::fs::write(dir.0.join("src/.hidden"), "").unwrap();
        let h = SlashHelper {
            commands: CommandTable::with_builtins(),
            cwd: dir.0.clone(),
            args: Arc::new(|name| {
                if name == "reload" {
                    vec!["subagent".into(), "sum".into(), "todo".into()]
                } else {
                    Vec::new()
                }
            }),
            colour: false,
        };
        assert_eq!(complete(&h, "/he"), (0, vec!["/help ".to_string()]));
        assert_eq!(
            complete(&h, "/reload su"),
            (8, vec!["subagent".to_string(), "sum".to_string()])
        );
        assert_eq!(complete(&h, "/tools x").1, Vec::<String>::new());
        assert_eq!(complete(&h, "look at @sr"), (8, vec!["@src/".to_string()]));
        assert_eq!(
            complete(&h, "look at @src/"),
            (
                8,
                vec!["@src/deep/".to_string(), "@src/main.rs".to_string()]
            )
        );
        assert_eq!(complete(&h, "@src/.h").1, ["@src/.hidden"]);
        assert!(complete(&h, "plain words").1.is_empty());
    }
}
