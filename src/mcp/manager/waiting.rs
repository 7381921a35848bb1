//! How long what needs a server that is still connecting waits for it. Start-up never waits.
//!
//! - A prompt waits only within [`PROMPT_GRACE`] of the servers' start, and only for servers
//!   whose tools are not known from the cache (a fast server's tools are there for the first
//!   request). A slower server is passed over, once, with a notice: a server that takes 30 s
//!   to start does not delay a prompt that needs none of its tools, and its tools are offered
//!   from the next model request after it is ready.
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

    /// Before a prompt: waits for the servers still connecting whose tools are unknown, up to
    /// [`PROMPT_GRACE`] after the start. Returns those passed over that were not named before
    /// (each is named once).
    pub async fn settle_for_prompt(&self) -> Vec<String> {
        let mut unknown = self.entries();
        unknown.retain(|e| !e.cached.load(Ordering::Acquire) && connecting(e));
        if unknown.is_empty() {
            return Vec::new();
        }
        let started = self.started().unwrap_or_else(Instant::now);
        settle(&unknown, started + PROMPT_GRACE).await;
        names(
            unknown
                .iter()
                .filter(|e| connecting(e) && !e.passed_over.swap(true, Ordering::AcqRel)),
        )
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
