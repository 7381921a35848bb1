//! What the editor sees: mypi's [`AgentEvent`]s as ACP `session/update`s, in one place.
//!
//! - `text_delta` -> `agent_message_chunk`;
//! - `tool_call` -> `tool_call` (`in_progress`: the tool is about to run) with its `kind` by
//!   tool ([`kind_of`]), `locations` (the file and line it reads or writes), `rawInput`;
//! - `tool_update` -> `tool_call_update` with the output so far (its last KiB) or the
//!   progress message; `tool_result` -> `tool_call_update` `completed` or `failed` with the
//!   result text and, for a successful `edit` or `write`, a `diff` of the whole file (read
//!   before the call and after it; when writes go to the editor's buffers, the text written
//!   there and the text it replaced);
//! - a child agent's events -> the same, with ids and titles of their own and
//!   `_meta.mypi.child` naming the child and the parent's call;
//! - notices, retries and a command's answer -> agent text marked as mypi's (`[mypi] ...`,
//!   and `_meta.mypi.notice`);
//! - a script's plan (`ctx.ui.set_plan`) -> `plan`, every entry each time;
//! - a turn's end -> `usage_update` (tokens in context, the window; the session's cost
//!   at the end of a run when the model's prices are known);
//! - the command table -> `available_commands_update` ([`commands`]); a loaded session's
//!   messages -> the updates that tell the conversation again ([`replay`]).
//!
//! [`Mapper`] is the pure part (its tests pin the JSON shapes); [`AcpSink`] sends what it
//! makes on the connection.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, Content, ContentBlock,
    ContentChunk, Cost, Diff, ImageContent, Meta, Plan, PlanEntry, PlanEntryPriority,
    PlanEntryStatus, SessionId, SessionNotification, SessionUpdate, ToolCall, ToolCallContent,
    ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
    UnstructuredCommandInput, UsageUpdate,
};
use agent_client_protocol::{v1::ConnectionTo, Client};
use serde_json::{json, Value};

use crate::agent::EventSink;
use crate::vocab::protocol::{AgentEvent, ChildTag, UpdateKind};

/// How much of a running call's output is shown (its tail).
const OUTPUT_TAIL: usize = 4096;
/// Files larger than this get no diff (the editor would not show it usefully either).
const MAX_DIFF_FILE: u64 = 2 * 1024 * 1024;

/// The ACP kind of a tool, by its name.
pub fn kind_of(tool: &str) -> ToolKind {
    let t = tool.to_ascii_lowercase();
    match t.as_str() {
        "read" | "read_file" | "view" | "cat" => ToolKind::Read,
        "edit" | "write" | "write_file" | "replace" | "multi_edit" => ToolKind::Edit,
        "bash" | "shell" | "exec" | "run" => ToolKind::Execute,
        "subagent" | "think" => ToolKind::Think,
        _ if has_word(&t, &["grep", "rg", "search", "find", "glob", "ls", "list"]) => {
            ToolKind::Search
        }
        _ if has_word(&t, &["fetch", "web", "http", "url", "browse", "curl"]) => ToolKind::Fetch,
        _ => ToolKind::Other,
    }
}

/// Whether one of the words of `name` (split at what is not a letter or digit) is in `words`.
fn has_word(name: &str, words: &[&str]) -> bool {
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| words.contains(&w))
}

/// Where writes went instead of the disk (the editor's buffers): what a file's text was
/// before the last write there and what was written (`None` before: not known).
pub trait Written: Send + Sync {
    /// The last write to `path`, taken.
    fn take_written(&self, path: &Path) -> Option<(Option<String>, String)>;
}

/// What is kept of a call between its start and its result.
#[derive(Default)]
struct Call {
    /// The file an `edit` or `write` changes, and its text before (`None`: it did not exist).
    file: Option<(PathBuf, Option<String>)>,
    /// The output so far (`bash`), its tail.
    output: String,
}

/// Turns events into session updates; keeps what a call's result needs from its start.
pub struct Mapper {
    cwd: PathBuf,
    calls: HashMap<String, Call>,
    /// The model's context window in tokens (0: no `usage_update`).
    pub window: u64,
    /// The tokens in context after the last turn.
    used: u64,
    /// The editor's files, when writes go through them: a call's diff is of what was
    /// written there.
    pub files: Option<std::sync::Weak<dyn Written>>,
}

impl Mapper {
    pub fn new(cwd: PathBuf) -> Mapper {
        Mapper {
            cwd,
            calls: HashMap::new(),
            window: 0,
            used: 0,
            files: None,
        }
    }

