//! What a settings hook reads on stdin: Claude Code's JSON for the event, built from the bus
//! event, with Claude Code's tool and argument names (`bash` `{command}` is `Bash`
//! `{command}`, `read`/`write`/`edit`'s `path` is an absolute `file_path`, `old_text` is
//! `old_string`...). An `updatedInput` comes back through [`from_claude_args`].

use serde_json::{json, Map, Value};

use crate::config::claude_hooks::ClaudeEvent;
use crate::hooks::{CompactReason, HookEvent, InputSource, Reason};
use crate::vocab::protocol::Role;
use crate::vocab::run::RunContext;

/// A tool's arguments: (mypi's name, Claude Code's).
type Renames = &'static [(&'static str, &'static str)];

/// mypi's built-in tools as Claude Code names them, with their arguments. Other tools
/// (scripts', MCP's `mcp__server__tool`) keep their names.
const TOOLS: [(&str, &str, Renames); 4] = [
    (
        "bash",
        "Bash",
        &[("command", "command"), ("timeout_ms", "timeout")],
    ),
    (
        "read",
        "Read",
        &[
            ("path", "file_path"),
            ("offset", "offset"),
            ("limit", "limit"),
        ],
    ),
    (
        "write",
        "Write",
        &[("path", "file_path"), ("content", "content")],
    ),
    (
        "edit",
        "Edit",
        &[
            ("path", "file_path"),
            ("old_text", "old_string"),
            ("new_text", "new_string"),
            ("replace_all", "replace_all"),
        ],
    ),
];

/// The tool's name as Claude Code's hooks know it.
pub fn claude_tool_name(name: &str) -> &str {
    TOOLS
        .iter()
        .find(|(ours, _, _)| *ours == name)
        .map_or(name, |(_, theirs, _)| theirs)
}

fn renames(name: &str) -> Renames {
    TOOLS
        .iter()
        .find(|(ours, _, _)| *ours == name)
        .map_or(&[], |(_, _, args)| args)
}

/// mypi's arguments of tool `name` as Claude Code's `tool_input` (paths made absolute).
pub fn to_claude_args(name: &str, args: &Value, ctx: &RunContext) -> Value {
    let Value::Object(map) = args else {
        return args.clone();
    };
    let table = renames(name);
    let mut out = Map::new();
    for (k, v) in map {
        let key = table
            .iter()
            .find(|(ours, _)| ours == k)
            .map_or(k.as_str(), |(_, theirs)| theirs);
        let v = match (key, v) {
            ("file_path", Value::String(p)) => Value::String(ctx.resolve(p).display().to_string()),
            _ => v.clone(),
        };
        out.insert(key.to_string(), v);
    }
    Value::Object(out)
}

