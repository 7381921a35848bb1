//! Wiring: turns a [`Config`] into the registries, the provider and the agent, and handles one
//! input line for any front end (slash command, shell escape `!cmd`, or prompt). Start-up
//! does as little as it can: no network, no files beyond a resumed session, the session file
//! created on first use.

mod builtins;
pub mod check;
pub mod children;
mod elicit;
mod gate;
pub use gate::{folder_trusted, untrusted_project_root, Gate};
pub mod mcp;
pub mod mcp_login;
pub mod mentions;
mod models;
mod opening;
mod requests;
pub use requests::QuitSource;
mod sessions;
mod settings_hooks;
pub mod shell;
mod sources;
pub mod types;
pub mod ui;
mod wiring;
use wiring::Wiring;

use std::sync::Arc;

use crate::agent::session::SessionError;
use crate::agent::{prompt, Agent, AgentError, AgentParts, EventSink, RunOutcome};
use crate::commands::{self, Action, CommandTable};
use crate::config::{Config, ConfigError, Mode, ProviderKind};
use crate::extensions::host::{ExtensionHost, Summary};
use crate::hooks::{HookBus, InputSource, NoticeFn};
use crate::providers::anthropic::AnthropicProvider;
use crate::providers::faux::FauxProvider;
use crate::providers::openai::OpenAiProvider;
use crate::providers::Provider;
use crate::tools::ToolRegistry;
use crate::vocab::protocol::AgentEvent;
use crate::vocab::run::queue::Queues;
use crate::vocab::run::{RunContext, RunMode};
use tokio_util::sync::CancellationToken;

/// Why mypi could not start or a line failed. The Display is what the user reads.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{0}")]
    FauxScript(String),
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Agent(#[from] AgentError),
    #[error("{0}")]
    Command(String),
    /// The command line asks for what is not there (`--resume` of no such session).
    #[error("{0}")]
    Usage(String),
}

impl AppError {
    /// The exit code for this error: 2 for usage and configuration, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            AppError::Config(_) | AppError::FauxScript(_) | AppError::Usage(_) => 2,
            AppError::Session(
                SessionError::NoneToContinue { .. }
                | SessionError::Locked { .. }
                | SessionError::NotASession { .. },
            ) => 2,
            _ => 1,
        }
    }
}

/// What handling a line did.
#[derive(Debug, Clone, PartialEq)]
pub enum LineOutcome {
    /// A command answered with this text.
    Output(String),
    /// The model ran.
    Ran(RunOutcome),
    /// `/quit`.
    Quit,
}

/// Everything a front end drives.
pub struct App {
    pub config: Config,
    pub agent: Agent,
    pub commands: Arc<CommandTable>,
    pub hooks: Arc<HookBus>,
    pub tools: Arc<ToolRegistry>,
    pub queues: Arc<Queues>,
    pub extensions: Arc<ExtensionHost>,
    pub ui: Arc<ui::AppUi>,
    /// Reloads extensions on save while it lives (REPL).
    pub watcher: Option<crate::extensions::reload::Watcher>,
    /// Whether start-up resumed a session (`--continue` found one that was free).
    pub resumed: bool,
    /// The MCP servers (after [`App::start_mcp`]).
    pub mcp: Option<Arc<crate::mcp::Manager>>,
    /// What scripts' `api.mcp.*` reach: the servers once started.
    scripts_mcp: Arc<mcp::McpSlot>,
    /// MCP servers a front end adds to the configured ones (an editor's, in `mypi acp`);
    /// they win by name, and [`App::start_mcp`] starts them with the rest.
    pub given_mcp: Vec<crate::mcp::config::ServerConfig>,
    /// Runs the scripts' child agents.
    pub children: Arc<children::Children>,
    /// The models used in this process, the current one first (what `/model` completes).
    pub models: Arc<std::sync::Mutex<Vec<String>>>,
    /// An extension asked mypi to leave (`ctx.shutdown()`) and nobody kept it open.
    pub quitting: bool,
    /// What `!cmd` lines kept for the next prompt.
    shell_context: shell::ShellContext,
    /// What a front end attaches to the next prompt (an editor's resources), after its
    /// `@path` mentions were expanded, so an attached file's text is never read as mentions.
    pub attached: Vec<String>,
    /// The images a front end attaches to the next prompt (an editor's), for the user
    /// message (see [`crate::vocab::protocol::Message::images`]).
    pub attached_images: Vec<crate::vocab::protocol::Image>,
    /// Claude Code's and Codex's command hooks, once loaded ([`App::load_settings_hooks`]).
    settings_hooks: settings_hooks::SettingsHooks,
}

