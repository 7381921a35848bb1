//! One login to a server: its challenge (a 401's `WWW-Authenticate`, probed when the caller
//! has none), metadata discovery (rmcp; or the entry's `authServerMetadataUrl`), the client
//! (the entry's pre-registered `clientId`, a client ID metadata document when the entry names
//! one and the server supports them, else dynamic registration), the browser, the callback,
//! and the code exchange (rmcp: PKCE S256, `resource`, state and issuer checks). Every step is
//! bounded: HTTP requests by 30 s, the user's answer by [`LoginOptions::wait`], and the whole
//! login can be cancelled. A failure ends this login only, with a [`LoginError`] written for
//! the user (never a token in it).

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{
    AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationMetadata,
    AuthorizationRequest, AuthorizationSession,
};
use tokio_util::sync::CancellationToken;

use super::browser::Browser;
use super::callback::Callback;
use super::store::TokenStore;
use crate::mcp::config::oauth::OAuthSettings;

/// The name mypi registers under.
const CLIENT_NAME: &str = "mypi";
/// How long one request to the servers may take.
const HTTP_TIMEOUT: Duration = Duration::from_secs(30);

/// How a login is run.
#[derive(Clone)]
pub struct LoginOptions {
    /// Shows the user the authorization page.
    pub browser: Arc<dyn Browser>,
    /// How long the user may take to answer in the browser.
    pub wait: Duration,
    /// Ends the login (Ctrl-C).
    pub cancel: CancellationToken,
    /// The `WWW-Authenticate` of the server's 401 or 403, when the caller has it.
    pub challenge: Option<String>,
    /// Scopes asked for on top of what discovery picks (a step-up: those granted so far and
    /// the one the server asked for).
    pub scopes: Vec<String>,
}

impl LoginOptions {
    /// A login through `browser`, waiting at most 5 minutes for the user.
    pub fn new(browser: Arc<dyn Browser>) -> LoginOptions {
        LoginOptions {
            browser,
            wait: Duration::from_secs(300),
            cancel: CancellationToken::new(),
            challenge: None,
            scopes: Vec::new(),
        }
    }
}

/// Why a login ended without a token.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LoginError {
    #[error("the server accepted a request without a login: it needs none")]
    NotNeeded,
    #[error("cannot reach the server: {0}")]
    Unreachable(String),
    #[error("cannot find out how to sign in: {0}")]
    Discovery(String),
    #[error("cannot register mypi with the authorization server: {0}")]
    Registration(String),
    #[error("cannot show the sign-in page: {0}")]
    Browser(String),
    #[error("no answer from the browser within {} s; run the login again", .0.as_secs())]
    Timeout(Duration),
    #[error("the login was cancelled")]
    Cancelled,
    #[error("the authorization server's answer was refused: {0}")]
    Callback(String),
    #[error("the authorization server refused the sign-in: {0}")]
    Denied(String),
    #[error("cannot get a token: {0}")]
    Exchange(String),
    #[error("cannot keep the token: {0}")]
    Store(String),
}

/// Runs a login for the server at `url` and keeps its token in `store`.
pub async fn login(
    url: &str,
    settings: &OAuthSettings,
    store: &TokenStore,
    options: &LoginOptions,
) -> Result<(), LoginError> {
    tokio::select! {
        biased;
        _ = options.cancel.cancelled() => Err(LoginError::Cancelled),
        r = run(url, settings, store, options) => r,
    }
}

