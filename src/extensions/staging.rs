//! [`HostRegistrar`]: the host side of one extension's script API. It puts the extension's
//! handlers, tools, commands and renderers into the Rust registries as proxies that call back
//! into its worker (see `proxies.rs`), staging them while the script's top level runs so that
//! a version appears (and a reloaded one replaces the old) all at once, or not at all; and it
//! carries out the extension's queue pushes, notices and questions to the user.

/// The longest line a script can show the user (`api.log`, `api.notify`, a confirm
/// question); longer text is cut in the middle.
const MAX_LINE_BYTES: usize = 8 * 1024;

use crate::vocab::text::truncate_middle;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use futures_util::future::BoxFuture;

use super::api::ToolDef;
use super::background::{Target, Trigger};
use super::proxies::{CommandProxy, HookProxy, RendererProxy, ToolProxy};
use super::registrar::{Background, Registrar, Services};
use super::script::CallbackId;
use super::services::HostContext;
use super::worker::Worker;
use crate::commands::CommandHandler;
use crate::config::sources::catalog::Skill;
use crate::hooks::{EventKind, HookHandler};
use crate::tools::renderers::Renderer;
use crate::tools::Tool;
use crate::vocab::owner::{next_id, Handle, Owner, Unregister};
use crate::vocab::protocol::ToolSpec;
use crate::vocab::run::queue::{Delivery, Queues};

/// A registration made while the script's top level runs, committed when it succeeds.
enum Staged {
    Hook(u64, EventKind, Owner, Arc<dyn HookHandler>),
    Tool(u64, Owner, Arc<dyn Tool>),
    Command(u64, Owner, String, String, Arc<dyn CommandHandler>),
    Background(u64, Owner, Background, Target),
    Renderer(u64, Owner, String, Arc<dyn Renderer>),
    Skill(u64, Owner, Box<Skill>),
}

/// One extension's registrar. While loading, registrations are staged so that a version
/// appears (and a reloaded one replaces the old) all at once, or not at all.
pub struct HostRegistrar {
    pub ctx: Arc<HostContext>,
    worker: OnceLock<Weak<Worker>>,
    staged: Mutex<Option<Vec<Staged>>>,
}

impl HostRegistrar {
    /// A registrar that stages registrations until [`HostRegistrar::commit`].
    pub fn staging(ctx: Arc<HostContext>) -> Arc<Self> {
        Arc::new(HostRegistrar {
            ctx,
            worker: OnceLock::new(),
            staged: Mutex::new(Some(Vec::new())),
        })
    }

    /// Connects the registrar to its extension's worker (once).
    pub fn attach(&self, worker: &Arc<Worker>) {
        let _ = self.worker.set(Arc::downgrade(worker));
    }

    fn worker(&self) -> Result<Arc<Worker>, String> {
        self.worker
            .get()
            .and_then(Weak::upgrade)
            .ok_or_else(|| "the extension is being unloaded".to_string())
    }

