//! `/model`: the models of the configured providers, and switching to one, across providers
//! (`/model local/qwen2.5-coder`, `/model anthropic/claude-sonnet-4-5`) or within the current
//! one (`/model NAME`). The choice is written to the session (its header, or a
//! `model_change` line) and `--continue` goes on with it.

use super::{App, AppError};
use crate::config::{keyguard, pick, Config, ProviderKind};
use crate::vocab::protocol::{openai_read_rate, Prices};

/// How to reach a provider: its API, endpoint and key.
struct Reached {
    kind: ProviderKind,
    base_url: Option<String>,
    api_key: Option<String>,
}

/// How to reach the provider `name`: the current one as configured, a `[providers.NAME]`,
/// or a built-in API with its environment variables.
fn reach(config: &Config, name: &str) -> Result<Reached, AppError> {
    if name == config.provider_name {
        return Ok(Reached {
            kind: config.provider,
            base_url: config.base_url.clone(),
            api_key: config.api_key.clone(),
        });
    }
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    let (kind, configured) = pick::named_provider(name, &config.files)?;
    let key_var = pick::key_var(kind, configured.as_ref());
    let base_url = match &configured {
        Some(p) => p.base_url.clone(),
        None => env(kind.env_vars().1),
    };
    let project = configured
        .as_ref()
        .filter(|p| p.project && p.base_url.is_some())
        .map(|p| p.source.clone());
    let route = keyguard::Route {
        kind,
        key_var: &key_var,
        api_key: env(&key_var),
        base_url: base_url.as_deref(),
        url_from_project: project.as_deref(),
        provider: configured.as_ref(),
    };
    let api_key = keyguard::route_key(route, &config.user_hosts)?;
    pick::check_key(
        &pick::Reach {
            kind,
            name,
            api_key: api_key.as_deref(),
            base_url: base_url.as_deref(),
            key_var: &key_var,
            key_named: configured.as_ref().is_some_and(|p| p.api_key_env.is_some()),
        },
        true,
    )?;
    Ok(Reached {
        kind,
        base_url,
        api_key,
    })
}

/// The context window of the model in use: `context_window` in the configuration, the
/// model's in its provider's table, a known model's, or the default.
pub fn window_for(config: &Config) -> u64 {
    config
        .context_window
        .or_else(|| {
            config
                .files
                .provider(&config.provider_name)
                .and_then(|p| p.models.iter().find(|m| m.name == config.model))
                .and_then(|m| m.context_window)
        })
        .or_else(|| crate::agent::compact::known_window(&config.model))
        .unwrap_or(crate::agent::compact::DEFAULT_WINDOW)
}

/// The longest reply of the model in use: `max_output_tokens` in the configuration, the
/// model's in its provider's table, or (for Anthropic, whose API needs one) a known model's;
/// none: the provider's default (a Chat Completions server's own limit).
pub fn output_for(config: &Config) -> Option<u64> {
    config
        .max_output_tokens
        .or_else(|| {
            config
                .files
                .provider(&config.provider_name)
                .and_then(|p| p.models.iter().find(|m| m.name == config.model))
                .and_then(|m| m.max_output_tokens)
        })
        .or_else(|| match config.provider {
            crate::config::ProviderKind::Anthropic => {
                crate::agent::compact::known_output(&config.model)
            }
            _ => None,
        })
}

/// Whether the model in use may be asked to think: not when its entry in its provider's
/// table says `thinking = false`.
pub fn thinks_for(config: &Config) -> bool {
    model_thinks(config, &config.provider_name, &config.model)
}

/// Whether `model` of provider `provider` may be asked to think (see [`thinks_for`]).
pub fn model_thinks(config: &Config, provider: &str, model: &str) -> bool {
    config
        .files
        .provider(provider)
        .and_then(|p| p.models.iter().find(|m| m.name == model))
        .and_then(|m| m.thinking)
        .unwrap_or(true)
}

