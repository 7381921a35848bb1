//! What the user's agent shows scripts of itself through [`Control`] (whether it runs, the
//! size of its context, its session file and name) and the session lines scripts add there
//! (custom entries, the session's name), written to the session file whenever the agent
//! writes a message, and after every run or command.

use super::session::SessionError;
use super::{Agent, EventSink};
use crate::agent::control::Control;
use crate::vocab::protocol::AgentEvent;

impl Agent {
    fn control(&self) -> Option<&Control> {
        self.control.as_deref()
    }

    pub(super) fn set_running(&self, running: bool) {
        if let Some(c) = self.control() {
            c.set_running(running);
        }
    }

    /// Tells scripts the context's size, the window and the session file.
    pub fn show_context(&self) {
        if let Some(c) = self.control() {
            c.set_context(self.context_tokens(), self.context_window);
            let file = self.session().map(|w| w.path().to_path_buf());
            if c.session_file() != file {
                c.set_session_file(file);
            }
        }
    }

    /// Writes the lines scripts added to the session file.
    pub(super) fn write_pending_entries(&mut self) -> Result<(), SessionError> {
        let Some(c) = self.control.clone() else {
            return Ok(());
        };
        for entry in c.take_pending() {
            self.session.append_pending(&entry)?;
        }
        Ok(())
    }

    /// [`Agent::write_pending_entries`] after a run or a command; a failure is a notice.
    pub fn write_pending(&mut self, sink: &dyn EventSink) {
        if let Err(e) = self.write_pending_entries() {
            sink.emit(AgentEvent::Notice {
                message: e.to_string(),
            });
        }
        self.show_context();
    }
}
