//! A transport wrapper that counts a server's `notifications/tools/list_changed` as each is
//! read off the wire, in order with the answers around it. The SDK hands notifications to
//! the client handler on a task of their own, so the answer to the call that changed the
//! tools can reach its caller before the handler runs; counted here, the change is known
//! before that answer is delivered, and the call can wait for the re-list
//! ([`super::conn::Conn::tools_settled`]). Progress notifications are handled here too, for
//! the same reason (`progress.rs`): one sent just before an answer is still its call's.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{JsonRpcMessage, ServerNotification};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use super::handler::Changes;
use super::progress::Progress;

/// `inner`, with each tool-list change announced to `changes` and each progress notification
/// handed to `progress` as it is received.
pub(super) struct Noticing<T> {
    pub inner: T,
    pub changes: Arc<Changes>,
    pub progress: Arc<Progress>,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Noticing<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
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
