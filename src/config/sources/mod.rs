//! What users wrote for other coding agents, read as data: skills (`SKILL.md` folders, the
//! Agent Skills format of Claude Code, Codex and pi: [`skills`], listed to the model by
//! [`catalog`]) and prompt files used as slash commands (`.claude/commands`, pi's prompt
//! templates: [`prompts`]), both with a YAML front matter ([`frontmatter`]).
//!
//! Each comes from the user's folders under HOME (always) and the project's (only in a
//! trusted project: the app decides, see `app/gate.rs`); on a name clash the project's wins.
//! Discovery lists the source folders and reads the head of each file found, nothing else:
//! a skill's other files are never listed.

pub mod catalog;
pub mod frontmatter;
pub mod prompts;
pub mod skills;

use std::path::{Path, PathBuf};

/// Whose folder a file came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Project,
    User,
}

impl Origin {
    pub fn name(self) -> &'static str {
        match self {
            Origin::Project => "project",
            Origin::User => "user",
        }
    }
}

/// What discovery found, and the problems to report once (each names a file).
#[derive(Debug, Clone)]
pub struct Found<T> {
    pub items: Vec<T>,
    pub problems: Vec<String>,
}

impl<T> Default for Found<T> {
    fn default() -> Self {
        Found {
            items: Vec::new(),
            problems: Vec::new(),
        }
    }
}

/// The source folders for `kinds` (pairs of folder names under `.agents` and `.claude`):
/// the project's first (when `project` is given and is not HOME), then the user's.
fn roots(
    home: Option<&Path>,
    project: Option<&Path>,
    kinds: [(&str, &str); 2],
) -> Vec<(PathBuf, Origin)> {
    let mut out = Vec::new();
    let project = project.filter(|p| home != Some(*p));
    for (base, origin) in [(project, Origin::Project), (home, Origin::User)] {
        if let Some(base) = base {
            for (dot, sub) in kinds {
                out.push((base.join(dot).join(sub), origin));
            }
        }
    }
    out
}

/// The entries of `dir` sorted by name (none when it cannot be read), hidden ones left out.
fn sorted_entries(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            (!name.starts_with('.')).then(|| (name, e.path()))
        })
        .collect();
    out.sort();
    out
}

/// Whether `name` can follow a `/` on the command line: one word of printable characters.
fn usable_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && !name.contains(|c: char| c.is_whitespace() || c.is_control() || c == '/')
}