/// Builds the provider the configuration names.
pub fn provider_for(config: &Config, model: &str) -> Result<Arc<dyn Provider>, AppError> {
    make_provider(
        config.provider,
        model,
        config.base_url.clone(),
        config.api_key.clone(),
        config.faux_script.as_deref(),
    )
}

/// A provider of API `kind` for `model` at `base_url` with `api_key` (faux: replies from
/// `faux_script`, or an echo).
pub fn make_provider(
    kind: ProviderKind,
    model: &str,
    base_url: Option<String>,
    api_key: Option<String>,
    faux_script: Option<&std::path::Path>,
) -> Result<Arc<dyn Provider>, AppError> {
    Ok(match kind {
        ProviderKind::OpenAi => Arc::new(OpenAiProvider::new(model.to_string(), base_url, api_key)),
        ProviderKind::Anthropic => {
            Arc::new(AnthropicProvider::new(model.to_string(), base_url, api_key))
        }
        ProviderKind::Faux => match faux_script {
            Some(path) => Arc::new(FauxProvider::from_file(path).map_err(AppError::FauxScript)?),
            None => Arc::new(FauxProvider::new(None)),
        },
    })
}

impl App {
    /// Builds the app. `outlet` is the front end's: it receives what happens outside a run
    /// (notices from hooks and scripts, start-up warnings, child agents started outside a
    /// tool call), as the same typed events a run's sink receives.
    pub fn build(config: Config, outlet: Arc<dyn EventSink>) -> Result<App, AppError> {
        Self::build_through(config, outlet, None)
    }

    /// [`App::build`] with the built-in `read`, `write` and `edit` going through `files` (an
    /// editor's buffers, in `mypi acp`) rather than the disk.
    pub fn build_through(
        config: Config,
        outlet: Arc<dyn EventSink>,
        files: crate::tools::files::Files,
    ) -> Result<App, AppError> {
        crate::platform::http::set_read_timeout(config.read_timeout);
        let notice: NoticeFn = {
            let outlet = outlet.clone();
            Arc::new(move |message| outlet.emit(AgentEvent::Notice { message }))
        };
        let provider = provider_for(&config, &config.model)?;
        // One count of repeated notices for every source (see `hooks::repeats`).
        let reports = Arc::new(crate::hooks::repeats::Repeats::new(notice));
        let settings_hooks = settings_hooks::SettingsHooks::default();
        let notice = settings_hooks.notifying(crate::hooks::repeats::Repeats::counting(&reports));
        let wiring = Wiring::new(&config, &reports, files);
        let (tools, hooks, queues) = (
            wiring.tools.clone(),
            wiring.hooks.clone(),
            wiring.queues.clone(),
        );
        let start = opening::session_start(&config, &notice)?;
        let (resumed, last_model, name) = (start.resumed, start.model.clone(), start.name.clone());
        let restore_notice = notice.clone();
        let system_prompt = prompt::system_prompt(&config.cwd);
        let agent = Self::agent(&config, provider, &wiring, start, &system_prompt)?;
        let (commands, ui, control) = (
            wiring.commands.clone(),
            wiring.ui.clone(),
            wiring.control.clone(),
        );
        control.set_outlet(outlet.clone());
        let children = Arc::new(children::Children::new(children::ChildParts {
            config: config.clone(),
            tools: tools.clone(),
            hooks: hooks.clone(),
            system_prompt,
            outlet,
            provider: agent.provider().clone(),
            skills: wiring.skills.clone(),
        }));
        let host = wiring.host(&config, &notice, Arc::new(children.clone()));
        host.control.set_project_trusted(config.project_trusted);
        let models = Arc::new(std::sync::Mutex::new(vec![agent
            .provider()
            .model()
            .to_string()]));
        let mut app = App {
            config,
            agent,
            commands,
            hooks,
            tools,
            queues,
            extensions: Arc::new(ExtensionHost::new(Arc::new(host))),
            ui,
            watcher: None,
            resumed,
            mcp: None,
            scripts_mcp: wiring.mcp.clone(),
            given_mcp: Vec::new(),
            children,
            models,
            quitting: false,
            shell_context: shell::ShellContext::default(),
            attached: Vec::new(),
            attached_images: Vec::new(),
            settings_hooks,
        };
        if let Some((provider, model)) = last_model {
            app.restore_model(&provider, &model, &restore_notice);
        }
        app.refresh_session();
        app.agent.show_context();
        control.set_session(app.agent.session().map(|w| w.path().to_path_buf()), name);
        Ok(app)
    }

