//! A server entry's exposure settings: `"exposure"` (the whole server: `direct`, `deferred`
//! or `hidden`) and `"toolExposure"` (per tool: `{"NAME": "...", "delete_*": "hidden"}`, an
//! exact name winning over a pattern, a longer pattern over a shorter one). A server (or
//! tool) with no setting is left to the budget of direct tools (see `mcp::exposure`).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::tools::Exposure;

/// What an entry says about how its tools reach the model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExposureConfig {
    /// `"exposure"`: every tool of the server without a setting of its own.
    pub server: Option<Exposure>,
    /// `"toolExposure"`: by the server's own tool name or a `*` pattern.
    pub tools: BTreeMap<String, Exposure>,
}

impl ExposureConfig {
    /// The setting for the server's tool `tool`: its exact name's, else the longest
    /// matching pattern's, else the server's; `None`: left to the budget.
    pub fn of(&self, tool: &str) -> Option<Exposure> {
        if let Some(x) = self.tools.get(tool) {
            return Some(*x);
        }
        self.tools
            .iter()
            .filter(|(p, _)| p.contains('*') && glob(p, tool))
            .max_by_key(|(p, _)| p.len())
            .map(|(_, x)| *x)
            .or(self.server)
    }

    /// Whether any tool of the server may be offered directly: not when the server is
    /// `deferred` or `hidden` and no tool setting says `direct` (a prompt need not wait for
    /// such a server: its tools are found through `tool_search`, which waits for it).
    pub fn may_be_direct(&self) -> bool {
        self.server.is_none_or(|x| x == Exposure::Direct)
            || self.tools.values().any(|x| *x == Exposure::Direct)
    }
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters.
pub fn glob(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if parts.len() == 1 {
        return pattern == name;
    }
    if !name.starts_with(first) || name.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    if !name.ends_with(last) {
        return false;
    }
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(i) => rest = &rest[i + middle.len()..],
            None => return false,
        }
    }
    true
}

fn value(v: &Value, what: &str) -> Result<Exposure, String> {
    v.as_str()
        .and_then(Exposure::parse)
        .ok_or_else(|| format!("{what} must be \"direct\", \"deferred\", \"code\" or \"hidden\""))
}

/// Reads `"exposure"` and `"toolExposure"` of an entry.
pub fn parse(fields: &Map<String, Value>) -> Result<ExposureConfig, String> {
    let server = match fields.get("exposure") {
        None => None,
        Some(v) => Some(value(v, "\"exposure\"")?),
    };
    let mut tools = BTreeMap::new();
    if let Some(v) = fields.get("toolExposure") {
        let map = v.as_object().ok_or(
            "\"toolExposure\" must be an object of tool names (or `*` patterns) and exposures",
        )?;
        for (name, x) in map {
            tools.insert(name.clone(), value(x, &format!("\"toolExposure.{name}\""))?);
        }
    }
    Ok(ExposureConfig { server, tools })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn exact_beats_pattern_and_longer_pattern_beats_shorter() {
        let f = json!({"exposure": "deferred", "toolExposure": {
            "delete_*": "hidden", "delete_branch": "direct", "*": "direct",
            "delete_issue_*": "deferred"
        }});
        let c = parse(f.as_object().unwrap()).unwrap();
        assert_eq!(c.of("delete_repo"), Some(Exposure::Hidden));
        assert_eq!(c.of("delete_branch"), Some(Exposure::Direct));
        assert_eq!(c.of("delete_issue_comment"), Some(Exposure::Deferred));
        assert_eq!(c.of("search"), Some(Exposure::Direct));
        let none = parse(json!({}).as_object().unwrap()).unwrap();
        assert_eq!(none.of("x"), None);
        assert!(parse(json!({"exposure": "lazy"}).as_object().unwrap())
            .unwrap_err()
            .contains("\"exposure\" must be"));
        assert!(
            parse(json!({"toolExposure": {"a": 1}}).as_object().unwrap())
                .unwrap_err()
                .contains("toolExposure.a")
        );
    }

    #[test]
    fn globs() {
        assert!(glob("a*c", "abc") && glob("a*c", "ac") && !glob("a*c", "ab"));
        assert!(glob("*x*", "axb") && !glob("*x*", "ab") && glob("*", ""));
        assert!(!glob("ab*ba", "aba"));
    }
}
