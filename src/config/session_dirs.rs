//! Which folders sessions are read from. A project's own `.agents/sessions` is something a
//! repository can ship (forged turns would reach the model as the user's history), so it is
//! read only in a trusted folder (`--trust`, `mypi trust`); otherwise it is skipped and a
//! notice says why and how to trust. Writing is not gated: a session the user starts there
//! (`sessions.dir = "project"`) is the user's.

use std::path::PathBuf;

use super::Config;

/// The folders to read sessions from, and what was skipped.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSources {
    /// The folder of this project's sessions (`None`: it is the project's own and untrusted).
    pub dir: Option<PathBuf>,
    /// The older folder in the project, when it may be read.
    pub legacy: Option<PathBuf>,
    /// Says that the project's sessions were skipped, and how to trust the folder.
    pub skipped: Option<String>,
}

impl Config {
    /// Where sessions are read from (see [`SessionSources`]).
    pub fn session_sources(&self) -> SessionSources {
        let project = self.cwd.join(".agents").join("sessions");
        let dir = self.sessions_dir();
        let legacy = self.legacy_sessions_dir();
        if self.project_trusted {
            return SessionSources {
                dir: Some(dir),
                legacy,
                skipped: None,
            };
        }
        let ships_some = std::fs::read_dir(&project).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
        });
        let skipped = ships_some.then(|| {
            format!(
                "the sessions in {} were not read: this folder is not trusted, and a repository \
                 can ship session files (pass --trust, or run `mypi trust {}`)",
                project.display(),
                self.cwd.display()
            )
        });
        SessionSources {
            dir: (dir != project).then_some(dir),
            legacy: legacy.filter(|l| *l != project),
            skipped,
        }
    }
}
