//! A server's progress notifications, handled as each is read off the wire (by the transport
//! wrapper in `noticing.rs`), in order with the answers around it. The SDK hands
//! notifications to the client handler on a task of their own, so a progress sent just
//! before a call's answer could reach the handler after the call had ended and been shown
//! as a stray notice; read here, it is still the running call's.
//!
//! Each notification resets the deadline of every running request of the connection (see
//! `deadline.rs`), and goes to the call whose progress token it carries ([`Watching`]: the
//! token the SDK put in that call's request): to the call's reporter (a `tool_update` of
//! that call), or, for a call nobody watches (a script's), to
//! [`Hooks::progress`](super::Hooks::progress). A notification of no running call goes only
//! to the MCP log (the server reported on a request that is over). A call registers its
//! token just after its request is queued; the few notifications that no call claimed are
//! kept a moment ([`EARLY`]) and handed to a call that registers its token afterwards, so a
//! server quicker than that registration loses nothing.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, ProgressNotificationParam, ProgressToken, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};

use super::deadline::Deadlines;
use super::reports::{append_log, Hooks};

/// How many notifications no call watched are kept for a call that registers late.
const EARLY: usize = 8;

/// The running calls of one connection by progress token, with where their progress goes;
/// the last notifications that no call claimed (token and text); and where the progress of a
/// call nobody watches goes.
#[derive(Default)]
pub struct Watched {
    calls: Vec<(ProgressToken, crate::vocab::run::Reporter)>,
    early: VecDeque<(ProgressToken, String)>,
    unwatched: Option<crate::vocab::run::Reporter>,
}

impl Watched {
    /// Progress of calls nobody watches goes to `hooks.progress`, named by `server`.
    pub fn new(server: &str, hooks: &Hooks) -> Watchers {
        let (server, progress) = (server.to_string(), hooks.progress.clone());
        let unwatched: crate::vocab::run::Reporter =
            Arc::new(move |_, text: &str| progress(&format!("[mcp {server}] {text}")));
        Arc::new(Mutex::new(Watched {
            unwatched: Some(unwatched),
            ..Watched::default()
        }))
    }
}

/// A connection's [`Watched`], shared with its transport's reader.
pub type Watchers = Arc<Mutex<Watched>>;

/// A call's place among a connection's progress watchers, taken back when dropped.
pub(super) struct Watching {
    watchers: Watchers,
    token: ProgressToken,
}

impl Watching {
    /// Watches the notifications that carry `token` (for `report`, or the connection's
    /// reporter of unwatched calls); those that came already are reported at once.
    pub(super) fn new(
        watchers: &Watchers,
        token: ProgressToken,
        report: Option<crate::vocab::run::Reporter>,
    ) -> Watching {
        let (early, report): (Vec<String>, _) = {
            let mut watched = watchers.lock().unwrap_or_else(|p| p.into_inner());
            let Some(report) = report.or_else(|| watched.unwatched.clone()) else {
                return Watching {
                    watchers: watchers.clone(),
                    token,
                };
            };
            watched.calls.push((token.clone(), report.clone()));
            let (mine, others) = std::mem::take(&mut watched.early)
                .into_iter()
                .partition(|(t, _)| *t == token);
            watched.early = others;
            (mine.into_iter().map(|(_, text)| text).collect(), report)
        };
        for text in early {
            report(crate::vocab::run::UpdateKind::Progress, &text);
        }
        Watching {
            watchers: watchers.clone(),
            token,
        }
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        let mut watched = self.watchers.lock().unwrap_or_else(|p| p.into_inner());
        watched.calls.retain(|(t, _)| *t != self.token);
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
        let token = &params.progress_token;
        let watcher = {
            let mut watched = self.watchers.lock().unwrap_or_else(|p| p.into_inner());
            let found = watched.calls.iter().find(|(t, _)| t == token);
            let found = found.map(|(_, r)| r.clone());
            if found.is_none() {
                if watched.early.len() >= EARLY {
                    watched.early.pop_front();
                }
                watched.early.push_back((token.clone(), text.clone()));
            }
            found
        };
        match watcher {
            Some(report) => report(crate::vocab::run::UpdateKind::Progress, &text),
            None => append_log(
                &self.hooks,
                &self.server,
                &format!("{text} (no running call of its token)"),
            ),
        }
    }
}

/// Cancels a request on the server when dropped before its answer came (the call was given
/// up: timeout, Ctrl-C, or the caller went away).
struct Abandoned {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let peer = self.peer.clone();
        let param = CancelledNotificationParam::new(Some(id), Some("cancelled by mypi".into()));
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move { peer.notify_cancelled(param).await });
        }
    }
}

/// `tools/call` with its progress watched: the request is queued, its progress token (the
/// SDK's) registered for `report`, then its answer awaited. A reply without `content` is an
/// empty result, as the SDK reads it. `None`: the server asked for input first (a SEP-2322
/// `input_required` round), which the caller has the SDK drive from the start.
pub(super) async fn call_tool(
    peer: &Peer<RoleClient>,
    params: CallToolRequestParams,
    watchers: &Watchers,
    report: Option<crate::vocab::run::Reporter>,
) -> Result<Option<CallToolResult>, ServiceError> {
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await?;
    let _watching = Watching::new(watchers, handle.progress_token.clone(), report);
    let mut abandoned = Abandoned {
        peer: peer.clone(),
        id: Some(handle.id.clone()),
    };
    let answer = handle.await_response().await;
    abandoned.id = None;
    match answer? {
        ServerResult::InputRequiredResult(_) => Ok(None),
        answer => contentless(answer)
            .map(Some)
            .ok_or(ServiceError::UnexpectedResponse),
    }
}

/// A `tools/call` answer as a result, as the SDK reads one: a reply without `content` (an
/// empty object, `{"resultType": "complete"}`, or only `_meta`) is an empty result.
fn contentless(answer: ServerResult) -> Option<CallToolResult> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct MetaOnly {
        #[serde(rename = "_meta")]
        meta: rmcp::model::MetaObject,
    }
    let mut result = CallToolResult::default();
    match answer {
        ServerResult::CallToolResult(r) => return Some(r),
        ServerResult::EmptyResult(_) => result.result_type = None,
        ServerResult::TaskAckResult(ack) => {
            result.result_type = Some(ack.result_type);
            result.meta = ack.meta;
        }
        ServerResult::CustomResult(custom) => {
            let MetaOnly { meta } = serde_json::from_value(custom.0).ok()?;
            result.result_type = None;
            result.meta = Some(meta);
        }
        _ => return None,
    }
    Some(result)
}