    fn stage(&self, item: Staged) -> Result<(), Staged> {
        match self.lock().as_mut() {
            Some(list) => {
                list.push(item);
                Ok(())
            }
            None => Err(item),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Vec<Staged>>> {
        self.staged.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Puts every staged registration into the registries; later ones go in directly.
    pub fn commit(&self) {
        let staged = self.lock().take().unwrap_or_default();
        for item in staged {
            self.apply(item);
        }
    }

    /// Drops the staged registrations (the load failed).
    pub fn discard(&self) {
        self.lock().take();
    }

    fn apply(&self, item: Staged) {
        let ctx = &self.ctx;
        match item {
            Staged::Hook(id, kind, owner, h) => {
                ctx.hooks.on_with_id(id, kind, owner, h);
            }
            Staged::Tool(id, owner, tool) => {
                if let Some(n) = ctx.tools.register_with_id(id, owner, tool).notice {
                    (ctx.notice)(n);
                }
            }
            Staged::Command(id, owner, name, description, h) => {
                let r = ctx
                    .commands
                    .register_with_id(id, owner, &name, &description, h);
                if let Some(n) = r.notice {
                    (ctx.notice)(n);
                }
            }
            Staged::Background(id, owner, what, target) => {
                let trigger = match what {
                    Background::Event(name) => {
                        ctx.background.subscribe(id, owner, name, target);
                        return;
                    }
                    Background::Timer { ms, repeat } => Trigger::Timer { ms, repeat },
                    Background::Watch(path) => Trigger::Watch { path },
                };
                let host = Arc::downgrade(ctx);
                let session: super::background::SessionFn =
                    Arc::new(move || match host.upgrade() {
                        Some(h) => h.session(),
                        None => Arc::new(crate::vocab::run::RunContext::detached(PathBuf::new())),
                    });
                let who = owner.to_string();
                if let Err(e) = ctx.background.start(id, owner, trigger, target, session) {
                    (ctx.notice)(format!("{who}: {e}"));
                }
            }
            Staged::Renderer(id, owner, tool, r) => {
                if let Some(n) = ctx.renderers.register_with_id(id, owner, &tool, r).notice {
                    (ctx.notice)(n);
                }
            }
            Staged::Skill(id, owner, skill) => {
                if let Some(n) = ctx.skills.add(id, owner, *skill) {
                    (ctx.notice)(n);
                }
            }
        }
    }

    /// Stages or applies `item`; returns the handle that removes it.
    fn register(&self, item: Staged) -> Handle {
        let (id, target): (u64, Weak<dyn Unregister>) = match &item {
            Staged::Hook(id, ..) => (*id, Arc::downgrade(&self.ctx.hooks) as Weak<dyn Unregister>),
            Staged::Tool(id, ..) => (*id, Arc::downgrade(&self.ctx.tools) as Weak<dyn Unregister>),
            Staged::Command(id, ..) => (
                *id,
                Arc::downgrade(&self.ctx.commands) as Weak<dyn Unregister>,
            ),
            Staged::Background(id, ..) => (*id, self.ctx.background.target()),
            Staged::Renderer(id, ..) => (
                *id,
                Arc::downgrade(&self.ctx.renderers) as Weak<dyn Unregister>,
            ),
            Staged::Skill(id, ..) => (
                *id,
                Arc::downgrade(&self.ctx.skills) as Weak<dyn Unregister>,
            ),
        };
        if let Err(item) = self.stage(item) {
            self.apply(item);
        }
        Handle::new(id, target)
    }
}

impl Registrar for HostRegistrar {
    fn on(&self, owner: &Owner, event: &str, cb: CallbackId) -> Result<Handle, String> {
        // The script API checked the name (see `surface.rs`); this is the backstop.
        let kind = EventKind::parse(event).ok_or_else(|| format!("unknown event '{event}'"))?;
        let proxy = HookProxy {
            worker: self.worker()?,
            cb,
        };
        Ok(self.register(Staged::Hook(
            next_id(),
            kind,
            owner.clone(),
            Arc::new(proxy),
        )))
    }

    fn tool(&self, owner: &Owner, def: ToolDef, cb: CallbackId) -> Result<Handle, String> {
        let worker = self.worker()?;
        let budget = def
            .timeout_ms
            .map(Duration::from_millis)
            .unwrap_or(worker.limits.budget);
        let proxy = ToolProxy {
            spec: ToolSpec {
                name: def.name,
                description: def.description,
                parameters: def.parameters,
            },
            parallel_safe: def.parallel_safe,
            budget,
            worker,
            cb,
        };
        Ok(self.register(Staged::Tool(next_id(), owner.clone(), Arc::new(proxy))))
    }

    fn command(
        &self,
        owner: &Owner,
        name: &str,
        description: &str,
        cb: CallbackId,
    ) -> Result<Handle, String> {
        let name = name.strip_prefix('/').unwrap_or(name);
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(format!(
                "command name {name:?} must be one word without spaces"
            ));
        }
        let proxy = CommandProxy {
            worker: self.worker()?,
            cb,
        };
        Ok(self.register(Staged::Command(
            next_id(),
            owner.clone(),
            name.to_string(),
            description.to_string(),
            Arc::new(proxy),
        )))
    }

    fn renderer(
        &self,
        owner: &Owner,
        tool: &str,
        call: Option<CallbackId>,
        result: Option<CallbackId>,
    ) -> Result<Handle, String> {
        let proxy = RendererProxy {
            worker: self.worker()?,
            call,
            result,
        };
        Ok(self.register(Staged::Renderer(
            next_id(),
            owner.clone(),
            tool.to_string(),
            Arc::new(proxy),
        )))
    }

    fn skill(&self, owner: &Owner, skill: Skill) -> Result<Handle, String> {
        Ok(self.register(Staged::Skill(next_id(), owner.clone(), Box::new(skill))))
    }

    fn background(
        &self,
        owner: &Owner,
        what: Background,
        cb: CallbackId,
    ) -> Result<Handle, String> {
        if !matches!(what, Background::Event(_)) {
            self.ctx.background.check_room(owner)?;
        }
        let target = Target {
            worker: self.worker()?,
            cb,
        };
        Ok(self.register(Staged::Background(next_id(), owner.clone(), what, target)))
    }

    fn unstage(&self, id: u64) -> bool {
        let mut staged = self.lock();
        let Some(list) = staged.as_mut() else {
            return false;
        };
        let before = list.len();
        list.retain(|item| match item {
            Staged::Hook(i, ..)
            | Staged::Tool(i, ..)
            | Staged::Command(i, ..)
            | Staged::Background(i, ..)
            | Staged::Renderer(i, ..)
            | Staged::Skill(i, ..) => *i != id,
        });
        before != list.len()
    }
}

impl Services for HostRegistrar {
    fn send_message(
        &self,
        text: &str,
        deliver_as: &str,
        queues: Option<Arc<Queues>>,
    ) -> Result<(), String> {
        let delivery = Delivery::parse(deliver_as).ok_or_else(|| {
            format!("deliver_as must be \"steer\" or \"follow_up\", not {deliver_as:?}")
        })?;
        queues
            .unwrap_or_else(|| self.ctx.queues.clone())
            .push(text, delivery)
            .map_err(|e| e.to_string())
    }

    fn log(&self, line: &str) {
        if self.ctx.log {
            use std::io::Write;
            let line = truncate_middle(line, MAX_LINE_BYTES);
            // A script's words: inert on a terminal, exact in a log file.
            let line = if crate::platform::stdio::err_is_terminal() {
                crate::vocab::text::inert(&line)
            } else {
                std::borrow::Cow::Borrowed(line.as_str())
            };
            let _ = writeln!(std::io::stderr().lock(), "{line}");
        }
    }

    fn notify(&self, line: &str) {
        (self.ctx.notice)(truncate_middle(line, MAX_LINE_BYTES));
    }

    fn confirm(&self, question: &str) -> BoxFuture<'static, bool> {
        self.ctx
            .ui
            .confirm(&truncate_middle(question, MAX_LINE_BYTES))
    }

    fn confirm_from(
        &self,
        question: &str,
        asker: &crate::vocab::ui::Asker,
    ) -> BoxFuture<'static, bool> {
        self.ctx
            .ui
            .confirm_from(&truncate_middle(question, MAX_LINE_BYTES), asker)
    }

