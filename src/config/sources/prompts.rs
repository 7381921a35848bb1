//! Prompt files as slash commands: `.agents/prompts/**/*.md` and `.claude/commands/**/*.md`
//! in the project and under HOME. A file's path below its folder names the command, folders
//! joined by `:` (`frontend/component.md` is `/frontend:component`). Its front matter's
//! `description` and `argument-hint` show in `/help` and completion (without a description,
//! the body's first line stands in). Running it sends the body with the arguments put in as
//! Claude Code does ([`expand`]). Discovery reads each file's head only; the body is read
//! again when the command runs, so an edit counts at once.

use std::path::{Path, PathBuf};

use super::frontmatter::read_head;
use super::{roots, sorted_entries, usable_name, Found, Origin};

/// Folders below a prompt folder that are looked into.
const MAX_DEPTH: usize = 4;
/// The most prompt files read from one folder (a mistake beyond that, not a collection).
const MAX_FILES: usize = 1000;
/// The longest prompt file sent (the body is read whole when the command runs).
pub const MAX_PROMPT_BYTES: u64 = 1 << 20;

/// A prompt file found in a folder.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptFile {
    /// The command's name (`frontend:component`).
    pub name: String,
    pub description: String,
    /// What the arguments are (`argument-hint`), shown after the name.
    pub argument_hint: Option<String>,
    pub path: PathBuf,
    pub origin: Origin,
}

/// The folders prompt files are read from: the project's (when given) before the user's.
pub fn prompt_roots(home: Option<&Path>, project: Option<&Path>) -> Vec<(PathBuf, Origin)> {
    roots(
        home,
        project,
        [(".agents", "prompts"), (".claude", "commands")],
    )
}

/// The prompt files under `roots` (listed, not read).
pub fn paths(roots: &[(PathBuf, Origin)]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for (root, _) in roots {
        walk(root, &mut Vec::new(), &mut out);
    }
    out.into_iter().map(|(_, p)| p).collect()
}

/// Every prompt file under `roots`, earlier roots winning a name (with a notice).
pub fn discover(roots: &[(PathBuf, Origin)]) -> Found<PromptFile> {
    let mut found: Found<PromptFile> = Found::default();
    for (root, origin) in roots {
        let mut files = Vec::new();
        walk(root, &mut Vec::new(), &mut files);
        if files.len() > MAX_FILES {
            found.problems.push(format!(
                "{}: more than {MAX_FILES} prompt files; only the first {MAX_FILES} are read",
                root.display()
            ));
            files.truncate(MAX_FILES);
        }
        for (name, path) in files {
            match read_prompt(name, &path, *origin) {
                Ok(p) => match found.items.iter().find(|q| q.name == p.name) {
                    Some(first) => found.problems.push(format!(
                        "prompt /{}: the {} file {} is used; {} is not",
                        p.name,
                        first.origin.name(),
                        first.path.display(),
                        p.path.display()
                    )),
                    None => found.items.push(p),
                },
                Err(problem) => found.problems.push(problem),
            }
        }
    }
    found
}

/// The `.md` files below `dir` with their names (`a:b` for `a/b.md`), in name order.
fn walk(dir: &Path, prefix: &mut Vec<String>, out: &mut Vec<(String, PathBuf)>) {
    for (name, path) in sorted_entries(dir) {
        if out.len() > MAX_FILES {
            return;
        }
        if path.is_dir() {
            if prefix.len() < MAX_DEPTH {
                prefix.push(name);
                walk(&path, prefix, out);
                prefix.pop();
            }
        } else if let Some(stem) = name.strip_suffix(".md") {
            let mut parts = prefix.clone();
            parts.push(stem.to_string());
            out.push((parts.join(":"), path));
        }
    }
}

/// The command `path` describes, or why it is skipped (naming the file and line).
fn read_prompt(name: String, path: &Path, origin: Origin) -> Result<PromptFile, String> {
    if !usable_name(&name) {
        return Err(format!(
            "{}: the command name {name:?} must be one word; the file is skipped",
            path.display()
        ));
    }
    let head = read_head(path).map_err(|e| format!("{e}; the file is skipped"))?;
    let front = head.front.unwrap_or_default();
    let description = front
        .line("description")
        .or_else(|| first_line(&head.body))
        .unwrap_or_else(|| format!("prompt from {}", path.display()));
    Ok(PromptFile {
        name,
        description,
        argument_hint: front.line("argument-hint"),
        path: path.to_path_buf(),
        origin,
    })
}