    /// How full the context is after a turn, and (at the end of a run, when the model's
    /// prices are known) what the session cost so far.
    fn usage(&mut self, event: &AgentEvent) -> Vec<SessionUpdate> {
        let cost = match event {
            AgentEvent::TurnEnd { usage, .. } => {
                self.used = usage.input_tokens + usage.output_tokens;
                None
            }
            AgentEvent::Final { session_usage, .. } => match session_usage.cost_usd {
                Some(c) => Some(Cost::new(c, "USD")),
                None => return Vec::new(),
            },
            _ => return Vec::new(),
        };
        if self.window == 0 || self.used == 0 {
            return Vec::new();
        }
        let update = UsageUpdate::new(self.used, self.window).cost(cost);
        vec![SessionUpdate::UsageUpdate(update)]
    }

    /// The updates `event` becomes (none for the events an editor has no use for).
    pub fn updates(&mut self, event: &AgentEvent) -> Vec<SessionUpdate> {
        self.mapped(event, None)
    }

    fn mapped(
        &mut self,
        event: &AgentEvent,
        child: Option<(&ChildTag, &str)>,
    ) -> Vec<SessionUpdate> {
        let id = |raw: &str| match child {
            Some((tag, parent)) => format!("{parent}/{}.{}/{raw}", tag.name, tag.depth),
            None => raw.to_string(),
        };
        match event {
            AgentEvent::TextDelta { delta } if child.is_none() => vec![text(delta, None)],
            AgentEvent::Thinking { delta } if child.is_none() => {
                let chunk = ContentChunk::new(ContentBlock::from(delta.clone()));
                vec![SessionUpdate::AgentThoughtChunk(chunk)]
            }
            AgentEvent::ToolCall {
                id: call,
                name,
                arguments,
                ..
            } => vec![self.call(&id(call), name, arguments, child)],
            AgentEvent::ToolUpdate {
                id: call,
                kind,
                text,
                ..
            } => {
                vec![self.progress(&id(call), *kind, text)]
            }
            AgentEvent::ToolResult {
                id: call,
                content,
                is_error,
                ..
            } => vec![self.result(&id(call), content, *is_error)],
            AgentEvent::Notice { message } => vec![notice(message, child.map(|c| c.0))],
            AgentEvent::Retry { .. } => event
                .retry_text()
                .map(|t| notice(&t, child.map(|c| c.0)))
                .into_iter()
                .collect(),
            AgentEvent::Error { message } if child.is_some() => {
                vec![notice(&format!("failed: {message}"), child.map(|c| c.0))]
            }
            AgentEvent::Command { output, .. } if !output.is_empty() => {
                vec![text(&format!("{output}\n"), None)]
            }
            AgentEvent::Child {
                call_id,
                child: tag,
                event,
            } => {
                let parent = call_id.as_deref().unwrap_or("mypi");
                self.mapped(event, Some((tag, parent)))
            }
            AgentEvent::Plan { entries } => vec![plan(entries)],
            AgentEvent::TurnEnd { .. } | AgentEvent::Final { .. } if child.is_none() => {
                self.usage(event)
            }
            _ => Vec::new(),
        }
    }

    fn call(
        &mut self,
        id: &str,
        name: &str,
        args: &Value,
        child: Option<(&ChildTag, &str)>,
    ) -> SessionUpdate {
        let kind = kind_of(name);
        let path = args
            .get("path")
            .or_else(|| args.get("file_path"))
            .and_then(Value::as_str)
            .map(|p| self.cwd.join(p));
        let mut locations = Vec::new();
        if let Some(path) = &path {
            let line = ["offset", "line"]
                .iter()
                .find_map(|k| args.get(*k).and_then(Value::as_u64))
                .and_then(|n| u32::try_from(n).ok());
            locations.push(ToolCallLocation::new(path.clone()).line(line));
        }
        let mut kept = Call::default();
        if let (ToolKind::Edit, Some(path)) = (kind, &path) {
            kept.file = Some((path.clone(), read_small(path)));
        }
        self.calls.insert(id.to_string(), kept);
        let mut title = title_of(name, args);
        let mut call = ToolCall::new(id.to_string(), String::new())
            .kind(kind)
            .status(ToolCallStatus::InProgress)
            .locations(locations)
            .raw_input(args.clone());
        if let Some((tag, parent)) = child {
            title = format!("[{}] {title}", tag.name);
            call = call.meta(child_meta(tag, parent));
        }
        call.title = title;
        SessionUpdate::ToolCall(call)
    }

