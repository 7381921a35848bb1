//! Values of a server entry's `env` and `headers` that come from a command, as pi allows:
//! `"!op read op://vault/github/token"` runs `sh -c 'op read …'` when the server starts (not
//! when the file is read: start-up never waits for it) and the value is its standard output,
//! trailing newlines removed. `"!!…"` is a literal value starting with `!`. A command has
//! [`LIMIT`] to finish, in the project folder, its output cut at [`MAX_OUTPUT`]; one that
//! fails, times out or prints nothing fails the server's start with a message naming the
//! entry and the key (never the output, which is a secret). The files these come from act
//! only where mypi runs commands anyway: the user's own files, and a trusted project's
//! `.mcp.json` (read only in a trusted project), whose HTTP entries may not use them (see
//! `config/secrets.rs`: a project's server would be sent the user's secret).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::config::{is_command, ServerConfig, Transport};
use crate::platform::process::{self, Bounded, End, Sinks};

/// How long a value's command may take.
pub const LIMIT: Duration = Duration::from_secs(10);
/// The most output a value takes.
pub const MAX_OUTPUT: usize = 64 * 1024;

/// `config` with its values from commands run (borrowed when it has none).
pub async fn resolve<'c>(
    config: &'c ServerConfig,
    cwd: &Path,
) -> Result<Cow<'c, ServerConfig>, String> {
    let values = match &config.transport {
        Transport::Stdio { env, .. } => env,
        Transport::Http { headers, .. } => headers,
    };
    if !values
        .values()
        .any(|v| is_command(v) || v.starts_with("!!"))
    {
        return Ok(Cow::Borrowed(config));
    }
    let mut resolved = BTreeMap::new();
    for (key, value) in values {
        let value = match value.strip_prefix('!') {
            Some(literal) if literal.starts_with('!') => literal.to_string(),
            Some(command) => run(command, cwd)
                .await
                .map_err(|why| format!("the value of {key:?} comes from a command that {why}"))?,
            None => value.clone(),
        };
        resolved.insert(key.clone(), value);
    }
    let mut config = config.clone();
    match &mut config.transport {
        Transport::Stdio { env, .. } => *env = resolved,
        Transport::Http { headers, .. } => *headers = resolved,
    }
    Ok(Cow::Owned(config))
}

/// Runs `command` with `sh -c` in `cwd`: its output, or why there is none.
async fn run(command: &str, cwd: &Path) -> Result<String, String> {
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null());
    let (child, group) = process::spawn(cmd).map_err(|e| format!("could not start ({e})"))?;
    let (out, err) = (Bounded::shared(), Bounded::shared());
    let sinks = Sinks::Split(out.clone(), err);
    let end = process::run(child, group, LIMIT, &Default::default(), sinks).await;
    match end {
        End::Exited(Ok(status)) if status.success() => {}
        End::Exited(Ok(status)) => return Err(format!("failed ({status})")),
        End::Exited(Err(e)) => return Err(format!("failed ({e})")),
        End::TimedOut => return Err(format!("took over {} s", LIMIT.as_secs())),
        End::Cancelled => return Err("was cancelled".into()),
    }
    let text = Bounded::take(&out).into_text();
    let text = text.trim_end_matches(['\n', '\r']);
    if text.is_empty() {
        return Err("printed nothing".into());
    }
    if text.len() > MAX_OUTPUT || text.contains(['\n', '\r', '\0']) {
        return Err(format!(
            "printed more than one line (or over {} KiB)",
            MAX_OUTPUT / 1024
        ));
    }
    Ok(text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(env: &[(&str, &str)]) -> ServerConfig {
        let text = serde_json::json!({"mcpServers": {"s": {"command": "x",
            "env": env.iter().map(|(k, v)| (k.to_string(), serde_json::json!(v)))
                .collect::<serde_json::Map<_, _>>()}}})
        .to_string();
        let parsed = super::super::config::parse(Path::new("m.json"), &text, &|_| None);
        parsed.servers.into_iter().next().unwrap()
    }

    fn env_of(c: &ServerConfig) -> BTreeMap<String, String> {
        match &c.transport {
            Transport::Stdio { env, .. } => env.clone(),
            _ => panic!("stdio"),
        }
    }

    #[tokio::test]
    async fn values_from_commands_and_literals() {
        let dir = std::env::temp_dir();
        let c = entry(&[
            ("A", "!printf 's3cret\\n'"),
            ("B", "!!bang"),
            ("C", "plain"),
        ]);
        let resolved = resolve(&c, &dir).await.unwrap();
        let env = env_of(&resolved);
        assert_eq!(env["A"], "s3cret");
        assert_eq!(env["B"], "!bang");
        assert_eq!(env["C"], "plain");
        let c = entry(&[("C", "plain")]);
        assert!(matches!(resolve(&c, &dir).await.unwrap(), Cow::Borrowed(_)));
    }

    #[tokio::test]
    async fn a_failing_command_names_the_key_not_its_output() {
        let dir = std::env::temp_dir();
        let failing = entry(&[("TOKEN", "!echo leaked; exit 3")]);
        let e = resolve(&failing, &dir).await.unwrap_err();
        assert!(e.contains("\"TOKEN\"") && e.contains("failed"), "{e}");
        assert!(!e.contains("leaked"), "{e}");
        let silent = entry(&[("TOKEN", "!true")]);
        let e = resolve(&silent, &dir).await.unwrap_err();
        assert!(e.contains("printed nothing"), "{e}");
    }
}
