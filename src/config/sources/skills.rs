//! Skill discovery: `.agents/skills/*/SKILL.md` and `.claude/skills/*/SKILL.md` in the
//! project and under HOME. Only each `SKILL.md`'s front matter is read (its first 64 KiB at
//! most); a skill folder's other files are never listed. `name` and `description` are
//! required; a file without them, or whose front matter is broken, is reported once with
//! its path and line, and skipped. `disable-model-invocation: true` keeps a skill out of the
//! model's list (`/skill:NAME` still runs it), as in Claude Code and pi. `allowed-tools` is
//! ignored (mypi asks no permission to run a tool, so there is nothing to pre-approve).

use std::path::{Path, PathBuf};

use super::frontmatter::read_head;
use super::{roots, sorted_entries, usable_name, Found, Origin};

/// A skill found in a folder.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillFile {
    pub name: String,
    pub description: String,
    /// The absolute path of its `SKILL.md`.
    pub path: PathBuf,
    pub origin: Origin,
    /// `disable-model-invocation: true`: run by `/skill:NAME` only, never offered to the model.
    pub manual: bool,
}

/// The folders skills are read from: the project's (when given) before the user's.
pub fn skill_roots(home: Option<&Path>, project: Option<&Path>) -> Vec<(PathBuf, Origin)> {
    roots(
        home,
        project,
        [(".agents", "skills"), (".claude", "skills")],
    )
}

/// The `SKILL.md` files under `roots` (listed, not read).
pub fn paths(roots: &[(PathBuf, Origin)]) -> Vec<PathBuf> {
    roots
        .iter()
        .flat_map(|(root, _)| sorted_entries(root))
        .map(|(_, dir)| dir.join("SKILL.md"))
        .filter(|p| p.is_file())
        .collect()
}

/// Every skill under `roots`, earlier roots winning a name (with a notice).
pub fn discover(roots: &[(PathBuf, Origin)]) -> Found<SkillFile> {
    let mut found = Found::default();
    for (root, origin) in roots {
        for (_, dir) in sorted_entries(root) {
            let path = dir.join("SKILL.md");
            if !path.is_file() {
                continue;
            }
            match read_skill(&path, *origin) {
                Ok(skill) => add(&mut found, skill),
                Err(problem) => found.problems.push(problem),
            }
        }
    }
    found
}

/// Keeps `skill` unless an earlier one has its name (that one wins; the notice says so).
fn add(found: &mut Found<SkillFile>, skill: SkillFile) {
    match found.items.iter().find(|s| s.name == skill.name) {
        Some(first) => found.problems.push(format!(
            "skill {}: the {} one ({}) is used; the {} one ({}) is not",
            skill.name,
            first.origin.name(),
            first.path.display(),
            skill.origin.name(),
            skill.path.display()
        )),
        None => found.items.push(skill),
    }
}

/// The skill `path` describes, or why it is skipped (naming the file and line).
fn read_skill(path: &Path, origin: Origin) -> Result<SkillFile, String> {
    let skipped = |why: String| format!("{why}; the skill is skipped");
    let head = read_head(path).map_err(|e| skipped(e.to_string()))?;
    let Some(front) = head.front else {
        return Err(skipped(format!(
            "{}:1: no front matter (a `---` block with name and description)",
            path.display()
        )));
    };
    let missing = |key: &str| {
        skipped(format!(
            "{}:1: no `{key}` in the front matter",
            path.display()
        ))
    };
    let name = front.line("name").ok_or_else(|| missing("name"))?;
    let description = front
        .line("description")
        .ok_or_else(|| missing("description"))?;
    if !usable_name(&name) {
        return Err(skipped(format!(
            "{}: the name {name:?} must be one word",
            path.display()
        )));
    }
    Ok(SkillFile {
        name,
        description,
        path: path.to_path_buf(),
        origin,
        manual: front.line("disable-model-invocation").as_deref() == Some("true"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::testutil::TempDir;

    fn skill(root: &Path, dir: &str, text: &str) {
        std::fs::create_dir_all(root.join(dir)).unwrap();
        std::fs::write(root.join(dir).join("SKILL.md"), text).unwrap();
    }

    #[test]
    fn the_project_wins_and_bad_files_are_named() {
        let t = TempDir::new("skills");
        let (home, project) = (t.0.join("home"), t.0.join("proj"));
        skill(
            &project.join(".claude/skills"),
            "a",
            "---\nname: pdf\ndescription: project pdf\n---\n",
        );
        skill(
            &home.join(".agents/skills"),
            "b",
            "---\nname: pdf\ndescription: user pdf\n---\n",
        );
        skill(&home.join(".agents/skills"), "c", "---\nname: c\n---\n");
        skill(&home.join(".agents/skills"), "d", "no front matter");
        let roots = skill_roots(Some(&home), Some(&project));
        let found = discover(&roots);
        assert_eq!(found.items.len(), 1);
        assert_eq!(found.items[0].description, "project pdf");
        assert_eq!(found.items[0].origin, Origin::Project);
        let all = found.problems.join("\n");
        assert!(all.contains("skill pdf: the project one"), "{all}");
        assert!(all.contains("c/SKILL.md:1: no `description`"), "{all}");
        assert!(all.contains("d/SKILL.md:1: no front matter"), "{all}");
        // HOME as the project: its folders are the user's, read once.
        assert_eq!(skill_roots(Some(&home), Some(&home)).len(), 2);
    }
}
