//! The base system prompt and the project instructions appended to it: every `AGENTS.md`
//! from the repository root (the nearest folder with `.git`) down to the working folder,
//! outermost first, as other coding agents do.

use std::fs;
use std::path::{Path, PathBuf};

const BASE: &str = "You are mypi, a coding agent working in the user's project folder. \
Use the tools to read, write and edit files and to run shell commands. Read before you edit; \
keep changes small and say what you changed. Answer concisely.";

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

/// `AGENTS.md` files from the repository root down to `cwd` (outermost first). Without a
/// repository, only the one in `cwd`.
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
        .map(|d| d.join("AGENTS.md"))
        .filter(|p| p.is_file())
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
        fs::remove_dir_all(&root).unwrap();
    }
}
