//! Which provider a run talks to ([`pick_provider`]): `--provider`, the configuration's
//! `provider` (a built-in API or a `[providers.NAME]`), or the API keys in the environment;
//! its key, its endpoint (checked to have a scheme) and its default model. Also which
//! configuration files are read ([`load_files`]).

use super::{ConfigError, Overrides, ProviderKind};

/// The provider chosen, and how to reach it.
pub(super) struct Picked {
    pub(super) kind: ProviderKind,
    pub(super) name: String,
    pub(super) fell_back: bool,
    pub(super) api_key: Option<String>,
    pub(super) base_url: Option<String>,
    /// A configured provider's first model (its default).
    pub(super) first_model: Option<String>,
}

/// Reads the configuration files: the user's, and the project's when the folder is trusted
/// (`--trust`, or the trust list) and it is not the user's own file.
pub(super) fn load_files(
    cli: &Overrides,
    cwd: &std::path::Path,
    home: Option<&std::path::Path>,
) -> Result<crate::settings::Files, ConfigError> {
    let user = crate::settings::user_file(home);
    let project = crate::settings::project_file(cwd);
    let project = (Some(&project) != user.as_ref()).then_some(project);
    let trusted = cli.trust
        || project.as_ref().is_some_and(|p| p.is_file())
            && crate::trust::TrustStore::in_home(home)
                .and_then(|t| t.decision(cwd))
                .is_ok_and(|d| d == crate::trust::Decision::Trusted);
    Ok(crate::settings::Files::load(
        user.as_deref(),
        project.as_deref(),
        trusted,
    )?)
}

/// The provider from `--provider`, `provider` (config, `MYPI_PROVIDER`) or the API keys in
/// the environment, whether mypi fell back to faux, and the provider's key and endpoint.
pub(super) fn pick_provider(
    cli: &Overrides,
    var: &dyn Fn(&str) -> Option<String>,
    files: &crate::settings::Files,
) -> Result<Picked, ConfigError> {
    let named = cli.provider.clone().or_else(|| var("MYPI_PROVIDER"));
    let (kind, configured, fell_back) = match named.as_deref() {
        Some(name) => match (ProviderKind::parse(name), files.provider(name)) {
            (Some(kind), _) => (kind, None, false),
            (None, Some(p)) => (p.api, Some(p.clone()), false),
            (None, None) => {
                let names: Vec<String> = files.providers.iter().map(|p| p.name.clone()).collect();
                return Err(ConfigError::UnknownProvider {
                    name: name.to_string(),
                    configured: if names.is_empty() {
                        " (none configured in ~/.agents/config.toml)".into()
                    } else {
                        format!(", and the configured {}", names.join(", "))
                    },
                });
            }
        },
        None if var("OPENAI_API_KEY").is_some() || var("OPENAI_BASE_URL").is_some() => {
            (ProviderKind::OpenAi, None, false)
        }
        None if var("ANTHROPIC_API_KEY").is_some() => (ProviderKind::Anthropic, None, false),
        None => (ProviderKind::Faux, None, cli.faux_script.is_none()),
    };
    let (key_var, url_var) = kind.env_vars();
    let key_var = configured
        .as_ref()
        .and_then(|p| p.api_key_env.clone())
        .unwrap_or(key_var.to_string());
    let api_key = var(&key_var);
    let (base_url, from) = match (&cli.base_url, var("MYPI_BASE_URL"), &configured) {
        (Some(u), _, _) => (Some(u.clone()), "--base-url"),
        (None, Some(u), _) => (Some(u), "base_url"),
        (None, None, Some(p)) => (p.base_url.clone(), "the provider's base_url"),
        (None, None, None) => (var(url_var), url_var),
    };
    if let Some(url) = &base_url {
        check_base_url(url, from)?;
    }
    let name = named.unwrap_or_else(|| kind.name().to_string());
    match kind {
        ProviderKind::OpenAi if api_key.is_none() && base_url.is_none() => {
            return Err(match configured {
                Some(_) => ConfigError::MissingKey {
                    provider: name,
                    var: key_var,
                },
                None => ConfigError::MissingOpenAiKey,
            })
        }
        ProviderKind::Anthropic if api_key.is_none() => {
            return Err(match configured {
                Some(_) => ConfigError::MissingKey {
                    provider: name,
                    var: key_var,
                },
                None => ConfigError::MissingAnthropicKey,
            })
        }
        _ => {}
    }
    Ok(Picked {
        kind,
        name,
        fell_back,
        api_key,
        base_url,
        first_model: configured.and_then(|p| p.models.first().map(|m| m.name.clone())),
    })
}

/// A base URL must name its scheme: `localhost:11434/v1` would otherwise be read as a URL
/// with the scheme `localhost`.
fn check_base_url(url: &str, from: &'static str) -> Result<(), ConfigError> {
    let u = url.trim();
    if u.starts_with("http://") || u.starts_with("https://") {
        return Ok(());
    }
    let rest = u.split_once("://").map_or(u, |(_, r)| r);
    let local =
        rest.starts_with("localhost") || rest.starts_with("127.") || rest.starts_with("[::1]");
    let scheme = if local { "http" } else { "https" };
    Err(ConfigError::BadBaseUrl {
        from,
        url: url.to_string(),
        suggestion: format!("{scheme}://{rest}"),
    })
}
