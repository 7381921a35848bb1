//! The `tool_search` tool: the model's way to the deferred tools (see [`super::exposure`]).
//! A query is ranked against every deferred tool by BM25 over the tool's name (split at
//! `_`, `-`, `.` and camelCase, counted twice), its server's name and its description; the
//! best matches come back as names and descriptions, and the names in the result's
//! `details` (`{"found": [...]}`), from which the agent offers them from the next request
//! on ([`found_in`]). The index is built once per set of registered tools (the registry's
//! generation) and kept, so a query costs a tokenisation and a walk of a few postings.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::{Exposure, Tool, ToolContext, ToolEntry, ToolRegistry, SEARCH_TOOL};
use crate::vocab::protocol::{Message, Role, ToolOutput, ToolSpec};

/// Matches a query returns when it asks for no number.
const DEFAULT_LIMIT: usize = 5;
/// The most matches a query returns.
const MAX_LIMIT: usize = 20;
/// Characters of a tool's description a match shows.
const SHOWN: usize = 400;
/// BM25's term-frequency saturation and length normalisation.
const K1: f32 = 1.2;
const B: f32 = 0.75;

/// The words of `text`, lower case: split at anything not a letter or digit and where
/// camelCase turns (`getUserName` → get, user, name; `HTTPServer` → http, server), with a
/// plural `s` dropped (`issues` → issue).
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            flush(&mut word, &mut out);
            continue;
        }
        let prev = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1);
        let turn = c.is_uppercase()
            && prev.is_some_and(|p| {
                p.is_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_uppercase() && next.is_some_and(|n| n.is_lowercase()))
            });
        if turn {
            flush(&mut word, &mut out);
        }
        word.extend(c.to_lowercase());
    }
    flush(&mut word, &mut out);
    out
}

fn flush(word: &mut String, out: &mut Vec<String>) {
    if word.is_empty() {
        return;
    }
    let mut w = std::mem::take(word);
    if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
        w.pop();
    }
    out.push(w);
}

/// The BM25 index of a set of tools.
pub struct Index {
    entries: Vec<Arc<ToolEntry>>,
    terms: HashMap<String, Vec<(u32, f32)>>,
    lengths: Vec<f32>,
    average: f32,
}

impl Index {
    /// Indexes `entries`: name (twice), server and description.
    pub fn new(entries: Vec<Arc<ToolEntry>>) -> Index {
        let mut terms: HashMap<String, Vec<(u32, f32)>> = HashMap::new();
        let mut lengths = Vec::with_capacity(entries.len());
        for (doc, e) in entries.iter().enumerate() {
            let name = tokens(own_name(&e.spec().name));
            let mut words: Vec<String> = name.iter().chain(&name).cloned().collect();
            words.extend(tokens(e.tool.server().unwrap_or("")));
            words.extend(tokens(&e.spec().description));
            lengths.push(words.len() as f32);
            let mut counts: HashMap<String, f32> = HashMap::new();
            for w in words {
                *counts.entry(w).or_default() += 1.0;
            }
            for (w, n) in counts {
                terms.entry(w).or_default().push((doc as u32, n));
            }
        }
        let average = lengths.iter().sum::<f32>() / (lengths.len().max(1) as f32);
        Index {
            entries,
            terms,
            lengths,
            average: average.max(1.0),
        }
    }

