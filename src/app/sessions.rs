//! Finding and going back to sessions: `/resume [ID]` (a list to choose from, or an id or a
//! unique prefix of one), `--resume ID` at start, `/fork` (the conversation so far copied
//! into a new session that goes on from here), and the recap of the last turns printed when a
//! session is resumed, so the user sees where they are.

use std::path::Path;

use super::{App, AppError};
use crate::agent::session::list::{self, SessionInfo};
use crate::agent::session::{SessionSlot, SessionWriter};
use crate::hooks::Reason;
use crate::vocab::protocol::Role;

/// How many of the last prompts (with their answers) a recap shows.
const RECAP_TURNS: usize = 3;
/// How much of each message a recap shows.
const RECAP_CHARS: usize = 240;

impl App {
    /// This project's sessions, newest first (the project's own only in a trusted folder;
    /// a notice says when they were skipped).
    pub fn sessions(&self) -> Vec<SessionInfo> {
        let (sessions, skipped) =
            crate::agent::session::list::readable(&self.config.session_sources());
        if let Some(skipped) = skipped {
            self.extensions.context().notice.as_ref()(skipped);
        }
        sessions
    }

    /// `/resume [ID]`.
    pub(super) async fn resume_command(&mut self, args: &str) -> Result<String, AppError> {
        let sessions = self.sessions();
        let prefix = args.trim();
        let path = if prefix.is_empty() {
            if sessions.is_empty() {
                return Ok("No sessions of this project yet.".into());
            }
            let mut listing = String::from("Sessions of this project:\n");
            for (i, s) in sessions.iter().take(20).enumerate() {
                listing.push_str(&format!("{:>3}. {}\n", i + 1, list::line(s, 100)));
            }
            let question = format!("{listing}Resume which? (a number or an id; Enter: none)");
            let answer = crate::vocab::ui::Ui::ask(self.ui.as_ref(), &question).await;
            let Some(answer) = answer
                .map(|a| a.trim().to_string())
                .filter(|a| !a.is_empty())
            else {
                return Ok("Nothing resumed.".into());
            };
            match answer.parse::<usize>() {
                Ok(n) if (1..=sessions.len().min(20)).contains(&n) => sessions[n - 1].path.clone(),
                _ => {
                    list::find(&sessions, &answer).map_err(|e| AppError::Command(e.to_string()))?
                }
            }
        } else {
            list::find(&sessions, prefix).map_err(|e| AppError::Command(e.to_string()))?
        };
        self.resume_path(&path).await
    }

    /// Goes on with the session in `path`: its conversation, its model; says where it stands.
    pub async fn resume_path(&mut self, path: &Path) -> Result<String, AppError> {
        if self.agent.session().is_some_and(|w| w.path() == path) {
            return Ok("That is the session in use.".into());
        }
        self.before_resume(path).await?;
        self.emit_session(Reason::Resume, true).await;
        let resumed = SessionWriter::resume(path)?;
        let notices: Vec<String> = resumed.warnings.clone();
        let id = resumed.writer.id().to_string();
        let name = resumed.name.clone();
        self.agent
            .resume(SessionSlot::Open(resumed.writer), resumed.messages);
        self.agent.restore_totals(resumed.totals);
        let file = self.agent.session().map(|w| w.path().to_path_buf());
        self.extensions.context().control.set_session(file, name);
        if let Some((provider, model)) = resumed.model {
            let notice = self.extensions.context().notice.clone();
            let previous = (self.config.provider_name.clone(), self.config.model.clone());
            self.restore_model(&provider, &model, &notice);
            self.model_selected(previous, "resume").await;
        }
        self.agent.show_context();
        self.emit_session(Reason::Resume, false).await;
        let mut out = notices.join("\n");
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("Resumed session {id}."));
        let recap = self.recap();
        if !recap.is_empty() {
            out.push('\n');
            out.push_str(&recap);
        }
        Ok(out)
    }

    /// `/fork`: a new session holding the conversation so far; the old one stays as it is.
    pub(super) fn fork_command(&mut self) -> Result<String, AppError> {
        if self.config.no_session {
            return Err(AppError::Command(
                "no session is kept (--no-session): nothing to fork".into(),
            ));
        }
        let from = self.agent.session_id().to_string();
        let messages = self.agent.messages().to_vec();
        let id = crate::agent::session::new_id();
        let mut writer = SessionWriter::create(
            &self.config.sessions_dir(),
            &self.config.cwd,
            &id,
            Some((self.config.provider_name.clone(), self.config.model.clone())),
        )?;
        for m in &messages {
            writer.append(m)?;
        }
        self.agent.resume(SessionSlot::Open(writer), messages);
        let file = self.agent.session().map(|w| w.path().to_path_buf());
        self.extensions.context().control.set_session(file, None);
        self.refresh_session();
        Ok(format!(
            "Forked session {from} into {id}: the conversation so far is in both; this one goes on from here."
        ))
    }

    /// `/compact [instructions]`: the older turns summarised now.
    pub(super) async fn compact_command(&mut self, args: &str) -> Result<String, AppError> {
        let ctx = self.run_context(tokio_util::sync::CancellationToken::new());
        let instructions = Some(args.trim()).filter(|a| !a.is_empty());
        let outcome = self
            .agent
            .compact(instructions, crate::hooks::CompactReason::Manual, &ctx)
            .await?;
        Ok(match outcome.notice() {
            Some(text) => format!("{}.", crate::vocab::text::capitalised(&text)),
            None => "Nothing to compact: the conversation has no turn before the last one.".into(),
        })
    }

    /// The last few prompts of the conversation, each with the answer it got.
    pub fn recap(&self) -> String {
        let messages = self.agent.messages();
        let starts = crate::agent::compact::turn_starts(messages);
        let from = starts.len().saturating_sub(RECAP_TURNS);
        let mut out = Vec::new();
        if from > 0 {
            out.push(format!("  … {from} earlier turns"));
        }
        for (k, &start) in starts[from..].iter().enumerate() {
            let end = starts.get(from + k + 1).copied().unwrap_or(messages.len());
            let images = match messages[start].images.len() {
                0 => String::new(),
                1 => " [+1 image]".to_string(),
                n => format!(" [+{n} images]"),
            };
            out.push(format!(
                "  > {}{images}",
                crate::vocab::text::one_line(&messages[start].content, RECAP_CHARS)
            ));
            let answer = messages[start..end]
                .iter()
                .rev()
                .find(|m| m.role == Role::Assistant && !m.content.trim().is_empty());
            if let Some(a) = answer {
                out.push(format!(
                    "  {}",
                    crate::vocab::text::one_line(&a.content, RECAP_CHARS)
                ));
            }
        }
        out.join("\n")
    }
}
