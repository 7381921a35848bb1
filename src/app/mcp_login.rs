//! Signing in to MCP servers behind OAuth: `mypi mcp login NAME` and `/mcp login NAME` run
//! the login (the system browser opened and the URL printed, the answer awaited on 127.0.0.1
//! for at most 5 minutes, Ctrl-C ends it in the terminal), `mypi mcp logout NAME` and
//! `/mcp logout NAME` delete the stored token. Nothing else ever opens a browser: at start-up,
//! in print mode and over ACP a server without a valid token is only marked "needs login"
//! with what to run.

use std::path::Path;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::mcp::auth::{self, AuthContext, LoginOptions, SystemBrowser};
use crate::mcp::config::{ServerConfig, Servers, Transport};

/// The token folder under `home`, as connections use it.
pub fn context(home: Option<&Path>) -> Option<Arc<AuthContext>> {
    home.map(|h| Arc::new(AuthContext::new(auth::default_dir(h))))
}

/// The entry named `name` among `servers`, if mypi can sign in to it.
pub fn entry(servers: &Servers, name: &str) -> Result<ServerConfig, String> {
    let key = crate::mcp::config::key(name);
    let Some(s) = servers
        .servers
        .iter()
        .find(|s| crate::mcp::config::key(&s.name) == key)
    else {
        let known: Vec<&str> = servers.servers.iter().map(|s| s.name.as_str()).collect();
        return Err(format!(
            "no MCP server named '{name}' (configured: {})",
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        ));
    };
    signable(s)?;
    Ok(s.clone())
}

/// Whether mypi signs in to `s`: an HTTP server without an `Authorization` header of its own
/// and without `"oauth": false`.
fn signable(s: &ServerConfig) -> Result<(), String> {
    let Transport::Http { headers, sse, .. } = &s.transport else {
        return Err(format!(
            "'{}' is a stdio server: it needs no login (its own environment gives it keys)",
            s.name
        ));
    };
    if *sse {
        return Err(format!(
            "'{}' uses the legacy HTTP+SSE transport (\"type\": \"sse\"), to which mypi does \
             not sign in; give it an Authorization header in its entry's \"headers\", or use \
             the server's Streamable HTTP address with \"type\": \"http\"",
            s.name
        ));
    }
    if headers
        .keys()
        .any(|k| k.eq_ignore_ascii_case("authorization"))
    {
        return Err(format!(
            "'{}' sends its own Authorization header (its entry's \"headers\"): mypi does not \
             sign in to it",
            s.name
        ));
    }
    if s.oauth.disabled {
        return Err(format!(
            "'{}' has \"oauth\": false in {}: mypi does not sign in to it",
            s.name,
            s.source.display()
        ));
    }
    Ok(())
}

/// Runs the login of `server`, its progress and the URL said through `say`; what to tell
/// the user.
pub async fn login(
    server: &ServerConfig,
    ctx: &AuthContext,
    say: Arc<dyn Fn(&str) + Send + Sync>,
    cancel: CancellationToken,
) -> Result<String, String> {
    signable(server)?;
    let Transport::Http { url, .. } = &server.transport else {
        return Err(format!("'{}' is not an HTTP server", server.name));
    };
    let store = ctx.store(&server.name);
    let mut options = LoginOptions::new(Arc::new(SystemBrowser { say: say.clone() }));
    options.cancel = cancel;
    options.scopes = server.oauth.scopes.clone();
    say(&format!("Signing in to '{}' ({url})…", server.name));
    auth::login(url, &server.oauth, &store, &options)
        .await
        .map_err(|e| format!("login to '{}' failed: {e}", server.name))?;
    Ok(format!(
        "logged in to '{}' (the token is kept in {})",
        server.name,
        store.path().display()
    ))
}

/// Deletes the stored token of `name`; what to tell the user.
pub fn logout(name: &str, ctx: &AuthContext) -> Result<String, String> {
    let store = ctx.store(name);
    match store.delete() {
        Ok(true) => Ok(format!(
            "logged out of '{name}' (deleted {})",
            store.path().display()
        )),
        Ok(false) => Ok(format!("no login is stored for '{name}'")),
        Err(e) => Err(format!("cannot delete {}: {e}", store.path().display())),
    }
}

/// `mypi mcp login NAME`: the login in the terminal, Ctrl-C ending it.
pub async fn login_command(
    files: &[std::path::PathBuf],
    project: Option<&Path>,
    home: Option<&Path>,
    name: &str,
) -> (String, i32) {
    let Some(ctx) = context(home) else {
        return (
            "cannot sign in: HOME is not set (tokens are kept under it)".into(),
            1,
        );
    };
    let servers = Servers::load(files, project, &|k| std::env::var(k).ok());
    let server = match entry(&servers, name) {
        Ok(s) => s,
        Err(e) => return (e, 1),
    };
    let cancel = CancellationToken::new();
    let on_ctrl_c = cancel.clone();
    let watch = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    let say: Arc<dyn Fn(&str) + Send + Sync> = Arc::new(|line: &str| eprintln!("{line}"));
    let result = login(&server, &ctx, say, cancel).await;
    watch.abort();
    match result {
        Ok(text) => (text, 0),
        Err(e) => (e, 1),
    }
}

/// `mypi mcp logout NAME`.
pub fn logout_command(home: Option<&Path>, name: &str) -> (String, i32) {
    let Some(ctx) = context(home) else {
        return ("HOME is not set: no token is stored".into(), 1);
    };
    match logout(name, &ctx) {
        Ok(text) => (text, 0),
        Err(e) => (e, 1),
    }
}
