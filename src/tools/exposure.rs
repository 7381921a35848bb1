//! How a tool reaches the model ([`Exposure`]): offered in every request (`direct`), found
//! first through the `tool_search` tool (`deferred`), only from a `code` script and its
//! `search_tools` (`code`), or never (`hidden`: registered, so scripts see it, but neither
//! offered nor callable by the model). A tool says its own
//! exposure ([`super::Tool::exposure`]; MCP servers' tools follow their configuration and
//! the budget of direct tools); the registry builds each request's list from it
//! ([`ToolRegistry::offered`]): the direct tools sorted by name, then the deferred tools the
//! conversation found, in the order they were found, so the list only ever grows at its end
//! and a request's prefix stays byte-stable turn after turn.

use std::sync::Arc;

use super::{ToolEntry, ToolRegistry};

/// The name of the search tool the model gets when some tool is deferred.
pub const SEARCH_TOOL: &str = "tool_search";

/// How a tool reaches the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Exposure {
    /// Offered in every request.
    #[default]
    Direct,
    /// Not offered until `tool_search` finds it (or the model names it exactly); offered
    /// from then on, for the rest of the conversation.
    Deferred,
    /// Registered (scripts see it) but never offered, and not callable by the model.
    Hidden,
    /// Never offered and not callable by the model directly: only a `code` call's script
    /// reaches it (`tools.NAME`, `mcp.SERVER.TOOL`), and finds it with `search_tools`.
    Code,
}

impl Exposure {
    /// Its name in configuration files and script data.
    pub fn as_str(self) -> &'static str {
        match self {
            Exposure::Direct => "direct",
            Exposure::Deferred => "deferred",
            Exposure::Hidden => "hidden",
            Exposure::Code => "code",
        }
    }

    /// The exposure a configuration names (`direct`, `deferred`, `hidden`, `code`; pi's
    /// `codemode` is read as `code`).
    pub fn parse(text: &str) -> Option<Exposure> {
        match text {
            "direct" => Some(Exposure::Direct),
            "deferred" => Some(Exposure::Deferred),
            "hidden" => Some(Exposure::Hidden),
            "code" | "codemode" => Some(Exposure::Code),
            _ => None,
        }
    }

    /// As a byte, for an atomic slot a planner updates.
    pub fn to_u8(self) -> u8 {
        self as u8
    }

    /// From [`Exposure::to_u8`] (anything else is `Direct`).
    pub fn from_u8(b: u8) -> Exposure {
        match b {
            1 => Exposure::Deferred,
            2 => Exposure::Hidden,
            3 => Exposure::Code,
            _ => Exposure::Direct,
        }
    }
}

impl ToolRegistry {
    /// `entry`'s exposure here: its own, except in a child's registry made from a list of
    /// names, where every tool named is direct (hidden ones are never there).
    pub fn exposure_of(&self, entry: &ToolEntry) -> Exposure {
        match entry.tool.exposure() {
            Exposure::Deferred if self.pinned() => Exposure::Direct,
            e => e,
        }
    }

    /// The tools a request offers: the active direct ones sorted by name (`tool_search`
    /// only while some active tool is deferred, or tools may still come: it is registered
    /// when a server defers tools, or is configured to; a tool whose
    /// [`super::Tool::with_indirect`] says so, such as `code` left to its default, only
    /// while some tool is deferred or `code`-only), then those of `found` that are
    /// deferred, in `found`'s order. A name of `found` that is no deferred tool (any more) is
    /// skipped.
    pub fn offered(&self, found: &[String]) -> Vec<Arc<ToolEntry>> {
        let active = self.active();
        let exposures: Vec<Exposure> = active.iter().map(|e| self.exposure_of(e)).collect();
        let deferred = exposures.contains(&Exposure::Deferred);
        let any_deferred = deferred || self.late_pending();
        // Not for servers still connecting: `code` comes with the tools it is the way to.
        let any_indirect = deferred || exposures.contains(&Exposure::Code);
        let mut out: Vec<Arc<ToolEntry>> = active
            .iter()
            .zip(&exposures)
            .filter(|(e, x)| {
                **x == Exposure::Direct
                    && (any_deferred || e.spec().name != SEARCH_TOOL)
                    && (any_indirect || !e.tool.with_indirect())
            })
            .map(|(e, _)| e.clone())
            .collect();
        let direct = out.len();
        for name in found {
            let Ok(i) = active.binary_search_by(|e| e.spec().name.as_str().cmp(name)) else {
                continue;
            };
            let already = out[direct..].iter().any(|e| &e.spec().name == name);
            if exposures[i] == Exposure::Deferred && !already {
                out.push(active[i].clone());
            }
        }
        out
    }

    /// The names of [`ToolRegistry::offered`] (a request lends their specs straight from
    /// the entries).
    pub fn offered_names(&self, found: &[String]) -> Vec<String> {
        self.offered(found)
            .iter()
            .map(|e| e.spec().name.clone())
            .collect()
    }

    /// The tool the model may call as `name`: an active one that is neither hidden nor
    /// `code`-only (a deferred one too, when the model names it exactly, found or not).
    pub fn callable(&self, name: &str) -> Option<Arc<ToolEntry>> {
        self.get(name)
            .filter(|e| !matches!(self.exposure_of(e), Exposure::Hidden | Exposure::Code))
    }

    /// The active deferred tools, sorted by name.
    pub fn deferred(&self) -> Vec<Arc<ToolEntry>> {
        self.active()
            .into_iter()
            .filter(|e| self.exposure_of(e) == Exposure::Deferred)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{Tool, ToolContext};
    use crate::vocab::owner::Owner;
    use crate::vocab::protocol::{ToolOutput, ToolSpec};
    use futures_util::future::BoxFuture;
    use serde_json::{json, Value};

    struct T(ToolSpec, Exposure);

    impl Tool for T {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        fn exposure(&self) -> Exposure {
            self.1
        }
        fn call(&self, _args: Value, _ctx: ToolContext) -> BoxFuture<'static, ToolOutput> {
            Box::pin(async { ToolOutput::ok("") })
        }
    }

    fn add(reg: &ToolRegistry, name: &str, x: Exposure) {
        let spec = ToolSpec {
            name: name.into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
        };
        reg.register(Owner::core(), Arc::new(T(spec, x)));
    }

    #[test]
    fn found_tools_come_last_in_the_order_found_and_hidden_never() {
        let reg = ToolRegistry::new();
        add(&reg, "b", Exposure::Direct);
        add(&reg, SEARCH_TOOL, Exposure::Direct);
        add(&reg, "a", Exposure::Direct);
        assert_eq!(
            reg.offered_names(&[]),
            ["a", "b"],
            "no search without deferred"
        );
        add(&reg, "z", Exposure::Deferred);
        add(&reg, "y", Exposure::Deferred);
        add(&reg, "h", Exposure::Hidden);
        assert_eq!(reg.offered_names(&[]), ["a", "b", SEARCH_TOOL]);
        let found = [
            "z".to_string(),
            "a".into(),
            "h".into(),
            "y".into(),
            "z".into(),
        ];
        assert_eq!(reg.offered_names(&found), ["a", "b", SEARCH_TOOL, "z", "y"]);
        assert!(reg.callable("h").is_none() && reg.get("h").is_some());
        assert!(reg.callable("y").is_some());
        assert_eq!(reg.deferred().len(), 2);
    }
}