    fn progress(&mut self, id: &str, kind: UpdateKind, text: &str) -> SessionUpdate {
        let shown = match kind {
            UpdateKind::Output => {
                let call = self.calls.entry(id.to_string()).or_default();
                call.output.push_str(text);
                if call.output.len() > OUTPUT_TAIL {
                    call.output =
                        crate::vocab::text::tail_bytes(&call.output, OUTPUT_TAIL).to_string();
                }
                call.output.clone()
            }
            UpdateKind::Progress => text.to_string(),
        };
        SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            id.to_string(),
            ToolCallUpdateFields::new()
                .status(ToolCallStatus::InProgress)
                .content(vec![text_content(&shown)]),
        ))
    }

    fn result(&mut self, id: &str, content: &str, is_error: bool) -> SessionUpdate {
        let call = self.calls.remove(id).unwrap_or_default();
        let mut shown = vec![text_content(content)];
        if let (false, Some((path, before))) = (is_error, call.file) {
            let editor = self.files.as_ref().and_then(std::sync::Weak::upgrade);
            let (before, after) = match editor.and_then(|f| f.take_written(&path)) {
                Some((then, now)) => (then.or(before), Some(now)),
                None => (before, read_small(&path)),
            };
            if let Some(after) = after {
                if before.as_deref() != Some(after.as_str()) {
                    shown.push(ToolCallContent::Diff(
                        Diff::new(path, after).old_text(before),
                    ));
                }
            }
        }
        let status = match is_error {
            true => ToolCallStatus::Failed,
            false => ToolCallStatus::Completed,
        };
        SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            id.to_string(),
            ToolCallUpdateFields::new().status(status).content(shown),
        ))
    }
}

/// A call's title: the tool and what it works on (`read src/main.rs`, `bash: cargo test`).
fn title_of(name: &str, args: &Value) -> String {
    let arg = |k: &str| args.get(k).and_then(Value::as_str);
    let what = arg("path")
        .or_else(|| arg("file_path"))
        .map(str::to_string)
        .or_else(|| arg("command").map(|c| format!(": {c}")))
        .or_else(|| arg("pattern").map(str::to_string))
        .or_else(|| arg("url").map(str::to_string));
    let what = what.map(|w| crate::vocab::text::truncate_middle(&w, 120));
    match what {
        Some(w) if w.starts_with(':') => format!("{name}{w}"),
        Some(w) => format!("{name} {w}"),
        None => name.to_string(),
    }
}

/// A file's text when it is there, text, and small enough to diff.
fn read_small(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_DIFF_FILE {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

fn text_content(text: &str) -> ToolCallContent {
    ToolCallContent::Content(Content::new(ContentBlock::from(text.to_string())))
}

/// Agent text.
fn text(text: &str, meta: Option<Meta>) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(
        ContentChunk::new(ContentBlock::from(text.to_string())).meta(meta),
    )
}

/// A notice as agent text of a line of its own, marked as mypi's (and the child's, when a
/// child agent's).
fn notice(message: &str, child: Option<&ChildTag>) -> SessionUpdate {
    let who = match child {
        Some(tag) => format!("[mypi · {}]", tag.name),
        None => "[mypi]".to_string(),
    };
    let meta = json!({"mypi": {"notice": true}});
    let meta = meta.as_object().cloned();
    text(&format!("\n{who} {message}\n"), meta)
}

/// A script's plan as the editor's.
fn plan(entries: &[crate::vocab::protocol::PlanEntry]) -> SessionUpdate {
    use crate::vocab::protocol::{PlanPriority, PlanStatus};
    let entries = entries
        .iter()
        .map(|e| {
            let priority = match e.priority {
                PlanPriority::High => PlanEntryPriority::High,
                PlanPriority::Medium => PlanEntryPriority::Medium,
                PlanPriority::Low => PlanEntryPriority::Low,
            };
            let status = match e.status {
                PlanStatus::Pending => PlanEntryStatus::Pending,
                PlanStatus::InProgress => PlanEntryStatus::InProgress,
                PlanStatus::Completed => PlanEntryStatus::Completed,
            };
            PlanEntry::new(e.content.clone(), priority, status)
        })
        .collect();
    SessionUpdate::Plan(Plan::new(entries))
}

/// `_meta` of a child agent's call: which child, and the parent's call that started it.
fn child_meta(tag: &ChildTag, parent: &str) -> Meta {
    let meta = json!({"mypi": {"child": {
        "name": tag.name, "depth": tag.depth, "turn": tag.turn, "parentToolCallId": parent
    }}});
    meta.as_object().cloned().unwrap_or_default()
}

/// The slash commands a prompt may start with (built-in, scripts', prompt files', MCP
/// prompts'), as the editor offers them: name, description, and the arguments' hint.
pub fn commands(table: &crate::commands::CommandTable) -> SessionUpdate {
    let list = table
        .all()
        .iter()
        .map(|c| {
            let hint = (!c.hint.is_empty()).then(|| {
                AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(c.hint.clone()))
            });
            AvailableCommand::new(c.name.clone(), c.description.clone()).input(hint)
        })
        .collect();
    SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(list))
}

