//! What each server offered the last time it connected (tools and prompts, as protocol JSON),
//! kept under `~/.agents/cache/mcp/`, so that its tools can be offered while it is still
//! starting: a prompt gives its short grace only to servers never seen before (see
//! `waiting.rs`). A call of a cached tool waits for the connection; the fresh lists replace
//! the cached ones as soon as the server is up.
//!
//! Whether the server had resources is kept too, so that the resource tools are offered with
//! its cached tools (a listing waits for the connection).
//!
//! How a stdio server ended the last time mypi closed it is kept beside the lists (a
//! `.exit` file): a server seen not to exit on the end of its input is sent SIGTERM at once
//! the next time instead of being given a grace it never uses (server-everything keeps
//! running on a timer, and the grace would cost every `mypi -p` a second). Only a server still
//! running after the whole grace is taken for one that does not exit, so one that exits
//! slowly (on a busy machine, say) is never remembered wrongly. That is learnt again after
//! [`RELEARN`], in case the server changed.
//!
//! The file is keyed by a hash of the entry's name and transport, so a changed entry starts
//! without a cache. A file that cannot be read or parsed is simply no cache.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::config::{ServerConfig, Transport};
use super::conn::Lists;

/// The largest cache file read back.
const MAX_BYTES: u64 = 4 * 1024 * 1024;
/// How long a server seen not to exit on the end of its input is closed without the grace.
pub const RELEARN: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

fn fnv1a64(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The cache file of `config` in `dir`.
fn file(dir: &Path, config: &ServerConfig) -> PathBuf {
    let what = match &config.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => json!(["stdio", command, args, env, cwd]),
        Transport::Http { url, headers, sse } => {
            // Header values (tokens) are not part of what identifies the server.
            let names: Vec<&String> = headers.keys().collect();
            let kind = if *sse { "sse" } else { "http" };
            json!([kind, url, names])
        }
    };
    let key = fnv1a64(&format!("{}\n{what}", config.name));
    dir.join(format!(
        "{}-{key:016x}.json",
        super::naming::sanitize(&config.name)
    ))
}

/// What the last connection offered.
pub struct Cached {
    /// Its tools and prompts (resources are listed fresh: they are read through the server).
    pub lists: Lists,
    /// Whether it had resources, so the resource tools are offered while it starts (a file
    /// written before this was kept says no).
    pub has_resources: bool,
}

/// What is cached for `config`, if anything.
pub fn load(dir: &Path, config: &ServerConfig) -> Option<Cached> {
    let path = file(dir, config);
    if std::fs::metadata(&path).ok()?.len() > MAX_BYTES {
        return None;
    }
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    let list = |k: &str| v.get(k).and_then(Value::as_array).cloned();
    Some(Cached {
        lists: Lists {
            tools: list("tools")?,
            prompts: list("prompts").unwrap_or_default(),
            ..Lists::default()
        },
        has_resources: v["has_resources"].as_bool().unwrap_or(false),
    })
}

/// Keeps `lists` and whether the server has resources for `config` (best effort: a cache
/// that cannot be written is no cache).
pub fn save(dir: &Path, config: &ServerConfig, lists: &Lists, has_resources: bool) {
    let text = json!({
        "tools": lists.tools,
        "prompts": lists.prompts,
        "has_resources": has_resources,
    })
    .to_string();
    if text.len() as u64 > MAX_BYTES || std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let path = file(dir, config);
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    if std::fs::write(&tmp, text).is_ok() && std::fs::rename(&tmp, &path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// The file saying `config`'s server kept running after its stdin closed.
fn exit_file(dir: &Path, config: &ServerConfig) -> PathBuf {
    file(dir, config).with_extension("exit")
}

/// Whether closing `config`'s server should give it the end-of-input grace: yes, unless it
/// was seen not to exit on it less than [`RELEARN`] ago.
pub fn eof_grace_worth(dir: &Path, config: &ServerConfig) -> bool {
    let learnt = std::fs::metadata(exit_file(dir, config))
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok());
    !matches!(learnt, Some(age) if age < RELEARN)
}

/// Keeps whether `config`'s server exited on the end of its input within the grace (best
/// effort; the file exists only for a server that did not).
pub fn remember_eof(dir: &Path, config: &ServerConfig, exited: bool) {
    let path = exit_file(dir, config);
    if exited {
        let _ = std::fs::remove_file(path);
    } else if std::fs::create_dir_all(dir).is_ok() {
        let _ = std::fs::write(path, "kept running after its stdin closed\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn entry(name: &str, command: &str) -> ServerConfig {
        ServerConfig {
            name: name.into(),
            transport: Transport::Stdio {
                command: command.into(),
                args: vec![],
                env: BTreeMap::new(),
                cwd: None,
            },
            enabled: true,
            timeout: std::time::Duration::from_secs(1),
            protocol: None,
            exposure: Default::default(),
            source: PathBuf::from("x"),
            oauth: Default::default(),
        }
    }

    #[test]
    fn lists_come_back_for_the_same_entry_only() {
        let dir = crate::platform::testutil::TempDir::new("mcp-cache");
        let lists = Lists {
            tools: vec![json!({"name": "echo"})],
            prompts: vec![json!({"name": "p"})],
            ..Lists::default()
        };
        save(&dir.0, &entry("s", "a"), &lists, true);
        let back = load(&dir.0, &entry("s", "a")).unwrap();
        assert_eq!(back.lists.tools, lists.tools);
        assert_eq!(back.lists.prompts, lists.prompts);
        assert!(back.has_resources);
        save(&dir.0, &entry("s", "a"), &lists, false);
        assert!(!load(&dir.0, &entry("s", "a")).unwrap().has_resources);
        assert!(load(&dir.0, &entry("s", "b")).is_none(), "another command");
        assert!(load(&dir.0, &entry("t", "a")).is_none(), "another name");
        std::fs::write(file(&dir.0, &entry("s", "a")), "{not json").unwrap();
        assert!(load(&dir.0, &entry("s", "a")).is_none());
    }

    #[test]
    fn a_file_from_before_resources_were_kept_still_loads() {
        let dir = crate::platform::testutil::TempDir::new("mcp-cache-old");
        let old = json!({"tools": [{"name": "echo"}], "prompts": []}).to_string();
        std::fs::write(file(&dir.0, &entry("s", "a")), old).unwrap();
        let back = load(&dir.0, &entry("s", "a")).unwrap();
        assert_eq!(back.lists.tools, vec![json!({"name": "echo"})]);
        assert!(!back.has_resources);
    }

    #[test]
    fn a_server_seen_not_to_exit_on_eof_is_closed_without_the_grace_for_a_while() {
        let dir = crate::platform::testutil::TempDir::new("mcp-cache-eof");
        let (a, b) = (entry("s", "a"), entry("s", "b"));
        assert!(eof_grace_worth(&dir.0, &a), "nothing known: the grace");
        remember_eof(&dir.0, &a, false);
        assert!(!eof_grace_worth(&dir.0, &a));
        assert!(eof_grace_worth(&dir.0, &b), "another entry");
        let old = std::time::SystemTime::now() - RELEARN - std::time::Duration::from_secs(1);
        let f = std::fs::File::options()
            .write(true)
            .open(exit_file(&dir.0, &a))
            .unwrap();
        f.set_modified(old).unwrap();
        assert!(eof_grace_worth(&dir.0, &a), "learnt again after RELEARN");
        remember_eof(&dir.0, &a, false);
        assert!(!eof_grace_worth(&dir.0, &a), "and remembered afresh");
        remember_eof(&dir.0, &a, true);
        assert!(eof_grace_worth(&dir.0, &a));
    }
}
