//! MCP server configuration: the `mcpServers` shape shared by Claude Code, Cursor and pi, read
//! from the project's `.mcp.json` (trusted projects only), `~/.agents/mcp.json`, or an explicit
//! file. Project entries win by name; `${VAR}` and `${VAR:-default}` expand in `command`,
//! `args`, `env`, `headers` and `url` (nothing is ever run through a shell), except in the
//! project's HTTP entries ([`secrets`]). A malformed file or
//! entry is one precise error naming the file and the entry; the other entries still load.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

pub mod exposure;
pub mod oauth;
mod secrets;
use secrets::withhold_secrets;

/// How long a request to a server may take when the entry sets no `timeout`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// How mypi reaches a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking JSON-RPC on stdin/stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP, or with `sse` the legacy HTTP+SSE transport (`"type": "sse"`: an
    /// event stream from `url` names the address messages are posted to).
    Http {
        url: String,
        headers: BTreeMap<String, String>,
        sse: bool,
    },
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    pub name: String,
    pub transport: Transport,
    /// `enabled: false` keeps the entry without connecting.
    pub enabled: bool,
    pub timeout: Duration,
    /// The protocol generation to speak (`protocol`): `None` / `"2025-11-25"` = initialize,
    /// `"2026-07-28"` = stateless with `server/discover`, `"auto"` = try that first.
    pub protocol: Option<String>,
    /// `exposure` and `toolExposure`: how its tools reach the model ([`exposure`]).
    pub exposure: exposure::ExposureConfig,
    /// The file it came from.
    pub source: PathBuf,
    /// How mypi signs in to an HTTP server behind OAuth (the entry's `oauth`).
    pub oauth: oauth::OAuthSettings,
}

/// A file or entry that could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {message}", file.display(), entry.as_ref().map(|e| format!(" (server {e:?})")).unwrap_or_default())]
pub struct ConfigProblem {
    pub file: PathBuf,
    pub entry: Option<String>,
    pub message: String,
}

/// The servers of one or more files, and what was wrong with the rest.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Servers {
    pub servers: Vec<ServerConfig>,
    pub problems: Vec<ConfigProblem>,
}

impl Servers {
    /// Reads `files` in order, lowest priority first: a later file's entry replaces an
    /// earlier one of the same name. Every file given must exist (a missing one is a
    /// problem): the caller names the implicit files (`~/.agents/mcp.json`, `.mcp.json`)
    /// only when they are there, and a file the user named must not be skipped unsaid.
    /// `project` is the project's `.mcp.json`, whose HTTP entries may not name environment
    /// variables in their url or headers ([`withhold_secrets`]).
    pub fn load(
        files: &[PathBuf],
        project: Option<&Path>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Servers {
        let mut by_name: BTreeMap<String, ServerConfig> = BTreeMap::new();
        let mut problems = Vec::new();
        for file in files {
            if !file.exists() {
                problems.push(problem(file, None, "there is no such file"));
                continue;
            }
            // Bounded: a FIFO or a huge file is refused, not waited on or read whole.
            let text = match crate::config::settings::read_capped(file, MAX_FILE_BYTES) {
                Ok(t) => t,
                Err(e) => {
                    problems.push(problem(file, None, format!("cannot read it: {e}")));
                    continue;
                }
            };
            let mut parsed = parse(file, &text, env);
            if project == Some(file.as_path()) {
                withhold_secrets(file, &text, &mut parsed);
            }
            problems.extend(parsed.problems);
            for s in parsed.servers {
                by_name.insert(key(&s.name), s);
            }
        }
        Servers {
            servers: by_name.into_values().collect(),
            problems,
        }
    }
}

/// The largest MCP configuration file read.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// Server names that differ only in `-` / `_` (or case) are the same server.
pub fn key(name: &str) -> String {
    name.chars().map(fold).collect()
}

/// Whether `a` and `b` name the same server ([`key`] of both equal), without making either
/// key (this runs on every call).
pub fn same_server(a: &str, b: &str) -> bool {
    a.chars().map(fold).eq(b.chars().map(fold))
}

/// One character of a server's [`key`].
fn fold(c: char) -> char {
    match c {
        '-' => '_',
        c => c.to_ascii_lowercase(),
    }
}

fn problem(file: &Path, entry: Option<&str>, message: impl Into<String>) -> ConfigProblem {
    ConfigProblem {
        file: file.to_path_buf(),
        entry: entry.map(str::to_string),
        message: message.into(),
    }
}

/// Parses the text of one file.
pub fn parse(file: &Path, text: &str, env: &dyn Fn(&str) -> Option<String>) -> Servers {
    let mut out = Servers::default();
    let root: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            out.problems.push(problem(
                file,
                None,
                format!(
                    "not valid JSON (line {}, column {}): {e}",
                    e.line(),
                    e.column()
                ),
            ));
            return out;
        }
    };
    let Some(entries) = root.get("mcpServers").and_then(Value::as_object) else {
        out.problems.push(problem(
            file,
            None,
            "expected an object with \"mcpServers\": {\"name\": {...}}",
        ));
        return out;
    };
    // Names that are one server ([`key`]): the first in the file is used, the others are
    // errors naming it.
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for name in entry_order(text, entries) {
        let Some(entry) = entries.get(&name) else {
            continue;
        };
        if let Some(first) = seen.get(&key(&name)) {
            out.problems.push(problem(
                file,
                Some(&name),
                format!(
                    "names the same server as the entry {first:?} before it (names that \
                     differ only in '-' and '_' or in case are one server); {first:?} is \
                     used, this one is not: rename or remove one of them"
                ),
            ));
            continue;
        }
        seen.insert(key(&name), name.clone());
        match server(file, &name, entry, env) {
            Ok(s) => out.servers.push(s),
            Err(message) => out.problems.push(problem(file, Some(&name), message)),
        }
    }
    out
}

