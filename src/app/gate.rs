//! The trust gate in front of the project's own extensions (`<cwd>/.agents/extensions`) and
//! MCP servers (`<cwd>/.mcp.json`, whose entries start processes): they
//! load only in a trusted folder (`--trust`, `mypi trust`, or a "yes" the REPL remembered).
//! The REPL asks once per folder on a terminal, showing what would load; print mode (and a
//! REPL reading a pipe) loads none in an untrusted folder and says so in one line.
//! User-level extensions always load.

use std::io::IsTerminal;
use std::path::PathBuf;

use super::App;
use crate::extensions::discovery;
use crate::trust::{Decision, TrustStore};

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
    let trusted = TrustStore::in_home(home)
        .and_then(|s| s.decision(cwd))
        .is_ok_and(|d| d == Decision::Trusted);
    (!trusted).then_some(root)
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
        if files.is_empty() || self.config.trust {
            return Gate::Open;
        }
        let folder = self.config.cwd.clone();
        let what = match (extensions, self.config.project_mcp.is_some()) {
            (0, _) => ".mcp.json (MCP servers)".to_string(),
            (n, mcp) => format!(
                "{n} project extension{}{}",
                if n == 1 { "" } else { "s" },
                if mcp { " and .mcp.json" } else { "" }
            ),
        };
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

    /// Leaves the project's extensions out of this run (not loaded, not watched).
    pub fn close_project(&mut self) {
        if let Some(root) = self.config.project_extensions.take() {
            self.config.extension_roots.retain(|r| r != &root);
        }
        if let Some(file) = self.config.project_mcp.take() {
            self.config.mcp_files.retain(|f| f != &file);
        }
    }

    /// Records the REPL's answer for `folder`; a problem to show, if saving failed.
    pub fn remember_trust(&self, folder: &std::path::Path, yes: bool) -> Option<String> {
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
