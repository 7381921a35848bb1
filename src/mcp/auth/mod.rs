//! OAuth for Streamable HTTP servers that set no `Authorization` header of their own (the MCP
//! authorization spec, 2025-11-25 and 2026-07-28). rmcp's auth support does the protocol:
//! protected-resource and authorization-server metadata discovery, client ID metadata
//! documents and dynamic client registration, PKCE, the `resource` parameter, issuer checks
//! and token refresh. This module adds what mypi needs around it:
//!
//! - [`store`]: the token file of each server in the user's folder (`~/.agents/mcp-auth/`,
//!   mode 0600, written atomically), rmcp's credential store;
//! - [`flow`]: a login (`mypi mcp login NAME`, `/mcp login NAME`): discovery, registration,
//!   the browser, the callback, the code exchange, each step bounded;
//! - [`callback`]: the one-shot listener on 127.0.0.1 the browser is sent back to;
//! - [`browser`]: the seam that shows the user the authorization page ([`Browser`]): the
//!   system browser (and the URL printed) for people, a plain GET for tests and the
//!   conformance client;
//! - [`client`]: the HTTP client of a connection, which adds the token, refreshes it, and
//!   tells a server that needs a login from one that failed.

pub mod browser;
pub mod callback;
pub mod client;
pub mod flow;
pub mod store;

use std::path::PathBuf;
use std::sync::Arc;

pub use browser::{Browser, HeadlessBrowser, SystemBrowser};
pub use flow::{login, LoginError, LoginOptions};
pub use store::TokenStore;

/// What connections need for OAuth: where tokens are kept, and (when a person or a test can
/// answer) the browser a step-up to more scopes may open.
#[derive(Clone)]
pub struct AuthContext {
    /// The folder of the token files (`~/.agents/mcp-auth`).
    pub dir: PathBuf,
    /// Opens the authorization page for a step-up (403 `insufficient_scope`) during a call;
    /// `None`: the call fails with what to run instead.
    pub step_up: Option<Arc<dyn Browser>>,
}

impl AuthContext {
    /// Tokens in `dir`, no browser opened during calls.
    pub fn new(dir: PathBuf) -> AuthContext {
        AuthContext { dir, step_up: None }
    }

    /// The token store of `server`.
    pub fn store(&self, server: &str) -> TokenStore {
        TokenStore::new(&self.dir, server)
    }
}

/// The folder of the token files under the user's home: `~/.agents/mcp-auth`.
pub fn default_dir(home: &std::path::Path) -> PathBuf {
    home.join(".agents").join("mcp-auth")
}

/// What the user reads about a server that needs a login.
pub fn needs_login(server: &str) -> String {
    format!("needs login — run: mypi mcp login {server}")
}

/// What to tell the user when a request to `server` was refused for its login (a 401 that a
/// refresh could not cure, or a 403 asking for more scopes); `None` for any other failure.
pub fn refused(server: &str, e: &(dyn std::error::Error + 'static)) -> Option<String> {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    match e.downcast_ref::<StreamableHttpError<reqwest::Error>>()? {
        StreamableHttpError::AuthRequired(_) => Some(format!(
            "the server refused mypi's token and it could not be refreshed; {}",
            needs_login(server)
        )),
        StreamableHttpError::InsufficientScope(e) => Some(format!(
            "the server wants more permission for this{}; run: mypi mcp login {server} \
             (it asks for the scopes granted so far and this one)",
            e.get_required_scope()
                .map(|s| format!(" (scope {s})"))
                .unwrap_or_default()
        )),
        _ => None,
    }
}
