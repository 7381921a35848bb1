//! The skills the model is told about ([`Catalog`]): the ones found in folders (discovered
//! once, on a thread of their own, so start-up does not wait for them) and the ones scripts
//! add (`api.skill`). Every request lists each skill's name, description and `SKILL.md` path
//! in the system prompt ([`Catalog::prompt_section`]); the body reaches the model only when
//! it reads the file with the `read` tool. The list has a budget in characters (`[skills]
//! budget`): the skills that do not fit are left out, and the user is told which.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;

use super::skills::{discover, SkillFile};
use super::Origin;
use crate::vocab::owner::{Owner, Unregister};

/// The budget when the configuration sets none, in characters of the list.
pub const DEFAULT_BUDGET: usize = 16_000;

/// Where a notice goes (the app's notice line).
pub type Report = Arc<dyn Fn(String) + Send + Sync>;

/// A skill as scripts and `/skills` see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// The absolute path of its `SKILL.md`.
    pub path: PathBuf,
    /// `project`, `user`, or `extension NAME`.
    pub source: String,
    /// Never offered to the model (`disable-model-invocation`); `/skill:NAME` runs it.
    pub manual: bool,
}

impl From<SkillFile> for Skill {
    fn from(f: SkillFile) -> Skill {
        Skill {
            name: f.name,
            description: f.description,
            path: f.path,
            source: f.origin.name().to_string(),
            manual: f.manual,
        }
    }
}

/// The skills and whether each is in the model's list.
pub struct Listing {
    pub skills: Vec<(Skill, bool)>,
    /// The list's text as the system prompt carries it (empty without skills).
    pub text: String,
}

/// The skills of this process.
pub struct Catalog {
    budget: usize,
    /// The skills found in folders, once discovery has ended.
    found: Mutex<Option<Vec<Skill>>>,
    pending: Mutex<Option<JoinHandle<Vec<Skill>>>>,
    scripts: RwLock<Vec<(u64, Owner, Skill)>>,
    /// The skills last reported as left out (a notice is given when this changes).
    reported: Mutex<Vec<String>>,
}

impl Catalog {
    /// An empty catalog whose list holds at most `budget` characters.
    pub fn new(budget: usize) -> Arc<Catalog> {
        Arc::new(Catalog {
            budget,
            found: Mutex::new(None),
            pending: Mutex::new(None),
            scripts: RwLock::new(Vec::new()),
            reported: Mutex::new(Vec::new()),
        })
    }

    /// Starts discovering the skills under `roots` on a thread (again, on `/reload`); its
    /// problems go to `report`. The first reader of the catalog waits for it.
    pub fn discover_in_background(&self, roots: Vec<(PathBuf, Origin)>, report: Report) {
        // Most folders have no skills folder: no thread to start for them.
        if !roots.iter().any(|(root, _)| root.is_dir()) {
            *self.pending.lock().unwrap_or_else(|p| p.into_inner()) = None;
            *self.found.lock().unwrap_or_else(|p| p.into_inner()) = Some(Vec::new());
            return;
        }
        let run = move || {
            let found = discover(&roots);
            for problem in found.problems {
                report(problem);
            }
            found.items.into_iter().map(Skill::from).collect::<Vec<_>>()
        };
        let handle = std::thread::Builder::new().name("skills".into()).spawn(run);
        if let Ok(handle) = handle {
            let mut found = self.found.lock().unwrap_or_else(|p| p.into_inner());
            *found = None;
            *self.pending.lock().unwrap_or_else(|p| p.into_inner()) = Some(handle);
        }
    }

    /// The skills found in folders (waiting for discovery if it is still running).
    fn files(&self) -> Vec<Skill> {
        let mut found = self.found.lock().unwrap_or_else(|p| p.into_inner());
        if found.is_none() {
            let handle = self
                .pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take();
            *found = Some(handle.and_then(|h| h.join().ok()).unwrap_or_default());
        }
        found.clone().unwrap_or_default()
    }

    /// Every skill: the folders' (less those a script's replaces), then the scripts'.
    pub fn skills(&self) -> Vec<Skill> {
        let scripts = self.scripts.read().unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<Skill> = self
            .files()
            .into_iter()
            .filter(|f| !scripts.iter().any(|(_, _, s)| s.name == f.name))
            .collect();
        out.extend(scripts.iter().map(|(_, _, s)| s.clone()));
        out
    }

    /// Adds a script's skill (`id` removes it); a notice when it replaces another.
    pub fn add(&self, id: u64, owner: Owner, skill: Skill) -> Option<String> {
        let before = self.skills().into_iter().find(|s| s.name == skill.name);
        let mut scripts = self.scripts.write().unwrap_or_else(|p| p.into_inner());
        scripts.retain(|(_, _, s)| s.name != skill.name);
        scripts.push((id, owner, skill.clone()));
        before.map(|b| {
            format!(
                "skill {} from {} replaces the {} one ({})",
                skill.name,
                skill.source,
                b.source,
                b.path.display()
            )
        })
    }

