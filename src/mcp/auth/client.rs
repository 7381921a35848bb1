//! The HTTP client of a connection to a server behind OAuth: rmcp's [`AuthClient`] (the
//! stored token on every request, refreshed before it expires and once on a 401, the
//! refreshes of one server taking turns on the token file's lock), wrapped in [`OAuthHttp`],
//! which answers a 403 `insufficient_scope` with a step-up login (the scopes granted so far
//! and the one asked for) when a browser is at hand, at most [`MAX_STEP_UPS`] times a
//! connection, and retries the request once after each.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{AuthClient, CredentialStore, OAuthClientConfig};
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

use super::browser::Browser;
use super::flow::{self, LoginOptions};
use super::store::TokenStore;
use super::AuthContext;
use crate::mcp::config::OAuthSettings;

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
    inner: AuthClient<reqwest::Client>,
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
    http: reqwest::Client,
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

impl StreamableHttpClient for OAuthHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.posting(|| {
            self.inner.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.posting(|| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxedSseResponse, Error> {
        self.inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxedSseResponse, Error> {
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}
