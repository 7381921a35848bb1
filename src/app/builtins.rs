//! What the built-in slash commands do (the table in `commands.rs` only names them), and the
//! session lifecycle events around them (`session_start`, `session_shutdown`).

use super::{App, AppError, LineOutcome};
use crate::commands::Builtin;
use crate::hooks::{EventKind, HookEvent, Reason};

impl App {
    pub(super) async fn builtin(
        &mut self,
        b: Builtin,
        args: &str,
    ) -> Result<LineOutcome, AppError> {
        let text = match b {
            Builtin::Help => self.commands.help(),
            Builtin::Tools => self.tools_text(),
            Builtin::Model => {
                let previous = (self.config.provider_name.clone(), self.config.model.clone());
                let text = self.model_command(args)?;
                self.model_selected(previous, "command").await;
                text
            }
            Builtin::New => self.new_session().await?,
            Builtin::Resume => self.resume_command(args).await?,
            Builtin::Fork => self.fork_command()?,
            Builtin::Compact => self.compact_command(args).await?,
            Builtin::Session => self.session_text(),
            Builtin::Extensions => self.extensions_text(),
            Builtin::Reload => self.reload(args).await,
            Builtin::Mcp => self.mcp_command(args).await.map_err(AppError::Command)?,
            Builtin::Hooks => self.hooks_text(),
            Builtin::Last => self.last_result_text(),
            Builtin::Skills => self.skills_text(),
            Builtin::Thinking => self.thinking_command(args)?,
            Builtin::Quit => match self.may_quit(super::QuitSource::Command, true).await {
                Ok(()) => return Ok(LineOutcome::Quit),
                Err(stay) => stay,
            },
        };
        Ok(LineOutcome::Output(text))
    }

    /// `/thinking`: the level; `/thinking LEVEL` sets it; `/thinking show`: the reasoning the
    /// model streamed in the last prompt's run, whole.
    fn thinking_command(&mut self, args: &str) -> Result<String, AppError> {
        use crate::vocab::thinking::{Thinking, LEVELS};
        let args = args.trim();
        if args == "show" {
            let thought = self.agent.last_thought();
            return Ok(match thought.trim().is_empty() {
                true => "the model streamed no reasoning in the last turn".to_string(),
                false => thought,
            });
        }
        if !args.is_empty() {
            self.agent.thinking = Thinking::parse(args).ok_or_else(|| {
                AppError::Command(format!(
                    "/thinking: {args:?} is not a thinking level; the levels are {}, and /thinking show prints the last reasoning",
                    LEVELS.join(", ")
                ))
            })?;
        }
        let mut text = format!("Thinking: {}", self.agent.thinking);
        if !self.agent.thinks && self.agent.thinking.is_on() {
            text.push_str(&format!(
                " (not sent: {} has thinking = false in its provider's models)",
                self.config.model
            ));
        }
        Ok(text)
    }

    /// `/last`: the newest tool result of the conversation, whole, as the model got it.
    fn last_result_text(&self) -> String {
        let last = self
            .agent
            .messages()
            .iter()
            .rev()
            .find(|m| m.role == crate::vocab::protocol::Role::Tool);
        match last {
            Some(m) => {
                let name = m.name.as_deref().unwrap_or("a tool");
                let how = if m.is_error { "failed" } else { "answered" };
                format!("{name} {how}:\n{}", m.content)
            }
            None => "no tool has answered in this session yet".to_string(),
        }
    }

    fn tools_text(&self) -> String {
        let mut out = String::from("Tools:\n");
        let mut active = self.tools.active();
        let mut held = [0usize; 2];
        active.retain(|e| match self.tools.exposure_of(e) {
            crate::tools::Exposure::Direct => true,
            crate::tools::Exposure::Deferred => {
                held[0] += 1;
                false
            }
            crate::tools::Exposure::Hidden | crate::tools::Exposure::Code => {
                held[1] += 1;
                false
            }
        });
        let width = active
            .iter()
            .map(|e| e.spec().name.len())
            .max()
            .unwrap_or(0);
        for entry in active {
            let spec = entry.spec();
            let first = spec.description.lines().next().unwrap_or("");
            out.push_str(&format!("  {:<width$}  {first}", spec.name));
            if entry.owner.name.as_ref() != "core" {
                out.push_str(&format!(" [{}]", entry.owner));
            }
            out.push('\n');
        }
        if held != [0, 0] {
            out.push_str(&format!(
                "  (and {} deferred, found through tool_search, and {} hidden or for code only)",
                held[0], held[1]
            ));
        }
        out.trim_end().to_string()
    }

