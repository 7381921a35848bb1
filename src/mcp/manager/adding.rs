//! Servers a script adds for the session (`api.mcp.add_server`, pi's `registerMcpServer`):
//! an entry like a file's, read by the same rules, connected at once in the background. A
//! configured server of the same name wins: the script's entry is not used, and a notice
//! says where the other is set.

use std::path::Path;

use serde_json::{json, Value};

use super::{Entry, Manager};

impl Manager {
    /// Adds the server `name` with the fields of a `.mcp.json` entry (`command`/`url`,
    /// `args`, `env`, `headers`, `exposure`, ...) for `extension`, and starts connecting it.
    /// `{added = false}` when a server of that name exists (a file's entry wins); an entry
    /// that is not valid is an error saying why.
    pub fn add_server(&self, name: &str, entry: Value, extension: &str) -> Result<Value, String> {
        let source = format!("api.mcp.add_server of extension {extension}");
        let text = json!({ "mcpServers": { name: entry } }).to_string();
        let env = |k: &str| std::env::var(k).ok();
        let mut parsed = crate::mcp::config::parse(Path::new(&source), &text, &env);
        if let Some(p) = parsed.problems.first() {
            return Err(p.message.clone());
        }
        let config = parsed.servers.pop().ok_or("the entry is empty")?;
        let mut entries = self.entries.write().unwrap_or_else(|p| p.into_inner());
        let same =
            |e: &&std::sync::Arc<Entry>| crate::mcp::config::same_server(&e.config.name, name);
        if let Some(there) = entries.iter().find(same) {
            let from = there.config.source.display().to_string();
            drop(entries);
            self.registry().notice(format!(
                "[mcp {name}] {source} is not used: the server is configured in {from}, which wins"
            ));
            return Ok(json!({"added": false, "configured_in": from}));
        }
        let entry = Entry::new(config);
        entries.push(entry.clone());
        drop(entries);
        if self.started().is_some() && entry.config.enabled {
            self.registry().offer_search_for(&entry.config);
            self.spawn_connect(entry);
        }
        Ok(json!({"added": true}))
    }
}
