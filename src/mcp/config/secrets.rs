//! What a project's `.mcp.json` may not do with the user's environment: name its variables
//! (`${GITHUB_TOKEN}`) in an HTTP entry's `url` or `headers`, which would send the user's
//! secrets to a server the project names. Such an entry is dropped with a problem naming the
//! variables, never their values. (A stdio entry starts a program of the project's, which
//! can read the environment anyway: its expansions stay.)

use std::path::Path;

use serde_json::Value;

use super::{problem, Servers};

/// Drops the project file's HTTP entries whose `url` or `headers` name environment variables
/// (`${GITHUB_TOKEN}`): trusting a project's servers is not sending them the user's secrets.
/// Each is a problem naming the variables (never their values) and what to do.
pub(super) fn withhold_secrets(file: &Path, text: &str, parsed: &mut Servers) {
    let Ok(root) = serde_json::from_str::<Value>(text) else {
        return;
    };
    let Some(entries) = root.get("mcpServers").and_then(Value::as_object) else {
        return;
    };
    for (name, entry) in entries {
        let Some(url) = entry.get("url").and_then(Value::as_str) else {
            continue;
        };
        let headers = entry.get("headers").and_then(Value::as_object);
        let texts = headers
            .into_iter()
            .flat_map(|h| h.values().filter_map(Value::as_str));
        let texts: Vec<&str> = std::iter::once(url).chain(texts).collect();
        let mut vars: Vec<String> = texts
            .iter()
            .flat_map(|t| t.split("${").skip(1))
            .filter_map(|t| t.split(['}', ':']).next())
            .map(|v| format!("${{{v}}}"))
            .collect();
        // A value from a command (`"!op read …"`) would send its output the same way.
        if texts.iter().any(|t| super::is_command(t)) {
            vars.push("a value from a command (\"!…\")".into());
        }
        if vars.is_empty() {
            continue;
        }
        parsed.servers.retain(|s| s.name != *name);
        parsed.problems.push(problem(
            file,
            Some(name),
            format!(
                "{} in its url or headers: a project's .mcp.json may not send your environment's \
                 variables to a server it names, so this entry is not used; put it in \
                 ~/.agents/mcp.json (or a file you pass with --mcp-config) if you mean it",
                vars.join(", ")
            ),
        ));
    }
}
