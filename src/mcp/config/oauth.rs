//! The `oauth` key of an HTTP server's entry: `false` turns OAuth off for the server; an
//! object names a pre-registered client (`clientId`, `clientSecret`), the authorization
//! server's metadata when the server advertises none or the wrong one
//! (`authServerMetadataUrl`), mypi's client ID metadata document when one is hosted
//! (`clientMetadataUrl`), and `scopes` to ask for. `${VAR}` expands in each string.

use serde_json::{Map, Value};

/// How mypi signs in to one HTTP server (its entry's `oauth`).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct OAuthSettings {
    /// `"oauth": false`: never sign in (a 401 is an error).
    pub disabled: bool,
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    pub auth_server_metadata_url: Option<String>,
    pub client_metadata_url: Option<String>,
    pub scopes: Vec<String>,
}

impl std::fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthSettings")
            .field("disabled", &self.disabled)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("auth_server_metadata_url", &self.auth_server_metadata_url)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// Reads the entry's `oauth` (absent, or a stdio entry's: the defaults).
pub fn parse(
    fields: &Map<String, Value>,
    http: bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<OAuthSettings, String> {
    let object = match fields.get("oauth") {
        _ if !http => return Ok(OAuthSettings::default()),
        None | Some(Value::Bool(true)) => return Ok(OAuthSettings::default()),
        Some(Value::Bool(false)) => {
            return Ok(OAuthSettings {
                disabled: true,
                ..Default::default()
            })
        }
        Some(Value::Object(o)) => o,
        Some(_) => {
            return Err("\"oauth\" must be false or an object ({\"clientId\": ..., \
                        \"clientSecret\": ..., \"authServerMetadataUrl\": ...})"
                .into())
        }
    };
    let known = [
        "clientId",
        "clientSecret",
        "authServerMetadataUrl",
        "clientMetadataUrl",
        "scopes",
    ];
    if let Some(k) = object.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(format!(
            "\"oauth.{k}\" is not a setting (known: {})",
            known.join(", ")
        ));
    }
    let text = |k: &str| -> Result<Option<String>, String> {
        match object.get(k) {
            None => Ok(None),
            Some(Value::String(s)) => {
                Ok(Some(super::expand(s, env)).filter(|s| !s.trim().is_empty()))
            }
            Some(_) => Err(format!("\"oauth.{k}\" must be a string")),
        }
    };
    let scopes = match object.get("scopes") {
        None => Vec::new(),
        Some(Value::String(s)) => s.split_whitespace().map(str::to_string).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or("\"oauth.scopes\" must be a list of strings")?,
        Some(_) => return Err("\"oauth.scopes\" must be a list of strings".into()),
    };
    let settings = OAuthSettings {
        disabled: false,
        client_id: text("clientId")?,
        client_secret: text("clientSecret")?,
        auth_server_metadata_url: text("authServerMetadataUrl")?,
        client_metadata_url: text("clientMetadataUrl")?,
        scopes,
    };
    if settings.client_secret.is_some() && settings.client_id.is_none() {
        return Err("\"oauth.clientSecret\" needs \"oauth.clientId\"".into());
    }
    Ok(settings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(v: Value) -> Result<OAuthSettings, String> {
        let env = |k: &str| (k == "S").then(|| "hush-7".to_string());
        parse(v.as_object().unwrap(), true, &env)
    }

    #[test]
    fn settings_are_read_and_checked() {
        assert_eq!(
            read(serde_json::json!({})).unwrap(),
            OAuthSettings::default()
        );
        assert!(read(serde_json::json!({"oauth": false})).unwrap().disabled);
        let s = read(
            serde_json::json!({"oauth": {"clientId": "id", "clientSecret": "${S}",
            "authServerMetadataUrl": "https://a/.well-known/x", "scopes": ["a", "b"]}}),
        )
        .unwrap();
        assert_eq!(s.client_secret.as_deref(), Some("hush-7"));
        assert_eq!(s.scopes, ["a", "b"]);
        assert!(!format!("{s:?}").contains("hush-7"));
        assert!(read(serde_json::json!({"oauth": {"clientSecret": "x"}})).is_err());
        assert!(read(serde_json::json!({"oauth": {"client_id": "x"}})).is_err());
        assert!(read(serde_json::json!({"oauth": 3})).is_err());
    }
}
