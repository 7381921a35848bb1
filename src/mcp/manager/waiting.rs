//! How long what needs a server that is still connecting waits for it. Start-up never waits.
//!
//! - A prompt waits only within [`PROMPT_GRACE`] of the servers' start, and only for servers
//!   whose tools are not known from the cache (a fast server's tools are there for the first
//!   request) and may be offered directly (a server configured `deferred` or `hidden` is
//!   found through `tool_search`, which waits for it). A prompt that names servers (their
//!   configured names, as words) waits only for those of them, as a call would (at most
//!   [`CONNECT_WAIT`], saying so past the grace): it says which it needs. A
//!   slower server is passed over, once, with a notice: a server that takes 30 s to start
//!   does not delay a prompt that needs none of its tools, and its tools are offered from the
//!   next model request after it is ready. Each server connects on its own task, so a slow
//!   or failing one delays no other.
//! - A call of a tool (or a prompt command) of a server still connecting waits for that
//!   server, at most [`CONNECT_WAIT`], saying so. That covers a tool known from the cache, and
//!   a name of a server passed over that is not offered yet: the call waits for its server
//!   before it is answered as unknown.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::time::Instant;

use super::{Entry, Manager, State};
use crate::mcp::naming::Namer;
use crate::mcp::registry::RESOURCE_TOOLS;
use crate::tools::LateTools;

/// How long after the servers' start a prompt waits for those whose tools are unknown.
pub const PROMPT_GRACE: Duration = Duration::from_millis(1500);
/// The longest a call (or `/mcp` in print mode) waits for a server still connecting.
pub const CONNECT_WAIT: Duration = Duration::from_secs(10);

impl Manager {
    /// Waits up to `max` for the servers still connecting; returns the names of those that
    /// still are.
    pub async fn wait_connecting(&self, max: Duration) -> Vec<String> {
        let waiting = self.entries();
        settle(&waiting, Instant::now() + max).await;
        names(self.entries().iter().filter(|e| connecting(e)))
    }

    /// Whether any enabled server is still connecting.
    pub fn any_connecting(&self) -> bool {
        self.entries().iter().any(|e| connecting(e))
    }

    /// Before the prompt `text`: waits for the servers still connecting whose tools are
    /// unknown and may be direct, up to [`PROMPT_GRACE`] after the start; when `text` names
    /// some of them, only for those, and up to [`CONNECT_WAIT`]. Returns those passed over
    /// that were not named before (each is named once).
    pub async fn settle_for_prompt(&self, text: &str) -> Vec<String> {
        let all = self.entries();
        // A prompt that names servers needs those (whatever their state), and no other.
        let named = named_servers(text, all.iter().map(|e| e.config.name.as_str()));
        let by_name = !named.is_empty();
        let mut unknown = all;
        unknown.retain(|e| {
            !e.cached.load(Ordering::Acquire)
                && e.config.exposure.may_be_direct()
                && connecting(e)
                && (!by_name || named.contains(&crate::mcp::config::key(&e.config.name)))
        });
        if unknown.is_empty() {
            return Vec::new();
        }
        let started = self.started().unwrap_or_else(Instant::now);
        settle(&unknown, started + PROMPT_GRACE).await;
        if by_name {
            self.wait_named(&unknown).await;
        }
        names(
            unknown
                .iter()
                .filter(|e| connecting(e) && !e.passed_over.swap(true, Ordering::AcqRel)),
        )
    }

    /// Waits, at most [`CONNECT_WAIT`] and saying so, for the servers a prompt names that are
    /// still connecting after the grace: the prompt needs them.
    async fn wait_named(&self, named: &[Arc<Entry>]) {
        let still: Vec<Arc<Entry>> = named.iter().filter(|e| connecting(e)).cloned().collect();
        if still.is_empty() {
            return;
        }
        self.registry().notice(format!(
            "waiting for MCP server {} (named in the prompt; still connecting; at most {} s)",
            names(still.iter()).join(", "),
            CONNECT_WAIT.as_secs()
        ));
        settle(&still, Instant::now() + CONNECT_WAIT).await;
    }

    /// The servers still connecting whose tool or prompt could be called `name` (any of
    /// them for a resource tool: it comes with the first server that has resources).
    pub fn connecting_owners(&self, name: &str) -> Vec<String> {
        names(self.owners(name).iter())
    }

    fn owners(&self, name: &str) -> Vec<Arc<Entry>> {
        // Any server may bring a resource tool, or deferred tools and with them the search.
        let resources = RESOURCE_TOOLS.contains(&name) || name == crate::tools::SEARCH_TOOL;
        let mut all = self.entries();
        all.retain(|e| connecting(e) && (resources || Namer::could_name(&e.config.name, name)));
        all
    }

