//! Settings hooks: Claude Code's (and Codex's) command hooks
//! ([`crate::config::claude_hooks`]) as handlers on the hook bus, so they compose with
//! scripts' handlers by the bus's chaining rules. Each hook is one [`CommandHandler`] on the
//! bus event its Claude Code event maps to:
//!
//! | Claude Code | bus event | what its answer does |
//! | --- | --- | --- |
//! | `PreToolUse` | `tool_call` | blocks the call (the model reads the reason), rewrites its arguments, asks the user |
//! | `PostToolUse` | `tool_result` | adds its reason or context to the result the model reads |
//! | `UserPromptSubmit` | `input` (the user's) | blocks the prompt (the user reads why), adds context to it |
//! | `Stop`, `SubagentStop` | `agent_end` (the user's agent, a child) | a block makes the agent go on with the reason as the next prompt |
//! | `SessionStart` | `session_start` | its context joins the system prompt of the session's runs |
//! | `SessionEnd` | `session_shutdown` | nothing (it is told) |
//! | `PreCompact` | `session_before_compact` | a block cancels the compaction |
//! | `Notification` | mypi's notices; a hook's `ask` waiting for the user | nothing (it is told) |
//!
//! They run after every script's handlers of the same event ([`ORDER`]): a guard sees the
//! arguments the call will really run with. Each run is reported to the line's sink as a
//! `hook_run` event.

mod answer;
mod input;
mod run;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::{EventKind, HookBus, HookError, HookEvent, HookHandler, NoticeFn};
use crate::config::claude_hooks::{ClaudeEvent, CommandHook};
use crate::vocab::owner::{Handle, Owner};
use crate::vocab::protocol::{AgentEvent, Delivery, HookRun};
use crate::vocab::run::{RunContext, RunMode};
use crate::vocab::ui::Ui;
use answer::Answer;
pub use input::claude_tool_name;

/// Where settings hooks sit in a chain: after every script (whose order is its load order).
pub const ORDER: u64 = u64::MAX / 2;

/// What settings hooks need of the rest of mypi.
pub struct HookEnv {
    /// `CLAUDE_PROJECT_DIR`: the project's folder.
    pub project_dir: PathBuf,
    /// Failures, `systemMessage`s and `stopReason`s for the user.
    pub notice: NoticeFn,
    /// Asks the user when a hook answers `ask`.
    pub ui: Arc<dyn Ui>,
    /// The session file (`transcript_path`), once there is one.
    pub transcript: Arc<dyn Fn() -> Option<PathBuf> + Send + Sync>,
    /// The context of calls made outside a run (a notice's `Notification` hooks).
    pub session: Arc<dyn Fn() -> Arc<RunContext> + Send + Sync>,
}

/// State the hooks of one load share.
struct Shared {
    env: HookEnv,
    /// `SessionStart` hooks' context, for the session it was given in.
    session_context: Mutex<(String, Vec<String>)>,
    notification: Vec<Arc<CommandHook>>,
    /// `Notification` hooks running for a notice: what they report is no new notification.
    notifying: AtomicUsize,
    /// `hook_run` events of runs outside a line (the session's start), for the next line.
    pending: Mutex<Vec<AgentEvent>>,
}

/// The most `hook_run` events kept for the next line.
const MAX_PENDING: usize = 100;

/// The settings hooks on the bus (dropping it leaves them there; [`Registered::remove`]
/// takes them off).
pub struct Registered {
    pub hooks: Vec<CommandHook>,
    handles: Vec<Handle>,
    shared: Arc<Shared>,
}

/// The bus event a Claude Code event runs on (`Notification` runs on none).
fn bus_kind(event: ClaudeEvent) -> Option<EventKind> {
    Some(match event {
        ClaudeEvent::PreToolUse => EventKind::ToolCall,
        ClaudeEvent::PostToolUse => EventKind::ToolResult,
        ClaudeEvent::UserPromptSubmit => EventKind::Input,
        ClaudeEvent::Stop | ClaudeEvent::SubagentStop => EventKind::AgentEnd,
        ClaudeEvent::SessionStart => EventKind::SessionStart,
        ClaudeEvent::SessionEnd => EventKind::SessionShutdown,
        ClaudeEvent::PreCompact => EventKind::SessionBeforeCompact,
        ClaudeEvent::Notification => return None,
    })
}

