//! What mypi asks the editor: a script's `ctx.ui.confirm` and `ctx.ui.select` become
//! `session/request_permission` ([`EditorUi`]).
//!
//! - The request's `toolCall` is the tool call the question is about: the script tool's call
//!   that is running (its id alone: the editor knows it), or the call a `tool_call` handler
//!   decides on (its id and the question as title: the editor hears of the call itself
//!   right after). Outside a tool call (a command, an event, a child agent's call) it is a
//!   call of its own, `ask-N`, titled with the question, kind `other`, marked `completed`
//!   once answered.
//! - `confirm` offers allow once, always allow, reject once, always reject; an "always"
//!   answer is kept for the session, and the same question from the same extension is then
//!   answered by it without asking. `select` offers one option (kind `allow_once`) per
//!   choice.
//! - An answer the editor never gives is given up when the prompt is cancelled
//!   (`session/cancel`): the script gets false / nil, the request is withdrawn
//!   (`$/cancel_request`), and the prompt answers `cancelled`.
//! - ACP has no request for text: `ctx.ui.input` and `ctx.ui.editor` get no answer (input
//!   its default, editor nil), and the editor is told so by a notice.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    SessionUpdate, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use futures_util::future::BoxFuture;

use super::updates::AcpSink;
use crate::vocab::protocol::AgentEvent;
use crate::vocab::run::EventSink;
use crate::vocab::ui::{Asker, Ui};

/// The options of a yes/no question, by id: (id, name, kind, answer, remembered).
const CONFIRM: [(&str, &str, PermissionOptionKind, bool, bool); 4] = [
    (
        "allow_once",
        "Allow",
        PermissionOptionKind::AllowOnce,
        true,
        false,
    ),
    (
        "allow_always",
        "Always allow",
        PermissionOptionKind::AllowAlways,
        true,
        true,
    ),
    (
        "reject_once",
        "Reject",
        PermissionOptionKind::RejectOnce,
        false,
        false,
    ),
    (
        "reject_always",
        "Always reject",
        PermissionOptionKind::RejectAlways,
        false,
        true,
    ),
];

/// A session's dialogs, asked of its editor.
pub struct EditorUi {
    sink: Arc<AcpSink>,
    /// The "always" answers: (extension, question) -> allowed.
    always: Arc<Mutex<HashMap<(String, String), bool>>>,
    /// Numbers the tool calls of questions asked outside one.
    asked: AtomicU64,
}

impl EditorUi {
    pub fn new(sink: Arc<AcpSink>) -> EditorUi {
        EditorUi {
            sink,
            always: Arc::default(),
            asked: AtomicU64::new(0),
        }
    }

    /// The `toolCall` of a request about `asker`'s question, and the id of the call made up
    /// for it (to be marked completed once answered), if one was.
    fn tool_call(&self, title: &str, asker: &Asker) -> (ToolCallUpdate, Option<String>) {
        match (&asker.call_id, asker.call_shown) {
            (Some(id), true) => (ToolCallUpdate::new(id.clone(), Default::default()), None),
            (Some(id), false) => {
                let fields = ToolCallUpdateFields::new()
                    .title(title.to_string())
                    .status(ToolCallStatus::Pending);
                (ToolCallUpdate::new(id.clone(), fields), None)
            }
            (None, _) => {
                let n = self.asked.fetch_add(1, Ordering::Relaxed) + 1;
                let id = format!("ask-{n}");
                let fields = ToolCallUpdateFields::new()
                    .title(title.to_string())
                    .kind(ToolKind::Other)
                    .status(ToolCallStatus::Pending);
                (ToolCallUpdate::new(id.clone(), fields), Some(id))
            }
        }
    }

    /// Asks the editor to choose one of `options`: the id of the one chosen, `None` when
    /// the editor cancelled or failed (said on stderr).
    fn request(
        &self,
        title: &str,
        asker: &Asker,
        options: Vec<PermissionOption>,
    ) -> BoxFuture<'static, Option<String>> {
        let (call, made_up) = self.tool_call(title, asker);
        let sink = self.sink.clone();
        Box::pin(async move {
            let session = sink.session()?;
            let request = RequestPermissionRequest::new(session, call, options);
            let answer = sink.connection().send_request(request).block_task().await;
            if let Some(id) = made_up {
                let done = ToolCallUpdateFields::new().status(ToolCallStatus::Completed);
                sink.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id, done)));
            }
            match answer {
                Ok(response) => match response.outcome {
                    RequestPermissionOutcome::Selected(chosen) => {
                        Some(chosen.option_id.0.to_string())
                    }
                    _ => None,
                },
                Err(e) => {
                    super::say(&format!("the editor did not answer a question: {e}"));
                    None
                }
            }
        })
    }
}

impl Ui for EditorUi {
    fn confirm(&self, question: &str) -> BoxFuture<'static, bool> {
        self.confirm_from(question, &Asker::default())
    }

    fn confirm_from(&self, question: &str, asker: &Asker) -> BoxFuture<'static, bool> {
        let key = (asker.extension.clone(), asker.question.clone());
        let known = self
            .always
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .copied();
        if let Some(answer) = known {
            return Box::pin(async move { answer });
        }
        let options = CONFIRM
            .iter()
            .map(|(id, name, kind, ..)| PermissionOption::new(*id, *name, *kind))
            .collect();
        let asked = self.request(question, asker, options);
        let always = self.always.clone();
        Box::pin(async move {
            let chosen = asked.await;
            let Some(&(.., answer, remember)) =
                CONFIRM.iter().find(|o| Some(o.0) == chosen.as_deref())
            else {
                return false;
            };
            if remember && !key.0.is_empty() {
                always
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(key, answer);
            }
            answer
        })
    }

    fn choose(
        &self,
        title: &str,
        options: &[String],
        asker: &Asker,
    ) -> Option<BoxFuture<'static, Option<usize>>> {
        let shown = options
            .iter()
            .enumerate()
            .map(|(i, o)| {
                PermissionOption::new(i.to_string(), o.clone(), PermissionOptionKind::AllowOnce)
            })
            .collect();
        let asked = self.request(title, asker, shown);
        let count = options.len();
        Some(Box::pin(async move {
            let chosen: usize = asked.await?.parse().ok()?;
            (chosen < count).then_some(chosen)
        }))
    }

    fn ask(&self, question: &str) -> BoxFuture<'static, Option<String>> {
        let message = format!(
            "{question} — the editor cannot be asked for text (the Agent Client Protocol has no such request): no answer was given"
        );
        self.sink.emit(AgentEvent::Notice { message });
        Box::pin(async { None })
    }

    fn edit(&self, _initial: &str) -> BoxFuture<'static, Option<String>> {
        let message = "a script asked to edit text in an editor; the Agent Client Protocol has no such request: no text was given".to_string();
        self.sink.emit(AgentEvent::Notice { message });
        Box::pin(async { None })
    }
}