    /// The user's agent: the session start-up opened, the configuration's limits, the
    /// wiring's control, renderers and skills.
    fn agent(
        config: &Config,
        provider: Arc<dyn Provider>,
        wiring: &Wiring,
        start: opening::Continued,
        system_prompt: &str,
    ) -> Result<Agent, AppError> {
        let mut session = start.slot;
        if !start.resumed {
            // The header of the file to come names what the session starts with.
            session.set_model(&config.provider_name, &config.model)?;
        }
        let mut agent = Agent::new(AgentParts {
            provider,
            tools: wiring.tools.clone(),
            hooks: wiring.hooks.clone(),
            cwd: config.cwd.clone(),
            system_prompt: system_prompt.to_string(),
            session,
            messages: start.messages,
        });
        agent.restore_totals(start.totals);
        Self::configure(&mut agent, config);
        wiring.control.set_system_prompt(system_prompt);
        wiring.control.set_flags_given(config.ext_flags.clone());
        agent.control = Some(wiring.control.clone());
        agent.skills = Some(wiring.skills.clone());
        Ok(agent)
    }

    /// The agent's limits and prices from the configuration.
    fn configure(agent: &mut Agent, config: &Config) {
        agent.retry = config.retry;
        agent.max_turns = config.max_turns;
        agent.context_window = models::window_for(config);
        agent.prices = models::prices_for(config);
        agent.max_output = models::output_for(config);
        agent.thinking = config.thinking;
        agent.thinks = models::thinks_for(config);
    }

    /// A resumed session goes on with the provider and model it last used, unless the
    /// command line names another; when that provider cannot be reached now, it says so.
    fn restore_model(&mut self, provider: &str, model: &str, notice: &NoticeFn) {
        let same = provider == self.config.provider_name && model == self.config.model;
        if same || self.config.model_from_flag {
            return;
        }
        if let Err(e) = self.switch_model(provider, model) {
            notice(format!(
                "the session used {provider}/{model}, which cannot be used now ({e}); going on with {}/{}",
                self.config.provider_name, self.config.model
            ));
        }
    }

    /// What this session runs with: the first event of a `--json` run.
    pub fn session_event(&self) -> AgentEvent {
        let provider = self.agent.provider();
        let mcp_servers = self
            .mcp
            .as_ref()
            .map(|m| m.entries().iter().map(|e| e.config.name.clone()).collect())
            .unwrap_or_default();
        AgentEvent::Session {
            session_id: self.agent.session_id().to_string(),
            cwd: self.config.cwd.display().to_string(),
            provider: self.config.provider_name.clone(),
            model: provider.model().to_string(),
            tools: self.tools.offered_names(&[]),
            extensions: self
                .extensions
                .summaries()
                .into_iter()
                .filter(|s| s.error.is_none())
                .map(|s| s.name)
                .collect(),
            mcp_servers,
        }
    }

