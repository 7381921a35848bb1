//! A hook's answer read as Claude Code reads it: exit 0 goes on (its stdout is context for
//! `UserPromptSubmit` and `SessionStart`, or a JSON object of fields), exit 2 blocks with
//! stderr as the reason, any other end is a notice and mypi goes on. The JSON fields:
//! `continue: false` + `stopReason`, `decision` (`block`, `approve`) + `reason`,
//! `systemMessage`, `suppressOutput`, and `hookSpecificOutput` with `permissionDecision`
//! (`allow`, `deny`, `ask`) + `permissionDecisionReason`, `updatedInput`,
//! `additionalContext`.

use serde_json::{Map, Value};

use super::run::{Ended, Ran};
use crate::config::claude_hooks::ClaudeEvent;
use crate::vocab::protocol::HookOutcome;

/// The most of a hook's text that becomes context for the model (Claude Code's cap).
pub const MAX_CONTEXT_CHARS: usize = 10_000;

/// What a hook asked for, whatever the event (each event uses its part).
#[derive(Debug, Default, PartialEq)]
pub struct Answer {
    /// Blocked (exit 2, `decision: block`, `deny`): the reason.
    pub block: Option<String>,
    /// `permissionDecision: ask`: the reason to show with the question.
    pub ask: Option<String>,
    /// `continue: false`: the reason to show the user.
    pub stop: Option<String>,
    /// Text for the model (stdout, `additionalContext`).
    pub context: Option<String>,
    /// `updatedInput` (Claude Code's argument names).
    pub updated_input: Option<Map<String, Value>>,
    /// Lines for the user (`systemMessage`, failures).
    pub notices: Vec<String>,
    pub outcome: HookOutcome,
    pub exit_code: Option<i32>,
}

/// Reads `ran`, the run of hook `label` (`[command]`) for `event`.
pub fn read(event: ClaudeEvent, label: &str, ran: Ran) -> Answer {
    let mut a = Answer::default();
    let name = event.name();
    if ran.cut {
        a.notices.push(format!(
            "{name} hook {label} printed {} bytes on stdout and {} on stderr; only the first and \
             last MiB of each were read",
            ran.printed.0, ran.printed.1
        ));
    }
    let code = match ran.ended {
        Ended::Exited(code) => code,
        Ended::TimedOut => {
            a.outcome = HookOutcome::TimedOut;
            a.notices.push(format!(
                "{name} hook {label} timed out after {:.0} s; it was stopped and mypi went on",
                ran.duration.as_secs_f64()
            ));
            return a;
        }
        Ended::Cancelled => {
            a.outcome = HookOutcome::Cancelled;
            return a;
        }
        Ended::Signalled => {
            a.outcome = HookOutcome::Error;
            a.notices.push(format!(
                "{name} hook {label} was ended by a signal; going on"
            ));
            return a;
        }
        Ended::NotStarted(why) => {
            a.outcome = HookOutcome::Error;
            a.notices
                .push(format!("{name} hook {label} could not start: {why}"));
            return a;
        }
    };
    a.exit_code = Some(code);
    let stderr = ran.stderr.trim();
    match code {
        0 => read_stdout(event, ran.stdout.trim(), &mut a),
        2 => {
            a.outcome = HookOutcome::Blocked;
            a.block = Some(blocked_text(event, label, stderr));
        }
        _ => {
            a.outcome = HookOutcome::Error;
            let said = if stderr.is_empty() {
                String::new()
            } else {
                format!(": {}", crate::vocab::text::truncate_middle(stderr, 2000))
            };
            a.notices.push(format!(
                "{name} hook {label} failed with exit code {code}{said}"
            ));
        }
    }
    a
}

/// The reason an exit 2 gives, as Claude Code words it.
fn blocked_text(event: ClaudeEvent, label: &str, stderr: &str) -> String {
    let stderr = if stderr.is_empty() {
        "no reason given"
    } else {
        stderr
    };
    match event {
        ClaudeEvent::PreToolUse | ClaudeEvent::PostToolUse => {
            format!("{} hook error: {label}: {stderr}", event.name())
        }
        ClaudeEvent::UserPromptSubmit => {
            format!("UserPromptSubmit operation blocked by hook:\n{label}: {stderr}")
        }
        ClaudeEvent::Stop | ClaudeEvent::SubagentStop => format!("{label}: {stderr}"),
        _ => format!("{} hook {label}: {stderr}", event.name()),
    }
}

