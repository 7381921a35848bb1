//! Regular expressions for Rhai scripts (`regex_match`, `regex_find`, `regex_replace` in
//! [`globals`](super::globals)): the `regex` crate's syntax, linear-time matching (no
//! backreferences or look-around, so no pattern can backtrack for ever), each pattern
//! compiled under [`SIZE_LIMIT`] and kept in a cache of the last [`CACHED`] patterns, so a
//! handler called on every event does not compile its pattern again each time.
//!
//! Memory: what compiling and matching allocate is charged to the extension's VM like the
//! rest of its allocations; the limits keep the cache to some 40 MiB at the very worst
//! (eight patterns at the size limit), an everyday pattern takes a few KiB.

use std::cell::RefCell;

use ::rhai::{Array, Dynamic};
use regex::{Regex, RegexBuilder};

/// The most memory one compiled pattern may take (a Unicode class such as `\w` takes some
/// 50 KiB per repetition: `\w{80}` fits, `\w{100}` does not).
pub const SIZE_LIMIT: usize = 4 << 20;

/// The most memory the lazy DFA of one pattern may take (past it, matching falls back to
/// slower engines, still in linear time).
const DFA_LIMIT: usize = 1 << 20;

/// How many compiled patterns an extension keeps.
const CACHED: usize = 8;

/// The longest piece of a pattern an error message quotes.
const SHOWN: usize = 60;

/// An extension's compiled patterns, most recently used last.
#[derive(Default)]
pub struct Patterns {
    cache: RefCell<Vec<(String, Regex)>>,
}

impl Patterns {
    /// The compiled `pattern`; the error names `func` and the pattern.
    pub fn get(&self, func: &str, pattern: &str) -> Result<Regex, String> {
        let mut cache = self.cache.borrow_mut();
        if let Some(i) = cache.iter().position(|(p, _)| p == pattern) {
            let hit = cache.remove(i);
            let re = hit.1.clone();
            cache.push(hit);
            return Ok(re);
        }
        let re = compile(pattern).map_err(|why| format!("{func}: {why}"))?;
        if cache.len() == CACHED {
            cache.remove(0);
        }
        cache.push((pattern.to_string(), re.clone()));
        Ok(re)
    }

    /// `regex_match(pattern, text)`: whether `pattern` matches somewhere in `text`.
    pub fn is_match(&self, pattern: &str, text: &str) -> Result<bool, String> {
        Ok(self.get("regex_match", pattern)?.is_match(text))
    }

    /// `regex_find(pattern, text)`: the first match as `[whole, group 1, ...]` (a group that
    /// did not take part is `()`), or `()` when there is none.
    pub fn find(&self, pattern: &str, text: &str) -> Result<Dynamic, String> {
        let re = self.get("regex_find", pattern)?;
        let Some(caps) = re.captures(text) else {
            return Ok(Dynamic::UNIT);
        };
        let groups: Array = caps
            .iter()
            .map(|g| g.map_or(Dynamic::UNIT, |m| Dynamic::from(m.as_str().to_string())))
            .collect();
        Ok(Dynamic::from_array(groups))
    }

    /// `regex_replace(pattern, text, replacement)`: every match replaced; `$1`, `${name}`
    /// are the groups, `$$` a dollar sign.
    pub fn replace(&self, pattern: &str, text: &str, replacement: &str) -> Result<String, String> {
        let re = self.get("regex_replace", pattern)?;
        Ok(re.replace_all(text, replacement).into_owned())
    }
}

/// Compiles `pattern` under the size limits; the error says what is wrong with it.
fn compile(pattern: &str) -> Result<Regex, String> {
    RegexBuilder::new(pattern)
        .size_limit(SIZE_LIMIT)
        .dfa_size_limit(DFA_LIMIT)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(limit) => format!(
                "the pattern {} is too big (it compiles to more than {})",
                quoted(pattern),
                crate::extensions::crossing::mib(limit)
            ),
            other => format!(
                "invalid pattern {}: {}",
                quoted(pattern),
                syntax_error(&other.to_string())
            ),
        })
}

/// The pattern in backquotes, its start only when it is long.
fn quoted(pattern: &str) -> String {
    match pattern.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("`{}…`", &pattern[..cut]),
        None => format!("`{pattern}`"),
    }
}

/// The `error: ...` line of the regex crate's multi-line message (the rest repeats the
/// pattern with a caret under the fault), or the whole message when it has none.
fn syntax_error(message: &str) -> String {
    message
        .lines()
        .find_map(|l| l.strip_prefix("error: "))
        .unwrap_or(message)
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_keeps_the_last_patterns() {
        let p = Patterns::default();
        for i in 0..CACHED + 4 {
            assert!(p
                .is_match(&format!("a{{{i}}}"), "aaaaaaaaaaaaaaaaaaaaaaaa")
                .unwrap());
        }
        let cache = p.cache.borrow();
        assert_eq!(cache.len(), CACHED);
        assert_eq!(cache[CACHED - 1].0, format!("a{{{}}}", CACHED + 3));
        assert_eq!(cache[0].0, "a{4}");
    }

    #[test]
    fn everyday_patterns_fit_the_size_limit() {
        let p = Patterns::default();
        for pattern in [
            r"\w+",
            r"(?i)\b(todo|fixme|xxx)\b:?\s*(.*)",
            r"[\p{L}\p{N}_]{1,40}",
            r"\w{80}",
            r"^\d{4}-\d{2}-\d{2}$",
            r"sk-[A-Za-z0-9_-]{20,}",
            r"(?m)^\s*(?:local\s+)?function\s+([\w.:]+)",
        ] {
            p.get("regex_match", pattern).unwrap();
        }
    }

    #[test]
    fn errors_name_the_pattern_and_the_fault() {
        let p = Patterns::default();
        let e = p.is_match("(ab", "x").unwrap_err();
        assert_eq!(e, "regex_match: invalid pattern `(ab`: unclosed group");
        let e = p.replace(r"\w{1000}{1000}", "x", "").unwrap_err();
        assert!(
            e.starts_with("regex_replace: the pattern `\\w{1000}{1000}` is too big"),
            "{e}"
        );
        assert!(e.ends_with("(it compiles to more than 4 MiB)"), "{e}");
        let e = p.is_match(r"\w{100}", "x").unwrap_err();
        assert!(e.contains("is too big"), "{e}");
        let long = "a".repeat(100) + "(";
        let e = p.find(&long, "x").unwrap_err();
        assert!(e.contains(&format!("`{}…`", "a".repeat(SHOWN))), "{e}");
    }
}
