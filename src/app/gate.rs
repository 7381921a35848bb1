//! The trust gate in front of the project's own extensions (`<cwd>/.agents/extensions`), MCP
//! servers (`<cwd>/.mcp.json`, whose entries start processes), agent files
//! (`<cwd>/.agents/agents`, which would replace the user's own), skills and prompt files
//! (`.agents/skills`, `.claude/skills`, `.agents/prompts`, `.claude/commands`: text the
//! model would follow as the user's own): they
//! load only in a trusted folder (`--trust`, `mypi trust`, or a "yes" the REPL remembered).
//! The REPL asks once per folder on a terminal, showing what would load; print mode (and a
//! REPL reading a pipe) loads none in an untrusted folder and says so in one line.
//! User-level extensions always load.

use std::io::IsTerminal;
use std::path::PathBuf;

use super::App;
pub use crate::config::pick::folder_trusted;
use crate::config::trust::{Decision, TrustStore};
use crate::extensions::discovery;

/// Whether the project's extensions may load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// Nothing to decide: no project extensions, or the folder is trusted.
    Open,
    /// Not trusted yet and never refused: the REPL asks.
    Ask { folder: PathBuf, files: Vec<String> },
    /// Not trusted: they do not load; `why` says so for the user.
    Closed { why: String },
}

/// The project's extension folder under `cwd` when the trust settings do not trust `cwd`
/// (for `mypi ext check|list`, which run no agent).
pub fn untrusted_project_root(
    cwd: &std::path::Path,
    home: Option<&std::path::Path>,
) -> Option<PathBuf> {
    let root = cwd.join(".agents").join("extensions");
    if !root.is_dir() || home.is_some_and(|h| h == cwd) {
        return None;
    }
    (!folder_trusted(cwd, home, false)).then_some(root)
}

/// The project's agent files (`.agents/agents/*.md`, read by the `subagent` tool), as shown.
fn agent_files(cwd: &std::path::Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(cwd.join(".agents").join("agents")) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!(".agents/agents/{n}"))
        .collect();
    names.sort();
    names
}

/// `path` as shown below the project folder `cwd`.
fn relative(cwd: &std::path::Path, path: &std::path::Path) -> String {
    path.strip_prefix(cwd).unwrap_or(path).display().to_string()
}

/// How the gate's line names the project's skills and prompt files.
fn sources_parts(skills: usize, prompts: usize) -> Vec<String> {
    let mut parts = Vec::new();
    if skills > 0 {
        let s = if skills == 1 { "" } else { "s" };
        parts.push(format!(
            "{skills} skill{s} (.agents/skills, .claude/skills)"
        ));
    }
    if prompts > 0 {
        let s = if prompts == 1 { "" } else { "s" };
        parts.push(format!(
            "{prompts} prompt file{s} (.agents/prompts, .claude/commands)"
        ));
    }
    parts
}

impl App {
    /// What the trust settings allow for the project's own extensions.
    pub fn project_gate(&self) -> Gate {
        let roots: Vec<PathBuf> = self.config.project_extensions.iter().cloned().collect();
        let mut files: Vec<String> = discovery::discover(&roots)
            .into_iter()
            .map(|i| {
                i.path
                    .strip_prefix(&self.config.cwd)
                    .unwrap_or(&i.path)
                    .display()
                    .to_string()
            })
            .collect();
        let extensions = files.len();
        if self.config.project_mcp.is_some() {
            files.push(".mcp.json".into());
        }
        let agents = agent_files(&self.config.cwd);
        files.extend(agents.iter().cloned());
        let hook_files = super::settings_hooks::project_hook_files(self);
        files.extend(hook_files.iter().cloned());
        let (skills, prompts) = super::sources::project_files(&self.config.cwd);
        files.extend(
            skills
                .iter()
                .chain(&prompts)
                .map(|p| relative(&self.config.cwd, p)),
        );
        if files.is_empty() || self.config.trust {
            return Gate::Open;
        }
        let folder = self.config.cwd.clone();
        let mut parts = Vec::new();
        if extensions > 0 {
            let s = if extensions == 1 { "" } else { "s" };
            parts.push(format!("{extensions} project extension{s}"));
        }
        if self.config.project_mcp.is_some() {
            parts.push(match extensions {
                0 => ".mcp.json (MCP servers)".to_string(),
                _ => ".mcp.json".to_string(),
            });
        }
        if !agents.is_empty() {
            let s = if agents.len() == 1 { "" } else { "s" };
            parts.push(format!("{} agent file{s} (.agents/agents)", agents.len()));
        }
        if !hook_files.is_empty() {
            parts.push(format!("settings hooks ({})", hook_files.join(", ")));
        }
        parts.extend(sources_parts(skills.len(), prompts.len()));
        let what = crate::vocab::text::and_list(&parts);
        let closed = |reason: &str| Gate::Closed {
            why: format!(
                "{what} in {} not loaded: {reason} (pass --trust, or run `mypi trust {}`)",
                folder.display(),
                folder.display()
            ),
        };
        let store = match TrustStore::in_home(self.config.home.as_deref()) {
            Ok(s) => s,
            Err(e) => return closed(&e.to_string()),
        };
        match store.decision(&folder) {
            Ok(Decision::Trusted) => Gate::Open,
            Ok(Decision::Denied) => closed("you chose not to trust this folder"),
            // Asked on a terminal only: a line piped in is not an answer to remember.
            Ok(Decision::Unknown)
                if self.config.mode == crate::config::Mode::Repl
                    && std::io::stdin().is_terminal() =>
            {
                Gate::Ask { folder, files }
            }
            Ok(Decision::Unknown) => closed("the folder is not trusted"),
            Err(e) => closed(&e.to_string()),
        }
    }

    /// Leaves the project's extensions, MCP servers and agent files out of this run (not
    /// loaded, not watched).
    pub fn close_project(&mut self) {
        self.config.project_trusted = false;
        self.extensions.context().control.set_project_trusted(false);
        if let Some(root) = self.config.project_extensions.take() {
            self.config.extension_roots.retain(|r| r != &root);
        }
        if let Some(file) = self.config.project_mcp.take() {
            self.config.mcp_files.retain(|f| f != &file);
        }
    }

    /// Records the REPL's answer for `folder`; a problem to show, if saving failed.
    pub fn remember_trust(&self, folder: &std::path::Path, yes: bool) -> Option<String> {
        self.extensions.context().control.set_project_trusted(yes);
        let saved = TrustStore::in_home(self.config.home.as_deref()).and_then(|store| {
            if yes {
                store.trust(folder, false)
            } else {
                store.deny(folder)
            }
        });
        saved
            .err()
            .map(|e| format!("the answer was not remembered: {e}"))
    }
}