/// Puts `hooks` on `bus`, in their order, one owner per settings file.
pub fn register(bus: &HookBus, hooks: Vec<CommandHook>, env: HookEnv) -> Registered {
    let notification = hooks
        .iter()
        .filter(|h| h.event == ClaudeEvent::Notification)
        .cloned()
        .map(Arc::new)
        .collect();
    let shared = Arc::new(Shared {
        env,
        session_context: Mutex::default(),
        notification,
        notifying: AtomicUsize::new(0),
        pending: Mutex::default(),
    });
    let mut files: Vec<&PathBuf> = Vec::new();
    let mut handles = Vec::new();
    for hook in &hooks {
        let index = match files.iter().position(|f| *f == &hook.source) {
            Some(i) => i,
            None => {
                files.push(&hook.source);
                files.len() - 1
            }
        };
        let Some(kind) = bus_kind(hook.event) else {
            continue;
        };
        let owner = Owner::new(hook.source.display().to_string(), ORDER + index as u64);
        let handler = CommandHandler {
            hook: Arc::new(hook.clone()),
            shared: shared.clone(),
        };
        handles.push(bus.on(kind, owner, Arc::new(handler)));
    }
    if hooks.iter().any(|h| h.event == ClaudeEvent::SessionStart) {
        let owner = Owner::new("SessionStart hooks", ORDER + files.len() as u64);
        let context = SessionContext(shared.clone());
        handles.push(bus.on(EventKind::BeforeAgentStart, owner, Arc::new(context)));
    }
    Registered {
        hooks,
        handles,
        shared,
    }
}

impl Registered {
    /// Takes every settings hook off the bus.
    pub fn remove(&self) {
        for h in &self.handles {
            h.remove();
        }
    }

    /// The `hook_run` events of runs made outside a line since the last call (the
    /// session's start, notices'), for the next line's sink.
    pub fn take_pending(&self) -> Vec<AgentEvent> {
        std::mem::take(
            &mut *self
                .shared
                .pending
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        )
    }

    /// A function that runs the `Notification` hooks (`notification_type` `notice`) for a
    /// notice, on the side; `None` when there are none. What they report themselves does
    /// not notify again.
    pub fn notifier(&self) -> Option<NoticeFn> {
        if self.shared.notification.is_empty() {
            return None;
        }
        let shared = self.shared.clone();
        // Notices come from extensions' threads too: the runtime is the one of the load.
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        Some(Arc::new(move |message: String| {
            if shared.notifying.load(Ordering::Acquire) > 0 {
                return;
            }
            let shared = shared.clone();
            shared.notifying.fetch_add(1, Ordering::AcqRel);
            runtime.spawn(async move {
                let ctx = (shared.env.session)();
                shared.notify(&message, "notice", &ctx).await;
                shared.notifying.fetch_sub(1, Ordering::AcqRel);
            });
        }))
    }
}

/// One settings hook on the bus.
struct CommandHandler {
    hook: Arc<CommandHook>,
    shared: Arc<Shared>,
}

/// What a result rewrites: the call's arguments, the tool's result, the prompt.
enum Current {
    Args(String, Value),
    Result(String),
    Prompt(String),
    Nothing,
}

impl Current {
    fn of(event: &HookEvent) -> Current {
        match event {
            HookEvent::ToolCall { name, args, .. } => Current::Args(name.clone(), args.clone()),
            HookEvent::ToolResult { result, .. } => Current::Result(result.clone()),
            HookEvent::Input { text, .. } => Current::Prompt(text.clone()),
            _ => Current::Nothing,
        }
    }
}

/// The text a `Stop` hook's block goes on with, and how a prompt is known to be one.
fn feedback(event: ClaudeEvent, reason: &str) -> String {
    format!("{} hook feedback:\n{reason}", event.name())
}

/// Whether the run that ended began with a `Stop` (`SubagentStop`) hook's feedback.
fn stop_active(event: ClaudeEvent, bus: &HookEvent) -> bool {
    let HookEvent::AgentEnd { messages } = bus else {
        return false;
    };
    let prefix = feedback(event, "");
    messages
        .iter()
        .rev()
        .find(|m| m.role == crate::vocab::protocol::Role::User)
        .is_some_and(|m| m.content.starts_with(&prefix))
}

impl HookHandler for CommandHandler {
    fn call(
        &self,
        event: &HookEvent,
        ctx: &Arc<RunContext>,
    ) -> BoxFuture<'static, Result<Option<Value>, HookError>> {
        let claude = self.hook.event;
        let active = stop_active(claude, event);
        let Some((fields, matched)) = input::stdin_for(claude, event, ctx, active) else {
            return Box::pin(async { Ok(None) });
        };
        // Claude Code reads no matcher for prompts and stops: they run for all.
        let unmatched = matches!(
            claude,
            ClaudeEvent::UserPromptSubmit | ClaudeEvent::Stop | ClaudeEvent::SubagentStop
        );
        if !unmatched && !self.hook.matcher.matches(&matched) {
            return Box::pin(async { Ok(None) });
        }
        let tool =
            matches!(claude, ClaudeEvent::PreToolUse | ClaudeEvent::PostToolUse).then_some(matched);
        let transcript = (self.shared.env.transcript)().map(|p| p.display().to_string());
        let stdin = input::with_common(fields, claude, ctx, transcript).to_string();
        let current = Current::of(event);
        let (hook, shared, ctx) = (self.hook.clone(), self.shared.clone(), ctx.clone());
        Box::pin(async move {
            let answer = shared.run(&hook, stdin, tool.clone(), &ctx).await;
            Ok(shared.apply(&hook, answer, current, tool, &ctx).await)
        })
    }
}

