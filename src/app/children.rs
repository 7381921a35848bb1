//! The [`Spawner`] of the app: child agents (`api.run_agent`) and one-off model calls
//! (`api.complete`) built from the same configuration, tools and hooks as the user's agent.
//! A child starts with no I/O at all: a provider value, a tool subset sharing the parent's
//! tools, an empty conversation; its first model request is its first system call.
//!
//! What a child does reaches the front end as typed `child` events (its tool calls, results,
//! notices, failure), never its streamed text: print mode's stdout stays the parent's answer.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, RwLock};

use futures_util::future::BoxFuture;

use super::provider_for;
use crate::agent::child::{self, ChildSpec, CompleteRequest, Completion, Spawner};
use crate::agent::session::SessionSlot;
use crate::agent::{Agent, AgentParts, EventSink};
use crate::config::{Config, ProviderKind};
use crate::hooks::{HookBus, InputSource};
use crate::providers::{ModelRequest, Provider};
use crate::tools::ToolRegistry;
use crate::vocab::protocol::{AgentEvent, ChildOutcome, ChildRecord, ChildTag, Message};
use crate::vocab::run::RunContext;
use crate::vocab::text::truncate_middle;

/// What a child is built from: the agent's configuration, tools, hooks and system prompt.
pub struct ChildParts {
    pub config: Config,
    pub tools: Arc<ToolRegistry>,
    pub hooks: Arc<HookBus>,
    pub system_prompt: String,
    /// Where the events of children started outside a tool call go (the front end's).
    pub outlet: Arc<dyn EventSink>,
    /// The agent's provider now.
    pub provider: Arc<dyn Provider>,
    /// The skills, listed to a child that can read them.
    pub skills: Arc<crate::config::sources::catalog::Catalog>,
}

/// Builds children for the scripts.
pub struct Children {
    config: Config,
    tools: Arc<ToolRegistry>,
    hooks: Arc<HookBus>,
    system_prompt: String,
    outlet: Arc<dyn EventSink>,
    /// The agent's provider (kept current by `/model`): a child with the same provider and
    /// model shares it, so a faux script's replies go on where the parent left them.
    current: RwLock<Arc<dyn Provider>>,
    skills: Arc<crate::config::sources::catalog::Catalog>,
    pub max_depth: u32,
}

impl Children {
    pub fn new(parts: ChildParts) -> Self {
        Children {
            config: parts.config,
            tools: parts.tools,
            hooks: parts.hooks,
            system_prompt: parts.system_prompt,
            outlet: parts.outlet,
            current: RwLock::new(parts.provider),
            skills: parts.skills,
            max_depth: child::MAX_DEPTH,
        }
    }

    /// The agent switched providers (`/model`).
    pub fn set_provider(&self, provider: Arc<dyn Provider>) {
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = provider;
    }

    /// The provider a child or a call uses: the one named (default: the agent's), with the
    /// model named (default: the parent run's, or the named provider's default).
    fn provider(
        &self,
        provider: Option<&str>,
        model: Option<&str>,
        parent_model: &str,
    ) -> Result<Arc<dyn Provider>, String> {
        let kind = match provider {
            None => self.config.provider,
            Some("openai") => ProviderKind::OpenAi,
            Some("anthropic") => ProviderKind::Anthropic,
            Some("faux") => ProviderKind::Faux,
            Some(other) => {
                return Err(format!(
                    "unknown provider '{other}'; the providers are openai, anthropic, faux"
                ))
            }
        };
        if kind == self.config.provider {
            let current = self
                .current
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            let model = model.unwrap_or(parent_model);
            if model == current.model() {
                return Ok(current);
            }
            return provider_for(&self.config, model).map_err(|e| e.to_string());
        }
        // Another provider: its key and address come from its own environment variables.
        let (key_var, url_var) = kind.env_vars();
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let mut config = self.config.clone();
        config.provider = kind;
        config.api_key = var(key_var);
        config.base_url = var(url_var);
        config.faux_script = None;
        let model = model.unwrap_or(kind.default_model());
        provider_for(&config, model).map_err(|e| e.to_string())
    }