    fn choose(
        &self,
        title: &str,
        options: &[String],
        asker: &crate::vocab::ui::Asker,
    ) -> Option<BoxFuture<'static, Option<usize>>> {
        self.ctx
            .ui
            .choose(&truncate_middle(title, MAX_LINE_BYTES), options, asker)
    }

    fn ask(&self, question: &str) -> BoxFuture<'static, Option<String>> {
        self.ctx.ui.ask(&truncate_middle(question, MAX_LINE_BYTES))
    }

    fn edit(&self, initial: &str) -> BoxFuture<'static, Option<String>> {
        self.ctx.ui.edit(initial)
    }

    fn cwd(&self) -> PathBuf {
        self.ctx.cwd.clone()
    }

    fn mcp(
        &self,
        extension: &str,
        request: crate::vocab::mcp::McpRequest,
        ctx: Option<Arc<crate::vocab::run::RunContext>>,
    ) -> BoxFuture<'static, Result<serde_json::Value, String>> {
        let service = self.ctx.mcp.clone();
        let worker = self.worker().ok().map(|w| w.id);
        let run = Arc::new(
            ctx.unwrap_or_else(|| self.ctx.session())
                .with_waiting(worker),
        );
        service.serve(request, extension, run)
    }

    fn run_agents(
        &self,
        specs: Vec<crate::agent::child::ChildSpec>,
        concurrency: usize,
        ctx: Option<Arc<crate::vocab::run::RunContext>>,
    ) -> BoxFuture<'static, Result<Vec<crate::vocab::protocol::ChildOutcome>, String>> {
        let agents = self.ctx.agents.clone();
        let waiting = self.worker().ok().map(|w| w.id);
        let parent = ctx.unwrap_or_else(|| self.ctx.session());
        Box::pin(async move {
            let agents = agents.ok_or_else(|| super::registrar::NO_AGENT.to_string())?;
            Ok(crate::agent::child::run_many(agents, specs, concurrency, parent, waiting).await)
        })
    }

    fn complete(
        &self,
        request: crate::agent::child::CompleteRequest,
        ctx: Option<Arc<crate::vocab::run::RunContext>>,
    ) -> BoxFuture<'static, Result<crate::agent::child::Completion, String>> {
        let agents = self.ctx.agents.clone();
        let ctx = ctx.unwrap_or_else(|| self.ctx.session());
        Box::pin(async move {
            let agents = agents.ok_or_else(|| super::registrar::NO_AGENT.to_string())?;
            agents.complete(request, ctx).await
        })
    }
}
