//! `api.provider{name, api, base_url?, api_key_env?, models?}`: a provider an extension
//! registers, checked here and kept as the same [`NamedProvider`] a `[providers.NAME]` table
//! of the configuration gives, so `/model` and `--provider` treat both alike.

use serde_json::Value as Json;

use super::Arg;
use crate::config::settings::{ModelInfo, NamedProvider};
use crate::config::ProviderKind;

/// Most models one provider may list.
const MAX_MODELS: usize = 1000;

/// The provider a definition describes, or what is wrong with it.
pub(super) fn from_arg(arg: Arg, extension: &str) -> Result<NamedProvider, String> {
    let Arg::Record(mut fields) = arg else {
        return Err("the definition must be a table".into());
    };
    let mut take = |name: &str| {
        fields
            .iter()
            .position(|(k, _)| k == name)
            .map(|i| fields.remove(i).1)
    };
    let name = take("name").and_then(Arg::opt_text).unwrap_or_default();
    let valid = |c: char| c.is_ascii_alphanumeric() || "_-.".contains(c);
    if name.is_empty() || name.len() > 64 || !name.chars().all(valid) {
        return Err(format!(
            "the name must be 1 to 64 letters, digits, '_', '-' or '.' (not {name:?})"
        ));
    }
    if ProviderKind::parse(&name).is_some() {
        return Err(format!(
            "'{name}' is a built-in provider; choose another name"
        ));
    }
    let api = take("api").and_then(Arg::opt_text).unwrap_or_default();
    let api = match ProviderKind::parse(&api) {
        Some(k @ (ProviderKind::OpenAi | ProviderKind::Anthropic)) => k,
        _ => {
            return Err(format!(
                "api must be \"openai\" or \"anthropic\", not {api:?}"
            ))
        }
    };
    let base_url = take("base_url").and_then(Arg::opt_text);
    if let Some(url) = &base_url {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!(
                "base_url {url:?} must start with http:// or https://"
            ));
        }
    }
    let api_key_env = take("api_key_env").and_then(Arg::opt_text);
    let models = match take("models") {
        None | Some(Arg::Nil) => Vec::new(),
        Some(Arg::Data(v)) => models(v)?,
        Some(other) => {
            return Err(format!(
                "models must be a list, not a {}",
                other.type_name()
            ))
        }
    };
    Ok(NamedProvider {
        name,
        api,
        base_url,
        api_key_env,
        models,
        source: format!("extension {extension}"),
        project: false,
    })
}

/// `models = {"a", {name = "b", context_window = 200000, input_price = 3, output_price = 15}}`.
fn models(v: Json) -> Result<Vec<ModelInfo>, String> {
    let items = match v {
        Json::Array(items) => items,
        // Lua's empty table.
        Json::Object(o) if o.is_empty() => Vec::new(),
        _ => return Err("models must be a list of names or {name, ...} tables".into()),
    };
    if items.len() > MAX_MODELS {
        return Err(format!("models may list at most {MAX_MODELS}"));
    }
    items
        .into_iter()
        .enumerate()
        .map(|(i, m)| match m {
            Json::String(name) if !name.is_empty() => Ok(ModelInfo {
                name,
                ..ModelInfo::default()
            }),
            Json::Object(o) => {
                let name = o
                    .get("name")
                    .and_then(Json::as_str)
                    .filter(|n| !n.is_empty())
                    .ok_or_else(|| format!("model {} has no name", i + 1))?;
                Ok(ModelInfo {
                    name: name.to_string(),
                    context_window: o.get("context_window").and_then(Json::as_u64),
                    max_output_tokens: o.get("max_output_tokens").and_then(Json::as_u64),
                    thinking: o.get("thinking").and_then(Json::as_bool),
                    input_price: o.get("input_price").and_then(Json::as_f64),
                    output_price: o.get("output_price").and_then(Json::as_f64),
                    cache_read_price: o.get("cache_read_price").and_then(Json::as_f64),
                    cache_write_price: o.get("cache_write_price").and_then(Json::as_f64),
                })
            }
            _ => Err(format!(
                "model {} must be a name or a {{name, ...}} table",
                i + 1
            )),
        })
        .collect()
}