/// A hook's `updatedInput` for tool `name` over the call's `current` arguments (mypi's
/// names): its fields, renamed back, replace the ones they name.
pub fn from_claude_args(name: &str, current: &Value, updated: &Map<String, Value>) -> Value {
    let table = renames(name);
    let mut out = match current {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    for (k, v) in updated {
        let key = table
            .iter()
            .find(|(_, theirs)| theirs == k)
            .map_or(k.as_str(), |(ours, _)| ours);
        out.insert(key.to_string(), v.clone());
    }
    Value::Object(out)
}

/// What a tool's result looks like to a `PostToolUse` hook (`tool_response`), after the
/// shapes Claude Code gives its own tools.
fn tool_response(name: &str, args: &Value, result: &str, ctx: &RunContext) -> Value {
    let path = || {
        args.get("path")
            .and_then(Value::as_str)
            .map(|p| ctx.resolve(p).display().to_string())
    };
    match name {
        "bash" => json!({"stdout": result, "stderr": "", "interrupted": false, "isImage": false}),
        "read" => json!({"type": "text", "file": {"filePath": path(), "content": result}}),
        "write" => json!({"filePath": path(), "content": args.get("content"), "message": result}),
        "edit" => json!({
            "filePath": path(),
            "oldString": args.get("old_text"),
            "newString": args.get("new_text"),
            "replaceAll": args.get("replace_all").and_then(Value::as_bool).unwrap_or(false),
            "message": result,
        }),
        _ => Value::String(result.to_string()),
    }
}

/// The JSON a hook of `event` reads for the bus event `bus`, and the name its matcher is
/// tried on (the tool, the session's source, the compaction's trigger); `None` when the bus
/// event is not one this hook runs for (a child's `agent_end` is `SubagentStop`, not `Stop`;
/// a queued message is no `UserPromptSubmit`; a failed call has no `PostToolUse`).
pub fn stdin_for(
    event: ClaudeEvent,
    bus: &HookEvent,
    ctx: &RunContext,
    stop_active: bool,
) -> Option<(Map<String, Value>, String)> {
    let mut m = Map::new();
    let matched = match (event, bus) {
        (ClaudeEvent::PreToolUse, HookEvent::ToolCall { id, name, args, .. }) => {
            tool_fields(&mut m, id, name, args, ctx)
        }
        (
            ClaudeEvent::PostToolUse,
            HookEvent::ToolResult {
                id,
                name,
                args,
                result,
                is_error: false,
                ..
            },
        ) => {
            m.insert(
                "tool_response".into(),
                tool_response(name, args, result, ctx),
            );
            tool_fields(&mut m, id, name, args, ctx)
        }
        (
            ClaudeEvent::UserPromptSubmit,
            HookEvent::Input {
                text,
                source: InputSource::User,
            },
        ) => {
            m.insert("prompt".into(), json!(text));
            String::new()
        }
        (ClaudeEvent::Stop | ClaudeEvent::SubagentStop, HookEvent::AgentEnd { messages }) => {
            let wanted = match ctx.depth {
                0 => ClaudeEvent::Stop,
                _ => ClaudeEvent::SubagentStop,
            };
            if event != wanted {
                return None;
            }
            let last = messages.iter().rev().find(|m| m.role == Role::Assistant);
            let last = last.map(|m| m.content.clone()).unwrap_or_default();
            m.insert("stop_hook_active".into(), json!(stop_active));
            m.insert("last_assistant_message".into(), json!(last));
            String::new()
        }
        _ => {
            let (key, value, more) = session_field(event, bus)?;
            m.insert(key.into(), json!(value));
            m.extend(more);
            value.to_string()
        }
    };
    Some((m, matched))
}

/// A tool event's fields; the tool's name as the matcher reads it.
fn tool_fields(
    m: &mut Map<String, Value>,
    id: &str,
    name: &str,
    args: &Value,
    ctx: &RunContext,
) -> String {
    let tool = claude_tool_name(name);
    m.insert("tool_name".into(), json!(tool));
    m.insert("tool_input".into(), to_claude_args(name, args, ctx));
    m.insert("tool_use_id".into(), json!(id));
    tool.to_string()
}

/// The field the matcher of a session event reads (`source`, `reason`, `trigger`), its
/// value, and the event's other fields.
fn session_field(
    event: ClaudeEvent,
    bus: &HookEvent,
) -> Option<(&'static str, &'static str, Map<String, Value>)> {
    let none = Map::new();
    Some(match (event, bus) {
        (ClaudeEvent::SessionStart, HookEvent::SessionStart { reason }) => {
            let source = match reason {
                Reason::Startup => "startup",
                Reason::Resume => "resume",
                Reason::New => "clear",
                Reason::Reload | Reason::Quit => return None,
            };
            ("source", source, none)
        }
        (ClaudeEvent::SessionEnd, HookEvent::SessionShutdown { reason }) => {
            let why = match reason {
                Reason::Quit => "prompt_input_exit",
                Reason::New => "clear",
                Reason::Resume => "other",
                Reason::Startup | Reason::Reload => return None,
            };
            ("reason", why, none)
        }
        (
            ClaudeEvent::PreCompact,
            HookEvent::SessionBeforeCompact {
                reason,
                instructions,
                ..
            },
        ) => {
            let trigger = match reason {
                CompactReason::Manual => "manual",
                CompactReason::Auto | CompactReason::Overflow => "auto",
            };
            let mut more = none;
            let instructions = instructions.clone().unwrap_or_default();
            more.insert("custom_instructions".into(), json!(instructions));
            ("trigger", trigger, more)
        }
        _ => return None,
    })
}

/// The fields every event has, added to an event's own.
pub fn with_common(
    mut m: Map<String, Value>,
    event: ClaudeEvent,
    ctx: &RunContext,
    transcript: Option<String>,
) -> Value {
    m.insert("session_id".into(), json!(ctx.session_id));
    m.insert(
        "transcript_path".into(),
        json!(transcript.unwrap_or_default()),
    );
    m.insert("cwd".into(), json!(ctx.cwd.display().to_string()));
    m.insert("hook_event_name".into(), json!(event.name()));
    if !matches!(event, ClaudeEvent::SessionStart | ClaudeEvent::SessionEnd) {
        m.insert("permission_mode".into(), json!("default"));
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_go_over_with_claude_code_names_and_come_back() {
        let ctx = RunContext::detached("/w".into());
        let args = json!({"path": "a.txt", "old_text": "x", "new_text": "y"});
        let theirs = to_claude_args("edit", &args, &ctx);
        assert_eq!(
            theirs,
            json!({"file_path": "/w/a.txt", "old_string": "x", "new_string": "y"})
        );
        let updated = json!({"file_path": "/w/b.txt", "new_string": "z"});
        let back = from_claude_args("edit", &args, updated.as_object().unwrap());
        assert_eq!(
            back,
            json!({"path": "/w/b.txt", "old_text": "x", "new_text": "z"})
        );
        assert_eq!(claude_tool_name("bash"), "Bash");
        assert_eq!(claude_tool_name("mcp__gh__search"), "mcp__gh__search");
        let bash = to_claude_args("bash", &json!({"command": "ls"}), &ctx);
        assert_eq!(bash, json!({"command": "ls"}));
    }
}
