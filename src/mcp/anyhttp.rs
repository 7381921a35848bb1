//! The Streamable HTTP client of every HTTP connection behind one type ([`AnyHttp`]): the
//! plain one ([`super::listing::ListingHttp`]) or the one that signs in
//! ([`super::auth::client::OAuthHttp`]). The SDK's HTTP transport (its worker, its
//! reconnecting event stream) is generic over the client; behind one type it is compiled
//! once instead of once per client, for one boxed future per request.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

type Error = StreamableHttpError<reqwest::Error>;
type Headers = HashMap<HeaderName, HeaderValue>;

/// A Streamable HTTP client whose errors are reqwest's, behind one type.
#[derive(Clone)]
pub struct AnyHttp(Arc<dyn Client>);

impl AnyHttp {
    pub fn new<C: StreamableHttpClient<Error = reqwest::Error> + Sync>(client: C) -> Self {
        AnyHttp(Arc::new(client))
    }
}

/// The client's methods with boxed futures; `None` limits call the method without them, so
/// each call reaches the very method the SDK called.
trait Client: Send + Sync {
    fn post(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session: Option<Arc<str>>,
        auth: Option<String>,
        headers: Headers,
        limits: Option<StreamableHttpResponseLimits>,
    ) -> BoxFuture<'_, Result<StreamableHttpPostResponse, Error>>;
    fn delete(
        &self,
        uri: Arc<str>,
        session: Arc<str>,
        auth: Option<String>,
        headers: Headers,
    ) -> BoxFuture<'_, Result<(), Error>>;
    fn stream(
        &self,
        uri: Arc<str>,
        session: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: Headers,
        max: Option<usize>,
    ) -> BoxFuture<'_, Result<BoxedSseResponse, Error>>;
}

impl<C: StreamableHttpClient<Error = reqwest::Error> + Sync> Client for C {
    fn post(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session: Option<Arc<str>>,
        auth: Option<String>,
        headers: Headers,
        limits: Option<StreamableHttpResponseLimits>,
    ) -> BoxFuture<'_, Result<StreamableHttpPostResponse, Error>> {
        match limits {
            Some(limits) => {
                Box::pin(self.post_message_with_response_limits(
                    uri, message, session, auth, headers, limits,
                ))
            }
            None => Box::pin(self.post_message(uri, message, session, auth, headers)),
        }
    }

    fn delete(
        &self,
        uri: Arc<str>,
        session: Arc<str>,
        auth: Option<String>,
        headers: Headers,
    ) -> BoxFuture<'_, Result<(), Error>> {
        Box::pin(self.delete_session(uri, session, auth, headers))
    }

    fn stream(
        &self,
        uri: Arc<str>,
        session: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: Headers,
        max: Option<usize>,
    ) -> BoxFuture<'_, Result<BoxedSseResponse, Error>> {
        match max {
            Some(max) => Box::pin(self.get_stream_with_max_sse_event_size(
                uri,
                session,
                last_event_id,
                auth,
                headers,
                max,
            )),
            None => Box::pin(self.get_stream(uri, session, last_event_id, auth, headers)),
        }
    }
}

impl StreamableHttpClient for AnyHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session: Option<Arc<str>>,
        auth: Option<String>,
        headers: Headers,
    ) -> Result<StreamableHttpPostResponse, Error> {
        (self.0.post(uri, message, session, auth, headers, None)).await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session: Option<Arc<str>>,
        auth: Option<String>,
        headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        (self
            .0
            .post(uri, message, session, auth, headers, Some(limits)))
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session: Arc<str>,
        auth: Option<String>,
        headers: Headers,
    ) -> Result<(), Error> {
        self.0.delete(uri, session, auth, headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: Headers,
    ) -> Result<BoxedSseResponse, Error> {
        (self
            .0
            .stream(uri, session, last_event_id, auth, headers, None))
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: Headers,
        max: usize,
    ) -> Result<BoxedSseResponse, Error> {
        (self
            .0
            .stream(uri, session, last_event_id, auth, headers, Some(max)))
        .await
    }
}
