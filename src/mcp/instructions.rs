//! The connected servers' `instructions` (what a server says about using it, in its
//! `initialize` answer) as a section of each run's system prompt, as Claude Code and goose
//! pass them on: one part per server that gave some, in the order of the configuration,
//! each cut to [`MAX_PER_SERVER`] and the whole to [`MAX_TOTAL`], so a server cannot fill
//! the context. The text is the server's, shown to the model only.

use super::manager::{Manager, State};
use crate::agent::prompt::PromptSection;
use crate::vocab::text::truncate_middle;

/// The most of one server's instructions the model gets.
pub const MAX_PER_SERVER: usize = 2048;
/// The most of all servers' instructions together.
pub const MAX_TOTAL: usize = 8192;

impl PromptSection for Manager {
    fn section(&self) -> Option<String> {
        let mut parts = Vec::new();
        let mut total = 0;
        for entry in self.entries() {
            let State::Connected(conn) = entry.state() else {
                continue;
            };
            let Some(text) = conn.instructions.as_deref() else {
                continue;
            };
            let text = match text.len() > MAX_PER_SERVER {
                true => truncate_middle(text, MAX_PER_SERVER),
                false => text.to_string(),
            };
            total += text.len();
            if total > MAX_TOTAL {
                break;
            }
            parts.push(format!("## {}\n\n{text}", entry.config.name));
        }
        (!parts.is_empty()).then(|| {
            format!(
                "# Instructions from MCP servers\n\nWhat the MCP servers whose tools you have \
                 say about using them.\n\n{}",
                parts.join("\n\n")
            )
        })
    }
}