impl Shared {
    /// Runs `hook` with `stdin`, reports the run and its notices, and reads its answer.
    async fn run(
        &self,
        hook: &CommandHook,
        stdin: String,
        tool: Option<String>,
        ctx: &Arc<RunContext>,
    ) -> Answer {
        let ran = run::run(
            &hook.command,
            stdin.into_bytes(),
            &ctx.cwd,
            &self.env.project_dir,
            hook.timeout,
            &ctx.cancel,
        )
        .await;
        let duration_ms = ran.duration.as_millis() as u64;
        let answer = answer::read(hook.event, &format!("[{}]", hook.command), ran);
        self.report(
            ctx,
            HookRun {
                event: hook.event.name().to_string(),
                command: hook.command.clone(),
                source: hook.source.display().to_string(),
                tool,
                outcome: answer.outcome,
                exit_code: answer.exit_code,
                duration_ms,
            },
        );
        for n in &answer.notices {
            (self.env.notice)(n.clone());
        }
        answer
    }

    /// Sends a run's `hook_run` event to the line's sink, or keeps it for the next line.
    fn report(&self, ctx: &RunContext, run: HookRun) {
        if !ctx.emit(AgentEvent::HookRun(run.clone())) {
            let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            if pending.len() < MAX_PENDING {
                pending.push(AgentEvent::HookRun(run));
            }
        }
    }

    /// What `answer` does to the event it ran for: the bus result fields, and what else
    /// it asks (a follow-up prompt, a cancelled run, context for the session).
    async fn apply(
        &self,
        hook: &CommandHook,
        a: Answer,
        current: Current,
        tool: Option<String>,
        ctx: &Arc<RunContext>,
    ) -> Option<Value> {
        let name = hook.event.name();
        if let Some(why) = &a.stop {
            (self.env.notice)(format!(
                "{name} hook [{}] stopped the run: {why}",
                hook.command
            ));
        }
        let block = |reason: String| Some(json!({"block": true, "reason": reason}));
        match hook.event {
            ClaudeEvent::PreToolUse => self.pre_tool_use(a, current, tool, ctx).await,
            ClaudeEvent::PostToolUse => {
                if a.stop.is_some() {
                    ctx.cancel.cancel();
                }
                let added: Vec<String> = a.block.into_iter().chain(a.context).collect();
                match current {
                    Current::Result(result) if !added.is_empty() => Some(
                        json!({"updated_result": format!("{result}\n\n{}", added.join("\n\n"))}),
                    ),
                    _ => None,
                }
            }
            ClaudeEvent::UserPromptSubmit => {
                if let Some(reason) = a.stop.or(a.block) {
                    return block(reason);
                }
                match (a.context, current) {
                    (Some(c), Current::Prompt(p)) => {
                        Some(json!({"updated_input": format!("{p}\n\n{c}")}))
                    }
                    _ => None,
                }
            }
            ClaudeEvent::Stop | ClaudeEvent::SubagentStop => {
                if let (None, Some(reason)) = (a.stop, a.block) {
                    let text = feedback(hook.event, &reason);
                    if let Err(e) = ctx.queues.push(text, Delivery::FollowUp) {
                        (self.env.notice)(format!("{name} hook: the agent cannot go on: {e}"));
                    }
                }
                None
            }
            ClaudeEvent::SessionStart => {
                if let Some(c) = a.context {
                    self.add_context(&ctx.session_id, c);
                }
                None
            }
            ClaudeEvent::PreCompact => a
                .stop
                .or(a.block)
                .map(|reason| json!({"cancel": true, "reason": reason})),
            ClaudeEvent::SessionEnd | ClaudeEvent::Notification => None,
        }
    }