    /// Whether `model` of the provider named (default: the agent's) may be asked to think:
    /// not when the configuration's table says `thinking = false` for it.
    fn thinks(&self, provider: Option<&str>, model: &str) -> bool {
        let name = provider.unwrap_or(&self.config.provider_name);
        super::models::model_thinks(&self.config, name, model)
    }

    async fn run_child(
        &self,
        spec: ChildSpec,
        parent: Arc<RunContext>,
        waiting: Option<u64>,
    ) -> (ChildOutcome, Option<ChildRecord>) {
        let never = |e: String| (child::failed(e), None);
        if parent.cancel.is_cancelled() {
            return never(crate::agent::AgentError::Cancelled.to_string());
        }
        if parent.depth >= self.max_depth {
            return never(format!(
                "a child agent was not started: agents nest at most {} deep, and this run \
                 is at depth {}",
                self.max_depth, parent.depth
            ));
        }
        let provider = match self.provider(
            spec.provider.as_deref(),
            spec.model.as_deref(),
            &parent.model,
        ) {
            Ok(p) => p,
            Err(e) => return never(e),
        };
        let mut ctx = parent.child(waiting, provider.model().to_string());
        // The parent's level unless the spec names one.
        ctx.thinking = spec.thinking.unwrap_or(parent.thinking);
        let ctx = Arc::new(ctx);
        let tools = match self.tools.subset(spec.tools.as_deref(), &ctx) {
            Ok(t) => t,
            Err(e) => return never(e),
        };
        let model = provider.model().to_string();
        let mut agent = Agent::new(AgentParts {
            provider,
            tools,
            hooks: self.hooks.clone(),
            cwd: self.config.cwd.clone(),
            system_prompt: spec
                .system_prompt
                .clone()
                .unwrap_or_else(|| self.system_prompt.clone()),
            session: SessionSlot::Off,
            messages: Vec::new(),
        });
        agent.retry = self.config.retry;
        agent.max_turns = spec.max_turns.unwrap_or(self.config.max_turns);
        agent.thinking = ctx.thinking;
        agent.thinks = self.thinks(spec.provider.as_deref(), &model);
        agent.children = Some(Vec::new());
        // The skills, as the user's agent has them, for a child that can read a skill's file.
        if agent.tools().get("read").is_some() {
            agent.skills = Some(self.skills.clone());
        }
        let sink = ChildSink {
            parent: parent.clone(),
            outlet: self.outlet.clone(),
            name: label(&spec),
            depth: ctx.depth,
            turn: AtomicU32::new(0),
        };
        let result = agent
            .prompt(&spec.task, InputSource::Extension, &sink, &ctx)
            .await;
        let outcome = outcome_of(result, &agent);
        let record = ChildRecord {
            tool_call_id: parent.call_id.clone(),
            depth: ctx.depth,
            model,
            task: spec.task,
            messages: agent.messages().to_vec(),
            outcome: outcome.clone(),
            children: agent.children.take().unwrap_or_default(),
        };
        (outcome, Some(record))
    }

    async fn complete_once(
        &self,
        request: CompleteRequest,
        ctx: Arc<RunContext>,
    ) -> Result<Completion, String> {
        let provider = self.provider(
            request.provider.as_deref(),
            request.model.as_deref(),
            &ctx.model,
        )?;
        let model_request = ModelRequest {
            model: provider.model().to_string(),
            system_prompt: request.system_prompt.unwrap_or_default(),
            messages: request.messages.into(),
            tools: Vec::new(),
            max_tokens: request.max_tokens,
            cache_key: None,
            thinking: crate::providers::ThinkingAsk {
                level: match self.thinks(request.provider.as_deref(), provider.model()) {
                    true => request.thinking.unwrap_or_default(),
                    false => Default::default(),
                },
                ceiling: crate::agent::compact::known_output(provider.model()),
            },
        };
        let (text, usage) =
            crate::providers::complete(provider.as_ref(), &model_request, &ctx.cancel).await?;
        ctx.spent.add(crate::vocab::run::Spender::Complete, usage);
        Ok(Completion { text, usage })
    }
}

