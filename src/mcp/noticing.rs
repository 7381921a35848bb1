//! The transport every MCP connection is served over: the real one (stdio, Streamable HTTP
//! with or without OAuth, legacy SSE) behind one type, with each tool-list change and
//! progress notification noticed as it is read off the wire.
//!
//! One type: the SDK's client loop (`serve_inner` and the handshakes under it) is generic over
//! its transport, and was compiled once per kind of server, ~0.5 MB of the binary; behind
//! [`Noticing`] it is compiled once, for one boxed future per message.
//!
//! Noticing: the SDK hands notifications to the client handler on a task of their own, so the
//! answer to the call that changed the tools can reach its caller before the handler runs;
//! counted here, the change is known before that answer is delivered, and the call can wait
//! for the re-list ([`super::conn::Conn::tools_settled`]). Progress notifications are handled
//! here too, for the same reason (`progress.rs`): one sent just before an answer is still
//! its call's.

use std::borrow::Cow;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use rmcp::model::{JsonRpcMessage, ServerNotification};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::{DynamicTransportError, Transport};

use super::handler::Changes;
use super::progress::Progress;

/// A transport, with each tool-list change announced to `changes` and each progress
/// notification handed to `progress` as it is received.
pub(super) struct Noticing {
    inner: Box<dyn Carrier>,
    changes: Arc<Changes>,
    progress: Arc<Progress>,
}

impl Noticing {
    pub fn new<T>(inner: T, changes: Arc<Changes>, progress: Arc<Progress>) -> Self
    where
        T: Transport<RoleClient> + 'static,
    {
        Noticing {
            inner: Box::new(inner),
            changes,
            progress,
        }
    }
}

/// What any transport's failure is once its type is erased: the transport's own error,
/// boxed (see [`unerased`]).
#[derive(Debug)]
pub(super) struct TransportError(Box<dyn std::error::Error + Send + Sync>);

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for TransportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// The error the transport itself raised in a failure the SDK reports (what a downcast to
/// the HTTP transport's error type must look at).
pub(super) fn unerased(e: &DynamicTransportError) -> &(dyn std::error::Error + 'static) {
    match e.error.downcast_ref::<TransportError>() {
        Some(TransportError(inner)) => inner.as_ref(),
        None => e.error.as_ref(),
    }
}

/// [`Transport`] with boxed futures, so it can be a trait object.
trait Carrier: Send {
    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> BoxFuture<'static, Result<(), TransportError>>;
    fn receive(&mut self) -> BoxFuture<'_, Option<RxJsonRpcMessage<RoleClient>>>;
    fn close(&mut self) -> BoxFuture<'_, Result<(), TransportError>>;
}

impl<T: Transport<RoleClient> + 'static> Carrier for T {
    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> BoxFuture<'static, Result<(), TransportError>> {
        let sent = Transport::send(self, item);
        Box::pin(async move { sent.await.map_err(|e| TransportError(Box::new(e))) })
    }

    fn receive(&mut self) -> BoxFuture<'_, Option<RxJsonRpcMessage<RoleClient>>> {
        Box::pin(Transport::receive(self))
    }

    fn close(&mut self) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(
            async move { (Transport::close(self).await).map_err(|e| TransportError(Box::new(e))) },
        )
    }
}

impl Transport<RoleClient> for Noticing {
    type Error = TransportError;

    fn name() -> Cow<'static, str> {
        "MCP".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(n) = &message {
            match &n.notification {
                ServerNotification::ToolListChangedNotification(_) => self.changes.announce_tools(),
                ServerNotification::ProgressNotification(p) => self.progress.arrived(&p.params),
                _ => {}
            }
        }
        Some(message)
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}
