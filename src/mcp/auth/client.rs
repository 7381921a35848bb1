//! The HTTP client of a connection to a server behind OAuth ([`OAuthHttp`]): the stored
//! token on every request (rmcp refreshes it before it expires, the requests waiting for that
//! one refresh); on a 401 to a token, one refresh shared by every request refused the same
//! token (a request that finds the token already replaced just uses the new one), and one
//! retry. A 403 `insufficient_scope` is answered with a step-up login (the scopes granted so
//! far and the one asked for) when a browser is at hand, at most [`MAX_STEP_UPS`] times a
//! connection, else its scope is kept for the next login. rmcp's own wrapper
//! (`AuthClient`'s `StreamableHttpClient`) refreshes once per refused request instead.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{AuthClient, AuthError, CredentialStore, OAuthClientConfig};
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

use super::browser::Browser;
use super::flow::{self, LoginOptions};
use super::store::TokenStore;
use super::AuthContext;
use crate::mcp::config::oauth::OAuthSettings;

/// How many step-ups one connection may make (with the login before them, three
/// authorizations at most, as the spec's retry limit asks).
pub const MAX_STEP_UPS: u32 = 2;

type Error = StreamableHttpError<reqwest::Error>;

/// What a step-up needs.
struct StepUp {
    url: String,
    settings: OAuthSettings,
    store: TokenStore,
    browser: Arc<dyn Browser>,
    made: AtomicU32,
    turn: tokio::sync::Mutex<()>,
}

/// rmcp's client with the token, and the step-up.
#[derive(Clone)]
pub struct OAuthHttp {
    inner: AuthClient<crate::mcp::listing::ListingHttp>,
    store: TokenStore,
    step_up: Option<Arc<StepUp>>,
}

/// The client for the server at `url` of entry `name`: its stored token (if any) loaded,
/// with the client that got it.
pub async fn for_server(
    name: &str,
    url: &str,
    settings: &OAuthSettings,
    ctx: &AuthContext,
    http: crate::mcp::listing::ListingHttp,
) -> Result<OAuthHttp, String> {
    let store = ctx.store(name);
    let mut manager = flow::manager_for(url, &store)
        .await
        .map_err(|e| e.to_string())?;
    if store.has_token() {
        if let Some(m) = &settings.auth_server_metadata_url {
            let metadata = flow::fetch_metadata(m).await.map_err(|e| e.to_string())?;
            manager.set_metadata(metadata);
        }
        // A stored token of another authorization server is dropped (a login is needed).
        let kept = manager
            .initialize_from_store()
            .await
            .map_err(|e| flow::explain(&e))?;
        let file = store.read().unwrap_or_default();
        let secret = settings.client_secret.clone().or(file.client_secret);
        if let (true, Some(secret), Ok(Some(c))) = (kept, secret, store.load().await) {
            let config = OAuthClientConfig::new(c.client_id, "http://127.0.0.1/callback")
                .with_client_secret(secret);
            manager
                .configure_client(config)
                .map_err(|e| flow::explain(&e))?;
        }
    }
    let step_up = ctx.step_up.clone().map(|browser| {
        Arc::new(StepUp {
            url: url.to_string(),
            settings: settings.clone(),
            store: store.clone(),
            browser,
            made: AtomicU32::new(0),
            turn: tokio::sync::Mutex::new(()),
        })
    });
    Ok(OAuthHttp {
        inner: AuthClient::new(http, manager),
        store,
        step_up,
    })
}

impl StepUp {
    /// A login for more scopes, unless the limit is reached: whether to retry.
    async fn run(&self, challenge: &str, required: Option<&str>) -> bool {
        let _turn = self.turn.lock().await;
        if self.made.fetch_add(1, Ordering::AcqRel) >= MAX_STEP_UPS {
            return false;
        }
        let granted = self
            .store
            .load()
            .await
            .ok()
            .flatten()
            .map(|c| c.granted_scopes)
            .unwrap_or_default();
        let mut scopes = granted;
        for s in required.unwrap_or_default().split_whitespace() {
            if !scopes.iter().any(|g| g == s) {
                scopes.push(s.to_string());
            }
        }
        let mut options = LoginOptions::new(self.browser.clone());
        options.challenge = Some(challenge.to_string());
        options.scopes = scopes;
        flow::login(&self.url, &self.settings, &self.store, &options)
            .await
            .is_ok()
    }
}

impl OAuthHttp {
    /// The stored token (rmcp refreshes it first when it is about to expire).
    async fn token(&self) -> Result<Option<String>, Error> {
        match self.inner.get_access_token().await {
            Ok(t) => Ok(Some(t)),
            Err(AuthError::AuthorizationRequired) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Runs `call` with the token; on a 401 to a token, one refresh shared by the requests
    /// refused the same token, and one retry.
    async fn authorized<T, F, Fut>(&self, call: F) -> Result<T, Error>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: std::future::Future<Output = Result<T, Error>>,
    {
        let sent = self.token().await?;
        let refused = match call(sent.clone()).await {
            Err(StreamableHttpError::AuthRequired(c)) => c,
            other => return other,
        };
        let Some(sent) = sent else {
            return Err(StreamableHttpError::AuthRequired(refused));
        };
        let fresh = {
            let manager = self.inner.auth_manager.lock().await;
            match manager.get_access_token().await {
                // Another request refreshed it meanwhile.
                Ok(t) if t != sent => Ok(t),
                Ok(_) => match manager.refresh_token().await {
                    Ok(_) => manager.get_access_token().await,
                    Err(e) => Err(e),
                },
                Err(e) => Err(e),
            }
        };
        match fresh {
            Ok(t) => call(Some(t)).await,
            Err(AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_)) => {
                Err(StreamableHttpError::AuthRequired(refused))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Sends a POST through `send`, stepping up on `insufficient_scope` while allowed.
    async fn posting<F, Fut>(&self, send: F) -> Result<StreamableHttpPostResponse, Error>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<StreamableHttpPostResponse, Error>>,
    {
        loop {
            match send().await {
                Err(StreamableHttpError::InsufficientScope(e)) => {
                    let Some(step_up) = &self.step_up else {
                        // The next login asks for it.
                        if let Some(scope) = e.get_required_scope() {
                            let _ = self.store.want_scopes(scope);
                        }
                        return Err(StreamableHttpError::InsufficientScope(e));
                    };
                    if !step_up
                        .run(&e.www_authenticate_header, e.get_required_scope())
                        .await
                    {
                        return Err(StreamableHttpError::InsufficientScope(e));
                    }
                }
                other => return other,
            }
        }
    }
}

/// The entry's own `Authorization` never reaches here (such a server gets no OAuth): the
/// `_auth` the transport passes is ignored for the stored token.
impl StreamableHttpClient for OAuthHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let http = &self.inner.http_client;
        self.posting(|| {
            self.authorized(|token| {
                http.post_message(
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    token,
                    custom_headers.clone(),
                )
            })
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let http = &self.inner.http_client;
        self.posting(|| {
            self.authorized(|token| {
                http.post_message_with_response_limits(
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    token,
                    custom_headers.clone(),
                    limits,
                )
            })
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        let http = &self.inner.http_client;
        self.authorized(|token| {
            http.delete_session(
                uri.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxedSseResponse, Error> {
        let http = &self.inner.http_client;
        self.authorized(|token| {
            http.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxedSseResponse, Error> {
        let http = &self.inner.http_client;
        self.authorized(|token| {
            http.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }
}
