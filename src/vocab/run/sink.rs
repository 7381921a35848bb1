//! [`EventSink`]: where a run reports what it does (`--json` lines, the terminal, an editor,
//! a test's list, and the front end's outlet for what happens outside a run).

use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::RunContext;
use crate::vocab::protocol::AgentEvent;

/// Where the agent reports what it does. The events are data: each front end decides how
/// they look.
pub trait EventSink: Send + Sync {
    fn emit(&self, event: AgentEvent);

    /// A tool call's line or result ([`AgentEvent::ToolCall`], [`AgentEvent::ToolResult`])
    /// in the run `ctx`, which a sink may take its time over: the REPL asks a script's
    /// renderer (`api.renderer`) for the lines it prints instead of its own. The agent
    /// awaits it before it goes on, so a call's line comes before its result and both
    /// before what follows, with no queue in the printer. By default, [`EventSink::emit`].
    fn deliver<'a>(&'a self, event: AgentEvent, ctx: &'a Arc<RunContext>) -> BoxFuture<'a, ()> {
        let _ = ctx;
        self.emit(event);
        Box::pin(std::future::ready(()))
    }
}