async fn run(
    url: &str,
    settings: &OAuthSettings,
    store: &TokenStore,
    options: &LoginOptions,
) -> Result<(), LoginError> {
    let challenge = match &options.challenge {
        Some(c) => Some(c.clone()),
        None => probe(url).await?,
    };
    let mut manager = manager_for(url, store).await?;
    let metadata = discover(&manager, settings, challenge.as_deref()).await?;
    manager.set_metadata(metadata.clone());
    let callback = Callback::bind()
        .await
        .map_err(|e| LoginError::Browser(format!("cannot listen on 127.0.0.1: {e}")))?;
    let redirect = callback.redirect_uri();
    let scopes = scopes(&manager, options, store).await;
    let (request, secret) =
        client_request(&mut manager, settings, &metadata, &redirect, &scopes).await?;
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| LoginError::Registration(explain(&e)))?;
    let auth_url = session.get_authorization_url().to_string();
    let answer = answer(&auth_url, &callback, options).await?;
    let callback = check_answer(&answer, &redirect, &auth_url)?;
    let exchanged = tokio::time::timeout(
        2 * HTTP_TIMEOUT,
        session.handle_callback_with_issuer(
            &callback.code,
            &callback.csrf_token,
            callback.issuer.as_deref(),
        ),
    )
    .await
    .map_err(|_| {
        LoginError::Exchange(format!(
            "the token endpoint did not answer within {} s",
            (2 * HTTP_TIMEOUT).as_secs()
        ))
    })?;
    exchanged.map_err(|e| match e {
        AuthError::AuthorizationServerMismatch { .. }
        | AuthError::AuthorizationServerMissingIssuer { .. } => LoginError::Callback(explain(&e)),
        e => LoginError::Exchange(explain(&e)),
    })?;
    let mut file = store.read().unwrap_or_default();
    file.client_secret = secret;
    file.wanted_scopes.clear();
    store
        .write(&file)
        .map_err(|e| LoginError::Store(e.to_string()))
}

/// Unauthenticated requests to the server: the `WWW-Authenticate` of the first 401 (or 403)
/// among `initialize`, `server/discover` (the 2026-07-28 generation) and `tools/list` (a
/// server that lets the handshake through).
async fn probe(url: &str) -> Result<Option<String>, LoginError> {
    let client = crate::platform::http::unredirected_client(HTTP_TIMEOUT)
        .map_err(LoginError::Unreachable)?;
    let initialize = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")}}
    });
    let discover = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "server/discover"});
    let list = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let mut session = None;
    let mut answered = false;
    for (body, version) in [
        (&initialize, "2025-11-25"),
        (&discover, "2026-07-28"),
        (&list, "2025-11-25"),
    ] {
        let response = post(&client, url, body, version, session.as_deref()).await?;
        let status = response.status();
        if matches!(status.as_u16(), 401 | 403) {
            return Ok(challenge_of(&response));
        }
        answered |= status.is_success();
        if let Some(id) = response.headers().get("mcp-session-id") {
            session = id.to_str().ok().map(str::to_string);
        }
    }
    match answered {
        true => Err(LoginError::NotNeeded),
        false => Ok(None),
    }
}

async fn post(
    client: &reqwest::Client,
    url: &str,
    body: &serde_json::Value,
    version: &str,
    session: Option<&str>,
) -> Result<reqwest::Response, LoginError> {
    let mut request = client
        .post(url)
        .header(
            reqwest::header::ACCEPT,
            "application/json, text/event-stream",
        )
        .header("mcp-protocol-version", version)
        .json(body);
    if let Some(s) = session {
        request = request.header("mcp-session-id", s);
    }
    request
        .send()
        .await
        .map_err(|e| LoginError::Unreachable(e.to_string()))
}

fn challenge_of(response: &reqwest::Response) -> Option<String> {
    response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// rmcp's manager for `url`, keeping tokens in `store`.
pub(super) async fn manager_for(
    url: &str,
    store: &TokenStore,
) -> Result<AuthorizationManager, LoginError> {
    // rmcp builds its own HTTP clients: the TLS provider must be in place first.
    crate::platform::http::streaming_client().map_err(LoginError::Unreachable)?;
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| LoginError::Discovery(explain(&e)))?;
    manager.set_credential_store(store.clone());
    Ok(manager)
}

/// The authorization server's metadata: from the entry's `authServerMetadataUrl`, or
/// discovered from the challenge and the well-known paths.
async fn discover(
    manager: &AuthorizationManager,
    settings: &OAuthSettings,
    challenge: Option<&str>,
) -> Result<AuthorizationMetadata, LoginError> {
    let discovered = manager.resolve_metadata_from_challenge(challenge).await;
    if let Some(url) = &settings.auth_server_metadata_url {
        return fetch_metadata(url).await;
    }
    discovered
        .map(|r| r.metadata)
        .map_err(|e| LoginError::Discovery(explain(&e)))
}