/// Exit 0: a JSON object of fields, or plain text (context where the event takes it).
fn read_stdout(event: ClaudeEvent, stdout: &str, a: &mut Answer) {
    let json = stdout
        .starts_with('{')
        .then(|| serde_json::from_str::<Map<String, Value>>(stdout).ok())
        .flatten();
    let Some(fields) = json else {
        if matches!(
            event,
            ClaudeEvent::UserPromptSubmit | ClaudeEvent::SessionStart
        ) && !stdout.is_empty()
        {
            a.context = Some(capped(stdout));
        }
        return;
    };
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    if let Some(message) = text(fields.get("systemMessage")) {
        a.notices.push(message);
    }
    let reason = text(fields.get("reason"));
    match fields.get("decision").and_then(Value::as_str) {
        Some("block") => {
            a.block = Some(reason.clone().unwrap_or_else(|| "blocked by a hook".into()));
        }
        Some("approve") => {}
        _ => {}
    }
    if let Some(Value::Object(specific)) = fields.get("hookSpecificOutput") {
        read_specific(specific, a);
    }
    if fields.get("continue") == Some(&Value::Bool(false)) {
        let why = text(fields.get("stopReason")).unwrap_or_else(|| "stopped by a hook".into());
        a.stop = Some(why);
    }
    if a.block.is_some() || a.stop.is_some() {
        a.outcome = HookOutcome::Blocked;
    }
}

/// `hookSpecificOutput`'s fields.
fn read_specific(specific: &Map<String, Value>, a: &mut Answer) {
    let text = |k: &str| specific.get(k).and_then(Value::as_str).map(str::to_string);
    let reason = text("permissionDecisionReason");
    match specific.get("permissionDecision").and_then(Value::as_str) {
        Some("deny") => {
            a.block = Some(reason.unwrap_or_else(|| "denied by a hook".into()));
        }
        Some("ask") => a.ask = Some(reason.unwrap_or_default()),
        Some("allow") => {
            if let Some(r) = reason.filter(|r| !r.is_empty()) {
                a.notices.push(r);
            }
        }
        _ => {}
    }
    if let Some(Value::Object(input)) = specific.get("updatedInput") {
        a.updated_input = Some(input.clone());
    }
    if let Some(context) = text("additionalContext").filter(|c| !c.is_empty()) {
        a.context = Some(capped(&context));
    }
}

/// `text` cut to [`MAX_CONTEXT_CHARS`], saying so.
fn capped(text: &str) -> String {
    if text.chars().count() <= MAX_CONTEXT_CHARS {
        return text.to_string();
    }
    let kept: String = text.chars().take(MAX_CONTEXT_CHARS).collect();
    format!("{kept}\n[… the hook's output was cut to {MAX_CONTEXT_CHARS} characters]")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(code: i32, stdout: &str, stderr: &str) -> Ran {
        Ran {
            ended: Ended::Exited(code),
            stdout: stdout.into(),
            stderr: stderr.into(),
            printed: (stdout.len(), stderr.len()),
            cut: false,
            duration: std::time::Duration::from_millis(3),
        }
    }

    #[test]
    fn exit_codes_read_as_claude_code_reads_them() {
        let a = read(ClaudeEvent::PreToolUse, "[g]", ran(2, "", "no rm\n"));
        assert_eq!(
            a.block.as_deref(),
            Some("PreToolUse hook error: [g]: no rm")
        );
        assert_eq!(a.outcome, HookOutcome::Blocked);
        let a = read(ClaudeEvent::UserPromptSubmit, "[g]", ran(0, "CTX\n", ""));
        assert_eq!(a.context.as_deref(), Some("CTX"));
        let a = read(ClaudeEvent::PreToolUse, "[g]", ran(0, "CTX\n", ""));
        assert_eq!(
            a,
            Answer {
                exit_code: Some(0),
                ..Answer::default()
            }
        );
        let a = read(ClaudeEvent::Stop, "[g]", ran(1, "", "oops"));
        assert_eq!(a.outcome, HookOutcome::Error);
        assert!(
            a.notices[0].contains("exit code 1: oops"),
            "{:?}",
            a.notices
        );
    }

    #[test]
    fn json_fields_are_honoured() {
        let out = r#"{"systemMessage": "hi", "hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "deny", "permissionDecisionReason": "nope",
            "updatedInput": {"command": "ls"}}}"#;
        let a = read(ClaudeEvent::PreToolUse, "[g]", ran(0, out, ""));
        assert_eq!(a.block.as_deref(), Some("nope"));
        assert_eq!(a.notices, ["hi"]);
        assert!(a.updated_input.is_some());
        let a = read(
            ClaudeEvent::Stop,
            "[g]",
            ran(0, r#"{"continue": false, "stopReason": "done"}"#, ""),
        );
        assert_eq!(a.stop.as_deref(), Some("done"));
        let a = read(
            ClaudeEvent::Stop,
            "[g]",
            ran(0, r#"{"decision": "block", "reason": "tests fail"}"#, ""),
        );
        assert_eq!(a.block.as_deref(), Some("tests fail"));
    }
}
