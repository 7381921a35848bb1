//! What scripts asked of the app ([`crate::agent::control::Request`]), carried out once the line or
//! run that asked has ended, and the events a handler can cancel around the session's
//! lifecycle: `session_before_new`, `session_before_resume`, `before_quit`, and the
//! `model_select` that follows a switch.

use super::{App, AppError};
use crate::agent::control::Request;
use crate::hooks::{EventKind, HookEvent, Reason};

/// Why mypi is about to leave (`before_quit`'s `source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuitSource {
    /// `/quit`.
    Command,
    /// Ctrl-D at the prompt, or the end of piped input.
    Eof,
    /// `ctx.shutdown()`.
    Extension,
}

impl QuitSource {
    fn name(self) -> &'static str {
        match self {
            QuitSource::Command => "command",
            QuitSource::Eof => "eof",
            QuitSource::Extension => "extension",
        }
    }
}

impl App {
    /// Runs a cancellable event; the reason when a handler cancelled it.
    async fn cancelled_by(&self, event: HookEvent) -> Option<String> {
        if !self.hooks.has(event.kind()) {
            return None;
        }
        self.refresh_session();
        let ctx = self.extensions.context().session();
        self.hooks.emit(event, &ctx).await.blocked
    }

    /// Whether mypi may leave now: `before_quit` runs, and a handler may keep mypi open (not
    /// when `can_stay` is false: the input has ended). The line to show when it stays.
    pub async fn may_quit(&self, source: QuitSource, can_stay: bool) -> Result<(), String> {
        let event = HookEvent::BeforeQuit {
            source: source.name().to_string(),
        };
        match self.cancelled_by(event).await {
            Some(reason) if can_stay => Err(format!("mypi stays open: {reason}")),
            Some(reason) => {
                (self.extensions.context().notice)(format!(
                    "an extension asked to stay open ({reason}), but the input has ended"
                ));
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// `/new` and `ctx.new_session()`: `session_before_new` may cancel; then the session
    /// ends (`session_shutdown`) and a new one starts (`session_start`), without the shell
    /// output `!cmd` kept.
    pub async fn new_session(&mut self) -> Result<String, AppError> {
        let event = HookEvent::SessionBeforeNew {
            session_id: self.agent.session_id().to_string(),
        };
        if let Some(reason) = self.cancelled_by(event).await {
            return Err(AppError::Command(format!(
                "no new session was started: {reason}"
            )));
        }
        self.emit_session(Reason::New, true).await;
        self.agent
            .reset(super::opening::pending_session(&self.config));
        // The header of the new file names what it starts with.
        self.agent
            .set_session_model(&self.config.provider_name, &self.config.model)?;
        // What `!cmd` kept was for the conversation being left.
        self.shell_context.clear();
        self.extensions.context().control.set_session(None, None);
        self.agent.show_context();
        self.emit_session(Reason::New, false).await;
        Ok("Started a new session.".to_string())
    }

    /// `session_before_resume` for the session in `path`; the reason when cancelled.
    pub(super) async fn before_resume(&self, path: &std::path::Path) -> Result<(), AppError> {
        let event = HookEvent::SessionBeforeResume {
            session_id: self.agent.session_id().to_string(),
            target_id: path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            target_path: path.display().to_string(),
        };
        match self.cancelled_by(event).await {
            Some(reason) => Err(AppError::Command(format!(
                "the session was not resumed: {reason}"
            ))),
            None => Ok(()),
        }
    }

    /// Tells the extensions the model changed (`model_select`).
    pub(super) async fn model_selected(&self, previous: (String, String), source: &str) {
        let now = (&self.config.provider_name, &self.config.model);
        if !self.hooks.has(EventKind::ModelSelect) || now == (&previous.0, &previous.1) {
            return;
        }
        let event = HookEvent::ModelSelect {
            provider: self.config.provider_name.clone(),
            model: self.config.model.clone(),
            previous_provider: previous.0,
            previous_model: previous.1,
            source: source.to_string(),
        };
        self.refresh_session();
        let ctx = self.extensions.context().session();
        self.hooks.emit(event, &ctx).await;
    }

    /// Carries out the requests scripts made; returns the lines to show. Sets
    /// [`App::quitting`] when one asked mypi to leave and no handler kept it open.
    pub async fn apply_requests(&mut self) -> Vec<String> {
        let mut lines = Vec::new();
        let control = self.extensions.context().control.clone();
        for request in control.take_requests() {
            let line = match request {
                Request::NewSession => self.new_session().await.map_err(|e| e.to_string()),
                Request::Reload => Ok(self.reload_all().await),
                Request::Shutdown => self.may_quit(QuitSource::Extension, true).await.map(|()| {
                    self.quitting = true;
                    String::new()
                }),
                Request::SetModel { model, provider } => {
                    self.sync_providers();
                    let provider = provider.unwrap_or_else(|| self.config.provider_name.clone());
                    let previous = (self.config.provider_name.clone(), self.config.model.clone());
                    match self.switch_model(&provider, &model) {
                        Ok(()) => {
                            self.model_selected(previous, "extension").await;
                            Ok(format!("Model set to {model} ({provider})."))
                        }
                        Err(e) => Err(format!("an extension's model switch failed: {e}")),
                    }
                }
                Request::SetThinking(level) => {
                    self.agent.thinking = level;
                    self.refresh_session();
                    Ok(String::new())
                }
            };
            match line {
                Ok(l) if l.is_empty() => {}
                Ok(l) => lines.push(l),
                Err(e) => lines.push(e),
            }
        }
        lines
    }
}