/// The prices of the model in use (US dollars per million tokens), when its provider's table
/// gives them. The cache's default to shares of the input price: Anthropic's (a tenth to
/// read, a quarter more to write), or, for an OpenAI-compatible API, its discount on cached
/// input ([`openai_read_rate`]; nothing extra to write).
pub fn prices_for(config: &Config) -> Option<Prices> {
    let model = config
        .files
        .provider(&config.provider_name)?
        .models
        .iter()
        .find(|m| m.name == config.model)?;
    let (input, output) = match (model.input_price, model.output_price) {
        (None, None) => return None,
        (i, o) => (i.unwrap_or(0.0), o.unwrap_or(0.0)),
    };
    let defaults = match config.provider {
        ProviderKind::OpenAi => Prices {
            cache_read: input * openai_read_rate(&model.name),
            cache_write: input,
            ..Prices::new(input, output)
        },
        _ => Prices::new(input, output),
    };
    Some(defaults.cached_at(model.cache_read_price, model.cache_write_price))
}

impl App {
    /// Brings the providers extensions registered (`api.provider`) into the configuration's
    /// list, where `/model` and switching look.
    pub(super) fn sync_providers(&mut self) {
        let registered = self.extensions.context().control.providers();
        let providers = &mut self.config.files.providers;
        providers.retain(|p| !p.source.starts_with("extension "));
        providers.extend(registered);
    }

    /// What start-up checks once the extensions have loaded: the command line's options for
    /// extensions are declared ones, and a `--provider` an extension registers is reached.
    pub fn after_extensions(&mut self) -> Result<(), AppError> {
        let control = self.extensions.context().control.clone();
        crate::config::extflags::check(&control.flags_given(), &control.declared_flags())
            .map_err(AppError::Usage)?;
        self.resolve_pending_provider()
    }

    /// `--provider NAME` that no configuration knows: once the extensions have loaded, the
    /// one an extension registered, or the error it would have been at start.
    pub fn resolve_pending_provider(&mut self) -> Result<(), AppError> {
        if !self.config.provider_pending {
            return Ok(());
        }
        self.sync_providers();
        let name = self.config.provider_name.clone();
        let (_, configured) = pick::named_provider(&name, &self.config.files)?;
        let model = match configured.as_ref().and_then(|p| p.models.first()) {
            _ if !self.config.model.is_empty() => self.config.model.clone(),
            Some(m) => m.name.clone(),
            None => {
                return Err(AppError::Usage(format!(
                    "the provider {name} lists no models: pass --model NAME"
                )))
            }
        };
        // Reached as `name`, not as the stand-in it has now.
        self.config.provider_name = String::from("faux");
        self.switch_model(&name, &model)?;
        self.config.provider_pending = false;
        Ok(())
    }

    /// `/model [NAME | PROVIDER/NAME]`.
    pub(super) fn model_command(&mut self, args: &str) -> Result<String, AppError> {
        let spec = args.trim();
        if spec.is_empty() {
            return Ok(self.model_listing());
        }
        let (provider, model) = match spec.split_once('/') {
            Some((p, m)) if !p.is_empty() && !m.is_empty() => (p.to_string(), m.to_string()),
            _ if self.config.provider == ProviderKind::Faux => {
                return Err(AppError::Command(format!(
                    "the faux model has no models to switch to; name a provider's: /model \
                     PROVIDER/{spec} (openai, anthropic, or one configured in \
                     ~/.agents/config.toml)"
                )))
            }
            _ => (self.config.provider_name.clone(), spec.to_string()),
        };
        let unknown = self.unlisted_model_note(&provider, &model);
        self.switch_model(&provider, &model)?;
        Ok(format!(
            "Model set to {model} ({provider}{}).{unknown}",
            if provider == self.config.provider.name() {
                String::new()
            } else {
                format!(", {}", self.config.provider.name())
            }
        ))
    }

