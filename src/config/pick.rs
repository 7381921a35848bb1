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
    /// The name is unknown here: an extension may register it (see `Config`).
    pub(super) pending: bool,
    /// The origins the user named (see `Config::user_hosts`).
    pub(super) user_hosts: Vec<String>,
}

/// Reads the configuration files: the user's, and the project's when the folder is trusted
/// (`--trust`, or the trust list) and it is not the user's own file.
pub(super) fn load_files(
    cli: &Overrides,
    cwd: &std::path::Path,
    home: Option<&std::path::Path>,
) -> Result<crate::config::settings::Files, ConfigError> {
    let user = crate::config::settings::user_file(home);
    let project = crate::config::settings::project_file(cwd);
    let project = (Some(&project) != user.as_ref()).then_some(project);
    let mut files = crate::config::settings::Files::load_user(user.as_deref())?;
    let trusted =
        project.as_ref().is_some_and(|p| p.exists()) && project_trusted(cli, cwd, home, &files);
    files.load_project(project.as_deref(), trusted)?;
    Ok(files)
}

/// Whether the project folder `cwd` is trusted: `--trust`, it is HOME, or the trust list of
/// the user's file as `files` read it (the file is read once at start, not again here).
pub(super) fn project_trusted(
    cli: &Overrides,
    cwd: &std::path::Path,
    home: Option<&std::path::Path>,
    files: &crate::config::settings::Files,
) -> bool {
    trusted(cwd, home, cli.trust, || {
        files.user_trust.as_ref().is_some_and(|l| l.trusts(cwd))
    })
}

/// Whether the folder `cwd` is trusted: `flag` (`--trust`), the trust list, or it is HOME.
pub fn folder_trusted(cwd: &std::path::Path, home: Option<&std::path::Path>, flag: bool) -> bool {
    trusted(cwd, home, flag, || {
        crate::config::trust::TrustStore::in_home(home)
            .and_then(|t| t.list())
            .is_ok_and(|l| l.trusts(cwd))
    })
}

/// `flag`, or `cwd` is HOME, or `listed` says so (asked last: it may read the user's file).
fn trusted(
    cwd: &std::path::Path,
    home: Option<&std::path::Path>,
    flag: bool,
    listed: impl FnOnce() -> bool,
) -> bool {
    flag || home.is_some_and(|h| h == cwd) || listed()
}

/// The provider from `--provider`, `provider` (config, `MYPI_PROVIDER`) or the API keys in
/// the environment, whether mypi fell back to faux, and the provider's key and endpoint.
/// `env` is the environment alone; the files are its lower layer.
pub(super) fn pick_provider(
    cli: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
    files: &crate::config::settings::Files,
    extensions: bool,
) -> Result<Picked, ConfigError> {
    let var = |k: &str| env(k).or_else(|| files.lookup(k));
    let user_hosts = super::keyguard::user_hosts(cli.base_url.as_deref(), env, files);
    let named = cli.provider.clone().or_else(|| var("MYPI_PROVIDER"));
    let (kind, configured, fell_back) = match named.as_deref() {
        Some(name) => match named_provider(name, files) {
            Ok((kind, configured)) => (kind, configured, false),
            // An extension may register it once loaded.
            Err(ConfigError::UnknownProvider { .. }) if extensions => {
                return Ok(Picked {
                    kind: ProviderKind::Faux,
                    name: name.to_string(),
                    fell_back: false,
                    api_key: None,
                    base_url: None,
                    first_model: None,
                    pending: true,
                    user_hosts,
                })
            }
            Err(e) => return Err(e),
        },
        None if var("OPENAI_API_KEY").is_some() || var("OPENAI_BASE_URL").is_some() => {
            (ProviderKind::OpenAi, None, false)
        }
        None if var("ANTHROPIC_API_KEY").is_some() => (ProviderKind::Anthropic, None, false),
        None => (ProviderKind::Faux, None, cli.faux_script.is_none()),
    };
    let key_var = key_var(kind, configured.as_ref());
    let url = base_url(cli, env, files, kind, configured.as_ref());
    if let Some(u) = &url.value {
        check_base_url(u, url.from)?;
    }
    let route = super::keyguard::Route {
        kind,
        key_var: &key_var,
        api_key: var(&key_var),
        base_url: url.value.as_deref(),
        url_from_project: url.project.as_deref(),
        provider: configured.as_ref(),
    };
    let api_key = super::keyguard::route_key(route, &user_hosts)?;
    let name = named.unwrap_or_else(|| kind.name().to_string());
    let reach = Reach {
        kind,
        name: &name,
        api_key: api_key.as_deref(),
        base_url: url.value.as_deref(),
        key_var: &key_var,
        key_named: configured.as_ref().is_some_and(|p| p.api_key_env.is_some()),
    };
    check_key(&reach, configured.is_some())?;
    Ok(Picked {
        kind,
        name,
        fell_back,
        api_key,
        base_url: url.value,
        first_model: configured.and_then(|p| p.models.first().map(|m| m.name.clone())),
        pending: false,
        user_hosts,
    })
}