    /// The one line shown when mypi fell back to the offline model.
    pub fn faux_hint(&self) -> Option<&'static str> {
        self.config.fell_back_to_faux.then_some(
            "No model configured: using the offline faux model (it echoes). Set OPENAI_API_KEY \
             or ANTHROPIC_API_KEY, or pass --provider openai --base-url URL for a local server.",
        )
    }

    /// Loads the extensions and announces them; returns their summaries.
    /// Skills start being discovered first (scripts see them), prompt files become
    /// commands last (a script's command of the same name wins).
    pub async fn load_extensions(&self) -> Vec<Summary> {
        self.load_settings_hooks();
        self.start_skills();
        let infos = crate::extensions::builtin::discover(
            &self.config.extension_roots,
            self.config.builtin_extensions,
        );
        let mut summaries = Vec::new();
        if !infos.is_empty() {
            summaries = self.extensions.load_all(infos).await;
            self.extensions
                .announce(&summaries, crate::hooks::Reason::Startup)
                .await;
        }
        self.add_prompt_commands();
        summaries
    }

    /// Starts reloading extensions on save (unless `--no-watch`). Returns a problem to show.
    pub fn watch_extensions(&mut self) -> Option<String> {
        if !self.config.watch || self.config.extension_roots.is_empty() {
            return None;
        }
        match crate::extensions::reload::watch(
            self.extensions.clone(),
            self.config.extension_roots.clone(),
        ) {
            Ok(w) => {
                self.watcher = Some(w);
                None
            }
            Err(e) => Some(format!(
                "{e}; extensions will not reload on save (use /reload)"
            )),
        }
    }

    /// The context of a run of this session with cancellation `cancel`.
    pub fn run_context(&self, cancel: CancellationToken) -> Arc<RunContext> {
        let mode = match &self.config.mode {
            Mode::Repl => RunMode::Repl,
            Mode::Print { json: true, .. } => RunMode::Json,
            Mode::Print { .. } => RunMode::Print,
            Mode::Acp => RunMode::Acp,
        };
        let mut ctx = RunContext::new(
            self.config.cwd.clone(),
            mode,
            self.agent.session_id().to_string(),
            self.agent.provider().model().to_string(),
            cancel,
            self.queues.clone(),
        );
        ctx.thinking = self.agent.thinking;
        Arc::new(ctx)
    }

    /// Updates the context of calls made outside a run (session, model).
    pub fn refresh_session(&self) {
        let ctx = self.run_context(CancellationToken::new());
        self.extensions.context().set_session(ctx);
    }

    /// Handles one line: a slash command, a shell escape (`!cmd`, `!!cmd`: see [`shell`]), or
    /// a prompt for the model (with what `!cmd` kept before it). Then writes the
    /// session entries scripts added and carries out what they asked (their lines are
    /// notices).
    pub async fn handle_line(
        &mut self,
        line: &str,
        sink: &dyn EventSink,
        cancel: &CancellationToken,
    ) -> Result<LineOutcome, AppError> {
        let outcome = self.line(line, sink, cancel).await;
        self.attached.clear();
        self.attached_images.clear();
        self.after_line(sink).await;
        outcome
    }

    /// What follows every line and queued prompt: script entries written, requests done.
    pub async fn after_line(&mut self, sink: &dyn EventSink) {
        self.agent.write_pending(sink);
        for message in self.apply_requests().await {
            sink.emit(AgentEvent::Notice { message });
        }
        // The line's repeated notices are counted once it is done.
        self.hooks.flush_reports();
    }

    async fn line(
        &mut self,
        line: &str,
        sink: &dyn EventSink,
        cancel: &CancellationToken,
    ) -> Result<LineOutcome, AppError> {
        self.sync_providers();
        self.refresh_session();
        self.pending_hook_runs(sink);
        let (ctx, events) = settings_hooks::with_events(self.run_context(cancel.clone()));
        // On the heap: a line's future is large, and a debug build's worker stack is not.
        let work = Box::pin(self.line_in(line, sink, &ctx));
        let outcome = settings_hooks::forward(events, sink, work).await;
        // Model calls made outside a run (`/compact`, a command's `api.complete`) count in
        // the session's totals too.
        self.agent.add_spent(ctx.spent.take());
        outcome
    }

    async fn line_in(
        &mut self,
        line: &str,
        sink: &dyn EventSink,
        ctx: &std::sync::Arc<crate::vocab::run::RunContext>,
    ) -> Result<LineOutcome, AppError> {
        let ctx = ctx.clone();
        if let Some((command, keep)) = shell::parse(line) {
            return self.shell(command, keep, sink, &ctx).await;
        }
        let Some((name, args)) = commands::parse_line(line) else {
            // `//text` sends `/text` (a prompt that starts with a slash).
            let typed = match line.trim_start().strip_prefix("//") {
                Some(rest) => format!("/{rest}"),
                None => line.to_string(),
            };
            let text = mentions::expand(&typed, &self.config.cwd).map_err(AppError::Command)?;
            // The servers the prompt names are in what was typed, not in the files attached.
            self.wait_for_mcp(&typed).await;
            let mut text = self.shell_context.take_into(&text);
            for block in std::mem::take(&mut self.attached) {
                text.push_str("\n\n");
                text.push_str(&block);
            }
            self.agent.images = std::mem::take(&mut self.attached_images);
            let outcome = self
                .agent
                .prompt(&text, InputSource::User, sink, &ctx)
                .await?;
            return Ok(LineOutcome::Ran(outcome));
        };
        let mut resolved = self.commands.resolve(name);
        // A server's prompt command exists once its server has connected.
        if let (Err(_), Some(m)) = (&resolved, &self.mcp) {
            if !m.connecting_owners(name).is_empty() {
                let why = m.wait_for_name(name).await;
                resolved = self.commands.resolve(name);
                if let (Err(_), Some(why)) = (&resolved, why) {
                    let msg = format!("/{name} is not available yet: {why}");
                    return Err(AppError::Command(msg));
                }
            }
        }
        let command = match resolved {
            Ok(command) => command,
            Err(unknown) => match self.skill_command(name, args) {
                Some(text) => return self.send_prompt(&text?, sink, &ctx).await,
                None => return Err(AppError::Command(unknown.to_string())),
            },
        };
        let outcome = match &command.action {
            Action::Builtin(b) => self.builtin(*b, args).await?,
            Action::Handler(h) => LineOutcome::Output(
                h.call(args, &ctx)
                    .await
                    .map_err(|e| AppError::Command(format!("/{}: {e}", command.name)))?,
            ),
            Action::Prompt(h) => {
                let text = h
                    .call(args, &ctx)
                    .await
                    .map_err(|e| AppError::Command(format!("/{}: {e}", command.name)))?;
                return self.send_prompt(&text, sink, &ctx).await;
            }
        };
        // Child agents a command ran are kept in the session like a tool's.
        self.agent.keep_children(&ctx, sink);
        self.refresh_session();
        if let LineOutcome::Output(text) = &outcome {
            sink.emit(AgentEvent::Command {
                name: command.name.clone(),
                output: text.clone(),
            });
        }
        Ok(outcome)
    }

    /// Runs every message extensions queued while the agent was idle, in order, each as a
    /// prompt for the model with `source = "extension"` (a queued text is never a slash
    /// command, whether it was queued while idle or during a run). Returns the last outcome.
    pub async fn run_queued(
        &mut self,
        sink: &dyn EventSink,
        cancel: &CancellationToken,
    ) -> Option<Result<RunOutcome, AppError>> {
        let mut last = None;
        while !cancel.is_cancelled() {
            let Some(text) = crate::agent::next_queued(&self.queues, sink) else {
                break;
            };
            self.refresh_session();
            let (ctx, events) = settings_hooks::with_events(self.run_context(cancel.clone()));
            let run = Box::pin(self.agent.prompt(&text, InputSource::Extension, sink, &ctx));
            let outcome = settings_hooks::forward(events, sink, run)
                .await
                .map_err(AppError::from);
            let failed = outcome.is_err();
            last = Some(outcome);
            self.after_line(sink).await;
            if failed || self.quitting {
                break;
            }
        }
        last
    }
}