    /// Waits for the servers still connecting whose tool or prompt could be called `name`:
    /// at most [`CONNECT_WAIT`] after the first call that waited for each (a second call of a
    /// slow server waits no longer than the first), saying so once per server. Returns why `name` may still be missing: those
    /// still connecting after the wait.
    pub async fn wait_for_name(&self, name: &str) -> Option<String> {
        let owners = self.owners(name);
        if owners.is_empty() {
            return None;
        }
        let untold: Vec<&Arc<Entry>> = owners
            .iter()
            .filter(|e| !e.waited_for.swap(true, Ordering::AcqRel))
            .collect();
        if !untold.is_empty() {
            self.registry().notice(format!(
                "waiting for MCP server {} (still connecting; at most {} s) to call '{name}'",
                names(untold.into_iter()).join(", "),
                CONNECT_WAIT.as_secs()
            ));
        }
        let now = Instant::now();
        let until = owners
            .iter()
            .map(|e| *e.wait_until.get_or_init(|| now + CONNECT_WAIT))
            .max()
            .unwrap_or(now);
        settle(&owners, until).await;
        let still = names(owners.iter().filter(|e| connecting(e)));
        (!still.is_empty()).then(|| {
            format!(
                "MCP server {} is still connecting after {} s; its tools are offered once it is \
                 ready (see /mcp)",
                still.join(", "),
                CONNECT_WAIT.as_secs()
            )
        })
    }
}

impl LateTools for Manager {
    fn wait_for<'a>(&'a self, name: &'a str) -> Option<BoxFuture<'a, Option<String>>> {
        if self.connecting_owners(name).is_empty() {
            return None;
        }
        Some(Box::pin(self.wait_for_name(name)))
    }

    fn pending(&self) -> bool {
        self.any_connecting()
    }

    fn wait_all(&self) -> Option<BoxFuture<'_, ()>> {
        if !self.any_connecting() {
            return None;
        }
        Some(Box::pin(async move {
            self.wait_connecting(CONNECT_WAIT).await;
        }))
    }
}

/// The servers of `names` that `text` names (their [`key`](crate::mcp::config::key)s): as a
/// word (case and `-`/`_` aside), or in a tool or prompt name (`mcp__name__…`). One pass over
/// the text, whatever its length.
fn named_servers<'a>(
    text: &str,
    names: impl Iterator<Item = &'a str>,
) -> std::collections::HashSet<String> {
    let keys: std::collections::HashSet<String> = names
        .map(crate::mcp::config::key)
        .filter(|k| !k.is_empty())
        .collect();
    let longest = keys.iter().map(String::len).max().unwrap_or(0);
    let mut found = std::collections::HashSet::new();
    let words = text.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'));
    for word in words.filter(|w| !w.is_empty() && w.len() <= longest + 70) {
        let word = crate::mcp::config::key(word);
        let name = match word.strip_prefix("mcp__") {
            Some(rest) => rest.split("__").next().unwrap_or(rest),
            None => &word,
        };
        if keys.contains(name) {
            found.insert(name.to_string());
        }
    }
    found
}

fn connecting(entry: &Entry) -> bool {
    matches!(entry.state(), State::Connecting)
}

fn names<'a>(entries: impl Iterator<Item = &'a Arc<Entry>>) -> Vec<String> {
    entries.map(|e| e.config.name.clone()).collect()
}

/// Waits until none of `entries` is connecting, or `deadline`.
async fn settle(entries: &[Arc<Entry>], deadline: Instant) {
    for entry in entries {
        let mut rx = entry.changed.subscribe();
        while connecting(entry) {
            if tokio::time::timeout_at(deadline, rx.changed())
                .await
                .is_err()
            {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::named_servers;

    fn names(text: &str, servers: &[&str]) -> Vec<String> {
        let mut found: Vec<String> = named_servers(text, servers.iter().copied())
            .into_iter()
            .collect();
        found.sort();
        found
    }

    #[test]
    fn a_prompt_names_a_server_as_a_word_or_in_a_tool_name() {
        let servers = ["github", "my-db", "db", "fs"];
        assert_eq!(names("ask GitHub for the issues", &servers), ["github"]);
        assert_eq!(names("use my_db, then stop", &servers), ["my_db"]);
        assert_eq!(names("call /mcp__db__query now", &servers), ["db"]);
        assert!(names("the database is down; githubby", &servers).is_empty());
    }
}