/// A provider's endpoint, what gave it, and the project file's `file:line` if that did.
struct BaseUrl {
    value: Option<String>,
    from: &'static str,
    project: Option<String>,
}

/// The endpoint, highest layer first: `--base-url`, `MYPI_BASE_URL`, the API's own variable
/// (`OPENAI_BASE_URL`, for a built-in provider), a file's `base_url`, the provider's table.
fn base_url(
    cli: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
    files: &crate::config::settings::Files,
    kind: ProviderKind,
    configured: Option<&crate::config::settings::NamedProvider>,
) -> BaseUrl {
    let plain = |value: Option<String>, from| BaseUrl {
        value,
        from,
        project: None,
    };
    let url_var = kind.env_vars().1;
    if let Some(u) = &cli.base_url {
        return plain(Some(u.clone()), "--base-url");
    }
    if let Some(u) = env("MYPI_BASE_URL") {
        return plain(Some(u), "MYPI_BASE_URL");
    }
    if let Some(u) = env(url_var).filter(|_| configured.is_none()) {
        return plain(Some(u), url_var);
    }
    if let Some(e) = files.entry("base_url") {
        return BaseUrl {
            value: Some(e.value.clone()),
            from: "base_url",
            project: e.project.then(|| e.source.clone()),
        };
    }
    match configured {
        Some(p) => BaseUrl {
            value: p.base_url.clone(),
            from: "the provider's base_url",
            project: (p.project && p.base_url.is_some()).then(|| p.source.clone()),
        },
        None => plain(None, url_var),
    }
}

/// The API of the provider `name`: a built-in one, or a configured `[providers.NAME]` (which
/// comes back too).
pub fn named_provider(
    name: &str,
    files: &crate::config::settings::Files,
) -> Result<(ProviderKind, Option<crate::config::settings::NamedProvider>), ConfigError> {
    match (ProviderKind::parse(name), files.provider(name)) {
        (Some(kind), _) => Ok((kind, None)),
        (None, Some(p)) => Ok((p.api, Some(p.clone()))),
        (None, None) => {
            let names: Vec<String> = files.providers.iter().map(|p| p.name.clone()).collect();
            Err(ConfigError::UnknownProvider {
                name: name.to_string(),
                configured: if names.is_empty() {
                    " (none configured in ~/.agents/config.toml)".into()
                } else {
                    format!(", and the configured {}", names.join(", "))
                },
            })
        }
    }
}

/// The environment variable that holds the provider's key.
pub fn key_var(
    kind: ProviderKind,
    configured: Option<&crate::config::settings::NamedProvider>,
) -> String {
    configured
        .and_then(|p| p.api_key_env.clone())
        .unwrap_or_else(|| kind.env_vars().0.to_string())
}

/// A provider as it would be reached: what [`check_key`] looks at.
pub struct Reach<'a> {
    pub kind: ProviderKind,
    pub name: &'a str,
    pub api_key: Option<&'a str>,
    pub base_url: Option<&'a str>,
    pub key_var: &'a str,
    /// The provider names its key's variable (`api_key_env`): then it needs the key, base
    /// URL or not.
    pub key_named: bool,
}

/// Refuses a provider that needs a key it has not got (an OpenAI-compatible one with a base
/// URL may need none). `by_name`: the error names the provider and its variable, rather
/// than the built-in flags' wording.
pub fn check_key(r: &Reach, by_name: bool) -> Result<(), ConfigError> {
    let missing = match r.kind {
        ProviderKind::OpenAi => r.api_key.is_none() && (r.base_url.is_none() || r.key_named),
        ProviderKind::Anthropic => r.api_key.is_none(),
        ProviderKind::Faux => false,
    };
    match (missing, by_name, r.kind) {
        (false, ..) => Ok(()),
        (true, true, _) => Err(ConfigError::MissingKey {
            provider: r.name.to_string(),
            var: r.key_var.to_string(),
        }),
        (true, false, ProviderKind::Anthropic) => Err(ConfigError::MissingAnthropicKey),
        (true, false, _) => Err(ConfigError::MissingOpenAiKey),
    }
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
