//! A server's progress notifications, handled as each is read off the wire (by the transport
//! wrapper in `noticing.rs`), in order with the answers around it. The SDK hands
//! notifications to the client handler on a task of their own, so a progress sent just
//! before a call's answer could reach the handler after the call had ended and been shown
//! as a stray notice; read here, it is still the running call's.
//!
//! Each notification resets the deadline of every running request of the connection (see
//! `deadline.rs`), and goes to the calls that watch the connection's progress
//! ([`Watching`]); with none watching, to [`Hooks::progress`](super::Hooks::progress) while a
//! request runs, and only to the MCP log when none does (the server reported on a request
//! that is over).

use std::sync::{Arc, Mutex};

use rmcp::model::ProgressNotificationParam;

use super::deadline::Deadlines;
use super::reports::{append_log, Hooks};

/// The calls of one connection that want its progress notifications, by a number of their
/// own: a notification goes to each (the SDK picks the progress tokens, so a notification
/// cannot be told apart by call).
pub type Watchers = Arc<Mutex<Vec<(u64, crate::vocab::run::Reporter)>>>;

/// A call's place among a connection's progress watchers, taken back when dropped.
pub(super) struct Watching {
    watchers: Watchers,
    id: u64,
}

impl Watching {
    pub(super) fn new(watchers: &Watchers, report: crate::vocab::run::Reporter) -> Watching {
        let id = crate::vocab::owner::next_id();
        let mut list = watchers.lock().unwrap_or_else(|p| p.into_inner());
        list.push((id, report));
        Watching {
            watchers: watchers.clone(),
            id,
        }
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        let mut list = self.watchers.lock().unwrap_or_else(|p| p.into_inner());
        list.retain(|(id, _)| *id != self.id);
    }
}

/// Where one connection's progress notifications go.
pub(super) struct Progress {
    pub server: String,
    pub hooks: Hooks,
    pub deadlines: Arc<Deadlines>,
    pub watchers: Watchers,
}

impl Progress {
    /// A progress notification was read (see the module doc).
    pub fn arrived(&self, params: &ProgressNotificationParam) {
        self.deadlines.progressed();
        let of = params.total.map(|t| format!("/{t}")).unwrap_or_default();
        let msg = params
            .message
            .as_ref()
            .map(|m| format!(": {m}"))
            .unwrap_or_default();
        let text = format!("progress {}{of}{msg}", params.progress);
        let watchers: Vec<crate::vocab::run::Reporter> = self
            .watchers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(_, r)| r.clone())
            .collect();
        if watchers.is_empty() {
            if self.deadlines.any_running() {
                (self.hooks.progress)(&format!("[mcp {}] {text}", self.server));
            } else {
                append_log(
                    &self.hooks,
                    &self.server,
                    &format!("{text} (no request running)"),
                );
            }
        }
        for report in watchers {
            report(crate::vocab::run::UpdateKind::Progress, &text);
        }
    }
}
