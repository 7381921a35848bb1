//! `mypi config`: every setting's effective value and where it came from (a flag, an
//! environment variable, a file and line, or the default), then the configured providers.

use super::{Files, Ty, KEYS};
use crate::config::Overrides;

/// The flag that sets `key`, and the value it gives, when the command line has it.
fn flag(cli: &Overrides, key: &str) -> Option<(&'static str, String)> {
    let off = |set: bool, name| set.then(|| (name, "false".to_string()));
    match key {
        "provider" => cli.provider.clone().map(|v| ("--provider", quoted(&v))),
        "model" => cli.model.clone().map(|v| ("--model", quoted(&v))),
        "base_url" => cli.base_url.clone().map(|v| ("--base-url", quoted(&v))),
        "max_turns" => cli.max_turns.map(|n| ("--max-turns", n.to_string())),
        "extensions.enabled" => off(cli.no_extensions, "--no-extensions"),
        "extensions.builtin" => off(cli.no_builtin_extensions, "--no-builtin-extensions"),
        "extensions.watch" => off(cli.no_watch, "--no-watch"),
        "mcp.enabled" => off(cli.no_mcp, "--no-mcp"),
        _ => None,
    }
}

fn quoted(s: &str) -> String {
    format!("{s:?}")
}

/// An environment variable's value as the setting's type shows it.
fn typed(ty: Ty, raw: &str) -> String {
    match ty {
        Ty::Str => quoted(raw),
        Ty::Bool => (!matches!(raw.trim(), "0" | "false")).to_string(),
        Ty::Count | Ty::Number | Ty::Paths => raw.trim().to_string(),
    }
}

/// The effective configuration, one line per setting: `key = value  # source`.
pub fn effective(cli: &Overrides, env: &dyn Fn(&str) -> Option<String>, files: &Files) -> String {
    let mut rows: Vec<(String, String)> = Vec::new();
    for key in KEYS {
        let (value, source) = if let Some((name, v)) = flag(cli, key.name) {
            (v, name.to_string())
        } else if let Some(v) = key
            .env
            .and_then(|e| env(e).filter(|v| !v.trim().is_empty()))
        {
            (
                typed(key.ty, &v),
                format!("environment {}", key.env.unwrap_or_default()),
            )
        } else if let Some(e) = files.entry(key.name) {
            (typed(key.ty, &e.value), e.source.clone())
        } else {
            (key.default.to_string(), "default".to_string())
        };
        rows.push((format!("{} = {value}", key.name), source));
    }
    for p in &files.providers {
        let models: Vec<String> = p
            .models
            .iter()
            .map(|m| match m.context_window {
                Some(w) => format!("{} ({w} tokens)", m.name),
                None => m.name.clone(),
            })
            .collect();
        let mut line = format!("providers.{} = {{ api = {:?}", p.name, p.api.name());
        if let Some(u) = &p.base_url {
            line.push_str(&format!(", base_url = {u:?}"));
        }
        if let Some(k) = &p.api_key_env {
            line.push_str(&format!(", api_key_env = {k:?}"));
        }
        if !models.is_empty() {
            line.push_str(&format!(", models: {}", models.join(", ")));
        }
        line.push_str(" }");
        rows.push((line, p.source.clone()));
    }
    let width = rows.iter().map(|(l, _)| l.len()).max().unwrap_or(0).min(60);
    let mut out: String = rows
        .iter()
        .map(|(line, source)| format!("{line:<width$}  # {source}\n"))
        .collect();
    for n in &files.notices {
        out.push_str(&format!("# {n}\n"));
    }
    out.trim_end().to_string()
}
