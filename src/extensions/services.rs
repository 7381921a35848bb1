//! [`HostContext`]: what every extension of the process shares — the registries they add to,
//! the session's queues, the notice line, the user ([`Ui`]), the limits, and the context of
//! calls made outside any run (reload events, `extension_loaded`).

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use super::api::Limits;
use crate::agent::queue::Queues;
use crate::commands::CommandTable;
use crate::hooks::{HookBus, NoticeFn};
use crate::run::RunContext;
use crate::tools::ToolRegistry;
use crate::ui::{NoUi, Ui};

/// What all extensions share.
pub struct HostContext {
    pub hooks: Arc<HookBus>,
    pub tools: Arc<ToolRegistry>,
    pub commands: Arc<CommandTable>,
    /// The session's queues (`api.send_message` outside a run).
    pub queues: Arc<Queues>,
    pub notice: NoticeFn,
    pub cwd: PathBuf,
    pub ui: Arc<dyn Ui>,
    /// The context of calls made outside a run; the front end keeps it current (session id,
    /// model, mode).
    pub session: RwLock<Arc<RunContext>>,
    pub limits: Limits,
    /// Whether `api.log` lines are shown (`MYPI_LOG=1`).
    pub log: bool,
    /// The MCP servers, once the app started them (`api.mcp.*`).
    pub mcp: RwLock<Option<Arc<crate::mcp::Manager>>>,
}

impl HostContext {
    /// A context with registries of its own and no user to ask (for `mypi ext check` and
    /// benchmarks): extensions load into it without an agent.
    pub fn standalone(cwd: PathBuf, notice: NoticeFn) -> HostContext {
        let session = RunContext::detached(cwd.clone());
        HostContext {
            hooks: HookBus::new(notice.clone()),
            tools: ToolRegistry::new(),
            commands: CommandTable::with_builtins(),
            queues: session.queues.clone(),
            notice,
            session: RwLock::new(Arc::new(session)),
            cwd,
            ui: Arc::new(NoUi),
            limits: Limits::default(),
            log: false,
            mcp: RwLock::new(None),
        }
    }

    /// The context of calls made outside a run.
    pub fn session(&self) -> Arc<RunContext> {
        self.session
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The MCP manager, when servers are configured.
    pub fn mcp(&self) -> Option<Arc<crate::mcp::Manager>> {
        self.mcp.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Hands the MCP manager to the scripts.
    pub fn set_mcp(&self, manager: Arc<crate::mcp::Manager>) {
        *self.mcp.write().unwrap_or_else(|p| p.into_inner()) = Some(manager);
    }

    /// Replaces the context of calls made outside a run.
    pub fn set_session(&self, ctx: Arc<RunContext>) {
        *self.session.write().unwrap_or_else(|p| p.into_inner()) = ctx;
    }
}
