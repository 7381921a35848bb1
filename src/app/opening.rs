//! Which session start-up opens: none (`--no-session`), the last one of the project
//! (`--continue`), the one `--resume ID` names, or a new one, written once it has something
//! in it; a resumed one's warnings said.

use super::AppError;
use crate::agent::session::{SessionError, SessionSlot, SessionWriter};
use crate::config::Config;
use crate::hooks::NoticeFn;

/// The session start-up goes on with: its slot, messages, whether it was resumed, the
/// provider and model it was last using, and its name.
pub(super) struct Continued {
    pub slot: SessionSlot,
    pub messages: Vec<crate::vocab::protocol::Message>,
    pub resumed: bool,
    pub model: Option<(String, String)>,
    pub name: Option<String>,
    pub totals: Option<crate::vocab::protocol::Usage>,
}

impl Continued {
    /// A session that starts now.
    fn fresh(slot: SessionSlot) -> Continued {
        Continued {
            slot,
            messages: Vec::new(),
            resumed: false,
            model: None,
            name: None,
            totals: None,
        }
    }
}

/// A resumed session as start-up goes on with it, its warnings said.
fn opened(resumed: crate::agent::session::Resumed, notice: &NoticeFn) -> Continued {
    for w in resumed.warnings {
        notice(w);
    }
    Continued {
        slot: SessionSlot::Open(resumed.writer),
        messages: resumed.messages,
        resumed: true,
        model: resumed.model,
        name: resumed.name,
        totals: resumed.totals,
    }
}

/// The session the agent starts with: none (`--no-session`), the last one here
/// (`--continue`), the one named by `--resume ID`, or a new one, written once it has
/// something in it.
pub(super) fn session_start(config: &Config, notice: &NoticeFn) -> Result<Continued, AppError> {
    Ok(if config.no_session {
        Continued::fresh(SessionSlot::Off)
    } else if config.continue_session {
        continue_session(config, notice)?
    } else if let Some(id) = config.resume.as_deref().filter(|id| !id.is_empty()) {
        resume_by_id(config, id, notice)?
    } else {
        Continued::fresh(pending_session(config))
    })
}

/// The latest session for `--continue`, and whether it was resumed. One that another mypi
/// has open is left to it: this process says so and starts a new session instead.
fn continue_session(config: &Config, notice: &NoticeFn) -> Result<Continued, AppError> {
    let sources = config.session_sources();
    if let Some(skipped) = sources.skipped {
        notice(skipped);
    }
    let Some(dir) = sources.dir else {
        return Err(SessionError::NoneToContinue {
            dir: config.sessions_dir(),
            passed_over: Vec::new(),
        }
        .into());
    };
    match SessionWriter::resume_latest(&dir, sources.legacy.as_deref()) {
        Ok(resumed) => Ok(opened(resumed, notice)),
        Err(e @ SessionError::Locked { .. }) => {
            notice(format!("{e}; starting a new session"));
            Ok(Continued::fresh(pending_session(config)))
        }
        Err(e) => Err(e.into()),
    }
}

/// The session `--resume ID` names (an id or a unique prefix of one).
fn resume_by_id(config: &Config, id: &str, notice: &NoticeFn) -> Result<Continued, AppError> {
    let (sessions, skipped) = crate::agent::session::list::readable(&config.session_sources());
    if let Some(skipped) = skipped {
        notice(skipped);
    }
    let path = crate::agent::session::list::find(&sessions, id)
        .map_err(|e| AppError::Usage(e.to_string()))?;
    Ok(opened(SessionWriter::resume(&path)?, notice))
}

pub(super) fn pending_session(config: &Config) -> SessionSlot {
    if config.no_session {
        SessionSlot::Off
    } else {
        SessionSlot::pending(config.sessions_dir(), config.cwd.clone())
    }
}
