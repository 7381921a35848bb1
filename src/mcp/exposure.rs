//! Which MCP tools are offered directly ([`plan`]). A tool the configuration sets
//! (`exposure`, `toolExposure`) keeps its setting; the others are direct while every direct
//! MCP tool fits the [`Budget`] (default: 40 tools and 20 KB of definitions), and past it
//! the servers with the most bytes of such tools have them deferred first, one server after
//! the other, until the rest fits: a small server stays direct beside a huge one.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use super::config::exposure::ExposureConfig;
use crate::tools::search::ToolSearch;
use crate::tools::{Exposure, ToolRegistry};
use crate::vocab::owner::{Handle, Owner};

/// Every server's tools as planned, the budget, and the `tool_search` tool once some tool
/// is deferred (it stays, so that requests keep their prefix).
#[derive(Default)]
pub struct Exposures {
    servers: Mutex<HashMap<String, ServerTools>>,
    budget: Mutex<Budget>,
    search: Mutex<Option<Handle>>,
}

impl Exposures {
    pub fn set_budget(&self, budget: Budget) {
        *lock(&self.budget) = budget;
    }

    /// Plans again with `server`'s tools (under its [`super::config::key`]) now `tools`
    /// (`None`: it has none), registering `tool_search` in `registry` once a tool is deferred.
    pub fn update(&self, key: &str, tools: Option<ServerTools>, registry: &Arc<ToolRegistry>) {
        let mut servers = lock(&self.servers);
        match tools {
            Some(t) => servers.insert(key.to_string(), t),
            None => servers.remove(key),
        };
        plan(&servers, *lock(&self.budget));
        let any_deferred = servers
            .values()
            .flat_map(|s| &s.tools)
            .any(|t| Exposure::from_u8(t.slot.load(Ordering::Acquire)) == Exposure::Deferred);
        drop(servers);
        if any_deferred {
            self.offer_search(registry);
        }
    }

    /// Registers `tool_search` in `registry`, unless it is there: some tool is deferred, or
    /// will be (a server configured `deferred` still connecting).
    pub fn offer_search(&self, registry: &Arc<ToolRegistry>) {
        let mut search = lock(&self.search);
        if search.is_none() {
            let tool = Arc::new(ToolSearch::new(Arc::downgrade(registry)));
            *search = Some(registry.register(Owner::new("mcp", 0), tool).handle);
        }
    }

    /// The exposure of `server`'s tool `tool`, when it is planned.
    pub fn of(&self, key: &str, tool: &str) -> Option<Exposure> {
        let servers = lock(&self.servers);
        let t = servers.get(key)?.tools.iter().find(|t| t.tool == tool)?;
        Some(Exposure::from_u8(t.slot.load(Ordering::Acquire)))
    }

    /// How many of `server`'s tools are direct, deferred, hidden and `code`-only.
    pub fn counts(&self, key: &str) -> [usize; 4] {
        let mut out = [0; 4];
        if let Some(s) = lock(&self.servers).get(key) {
            for t in &s.tools {
                out[t.slot.load(Ordering::Acquire).min(3) as usize] += 1;
            }
        }
        out
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// How much of the MCP tools' definitions every request may carry before servers with no
/// setting are deferred (`[mcp] direct_tools`, `[mcp] direct_kb`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub tools: usize,
    pub bytes: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            tools: 40,
            bytes: 20 * 1024,
        }
    }
}

/// One tool of a server, as the plan sees it.
pub struct Planned {
    /// The server's own name for it (what `toolExposure` names).
    pub tool: String,
    /// Bytes of its definition (name, description and schema as JSON).
    pub bytes: usize,
    /// Where its exposure is kept; the agent tool reads it.
    pub slot: Arc<AtomicU8>,
}

/// A server's tools and settings.
pub struct ServerTools {
    pub config: ExposureConfig,
    pub tools: Vec<Planned>,
}

/// Decides every tool's exposure of `servers` under `budget` and writes it to its slot.
pub fn plan(servers: &HashMap<String, ServerTools>, budget: Budget) {
    let (mut count, mut bytes) = (0usize, 0usize);
    // Per server with tools left to the budget: (bytes, count, key).
    let mut auto: Vec<(usize, usize, &str)> = Vec::new();
    for (key, s) in servers {
        let (mut n, mut b) = (0, 0);
        for t in &s.tools {
            match s.config.of(&t.tool) {
                Some(Exposure::Direct) => {
                    count += 1;
                    bytes += t.bytes;
                }
                Some(_) => {}
                None => {
                    n += 1;
                    b += t.bytes;
                }
            }
        }
        if n > 0 {
            auto.push((b, n, key));
            count += n;
            bytes += b;
        }
    }
    // The largest first; ties by name, so the plan is the same every time.
    auto.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(b.2)));
    let mut deferred: Vec<&str> = Vec::new();
    for (b, n, key) in auto {
        if count <= budget.tools && bytes <= budget.bytes {
            break;
        }
        deferred.push(key);
        count -= n;
        bytes -= b;
    }
    for (key, s) in servers {
        let over = deferred.contains(&key.as_str());
        for t in &s.tools {
            let x = match s.config.of(&t.tool) {
                Some(x) => x,
                None if over => Exposure::Deferred,
                None => Exposure::Direct,
            };
            t.slot.store(x.to_u8(), Ordering::Release);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn server(n: usize, each: usize, config: serde_json::Value) -> ServerTools {
        ServerTools {
            config: super::super::config::exposure::parse(config.as_object().unwrap()).unwrap(),
            tools: (0..n)
                .map(|i| Planned {
                    tool: format!("t{i}"),
                    bytes: each,
                    slot: Arc::default(),
                })
                .collect(),
        }
    }

    fn of(s: &ServerTools, i: usize) -> Exposure {
        Exposure::from_u8(s.tools[i].slot.load(Ordering::Acquire))
    }

    #[test]
    fn the_largest_servers_are_deferred_until_the_rest_fits() {
        let mut servers = HashMap::new();
        servers.insert("big".to_string(), server(400, 640, json!({})));
        servers.insert("mid".to_string(), server(30, 600, json!({})));
        servers.insert("small".to_string(), server(5, 500, json!({})));
        servers.insert(
            "set".to_string(),
            server(
                3,
                100,
                json!({"exposure": "deferred", "toolExposure": {"t1": "direct", "t2": "hidden"}}),
            ),
        );
        plan(&servers, Budget::default());
        assert_eq!(of(&servers["big"], 0), Exposure::Deferred);
        // 30 tools of 600 bytes: 18 KB, with small's 2.5 KB over 20 KB: deferred too.
        assert_eq!(of(&servers["mid"], 0), Exposure::Deferred);
        assert_eq!(of(&servers["small"], 4), Exposure::Direct);
        let set = &servers["set"];
        assert_eq!(
            (of(set, 0), of(set, 1), of(set, 2)),
            (Exposure::Deferred, Exposure::Direct, Exposure::Hidden)
        );
        // Within the budget nothing moves.
        servers.remove("big");
        servers.remove("mid");
        plan(&servers, Budget::default());
        assert_eq!(of(&servers["small"], 0), Exposure::Direct);
    }
}