/// The body's first line with text (without `#` marks), cut to 80 characters.
fn first_line(body: &str) -> Option<String> {
    let line = body.lines().map(str::trim).find(|l| !l.is_empty())?;
    let line = line.trim_start_matches('#').trim();
    let cut: String = line.chars().take(80).collect();
    Some(cut).filter(|s| !s.is_empty())
}

/// Why a prompt file could not be sent.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("cannot read {path}: {message}")]
    Read { path: PathBuf, message: String },
    #[error("{path} is larger than 1 MiB; it is not sent")]
    TooLarge { path: PathBuf },
    #[error(transparent)]
    Front(#[from] super::frontmatter::FrontMatterError),
}

/// The body of the prompt file at `path` (front matter left out), read whole.
pub fn body(path: &Path) -> Result<String, PromptError> {
    let read = |e: std::io::Error| PromptError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let len = std::fs::metadata(path).map_err(read)?.len();
    if len > MAX_PROMPT_BYTES {
        return Err(PromptError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    let bytes = std::fs::read(path).map_err(read)?;
    let head = super::frontmatter::split(&bytes, true).map_err(|(line, message)| {
        super::frontmatter::FrontMatterError::Syntax {
            path: path.to_path_buf(),
            line,
            message,
        }
    })?;
    Ok(head.body.trim().to_string())
}

/// The prompt `body` with the arguments put in, as Claude Code does: `$ARGUMENTS` is the
/// whole text after the command, `$1` … `$9` its words (a quoted phrase is one word; a
/// missing one is empty). Arguments given to a prompt that uses neither are added at its
/// end as `ARGUMENTS: …`, so they are never dropped.
pub fn expand(body: &str, args: &str) -> String {
    let words = split_words(args);
    let mut out = String::with_capacity(body.len() + args.len());
    let mut used = false;
    let mut rest = body;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(args);
            used = true;
            rest = tail;
        } else if let Some(d) = after.chars().next().filter(|c| ('1'..='9').contains(c)) {
            let n = d as usize - '1' as usize;
            out.push_str(words.get(n).map(String::as_str).unwrap_or(""));
            used = true;
            rest = &after[1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    if !used && !args.trim().is_empty() {
        out.push_str(&format!("\n\nARGUMENTS: {}", args.trim()));
    }
    out
}

/// `args` as words; `"a b"` and `'a b'` are one word each.
fn split_words(args: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in args.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::testutil::TempDir;

    #[test]
    fn arguments_are_put_in_like_claude_code() {
        assert_eq!(
            expand("Fix #$ARGUMENTS now", "123 high"),
            "Fix #123 high now"
        );
        assert_eq!(
            expand("PR $1 at $2, $3.", "456 'very high'"),
            "PR 456 at very high, ."
        );
        assert_eq!(expand("Costs $5 and $x", ""), "Costs  and $x");
        assert_eq!(
            expand("Review it", "src/a.rs"),
            "Review it\n\nARGUMENTS: src/a.rs"
        );
        assert_eq!(expand("Review it", "  "), "Review it");
    }

    #[test]
    fn subfolders_namespace_and_the_project_wins() {
        let t = TempDir::new("prompts");
        let (home, project) = (t.0.join("home"), t.0.join("proj"));
        let write = |p: PathBuf, text: &str| {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write(
            project.join(".claude/commands/frontend/component.md"),
            "---\ndescription: Make a component\nargument-hint: <name>\n---\nMake $1",
        );
        write(
            home.join(".agents/prompts/frontend/component.md"),
            "# Mine\nx",
        );
        write(
            home.join(".agents/prompts/review.md"),
            "# Review the code\n\nGo.",
        );
        write(home.join(".agents/prompts/bad.md"), "---\ndescription: x\n");
        let found = discover(&prompt_roots(Some(&home), Some(&project)));
        let names: Vec<&str> = found.items.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["frontend:component", "review"]);
        assert_eq!(found.items[0].argument_hint.as_deref(), Some("<name>"));
        assert_eq!(found.items[1].description, "Review the code");
        let all = found.problems.join("\n");
        assert!(
            all.contains("prompt /frontend:component: the project file"),
            "{all}"
        );
        assert!(all.contains("bad.md:1: the front matter"), "{all}");
        assert_eq!(body(&found.items[0].path).unwrap(), "Make $1");
    }
}
