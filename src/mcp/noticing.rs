//! A transport wrapper that counts a server's `notifications/tools/list_changed` as each is
//! read off the wire, in order with the answers around it. The SDK hands notifications to
//! the client handler on a task of their own, so the answer to the call that changed the
//! tools can reach its caller before the handler runs; counted here, the change is known
//! before that answer is delivered, and the call can wait for the re-list
//! ([`super::conn::Conn::tools_settled`]).

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{JsonRpcMessage, ServerNotification};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use super::handler::Changes;

/// `inner`, with each tool-list change announced to `changes` as it is received.
pub struct Noticing<T> {
    pub inner: T,
    pub changes: Arc<Changes>,
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
            if matches!(
                n.notification,
                ServerNotification::ToolListChangedNotification(_)
            ) {
                self.changes.announce_tools();
            }
        }
        Some(message)
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}