/// Reads authorization-server metadata at `url` (the entry's override).
pub(super) async fn fetch_metadata(url: &str) -> Result<AuthorizationMetadata, LoginError> {
    let bad = |why: String| LoginError::Discovery(format!("{url}: {why}"));
    let client = crate::platform::http::unredirected_client(HTTP_TIMEOUT)
        .map_err(LoginError::Unreachable)?;
    let response = client
        .get(url)
        .send()
        .await
        .map_err(|e| bad(e.to_string()))?;
    if !response.status().is_success() {
        return Err(bad(format!("HTTP {}", response.status())));
    }
    let bytes = response.bytes().await.map_err(|e| bad(e.to_string()))?;
    serde_json::from_slice::<AuthorizationMetadata>(&bytes)
        .map_err(|e| bad(format!("not authorization-server metadata: {e}")))
}

/// The scopes to ask for: the caller's (a step-up), those granted before and those a 403
/// asked for since (kept in the token file), with what discovery picks (the challenge's,
/// else the resource's `scopes_supported`, else none).
async fn scopes(
    manager: &AuthorizationManager,
    options: &LoginOptions,
    store: &TokenStore,
) -> Vec<String> {
    let mut scopes = options.scopes.clone();
    let file = store.read().unwrap_or_default();
    let granted = file
        .credentials
        .map(|c| c.granted_scopes)
        .unwrap_or_default();
    let discovered = manager.select_initial_scopes(&[]).await;
    for s in granted
        .into_iter()
        .chain(file.wanted_scopes)
        .chain(discovered)
    {
        if !scopes.contains(&s) {
            scopes.push(s);
        }
    }
    scopes
}

/// The authorization request with mypi's client: the entry's pre-registered one, a client ID
/// metadata document, or a client registered now (its secret kept for refreshes).
async fn client_request(
    manager: &mut AuthorizationManager,
    settings: &OAuthSettings,
    metadata: &AuthorizationMetadata,
    redirect: &str,
    scopes: &[String],
) -> Result<(AuthorizationRequest, Option<String>), LoginError> {
    let request = AuthorizationRequest::new(redirect)
        .with_client_name(CLIENT_NAME)
        .with_scopes(scopes.iter().cloned());
    if let Some(id) = &settings.client_id {
        let mut request = request.with_preregistered_client(id);
        if let Some(secret) = &settings.client_secret {
            request = request.with_client_secret(secret);
        }
        return Ok((request, None));
    }
    let cimd = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    if let (Some(doc), true) = (&settings.client_metadata_url, cimd) {
        return Ok((request.with_client_metadata_url(doc), None));
    }
    if metadata.registration_endpoint.is_none() {
        return Err(LoginError::Registration(
            "the authorization server offers no registration; set \"oauth\": {\"clientId\": \
             ...} (and \"clientSecret\") in the server's entry"
                .into(),
        ));
    }
    let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
    let config = manager
        .register_client(CLIENT_NAME, redirect, &refs)
        .await
        .map_err(|e| LoginError::Registration(explain(&e)))?;
    let secret = config.client_secret.clone();
    let mut request = request.with_preregistered_client(&config.client_id);
    if let Some(s) = &secret {
        request = request.with_client_secret(s);
    }
    Ok((request, secret))
}

/// The browser's answer: from the browser itself, or from the callback listener within the
/// wait.
async fn answer(
    auth_url: &str,
    callback: &Callback,
    options: &LoginOptions,
) -> Result<String, LoginError> {
    let wait = async {
        match options.browser.open(auth_url).await {
            Ok(Some(url)) => Ok(url),
            Ok(None) => callback
                .wait()
                .await
                .map_err(|e| LoginError::Browser(format!("the callback listener failed: {e}"))),
            Err(e) => Err(LoginError::Browser(e)),
        }
    };
    tokio::time::timeout(options.wait, wait)
        .await
        .map_err(|_| LoginError::Timeout(options.wait))?
}