    /// Removes every skill `owner` added; how many went.
    pub fn remove_owner(&self, owner: &Owner) -> usize {
        let mut scripts = self.scripts.write().unwrap_or_else(|p| p.into_inner());
        let before = scripts.len();
        scripts.retain(|(_, o, _)| o != owner);
        before - scripts.len()
    }

    /// The skills, which of them fit the budget, and the list's text.
    pub fn listing(&self) -> Listing {
        let mut used = 0;
        let mut full = false;
        let mut lines = String::new();
        let mut skills = Vec::new();
        for skill in self.skills() {
            if skill.manual {
                skills.push((skill, false));
                continue;
            }
            let line = format!(
                "- {}: {} (file: {})\n",
                skill.name,
                skill.description,
                skill.path.display()
            );
            let size = line.chars().count();
            // In order: once one does not fit, it and the rest are left out.
            full |= used + size > self.budget;
            if !full {
                used += size;
                lines.push_str(&line);
            }
            skills.push((skill, !full));
        }
        let text = match lines.is_empty() {
            true => String::new(),
            false => format!("{HEADER}\n\n{}", lines.trim_end()),
        };
        Listing { skills, text }
    }

    /// The system prompt's skills section (empty without skills), and a notice naming the
    /// skills left out when that set changed since the last one.
    pub fn prompt_section(&self) -> (String, Option<String>) {
        let listing = self.listing();
        let left: Vec<String> = listing
            .skills
            .iter()
            .filter(|(s, listed)| !listed && !s.manual)
            .map(|(s, _)| s.name.clone())
            .collect();
        let mut reported = self.reported.lock().unwrap_or_else(|p| p.into_inner());
        let notice = (*reported != left && !left.is_empty()).then(|| {
            format!(
                "{} skill{} left out of the model's list (over the budget of {} characters, [skills] budget): {}; /skills lists them",
                left.len(),
                if left.len() == 1 { " is" } else { "s are" },
                self.budget,
                left.join(", ")
            )
        });
        *reported = left;
        (listing.text, notice)
    }
}

/// What the model is told before the list.
const HEADER: &str = "# Skills\n\nSkills are instructions for particular tasks, each in a \
SKILL.md file. When a task matches a skill's description, read its file with the read tool \
before you start and follow it; paths in it are relative to the file's folder. Do not read \
a skill that the task does not need.";

impl Unregister for Catalog {
    fn unregister(&self, id: u64) -> bool {
        let mut scripts = self.scripts.write().unwrap_or_else(|p| p.into_inner());
        let before = scripts.len();
        scripts.retain(|(i, _, _)| *i != id);
        before != scripts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(name: &str, source: &str) -> Skill {
        Skill {
            name: name.into(),
            description: format!("{name} things"),
            path: PathBuf::from(format!("/s/{name}/SKILL.md")),
            source: source.into(),
            manual: false,
        }
    }

    #[test]
    fn the_budget_leaves_out_the_rest_and_says_so_once() {
        let c = Catalog::new(70);
        assert_eq!(c.prompt_section(), (String::new(), None));
        let owner = Owner::new("ext", 1);
        assert!(c
            .add(1, owner.clone(), skill("aa", "extension ext"))
            .is_none());
        c.add(2, owner.clone(), skill("bb", "extension ext"));
        c.add(3, owner.clone(), skill("c", "extension ext"));
        let (text, notice) = c.prompt_section();
        assert!(
            text.contains("- aa: aa things (file: /s/aa/SKILL.md)"),
            "{text}"
        );
        assert!(!text.contains("- bb"), "{text}");
        assert!(!text.contains("- c:"), "{text}");
        let notice = notice.unwrap();
        assert!(notice.contains("2 skills are left out"), "{notice}");
        assert!(notice.ends_with("bb, c; /skills lists them"), "{notice}");
        assert_eq!(c.prompt_section().1, None);
        let mut manual = skill("m", "extension ext");
        manual.manual = true;
        c.add(5, owner.clone(), manual);
        assert_eq!(c.prompt_section().1, None, "a manual skill is not left out");
        assert!(!c.prompt_section().0.contains("- m:"));
        assert!(c.unregister(5));
        assert!(c.unregister(2));
        assert_eq!(c.listing().skills.len(), 2);
        assert!(c
            .add(4, Owner::new("other", 2), skill("aa", "extension other"))
            .is_some());
        assert_eq!(c.remove_owner(&owner), 1);
    }
}
