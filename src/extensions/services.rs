//! [`HostContext`]: what every extension of the process shares — the registries they add to
//! (hooks, tools, commands, renderers), the session's queues, the notice line, the user
//! ([`Ui`]), the limits, and the context of calls made outside any run (reload events,
//! `extension_loaded`).

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use super::script::Limits;
use crate::agent::child::Spawner;
use crate::commands::CommandTable;
use crate::config::sources::catalog::Catalog;
use crate::hooks::{HookBus, NoticeFn};
use crate::tools::renderers::RendererRegistry;
use crate::tools::ToolRegistry;
use crate::vocab::mcp::{McpService, Unavailable};
use crate::vocab::run::queue::Queues;
use crate::vocab::run::RunContext;
use crate::vocab::ui::{NoUi, Ui};

/// What all extensions share.
pub struct HostContext {
    pub hooks: Arc<HookBus>,
    pub tools: Arc<ToolRegistry>,
    pub commands: Arc<CommandTable>,
    /// How the REPL shows tools' lines (`api.renderer`).
    pub renderers: Arc<RendererRegistry>,
    /// The skills the model is told about (`api.skills`, `api.skill`).
    pub skills: Arc<Catalog>,
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
    /// What serves `api.mcp.*`: the wiring's, which reaches the servers once the app
    /// started them (after the trust gate) and says why not until then.
    pub mcp: Arc<dyn McpService>,
    /// What runs child agents and model calls (`api.run_agent`, `api.complete`); none
    /// without an agent (`mypi ext check`).
    pub agents: Option<Arc<dyn Spawner>>,
    /// Whether the extensions that ship with mypi load after the discovered ones.
    pub builtins: bool,
    /// What scripts ask of the app, and what they read of it (`ctx.is_idle()`, ...).
    pub control: Arc<crate::agent::control::Control>,
    /// Events between extensions, timers and file watches.
    pub background: Arc<super::background::Background>,
    /// Held by the dialog being asked: scripts' dialogs are asked one after another.
    pub dialogs: tokio::sync::Mutex<()>,
    /// Extensions are loaded only to see what they register (`mypi ext check`, the options
    /// `mypi --help` lists): host operations are refused ([`CHECKING`]).
    pub checking: bool,
}

/// What a host operation asked for during a check says (see [`HostContext::checking`]).
pub const CHECKING: &str =
    "not run during a check (mypi ext check only records what the file registers)";

impl HostContext {
    /// A context with registries of its own and no user to ask (for `mypi ext check` and
    /// benchmarks): extensions load into it without an agent.
    pub fn standalone(cwd: PathBuf, notice: NoticeFn) -> HostContext {
        let session = RunContext::detached(cwd.clone());
        HostContext {
            hooks: HookBus::new(notice.clone()),
            tools: ToolRegistry::new(),
            commands: CommandTable::with_builtins(),
            renderers: RendererRegistry::new(),
            skills: Catalog::new(crate::config::sources::catalog::DEFAULT_BUDGET),
            queues: session.queues.clone(),
            notice: notice.clone(),
            session: RwLock::new(Arc::new(session)),
            cwd,
            ui: Arc::new(NoUi),
            limits: Limits::default(),
            log: false,
            mcp: Arc::new(Unavailable(super::registrar::NO_MCP.to_string())),
            agents: None,
            builtins: false,
            control: crate::agent::control::Control::new(),
            background: super::background::Background::new(notice.clone()),
            dialogs: tokio::sync::Mutex::new(()),
            checking: false,
        }
    }

    /// [`HostContext::standalone`] for a check: host operations are refused.
    pub fn checking(cwd: PathBuf, notice: NoticeFn) -> HostContext {
        HostContext {
            checking: true,
            ..HostContext::standalone(cwd, notice)
        }
    }

    /// The context of calls made outside a run.
    pub fn session(&self) -> Arc<RunContext> {
        self.session
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Replaces the context of calls made outside a run.
    pub fn set_session(&self, ctx: Arc<RunContext>) {
        *self.session.write().unwrap_or_else(|p| p.into_inner()) = ctx;
    }
}