/// The answer's code, state and issuer, once it is known to be for mypi's callback and for
/// this request.
fn check_answer(
    answer: &str,
    redirect: &str,
    auth_url: &str,
) -> Result<AuthorizationCallback, LoginError> {
    let url = reqwest::Url::parse(answer)
        .map_err(|e| LoginError::Callback(format!("not a URL ({e})")))?;
    let expected =
        reqwest::Url::parse(redirect).map_err(|e| LoginError::Callback(e.to_string()))?;
    if url.origin() != expected.origin() || url.path() != expected.path() {
        return Err(LoginError::Callback(format!(
            "it sends the browser to {}{}, not to mypi's callback {redirect}",
            url.origin().ascii_serialization(),
            url.path()
        )));
    }
    let param = |u: &reqwest::Url, k: &str| {
        u.query_pairs()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.into_owned())
    };
    if let Some(error) = param(&url, "error") {
        let why = param(&url, "error_description").unwrap_or_default();
        return Err(LoginError::Denied(
            format!("{error} {why}").trim().to_string(),
        ));
    }
    let sent = reqwest::Url::parse(auth_url)
        .ok()
        .and_then(|u| param(&u, "state"));
    if sent.is_none() || param(&url, "state") != sent {
        return Err(LoginError::Callback(
            "its state does not match the request's (a stale or forged answer)".into(),
        ));
    }
    AuthorizationCallback::from_redirect_url(answer).map_err(|e| LoginError::Callback(explain(&e)))
}

/// An rmcp error in words for the user (without the SDK's type names).
pub(super) fn explain(e: &AuthError) -> String {
    match e {
        AuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        } => format!(
            "it names the issuer {received_issuer}, not {expected_issuer} (the server asked)"
        ),
        AuthError::AuthorizationServerMissingIssuer { expected_issuer } => {
            format!("it does not name its issuer, which {expected_issuer} promised to (RFC 9207)")
        }
        AuthError::PkceUnsupported => {
            "the authorization server does not support PKCE with S256, which is required".into()
        }
        other => crate::mcp::failure::readable(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REDIRECT: &str = "http://127.0.0.1:4000/callback";

    /// A browser whose user never answers.
    struct Silent;
    impl Browser for Silent {
        fn open<'a>(
            &'a self,
            _: &'a str,
        ) -> futures_util::future::BoxFuture<'a, Result<Option<String>, String>> {
            Box::pin(async { Ok(None) })
        }
    }

    #[tokio::test]
    async fn a_callback_that_never_comes_ends_the_wait_and_ctrl_c_the_login() {
        let callback = Callback::bind().await.unwrap();
        let mut options = LoginOptions::new(Arc::new(Silent));
        options.wait = Duration::from_millis(200);
        let r = answer("http://127.0.0.1:1/authorize", &callback, &options).await;
        assert_eq!(r, Err(LoginError::Timeout(options.wait)));
        assert!(r
            .unwrap_err()
            .to_string()
            .contains("no answer from the browser"));
        options.wait = Duration::from_secs(300);
        options.cancel.cancel();
        let settings = OAuthSettings::default();
        let store = TokenStore::new(std::path::Path::new("/nonexistent"), "s");
        let r = login("http://127.0.0.1:1/mcp", &settings, &store, &options).await;
        assert_eq!(r, Err(LoginError::Cancelled));
    }
    const SENT: &str = "https://as.example/authorize?client_id=c&state=abc";

    #[test]
    fn an_answer_for_another_place_or_request_is_refused() {
        let ok = check_answer(
            &format!("{REDIRECT}?code=k&state=abc&iss=x"),
            REDIRECT,
            SENT,
        )
        .unwrap();
        assert_eq!((ok.code.as_str(), ok.issuer.as_deref()), ("k", Some("x")));
        let elsewhere = check_answer(
            "https://evil.example/callback?code=k&state=abc",
            REDIRECT,
            SENT,
        );
        assert!(
            matches!(&elsewhere, Err(LoginError::Callback(m)) if m.contains("evil.example")),
            "{elsewhere:?}"
        );
        let port = check_answer(
            "http://127.0.0.1:4001/callback?code=k&state=abc",
            REDIRECT,
            SENT,
        );
        assert!(port.is_err());
        let forged = check_answer(&format!("{REDIRECT}?code=k&state=zzz"), REDIRECT, SENT);
        assert!(forged
            .unwrap_err()
            .to_string()
            .contains("state does not match"),);
        let denied = check_answer(
            &format!("{REDIRECT}?error=access_denied&error_description=no&state=abc"),
            REDIRECT,
            SENT,
        );
        assert_eq!(
            denied.unwrap_err().to_string(),
            "the authorization server refused the sign-in: access_denied no"
        );
    }
}
