//! The registries and channels that [`super::App`] builds once and shares between the agent,
//! the commands and the extensions' host ([`Wiring`]).

use std::sync::{Arc, RwLock};

use super::ui;
use crate::commands::CommandTable;
use crate::config::Config;
use crate::extensions::script::Limits;
use crate::extensions::services::HostContext;
use crate::hooks::repeats::Repeats;
use crate::hooks::{HookBus, NoticeFn};
use crate::tools::{self, ToolRegistry};
use crate::vocab::run::queue::Queues;
use crate::vocab::run::RunContext;

/// The registries and channels that the agent, the commands and the extensions share.
pub(super) struct Wiring {
    pub tools: Arc<ToolRegistry>,
    pub hooks: Arc<HookBus>,
    pub commands: Arc<CommandTable>,
    pub queues: Arc<Queues>,
    pub ui: Arc<ui::AppUi>,
    pub control: Arc<crate::agent::control::Control>,
    pub renderers: Arc<crate::tools::renderers::RendererRegistry>,
    pub skills: Arc<crate::config::sources::catalog::Catalog>,
    /// What serves scripts' `api.mcp.*` (the servers, once [`super::App::start_mcp`] ran).
    pub mcp: Arc<super::mcp::McpSlot>,
}

impl Wiring {
    /// The registries; the hook bus reports through `reports`, which every other source of
    /// notices shares (see [`crate::hooks::repeats`]).
    /// The built-in file tools go through `files` when given (see [`tools::files`]).
    pub fn new(config: &Config, reports: &Arc<Repeats>, files: tools::files::Files) -> Wiring {
        let tools = ToolRegistry::new();
        tools::register_builtins_through(&tools, files);
        let hooks = HookBus::reporting_to(reports.clone());
        if config.code_mode.enabled != Some(false) {
            let code = crate::extensions::code::CodeTool::new(
                Arc::downgrade(&tools),
                hooks.clone(),
                config.code_mode,
            );
            tools.register(crate::vocab::owner::Owner::core(), Arc::new(code));
        }
        Wiring {
            tools,
            hooks,
            commands: CommandTable::with_builtins(),
            queues: Arc::new(Queues::with_limits(config.queue)),
            ui: Arc::new(ui::AppUi::default()),
            control: crate::agent::control::Control::new(),
            renderers: crate::tools::renderers::RendererRegistry::new(),
            skills: crate::config::sources::catalog::Catalog::new(config.skills_budget),
            mcp: Arc::default(),
        }
    }

    /// What the extensions' host is given; `agents` runs their children.
    pub fn host(
        &self,
        config: &Config,
        notice: &NoticeFn,
        agents: Arc<dyn crate::agent::child::Spawner>,
    ) -> HostContext {
        HostContext {
            hooks: self.hooks.clone(),
            tools: self.tools.clone(),
            commands: self.commands.clone(),
            renderers: self.renderers.clone(),
            skills: self.skills.clone(),
            queues: self.queues.clone(),
            notice: notice.clone(),
            cwd: config.cwd.clone(),
            ui: self.ui.clone(),
            session: RwLock::new(Arc::new(RunContext::detached(config.cwd.clone()))),
            limits: Limits {
                budget: config.ext_budget,
                memory_bytes: config.ext_memory_bytes,
                max_value_bytes: config.ext_value_bytes,
                ..Limits::default()
            },
            log: config.log,
            mcp: self.mcp.clone(),
            agents: Some(agents),
            builtins: config.builtin_extensions,
            control: self.control.clone(),
            background: crate::extensions::background::Background::new(notice.clone()),
            dialogs: tokio::sync::Mutex::new(()),
            checking: false,
        }
    }
}
