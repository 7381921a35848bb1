//! The reports of a tool call's own calls (a `code` script's `nested_tool_call` /
//! `nested_tool_result`), passed on to the agent in batches ([`NestedReports`]).
//!
//! A script can make thousands of calls a second; sent one by one, each report would wake
//! the agent's loop (15-40 µs of a thread wake-up on a small machine, more than a fast call
//! itself). Here the calls only queue their reports; a task of the runtime sends them. The
//! first report after a quiet spell goes at once (a long call shows while it runs); those
//! that follow within [`INTERVAL`] go together at its end, so a burst of calls wakes the
//! agent about once per interval. Nothing is dropped, and the order is kept:
//! [`NestedReports::finish`] sends what is left before the call's result.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::{CallReport, ProgressTx, RunContext};
use crate::vocab::protocol::AgentEvent;

/// The longest a report waits for the ones that follow it.
pub const INTERVAL: Duration = Duration::from_millis(10);

/// Where the calls of one tool call queue their reports ([`NestedReports::sender`]).
#[derive(Clone, Default)]
pub struct NestedSender(Option<Arc<Shared>>);

/// The task that sends one tool call's nested reports, and its queue.
pub struct NestedReports {
    sender: NestedSender,
    task: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// Wakes the task: a report after a quiet spell, or the end.
    wake: Notify,
}

#[derive(Default)]
struct State {
    events: Vec<AgentEvent>,
    /// The task will look at the queue again without being woken.
    armed: bool,
    /// [`NestedReports::finish`] was called: later reports are dropped.
    closed: bool,
}

impl Shared {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl RunContext {
    /// The nested reports of the tool call this context was made for: a task on the
    /// current runtime sends them through the call's report channel. Outside a tool call
    /// (no channel) the reports go nowhere.
    pub fn nested_reports(&self) -> NestedReports {
        let (Some(tx), Some(id)) = (self.progress.clone(), self.call_id.clone()) else {
            return NestedReports {
                sender: NestedSender(None),
                task: None,
            };
        };
        let shared = Arc::new(Shared::default());
        let task = tokio::spawn(send_batches(shared.clone(), tx, id));
        NestedReports {
            sender: NestedSender(Some(shared)),
            task: Some(task),
        }
    }
}

impl NestedReports {
    pub fn sender(&self) -> NestedSender {
        self.sender.clone()
    }

    /// Sends the reports still queued and ends the task; reports queued later are dropped.
    pub async fn finish(mut self) {
        let Some(shared) = &self.sender.0 else {
            return;
        };
        shared.state().closed = true;
        shared.wake.notify_one();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for NestedReports {
    /// Dropped unfinished (the call's future was): the task ends with what it has sent.
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

impl NestedSender {
    /// Queues `event`; wakes the sending task only when it is not already due to look.
    pub fn send(&self, event: AgentEvent) {
        let Some(shared) = &self.0 else {
            return;
        };
        let wake = {
            let mut state = shared.state();
            if state.closed {
                return;
            }
            state.events.push(event);
            !std::mem::replace(&mut state.armed, true)
        };
        if wake {
            shared.wake.notify_one();
        }
    }
}

/// The task: when woken, sends what is queued, then looks again every [`INTERVAL`] while
/// reports keep coming; sleeps (no timer) once an interval brought none.
async fn send_batches(shared: Arc<Shared>, tx: ProgressTx, id: String) {
    loop {
        shared.wake.notified().await;
        loop {
            let (events, closed) = {
                let mut state = shared.state();
                let events = std::mem::take(&mut state.events);
                if events.is_empty() {
                    state.armed = false;
                }
                (events, state.closed)
            };
            let quiet = events.is_empty();
            for event in events {
                let report = (id.clone(), CallReport::Nested(Box::new(event)));
                if tx.send(report).await.is_err() {
                    return;
                }
            }
            if closed {
                return;
            }
            if quiet {
                break;
            }
            tokio::select! {
                _ = tokio::time::sleep(INTERVAL) => {}
                _ = shared.wake.notified() => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn event(n: usize) -> AgentEvent {
        AgentEvent::NestedToolCall {
            parent_id: "c".into(),
            id: format!("c.{n}"),
            name: "t".into(),
            arguments: serde_json::Value::Null,
        }
    }

    fn id_of(report: &(String, CallReport)) -> String {
        match &report.1 {
            CallReport::Nested(e) => match &**e {
                AgentEvent::NestedToolCall { id, .. } => id.clone(),
                _ => String::new(),
            },
            _ => String::new(),
        }
    }

    #[tokio::test]
    async fn reports_come_in_order_the_first_at_once_the_rest_by_the_end() {
        let (tx, mut rx) = tokio::sync::mpsc::channel(4);
        let ctx = RunContext::detached(PathBuf::from("/w")).for_call("c", Some(tx));
        let reports = ctx.nested_reports();
        let sender = reports.sender();
        sender.send(event(0));
        // The first goes without waiting for the interval.
        let first = tokio::time::timeout(INTERVAL / 2, rx.recv()).await;
        assert_eq!(
            first.ok().flatten().map(|r| id_of(&r)).as_deref(),
            Some("c.0")
        );
        // More than the channel holds: the task waits for room, nothing is lost.
        let from = std::thread::spawn(move || (1..20).for_each(|n| sender.send(event(n))));
        let got = tokio::spawn(async move {
            let mut ids = Vec::new();
            while let Some(r) = rx.recv().await {
                ids.push(id_of(&r));
            }
            ids
        });
        let _ = from.join();
        reports.finish().await;
        drop(ctx);
        let ids = got.await.unwrap_or_default();
        let want: Vec<String> = (1..20).map(|n| format!("c.{n}")).collect();
        assert_eq!(ids, want);
    }

    #[tokio::test]
    async fn outside_a_tool_call_reports_go_nowhere() {
        let ctx = RunContext::detached(PathBuf::from("/w"));
        let reports = ctx.nested_reports();
        reports.sender().send(event(0));
        reports.finish().await;
    }
}