/// A loaded session's conversation as the updates that tell it again: the user's messages
/// as `user_message_chunk` (their text, then an `image` chunk per image), the agent's text as `agent_message_chunk`, each tool call and its
/// result as `tool_call` and `tool_call_update` (no diffs: the files are as they are now).
pub fn replay(messages: &[crate::vocab::protocol::Message], cwd: &Path) -> Vec<SessionUpdate> {
    use crate::vocab::protocol::Role;
    let mut mapper = Mapper::new(cwd.to_path_buf());
    let mut out = Vec::new();
    for m in messages {
        match m.role {
            Role::User => {
                let text = (!m.content.is_empty() || m.images.is_empty())
                    .then(|| ContentBlock::from(m.content.clone()));
                let images = m.images.iter().map(|i| {
                    ContentBlock::Image(ImageContent::new(i.data.clone(), i.mime_type.clone()))
                });
                let chunks = text.into_iter().chain(images);
                out.extend(chunks.map(|c| SessionUpdate::UserMessageChunk(ContentChunk::new(c))));
            }
            Role::Assistant => {
                if !m.content.is_empty() {
                    out.push(text(&m.content, None));
                }
                for call in &m.tool_calls {
                    let update = mapper.call(&call.id, &call.name, &call.arguments, None);
                    mapper.calls.remove(&call.id);
                    out.push(update);
                }
            }
            Role::Tool => {
                let id = m.tool_call_id.as_deref().unwrap_or_default();
                out.push(mapper.result(id, &m.content, m.is_error));
            }
            Role::System => {}
        }
    }
    out
}

/// Sends a session's events to the editor as `session/update` notifications. One per
/// session, used both as the session's outlet and as its runs' sink; the session id is set
/// once the app is built. Until the editor has the session's id (the answer to
/// `session/new`), updates are held, then [`AcpSink::release`]d: what start-up says (a
/// resumed session's warnings, the trust gate, an extension that failed to load) reaches an
/// editor that knows the session.
pub struct AcpSink {
    connection: ConnectionTo<Client>,
    session: OnceLock<SessionId>,
    mapper: Mutex<Mapper>,
    held: Mutex<Option<Vec<SessionUpdate>>>,
}

impl AcpSink {
    pub fn new(connection: ConnectionTo<Client>, cwd: PathBuf) -> AcpSink {
        AcpSink {
            connection,
            session: OnceLock::new(),
            mapper: Mutex::new(Mapper::new(cwd)),
            held: Mutex::new(Some(Vec::new())),
        }
    }

    /// The editor's files, whose writes the diffs show.
    pub fn set_files(&self, files: &Arc<dyn Written>) {
        self.mapper.lock().unwrap_or_else(|p| p.into_inner()).files = Some(Arc::downgrade(files));
    }

    /// The model's context window, for `usage_update`s.
    pub fn set_window(&self, window: u64) {
        self.mapper.lock().unwrap_or_else(|p| p.into_inner()).window = window;
    }

    /// The session the updates are for, once set.
    pub fn session(&self) -> Option<SessionId> {
        self.session.get().cloned()
    }

    /// The connection to the editor.
    pub fn connection(&self) -> &ConnectionTo<Client> {
        &self.connection
    }

    /// The session the updates are for.
    pub fn set_session(&self, id: SessionId) {
        let _ = self.session.set(id);
    }

    /// Sends one update (holds it until [`AcpSink::release`]).
    pub fn send(&self, update: SessionUpdate) {
        if let Some(held) = self.held.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
            held.push(update);
            return;
        }
        self.send_now(update);
    }

    /// Sends the updates held so far; from now on each goes as it comes.
    pub fn release(&self) {
        let held = self.held.lock().unwrap_or_else(|p| p.into_inner()).take();
        for update in held.into_iter().flatten() {
            self.send_now(update);
        }
    }

    /// Sends one update now (a loaded conversation's, before the answer to `session/load`).
    pub fn send_now(&self, update: SessionUpdate) {
        if let Some(id) = self.session.get() {
            let note = SessionNotification::new(id.clone(), update);
            if let Err(e) = self.connection.send_notification(note) {
                super::say(&format!("cannot send a session update: {e}"));
            }
        }
    }
}

impl EventSink for AcpSink {
    fn emit(&self, event: AgentEvent) {
        let updates = self
            .mapper
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .updates(&event);
        for update in updates {
            self.send(update);
        }
    }
}

#[cfg(test)]
mod tests;