    /// A warning when no provider lists `model` and it is not a known model family (a typo
    /// shows at the first request otherwise), with the nearest configured name.
    fn unlisted_model_note(&self, provider: &str, model: &str) -> String {
        let configured = self.configured_models();
        let listed = configured
            .iter()
            .any(|c| c == &format!("{provider}/{model}"))
            || crate::agent::compact::known_window(model).is_some()
            || self
                .models
                .lock()
                .is_ok_and(|m| m.iter().any(|u| u == model));
        if listed {
            return String::new();
        }
        let near = configured
            .iter()
            .map(|c| {
                (
                    crate::vocab::text::edit_distance(c, &format!("{provider}/{model}")),
                    c,
                )
            })
            .filter(|(d, _)| *d <= 3)
            .min()
            .map(|(_, c)| format!(" Did you mean {c}?"))
            .unwrap_or_default();
        format!(
            "\nNote: no configured provider lists {model} and it is not a model mypi knows; \
             the first request will tell if the name is wrong.{near}"
        )
    }

    /// Makes `provider`/`model` the one the agent (and new child agents) use, and records it.
    pub fn switch_model(&mut self, provider: &str, model: &str) -> Result<(), AppError> {
        let to = reach(&self.config, provider)?;
        let built = super::make_provider(
            to.kind,
            model,
            to.base_url.clone(),
            to.api_key.clone(),
            self.config.faux_script.as_deref(),
        )?;
        self.config.provider = to.kind;
        self.config.provider_name = provider.to_string();
        self.config.base_url = to.base_url;
        self.config.api_key = to.api_key;
        self.config.model = model.to_string();
        self.children.set_provider(built.clone());
        self.agent.set_provider(built);
        self.agent.context_window = window_for(&self.config);
        self.agent.prices = prices_for(&self.config);
        self.agent.max_output = output_for(&self.config);
        self.agent.thinks = thinks_for(&self.config);
        self.agent.set_session_model(provider, model)?;
        self.refresh_session();
        let mut models = self.models.lock().unwrap_or_else(|p| p.into_inner());
        let shown = format!("{provider}/{model}");
        models.retain(|m| *m != shown && m != model);
        models.insert(0, model.to_string());
        Ok(())
    }

    /// What `/model` alone says: the model in use and the configured ones.
    fn model_listing(&self) -> String {
        let mut out = format!(
            "Model: {} ({}{}).",
            self.config.model,
            self.config.provider_name,
            if self.config.provider_name == self.config.provider.name() {
                String::new()
            } else {
                format!(", {}", self.config.provider.name())
            }
        );
        let providers = &self.config.files.providers;
        if providers.is_empty() {
            out.push_str(
                "\nNo providers are configured (see `mypi config`); switch with /model NAME \
                 or /model openai/NAME, /model anthropic/NAME.",
            );
            return out;
        }
        out.push_str("\nConfigured:");
        for p in providers {
            for m in &p.models {
                let window = m
                    .context_window
                    .map(|w| format!("  ({w} tokens)"))
                    .unwrap_or_default();
                let current = p.name == self.config.provider_name && m.name == self.config.model;
                let mark = if current { "*" } else { " " };
                out.push_str(&format!("\n {mark} {}/{}{window}", p.name, m.name));
            }
            if p.models.is_empty() {
                out.push_str(&format!("\n   {}/… (no models listed)", p.name));
            }
        }
        out.push_str("\nSwitch with /model PROVIDER/NAME, or /model NAME in this provider.");
        out
    }

    /// Every `provider/model` the configuration names (what `/model` completes).
    pub fn configured_models(&self) -> Vec<String> {
        self.config
            .files
            .providers
            .iter()
            .flat_map(|p| {
                p.models
                    .iter()
                    .map(move |m| format!("{}/{}", p.name, m.name))
            })
            .collect()
    }
}
