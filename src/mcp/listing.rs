//! The Streamable HTTP client of every HTTP connection ([`ListingHttp`]): rmcp's reqwest
//! client for everything but `tools/list`, whose POST it makes itself so as to read the raw
//! answer (JSON or an event stream) for each tool's `execution` ([`super::tasks`]), which the
//! SDK's tool type drops; the answer then goes to the SDK as rmcp's client would hand it.
//! A `tools/list` answered with anything but a 200 is sent again through rmcp's client
//! (listing changes nothing), so errors, 401s and expired sessions are the SDK's own.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::StreamExt;
use reqwest::header::{HeaderName, HeaderValue, ACCEPT};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use serde_json::Value;

use super::sse::Events;
use super::tasks::TaskTools;

type Error = StreamableHttpError<reqwest::Error>;

/// rmcp's reqwest client, with `tools/list` read raw into `tasks`.
#[derive(Clone)]
pub struct ListingHttp {
    pub http: reqwest::Client,
    pub tasks: Arc<TaskTools>,
}

/// Whether `message` is a `tools/list` request, and then whether for the first page.
fn listing(message: &ClientJsonRpcMessage) -> Option<bool> {
    match message {
        JsonRpcMessage::Request(r) => match &r.request {
            ClientRequest::ListToolsRequest(l) => {
                Some(l.params.as_ref().is_none_or(|p| p.cursor.is_none()))
            }
            _ => None,
        },
        _ => None,
    }
}

/// One POST as rmcp's client makes it.
struct Post {
    uri: Arc<str>,
    message: ClientJsonRpcMessage,
    session_id: Option<Arc<str>>,
    auth: Option<String>,
    headers: HashMap<HeaderName, HeaderValue>,
    limits: StreamableHttpResponseLimits,
}

impl ListingHttp {
    /// Sends `post` through rmcp's client.
    async fn plain(&self, post: Post) -> Result<StreamableHttpPostResponse, Error> {
        self.http
            .post_message_with_response_limits(
                post.uri,
                post.message,
                post.session_id,
                post.auth,
                post.headers,
                post.limits,
            )
            .await
    }

    /// A `tools/list` POST, its answer read raw (a 200 with JSON or an event stream), or
    /// sent again through rmcp's client.
    async fn list(&self, post: Post, first: bool) -> Result<StreamableHttpPostResponse, Error> {
        let mut request = self
            .http
            .post(post.uri.as_ref())
            .header(ACCEPT, "text/event-stream, application/json")
            .json(&post.message);
        if let Some(auth) = &post.auth {
            request = request.bearer_auth(auth);
        }
        for (k, v) in &post.headers {
            request = request.header(k, v);
        }
        if let Some(s) = &post.session_id {
            request = request.header("mcp-session-id", s.as_ref());
        }
        let response = match request.send().await {
            Ok(r) if r.status() == reqwest::StatusCode::OK => r,
            _ => return self.plain(post).await,
        };
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        let kind = super::sse::content_type(&response);
        if kind.starts_with("application/json") {
            let body = bounded_body(response, post.limits.max_json_response_size).await?;
            let raw: Value = serde_json::from_slice(&body)?;
            self.tasks.note(&raw["result"], first);
            let message: ServerJsonRpcMessage = serde_json::from_value(raw)?;
            return Ok(StreamableHttpPostResponse::Json(message, session));
        }
        if kind.starts_with("text/event-stream") {
            let events = Events::new(response.bytes_stream(), post.limits.max_sse_event_size);
            return Ok(StreamableHttpPostResponse::Sse(
                self.tapped(events, first),
                session,
            ));
        }
        self.plain(post).await
    }

    /// The events of a `tools/list` answer for the SDK, the answer's tools noted on the way.
    fn tapped<S>(&self, events: Events<S>, first: bool) -> BoxedSseResponse
    where
        S: futures_util::Stream<Item = Result<bytes::Bytes, reqwest::Error>>
            + Unpin
            + Send
            + 'static,
    {
        let tasks = self.tasks.clone();
        futures_util::stream::unfold(events, move |mut events| {
            let tasks = tasks.clone();
            async move {
                let item = match events.next().await? {
                    Ok(e) => {
                        if let Ok(raw) = serde_json::from_str::<Value>(&e.data) {
                            if raw.get("result").is_some() {
                                tasks.note(&raw["result"], first);
                            }
                        }
                        let mut sse = sse_stream::Sse::default().event(e.event).data(e.data);
                        sse.id = e.id;
                        Ok(sse)
                    }
                    Err(e) => Err(sse_stream::Error::Body(e.into())),
                };
                Some((item, events))
            }
        })
        .boxed()
    }
}

/// The body of `response`, at most `max` bytes.
async fn bounded_body(mut response: reqwest::Response, max: usize) -> Result<Vec<u8>, Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > max {
            return Err(StreamableHttpError::UnexpectedServerResponse(
                format!(
                    "the server's tool list is over {}",
                    crate::vocab::text::mib(max)
                )
                .into(),
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

impl StreamableHttpClient for ListingHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(uri, message, session_id, auth, headers, limits)
            .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let first = listing(&message);
        let post = Post {
            uri,
            message,
            session_id,
            auth,
            headers,
            limits,
        };
        match first {
            Some(first) => self.list(post, first).await,
            None => self.plain(post).await,
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        self.http
            .delete_session(uri, session_id, auth, headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxedSseResponse, Error> {
        self.http
            .get_stream(uri, session_id, last_event_id, auth, headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
        max: usize,
    ) -> Result<BoxedSseResponse, Error> {
        self.http
            .get_stream_with_max_sse_event_size(uri, session_id, last_event_id, auth, headers, max)
            .await
    }
}
