//! Whether a provider's API key may go to its endpoint. A trusted project's
//! `.agents/config.toml` may name an endpoint (`base_url`, a `[providers.NAME]` table) and a
//! key variable (`api_key_env`), but trusting a project's scripts is not consenting to ship
//! one's keys to the host it names: when the project's file gave the endpoint or the key's
//! variable, a key the user set goes only to a host the user named (the command line, the
//! environment, `~/.agents/config.toml`) or to the API's official endpoint with the API's own
//! variable. Otherwise mypi stops with [`ConfigError::KeyToProjectHost`], naming the file and
//! line, the variable and the host (never the key). A project provider that names no
//! `api_key_env` is sent no key at such a host (an OpenAI-compatible server may need none).

use super::{ConfigError, ProviderKind};
use crate::config::settings::{Files, NamedProvider};

/// The origin (`scheme://host:port`) of `url`, as requests would reach it; `url` itself when
/// it does not parse.
pub fn origin(url: &str) -> String {
    match reqwest::Url::parse(url.trim()) {
        Ok(u) => u.origin().ascii_serialization(),
        Err(_) => url.trim().to_string(),
    }
}

/// The official endpoint of an API.
fn official(kind: ProviderKind) -> Option<&'static str> {
    kind.official_base_url()
}

/// The origins the user named: `--base-url`, the `*_BASE_URL` variables, and the base URLs
/// of the user's own file (its `base_url` and its providers').
pub fn user_hosts(
    cli_base_url: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
    files: &Files,
) -> Vec<String> {
    let mut urls: Vec<String> = cli_base_url.map(str::to_string).into_iter().collect();
    for var in ["MYPI_BASE_URL", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"] {
        urls.extend(env(var));
    }
    let user_entries = files.entries.iter().filter(|e| !e.project);
    urls.extend(
        user_entries
            .filter(|e| e.key.name == "base_url")
            .map(|e| e.value.clone()),
    );
    let user_providers = files.providers.iter().filter(|p| !p.project);
    urls.extend(user_providers.filter_map(|p| p.base_url.clone()));
    urls.iter().map(|u| origin(u)).collect()
}

/// A provider's key on its way to its endpoint.
pub struct Route<'a> {
    pub kind: ProviderKind,
    /// The variable the key is read from.
    pub key_var: &'a str,
    pub api_key: Option<String>,
    /// The endpoint (`None`: the API's official one).
    pub base_url: Option<&'a str>,
    /// `file:line` of the project's setting that gave the endpoint, if it did.
    pub url_from_project: Option<&'a str>,
    /// The configured provider, if it is one.
    pub provider: Option<&'a NamedProvider>,
}

/// The key to send on `route` (`None`: none), or the refusal when the project's file would
/// send a key of the user's to a host the user did not name (`user_hosts`).
pub fn route_key(route: Route, user_hosts: &[String]) -> Result<Option<String>, ConfigError> {
    let project_provider = route.provider.filter(|p| p.project);
    let key_from_project = project_provider.filter(|p| p.api_key_env.is_some());
    let at = match (route.url_from_project, key_from_project) {
        (Some(at), _) => at.to_string(),
        (None, Some(p)) => p.source.clone(),
        (None, None) => return Ok(route.api_key),
    };
    if route.api_key.is_none() {
        return Ok(None);
    }
    let Some(url) = route.base_url.or(official(route.kind)) else {
        return Ok(route.api_key);
    };
    let host = origin(url);
    let official_pair = official(route.kind).is_some_and(|o| origin(o) == host)
        && route.key_var == route.kind.env_vars().0;
    if official_pair || user_hosts.contains(&host) {
        return Ok(route.api_key);
    }
    // A project provider that names no key variable is sent none (it may need none).
    if project_provider.is_some()
        && key_from_project.is_none()
        && route.kind == ProviderKind::OpenAi
    {
        return Ok(None);
    }
    Err(ConfigError::KeyToProjectHost {
        at,
        var: route.key_var.to_string(),
        host,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provider(project: bool, key: Option<&str>) -> NamedProvider {
        NamedProvider {
            name: "p".into(),
            api: ProviderKind::OpenAi,
            base_url: Some("http://evil.example:8080/v1".into()),
            api_key_env: key.map(str::to_string),
            models: Vec::new(),
            source: "/w/.agents/config.toml:3".into(),
            project,
        }
    }

    fn route<'a>(p: &'a NamedProvider, var: &'a str) -> Route<'a> {
        Route {
            kind: ProviderKind::OpenAi,
            key_var: var,
            api_key: Some("secret".into()),
            base_url: p.base_url.as_deref(),
            url_from_project: p.project.then_some(p.source.as_str()),
            provider: Some(p),
        }
    }

    #[test]
    fn a_project_provider_cannot_send_a_users_key_to_its_host() {
        let p = provider(true, Some("GITHUB_TOKEN"));
        let e = route_key(route(&p, "GITHUB_TOKEN"), &[]).unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("/w/.agents/config.toml:3: "), "{text}");
        assert!(text.contains("GITHUB_TOKEN") && text.contains("http://evil.example:8080"));
        assert!(!text.contains("secret"), "{text}");
        // A host the user named is fine.
        let hosts = vec![origin("http://evil.example:8080/other")];
        assert_eq!(
            route_key(route(&p, "GITHUB_TOKEN"), &hosts).unwrap(),
            Some("secret".into())
        );
        // No key variable named: the default key is not sent, and that is no error.
        let p = provider(true, None);
        assert_eq!(route_key(route(&p, "OPENAI_API_KEY"), &[]).unwrap(), None);
        // The user's own provider is the user's business.
        let p = provider(false, Some("GITHUB_TOKEN"));
        assert!(route_key(route(&p, "GITHUB_TOKEN"), &[]).is_ok());
    }

    #[test]
    fn a_project_key_variable_goes_to_the_official_host_only_if_it_is_the_apis_own() {
        let mut p = provider(true, Some("GITHUB_TOKEN"));
        p.base_url = None;
        let mut r = route(&p, "GITHUB_TOKEN");
        r.url_from_project = None;
        assert!(route_key(r, &[]).is_err());
        let p = provider(true, Some("OPENAI_API_KEY"));
        let mut r = route(&p, "OPENAI_API_KEY");
        r.base_url = None;
        r.url_from_project = None;
        assert!(route_key(r, &[]).is_ok());
    }
}
