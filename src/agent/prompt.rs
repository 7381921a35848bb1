//! The base system prompt and the project instructions appended to it: from each folder
//! between the repository root (the nearest folder with `.git`) and the working folder,
//! outermost first, its `AGENTS.md`, or its `CLAUDE.md` when it has no `AGENTS.md` (pi's
//! rule: one file a folder, so a project that keeps both, one copying the other, is not
//! read twice). Read in any project, trusted or not: they are instructions, not code.

use std::fs;
use std::path::{Path, PathBuf};

const BASE: &str = "You are mypi, a coding agent working in the user's project folder. \
Use the tools to read, write and edit files and to run shell commands. Read before you edit; \
keep changes small and say what you changed. Answer concisely.";

/// A part of the system prompt that a host adds and keeps current (the MCP servers'
/// instructions): asked at the start of each run, appended after the skills in the order
/// the parts were added. It should change only when what it says changes, so that the
/// prompt stays byte-stable turn after turn.
pub trait PromptSection: Send + Sync {
    /// The section's text, without the blank line before it; none to add nothing.
    fn section(&self) -> Option<String>;
}

/// The system prompt for a session in `cwd`.
pub fn system_prompt(cwd: &Path) -> String {
    let mut prompt = format!("{BASE}\n\nWorking folder: {}", cwd.display());
    for path in agents_files(cwd) {
        if let Ok(text) = fs::read_to_string(&path) {
            let text = text.trim();
            if !text.is_empty() {
                prompt.push_str(&format!(
                    "\n\n# Project instructions from {}\n\n{text}",
                    path.display()
                ));
            }
        }
    }
    prompt
}

/// The instruction files from the repository root down to `cwd` (outermost first): each
/// folder's `AGENTS.md`, else its `CLAUDE.md`. Without a repository, only `cwd`'s.
pub fn agents_files(cwd: &Path) -> Vec<PathBuf> {
    let mut folders = Vec::new();
    let mut found_root = false;
    for dir in cwd.ancestors() {
        folders.push(dir.to_path_buf());
        if dir.join(".git").exists() {
            found_root = true;
            break;
        }
    }
    if !found_root {
        folders.truncate(1);
    }
    folders
        .into_iter()
        .rev()
        .filter_map(|d| {
            ["AGENTS.md", "CLAUDE.md"]
                .into_iter()
                .map(|name| d.join(name))
                .find(|p| p.is_file())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_files_from_repo_root_down() {
        let root = std::env::temp_dir().join(format!("mypi-prompt-{}", std::process::id()));
        let sub = root.join("a/b");
        fs::create_dir_all(&sub).unwrap();
        fs::create_dir_all(root.join(".git")).unwrap();
        fs::write(root.join("AGENTS.md"), "root rules").unwrap();
        fs::write(sub.join("AGENTS.md"), "sub rules").unwrap();
        let files = agents_files(&sub);
        assert_eq!(files, vec![root.join("AGENTS.md"), sub.join("AGENTS.md")]);
        let p = system_prompt(&sub);
        assert!(p.find("root rules").unwrap() < p.find("sub rules").unwrap());
        // A folder's CLAUDE.md is read when it has no AGENTS.md, never both.
        fs::write(root.join("a/CLAUDE.md"), "claude rules").unwrap();
        fs::write(root.join("CLAUDE.md"), "shadowed").unwrap();
        let p = system_prompt(&sub);
        let (r, c, s) = (
            p.find("root rules").unwrap(),
            p.find("claude rules").unwrap(),
            p.find("sub rules").unwrap(),
        );
        assert!(r < c && c < s, "{p}");
        assert!(!p.contains("shadowed"), "{p}");
        fs::remove_dir_all(&root).unwrap();
    }
}