    /// What a `PreToolUse` answer does: blocks (stopping the run for `continue: false`),
    /// asks the user, or rewrites the arguments.
    async fn pre_tool_use(
        &self,
        a: Answer,
        current: Current,
        tool: Option<String>,
        ctx: &Arc<RunContext>,
    ) -> Option<Value> {
        let block = |reason: String| Some(json!({"block": true, "reason": reason}));
        if let Some(why) = a.stop {
            ctx.cancel.cancel();
            return block(why);
        }
        if let Some(reason) = a.block {
            return block(reason);
        }
        let tool = tool.unwrap_or_default();
        if let Some(reason) = a.ask {
            if !self.confirm(&tool, &reason, ctx).await {
                return block(format!("the user did not allow this {tool} call"));
            }
        }
        match (a.updated_input, current) {
            (Some(u), Current::Args(name, args)) => {
                Some(json!({"updated_args": input::from_claude_args(&name, &args, &u)}))
            }
            _ => None,
        }
    }

    /// Asks the user whether the `tool` call a hook asked about may run (on the REPL, or as
    /// an editor's permission request); in print mode nobody can answer, and it does not.
    async fn confirm(&self, tool: &str, reason: &str, ctx: &Arc<RunContext>) -> bool {
        // The hook's words reach the terminal in the question: made inert first.
        let why = if reason.is_empty() {
            String::new()
        } else {
            format!(" ({})", crate::vocab::text::inert::inert(reason))
        };
        self.notify(
            &format!("mypi needs your permission to use {tool}"),
            "permission_prompt",
            ctx,
        )
        .await;
        if !matches!(ctx.mode, RunMode::Repl | RunMode::Acp) {
            (self.env.notice)(format!(
                "a PreToolUse hook asks to confirm this {tool} call{why}; nobody can answer in {} mode, so it is not run",
                ctx.mode.name()
            ));
            return false;
        }
        let question = format!("A hook asks before this {tool} call{why}. Run it?");
        // An editor shows the question with the call it is about.
        let asker = crate::vocab::ui::Asker {
            extension: "settings hooks".into(),
            question: question.clone(),
            call_id: ctx.about_call.clone().filter(|_| ctx.depth == 0),
            call_shown: false,
        };
        self.env.ui.confirm_from(&question, &asker).await
    }

    /// Runs the `Notification` hooks whose matcher takes `kind`.
    async fn notify(&self, message: &str, kind: &str, ctx: &Arc<RunContext>) {
        for hook in self.notification.iter().filter(|h| h.matcher.matches(kind)) {
            let fields = json!({"message": message, "notification_type": kind});
            let Value::Object(fields) = fields else {
                continue;
            };
            let transcript = (self.env.transcript)().map(|p| p.display().to_string());
            let stdin = input::with_common(fields, hook.event, ctx, transcript).to_string();
            self.run(hook, stdin, None, ctx).await;
        }
    }

    fn add_context(&self, session: &str, text: String) {
        let mut kept = self
            .session_context
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if kept.0 != session {
            *kept = (session.to_string(), Vec::new());
        }
        if !kept.1.contains(&text) {
            kept.1.push(text);
        }
    }
}

/// Adds the `SessionStart` hooks' context to the system prompt of the session's runs.
struct SessionContext(Arc<Shared>);

impl HookHandler for SessionContext {
    fn call(
        &self,
        event: &HookEvent,
        ctx: &Arc<RunContext>,
    ) -> BoxFuture<'static, Result<Option<Value>, HookError>> {
        let kept = self
            .0
            .session_context
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let out = match event {
            HookEvent::BeforeAgentStart { system_prompt, .. }
                if kept.0 == ctx.session_id && !kept.1.is_empty() =>
            {
                let added = kept.1.join("\n\n");
                Some(json!({
                    "updated_system_prompt":
                        format!("{system_prompt}\n\n# Session context (from SessionStart hooks)\n\n{added}")
                }))
            }
            _ => None,
        };
        Box::pin(async move { Ok(out) })
    }
}

/// `/hooks`: the settings hooks loaded, by event, with matcher, command and file.
pub fn listing(hooks: &[CommandHook]) -> String {
    if hooks.is_empty() {
        return "No settings hooks loaded (mypi reads the `hooks` of ~/.claude/settings.json, \
                .claude/settings.json, .claude/settings.local.json, ~/.codex/hooks.json and \
                .codex/hooks.json)."
            .into();
    }
    let mut out = String::from("Settings hooks, in the order they run (after scripts' handlers):");
    for event in ClaudeEvent::ALL {
        let of: Vec<&CommandHook> = hooks.iter().filter(|h| h.event == event).collect();
        if of.is_empty() {
            continue;
        }
        out.push_str(&format!("\n{}", event.name()));
        for h in of {
            out.push_str(&format!(
                "\n  {:<12} {}  ({}, timeout {} s)",
                h.matcher.text(),
                h.command,
                h.source.display(),
                h.timeout.as_secs_f64()
            ));
        }
    }
    out
}