/// The names of the `mcpServers` entries in the order of the file (a JSON object read as a
/// [`Value`] comes sorted by name), each once; the sorted names if the order cannot be read.
fn entry_order(text: &str, entries: &Map<String, Value>) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Root {
        #[serde(rename = "mcpServers")]
        servers: Names,
    }
    struct Names(Vec<String>);
    impl<'de> serde::Deserialize<'de> for Names {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Visit;
            impl<'de> serde::de::Visitor<'de> for Visit {
                type Value = Names;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Names, A::Error> {
                    let mut names = Vec::new();
                    while let Some((k, serde::de::IgnoredAny)) = map.next_entry::<String, _>()? {
                        names.push(k);
                    }
                    Ok(Names(names))
                }
            }
            d.deserialize_map(Visit)
        }
    }
    let mut names = serde_json::from_str::<Root>(text)
        .map(|r| r.servers.0)
        .unwrap_or_default();
    let mut once = std::collections::HashSet::new();
    names.retain(|n| once.insert(n.clone()));
    if names.len() != entries.len() {
        return entries.keys().cloned().collect();
    }
    names
}

fn server(
    file: &Path,
    name: &str,
    entry: &Value,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ServerConfig, String> {
    let fields = entry
        .as_object()
        .ok_or("an entry must be an object with \"command\" or \"url\"")?;
    if name.trim().is_empty() {
        return Err("a server needs a name".into());
    }
    let enabled = match fields.get("enabled") {
        None => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("\"enabled\" must be true or false".into()),
    };
    let timeout = match fields.get("timeout") {
        None => DEFAULT_TIMEOUT,
        Some(v) => match v.as_f64() {
            Some(s) if s > 0.0 && s.is_finite() => Duration::from_secs_f64(s),
            _ => return Err("\"timeout\" must be a number of seconds above 0".into()),
        },
    };
    let kind = fields.get("type").and_then(Value::as_str);
    let transport = match (kind, fields.get("command"), fields.get("url")) {
        (Some(other), ..) if !matches!(other, "stdio" | "http" | "streamable-http" | "sse") => {
            return Err(format!(
                "unknown \"type\" {other:?}: use \"stdio\" (with \"command\"), \"http\" (with \"url\") or \"sse\" (the legacy HTTP+SSE transport, with \"url\")"
            ))
        }
        (_, Some(_), Some(_)) => return Err("give either \"command\" or \"url\", not both".into()),
        (Some(t @ ("http" | "streamable-http" | "sse")), Some(_), None) => {
            return Err(format!(
                "\"type\": {t:?} needs \"url\", but the entry has \"command\" (a stdio \
                 server: remove \"type\" or make it \"stdio\")"
            ))
        }
        (Some("stdio"), None, Some(_)) => {
            return Err("\"type\": \"stdio\" needs \"command\", but the entry has \"url\" \
                        (an HTTP server: remove \"type\" or make it \"http\")"
                .into())
        }
        (_, Some(command), None) => stdio(fields, command, env)?,
        (_, None, Some(url)) => http(fields, url, kind == Some("sse"), env)?,
        (_, None, None) => return Err("needs \"command\" (stdio) or \"url\" (http)".into()),
    };
    let protocol = match fields.get("protocol") {
        None => None,
        Some(Value::String(p))
            if matches!(
                p.as_str(),
                "2026-07-28" | "discover" | "auto" | "2025-11-25" | "initialize"
            ) =>
        {
            Some(p.clone())
        }
        Some(_) => {
            return Err(
                "\"protocol\" must be \"2025-11-25\" (initialize, the default), \
                        \"2026-07-28\" (stateless, server/discover) or \"auto\" (try \
                        server/discover, fall back to initialize)"
                    .into(),
            )
        }
    };
    let oauth = oauth::parse(fields, matches!(transport, Transport::Http { .. }), env)?;
    Ok(ServerConfig {
        name: name.to_string(),
        transport,
        enabled,
        timeout,
        protocol,
        exposure: exposure::parse(fields)?,
        source: file.to_path_buf(),
        oauth,
    })
}

fn stdio(
    fields: &Map<String, Value>,
    command: &Value,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Transport, String> {
    let command = command
        .as_str()
        .filter(|c| !c.trim().is_empty())
        .ok_or("\"command\" must be a program name or path")?;
    let args = match fields.get("args") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|a| {
                a.as_str()
                    .map(|s| expand(s, env))
                    .ok_or("\"args\" must be strings")
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(_) => return Err("\"args\" must be a list of strings".into()),
    };
    let cwd = match fields.get("cwd") {
        None => None,
        Some(Value::String(c)) => Some(PathBuf::from(expand(c, env))),
        Some(_) => return Err("\"cwd\" must be a path".into()),
    };
    Ok(Transport::Stdio {
        command: expand(command, env),
        args,
        env: string_map(fields.get("env"), "env", env)?,
        cwd,
    })
}

fn http(
    fields: &Map<String, Value>,
    url: &Value,
    sse: bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Transport, String> {
    let url = expand(url.as_str().ok_or("\"url\" must be a string")?, env);
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(format!(
            "\"url\" {url:?} must start with http:// or https://"
        ));
    }
    Ok(Transport::Http {
        url,
        headers: string_map(fields.get("headers"), "headers", env)?,
        sse,
    })
}

fn string_map(
    value: Option<&Value>,
    what: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<BTreeMap<String, String>, String> {
    let Some(value) = value else {
        return Ok(BTreeMap::new());
    };
    let fields = value
        .as_object()
        .ok_or_else(|| format!("\"{what}\" must be an object of strings"))?;
    fields
        .iter()
        .map(|(k, v)| match v.as_str() {
            Some(s) => Ok((k.clone(), expand(s, env))),
            None => Err(format!("\"{what}.{k}\" must be a string")),
        })
        .collect()
}

/// Whether an `env` or `headers` value comes from a command (`"!op read …"`, run when the
/// server starts: see `mcp/commands.rs`); `"!!…"` is a literal `!…`.
pub fn is_command(value: &str) -> bool {
    value.starts_with('!') && !value.starts_with("!!")
}

/// Expands `${VAR}` and `${VAR:-default}`; an unset `${VAR}` becomes empty. Only variables:
/// nothing is run.
pub fn expand(text: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        let value = env(name).filter(|v| !v.is_empty() || default.is_none());
        out.push_str(&value.unwrap_or_else(|| default.unwrap_or("").to_string()));
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests;