    /// The entries `keep` accepts that match `query`, best first, at most `limit`; a tool
    /// named exactly by the query comes first.
    pub fn search(
        &self,
        query: &str,
        limit: usize,
        keep: impl Fn(&ToolEntry) -> bool,
    ) -> Vec<Arc<ToolEntry>> {
        let mut words = tokens(query);
        words.sort();
        words.dedup();
        let n = self.entries.len() as f32;
        let mut scores = vec![0f32; self.entries.len()];
        for w in &words {
            let Some(postings) = self.terms.get(w) else {
                continue;
            };
            let df = postings.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in postings {
                let norm = K1 * (1.0 - B + B * self.lengths[doc as usize] / self.average);
                scores[doc as usize] += idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        let exact = query.trim();
        for (i, e) in self.entries.iter().enumerate() {
            let name = &e.spec().name;
            if !exact.is_empty() && (name == exact || own_name(name) == exact) {
                scores[i] += 1e6;
            }
        }
        let mut hits: Vec<(f32, usize)> = scores
            .iter()
            .enumerate()
            .filter(|(_, s)| **s > 0.0)
            .map(|(i, s)| (*s, i))
            .filter(|(_, i)| keep(&self.entries[*i]))
            .collect();
        hits.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        hits.truncate(limit);
        hits.into_iter()
            .map(|(_, i)| self.entries[i].clone())
            .collect()
    }
}

/// A tool's own part of its agent name (`mcp__server__tool` → `tool`).
fn own_name(name: &str) -> &str {
    name.strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
        .map_or(name, |(_, tool)| tool)
}

/// The index, and the registry generation it was built at.
pub type Cache = Arc<Mutex<Option<(u64, Arc<Index>)>>>;

/// The `tool_search` tool of one registry. A search waits for the servers still connecting
/// (at most their connection wait): their tools may be the ones looked for.
pub struct ToolSearch {
    spec: ToolSpec,
    registry: Weak<ToolRegistry>,
    index: Cache,
}

impl ToolSearch {
    pub fn new(registry: Weak<ToolRegistry>) -> ToolSearch {
        ToolSearch {
            spec: ToolSpec {
                name: SEARCH_TOOL.into(),
                description: "Search the tools that are not offered directly (the deferred \
                    tools of MCP servers) by what they do or the service they belong to. \
                    Returns the best matches' names and descriptions; each tool found can be \
                    called from your next turn on. Use it when no offered tool fits the task."
                    .into(),
                parameters: json!({"type": "object", "properties": {
                    "query": {"type": "string", "description": "words for what the tool does"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                              "description": "how many tools at most (default 5)"}
                }, "required": ["query"]}),
            },
            registry,
            index: Cache::default(),
        }
    }

    /// The index of the registry's tools as they are now (rebuilt after a registration or
    /// removal).
    pub fn index(&self, registry: &ToolRegistry) -> Arc<Index> {
        index(&self.index, registry)
    }

    /// Answers `query`: the deferred tools that match, best first, at most `limit`.
    pub fn answer(&self, registry: &ToolRegistry, query: &str, limit: usize) -> ToolOutput {
        answer(&self.index, registry, query, limit)
    }
}

/// The index `cache` holds of `registry`'s tools, rebuilt when they changed.
pub fn index(cache: &Cache, registry: &ToolRegistry) -> Arc<Index> {
    {
        let generation = registry.generation();
        let mut slot = cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((g, index)) = slot.as_ref() {
            if *g == generation {
                return index.clone();
            }
        }
        let entries = registry.all().into_iter().map(|(e, _)| e).collect();
        let index = Arc::new(Index::new(entries));
        *slot = Some((generation, index.clone()));
        index
    }
}

/// Answers `query` from `registry`'s deferred tools.
fn answer(cache: &Cache, registry: &ToolRegistry, query: &str, limit: usize) -> ToolOutput {
    {
        let index = index(cache, registry);
        let keep = |e: &ToolEntry| {
            registry.exposure_of(e) == Exposure::Deferred && registry.is_active(&e.spec().name)
        };
        let hits = index.search(query, limit, keep);
        if hits.is_empty() {
            return ToolOutput::ok(no_match(registry, query));
        }
        let mut text = format!(
            "{} found; each can be called from your next turn on:\n",
            crate::vocab::text::plural(hits.len() as u64, "tool")
        );
        for e in &hits {
            let server = e
                .tool
                .server()
                .map(|s| format!(" (server {s})"))
                .unwrap_or_default();
            let about = crate::vocab::text::one_line(&e.spec().description, SHOWN);
            text.push_str(&format!("- {}{server}: {about}\n", e.spec().name));
        }
        let names: Vec<&str> = hits.iter().map(|e| e.spec().name.as_str()).collect();
        let mut out = ToolOutput::ok(text.trim_end().to_string());
        out.details = Some(json!({ "found": names }));
        out
    }
}

/// What a search that found nothing says: where the deferred tools come from.
fn no_match(registry: &ToolRegistry, query: &str) -> String {
    let mut servers: Vec<(String, usize)> = Vec::new();
    for e in registry.deferred() {
        let s = e.tool.server().unwrap_or("other").to_string();
        match servers.iter_mut().find(|(n, _)| *n == s) {
            Some((_, count)) => *count += 1,
            None => servers.push((s, 1)),
        }
    }
    let from: Vec<String> = servers
        .iter()
        .map(|(s, n)| format!("{s} ({})", crate::vocab::text::plural(*n as u64, "tool")))
        .collect();
    format!(
        "no deferred tool matches {query:?}; try other words (what the tool does, or the \
         service it belongs to). The deferred tools come from: {}",
        if from.is_empty() {
            "none".to_string()
        } else {
            from.join(", ")
        }
    )
}

impl Tool for ToolSearch {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    fn rebind(&self, registry: Weak<ToolRegistry>) -> Option<Arc<dyn Tool>> {
        Some(Arc::new(ToolSearch::new(registry)))
    }

    fn call(&self, args: Value, _ctx: ToolContext) -> BoxFuture<'static, ToolOutput> {
        let query = args["query"].as_str().unwrap_or("").to_string();
        let limit = args["limit"]
            .as_u64()
            .map_or(DEFAULT_LIMIT, |n| (n as usize).clamp(1, MAX_LIMIT));
        let (registry, cache) = (self.registry.clone(), self.index.clone());
        Box::pin(async move {
            let Some(registry) = registry.upgrade() else {
                return ToolOutput::error("the tools are gone");
            };
            registry.settle_late().await;
            answer(&cache, &registry, &query, limit)
        })
    }
}

/// Adds to `found` (once each, in order) the tools `messages` found: the names in the
/// `details` of `tool_search` results (or, in a resumed session, whose messages come without
/// details, the names their text lists), and the name of every other tool result (a deferred
/// tool the model called by its exact name counts as found).
pub fn found_in(messages: &[Message], found: &mut Vec<String>) {
    for m in messages.iter().filter(|m| m.role == Role::Tool) {
        let Some(name) = m.name.as_deref() else {
            continue;
        };
        if name != SEARCH_TOOL {
            add(found, name);
            continue;
        }
        match m.details.as_ref().and_then(|d| d["found"].as_array()) {
            Some(names) => names
                .iter()
                .filter_map(Value::as_str)
                .for_each(|n| add(found, n)),
            // A resumed session's messages come without details: the names are in the text.
            None => listed(&m.content).for_each(|n| add(found, n)),
        }
    }
}

/// The tool names a `tool_search` result lists (its `- NAME (server S): ...` lines).
fn listed(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter_map(|l| {
        let rest = l.strip_prefix("- ")?;
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        (end > 0).then(|| &rest[..end])
    })
}

fn add(found: &mut Vec<String>, name: &str) {
    if !found.iter().any(|f| f == name) {
        found.push(name.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn found_names_come_from_details_or_the_text() {
        let call = crate::vocab::protocol::ToolCall {
            id: "1".into(),
            name: SEARCH_TOOL.into(),
            arguments: json!({}),
            invalid_arguments: None,
        };
        let text = "2 tools found; ...:\n- mcp__a__x (server a): X.\n- y: Y.";
        let mut m = Message::tool_result(&call, &ToolOutput::ok(text));
        let mut found = vec!["y".to_string()];
        found_in(std::slice::from_ref(&m), &mut found);
        assert_eq!(found, ["y", "mcp__a__x"]);
        m.details = Some(json!({"found": ["z"]}));
        found_in(&[m], &mut found);
        assert_eq!(found, ["y", "mcp__a__x", "z"]);
    }

    #[test]
    fn tokens_split_snake_camel_and_plurals() {
        assert_eq!(
            tokens("mcp__gh__create_pullRequest HTTPServer issues, class"),
            ["mcp", "gh", "create", "pull", "request", "http", "server", "issue", "class"]
        );
    }
}