    async fn reload(&self, args: &str) -> String {
        let name = args.trim();
        if !name.is_empty() {
            return match self.extensions.reload_named(name).await {
                Some(line) => line,
                None => format!("no extension called {name}; /extensions lists them"),
            };
        }
        self.reload_all().await
    }

    /// Reloads every extension, re-discovering files; what happened, one line each.
    pub(super) async fn reload_all(&self) -> String {
        self.forget_sources();
        let lines = self
            .extensions
            .reload_all(&self.config.extension_roots)
            .await;
        self.add_prompt_commands();
        if lines.is_empty() {
            "no extensions to reload".to_string()
        } else {
            lines.join("\n")
        }
    }

    fn extensions_text(&self) -> String {
        let all = self.extensions.summaries();
        if all.is_empty() {
            let roots: Vec<String> = self
                .config
                .extension_roots
                .iter()
                .map(|r| r.display().to_string())
                .collect();
            return format!(
                "No extensions loaded (looked in: {}).",
                if roots.is_empty() {
                    "nothing: --no-extensions".to_string()
                } else {
                    roots.join(", ")
                }
            );
        }
        let mut out = String::from("Extensions:\n");
        for s in all {
            out.push_str(&format!("  {}\n", s.line()));
        }
        out.trim_end().to_string()
    }

    fn session_text(&self) -> String {
        let usage = self.agent.usage();
        let file = match self.agent.session() {
            Some(w) => format!("{} ({})", w.path().display(), w.id()),
            None if self.config.no_session => "none (--no-session)".to_string(),
            None => "not created yet (nothing said so far)".to_string(),
        };
        let cached = match (usage.cached_tokens, usage.cache_write_tokens) {
            (0, 0) => String::new(),
            (n, 0) => format!(" ({n} from the cache)"),
            (n, w) => format!(" ({n} from the cache, {w} written to it)"),
        };
        let cost = usage
            .cost_usd
            .map(|c| format!("\nCost this session: ${c:.4}"))
            .unwrap_or_default();
        let name = self
            .extensions
            .context()
            .control
            .session_name()
            .map(|n| format!("Name: {n}\n"))
            .unwrap_or_default();
        format!(
            "Session: {file}\n{name}Messages: {}\nTokens this session: {} in{cached}, {} out{cost}\nContext: about {} of {} tokens ({}/{})",
            self.agent.messages().len(),
            usage.input_tokens,
            usage.output_tokens,
            self.agent.context_tokens(),
            self.agent.context_window,
            self.config.provider_name,
            self.config.model
        )
    }

    /// Emits `session_start` (or `session_shutdown` when `shutdown`) with `reason`.
    pub async fn emit_session(&self, reason: Reason, shutdown: bool) {
        let (kind, event) = if shutdown {
            (
                EventKind::SessionShutdown,
                HookEvent::SessionShutdown { reason },
            )
        } else {
            (EventKind::SessionStart, HookEvent::SessionStart { reason })
        };
        if self.hooks.has(kind) {
            self.refresh_session();
            let ctx = self.extensions.context().session();
            self.hooks.emit(event, &ctx).await;
        }
    }

    /// Emits the `session_start` of start-up (`startup`, or `resume` when --continue resumed
    /// a session).
    pub async fn start(&self) {
        let reason = if self.resumed {
            Reason::Resume
        } else {
            Reason::Startup
        };
        self.emit_session(reason, false).await;
    }

    /// Emits `session_shutdown{quit}`, then closes the MCP servers.
    pub async fn shutdown(&self) {
        let background = self.extensions.context().background.clone();
        background
            .drain(crate::extensions::background::DRAIN_AT_EXIT)
            .await;
        background.stop_all();
        self.emit_session(Reason::Quit, true).await;
        self.shutdown_mcp().await;
    }
}
