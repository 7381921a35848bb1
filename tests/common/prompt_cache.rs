//! A prompt cache that behaves like Anthropic's, for a fake Messages server: a request's
//! prefix (tools, then system, then messages, block by block) is cached only at its
//! `cache_control` breakpoints; a later request reads the longest prefix written before that
//! ends at one of its breakpoints or up to 20 blocks before one, and writes the prefixes up to
//! its breakpoints. Prefixes under 1024 tokens are not cached. Tokens are bytes / 4.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};

use serde_json::Value;

/// How far before a breakpoint the API looks for a prefix it has.
const LOOKBACK: usize = 20;
/// The shortest prefix the API caches, in tokens.
const MIN_TOKENS: u64 = 1024;

/// What one request cost: `(uncached input, read from the cache, written to it)`.
pub type Served = (u64, u64, u64);

#[derive(Default)]
pub struct PromptCache {
    written: HashSet<u64>,
}

/// A block without its breakpoint mark (the mark is not content).
fn content(block: &Value) -> String {
    let mut b = block.clone();
    if let Some(o) = b.as_object_mut() {
        o.remove("cache_control");
    }
    b.to_string()
}

/// The request's blocks in prefix order, each with whether a breakpoint follows it.
fn blocks(body: &Value) -> Vec<(String, bool)> {
    let mark = |b: &Value| b.get("cache_control").is_some();
    let mut out = Vec::new();
    for tool in body["tools"].as_array().into_iter().flatten() {
        out.push((content(tool), mark(tool)));
    }
    match &body["system"] {
        Value::String(s) => out.push((s.clone(), false)),
        Value::Array(blocks) => out.extend(blocks.iter().map(|b| (content(b), mark(b)))),
        _ => {}
    }
    for m in body["messages"].as_array().into_iter().flatten() {
        let role = m["role"].as_str().unwrap_or_default();
        match &m["content"] {
            Value::String(s) => out.push((format!("{role}:{s}"), false)),
            Value::Array(blocks) => {
                let normal = |b: &Value| match b["type"].as_str() {
                    // A text block is the same content as a plain string.
                    Some("text") => format!("{role}:{}", b["text"].as_str().unwrap_or_default()),
                    _ => format!("{role}:{}", content(b)),
                };
                out.extend(blocks.iter().map(|b| (normal(b), mark(b))));
            }
            _ => {}
        }
    }
    out
}

impl PromptCache {
    /// Serves `body`: what it reads and writes, and what is left uncached.
    pub fn serve(&mut self, body: &Value) -> Served {
        let blocks = blocks(body);
        let (mut hashes, mut tokens) = (Vec::new(), Vec::new());
        let (mut h, mut bytes) = (0u64, 0u64);
        for (text, _) in &blocks {
            let mut hasher = DefaultHasher::new();
            (h, text).hash(&mut hasher);
            h = hasher.finish();
            bytes += text.len() as u64;
            hashes.push(h);
            tokens.push(bytes / 4);
        }
        let total = bytes / 4;
        let breakpoints: Vec<usize> = (0..blocks.len()).filter(|&i| blocks[i].1).collect();
        let read = breakpoints
            .iter()
            .flat_map(|&b| b.saturating_sub(LOOKBACK)..=b)
            .filter(|&i| tokens[i] >= MIN_TOKENS && self.written.contains(&hashes[i]))
            .map(|i| tokens[i])
            .max()
            .unwrap_or(0);
        let mut furthest = read;
        for &b in &breakpoints {
            if tokens[b] >= MIN_TOKENS && self.written.insert(hashes[b]) {
                furthest = furthest.max(tokens[b]);
            }
        }
        let write = furthest - read;
        (total - read - write, read, write)
    }
}