impl Spawner for Arc<Children> {
    fn run(
        &self,
        spec: ChildSpec,
        parent: Arc<RunContext>,
        waiting: Option<u64>,
    ) -> BoxFuture<'static, (ChildOutcome, Option<ChildRecord>)> {
        let me = self.clone();
        Box::pin(async move { me.run_child(spec, parent, waiting).await })
    }

    fn complete(
        &self,
        request: CompleteRequest,
        ctx: Arc<RunContext>,
    ) -> BoxFuture<'static, Result<Completion, String>> {
        let me = self.clone();
        Box::pin(async move { me.complete_once(request, ctx).await })
    }
}

/// How a child is named in its notice lines: its name, or the start of its task.
fn label(spec: &ChildSpec) -> String {
    spec.name
        .clone()
        .unwrap_or_else(|| truncate_middle(&spec.task, 30))
}

/// What a child's run gave its caller: its answer, or why it failed with what it spent.
fn outcome_of(
    result: Result<crate::agent::RunOutcome, crate::agent::AgentError>,
    agent: &Agent,
) -> ChildOutcome {
    match result {
        Ok(o) => ChildOutcome {
            text: o.text,
            turns: o.turns,
            usage: o.usage,
            error: None,
        },
        Err(e) => ChildOutcome {
            text: String::new(),
            turns: turns_of(agent.messages()),
            usage: agent.usage(),
            error: Some(e.to_string()),
        },
    }
}

/// Model turns in a transcript (assistant messages).
fn turns_of(messages: &[Message]) -> u32 {
    messages
        .iter()
        .filter(|m| m.role == crate::vocab::protocol::Role::Assistant)
        .count() as u32
}

/// A child's events, passed up as typed [`AgentEvent::Child`] events (each front end says how
/// it shows them): through the tool call that started the child, so they reach that run's
/// sink in order, before the call's result; a child started outside a tool call (from a hook
/// handler or a command) reports to the line's sink, or with no line running (a timer's) to
/// the front end's outlet. What the child streams is not passed
/// on: print mode's stdout stays the parent's answer.
struct ChildSink {
    parent: Arc<RunContext>,
    outlet: Arc<dyn EventSink>,
    name: String,
    depth: u32,
    turn: AtomicU32,
}

impl EventSink for ChildSink {
    fn emit(&self, event: AgentEvent) {
        let (child, event) = match event {
            AgentEvent::TurnStart { turn } => {
                self.turn.store(turn, Ordering::Relaxed);
                return;
            }
            // A grandchild's events keep their own tag.
            AgentEvent::Child { child, event, .. } => (child, *event),
            AgentEvent::ToolCall { .. }
            | AgentEvent::ToolResult { .. }
            | AgentEvent::Error { .. }
            | AgentEvent::Notice { .. }
            | AgentEvent::Retry { .. } => (self.tag(), event),
            _ => return,
        };
        if self.parent.report_child(child.clone(), event.clone()) {
            return;
        }
        let event = AgentEvent::Child {
            call_id: None,
            child,
            event: Box::new(event),
        };
        // Outside a tool call: the line's sink while a line runs, else the front end's.
        if !self.parent.emit(event.clone()) {
            self.outlet.emit(event);
        }
    }
}

impl ChildSink {
    fn tag(&self) -> ChildTag {
        ChildTag {
            name: self.name.clone(),
            depth: self.depth,
            turn: self.turn.load(Ordering::Relaxed),
        }
    }
}
