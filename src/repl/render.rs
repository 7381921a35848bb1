//! Rendering agent events: [`JsonSink`] (`--json`: one JSON object per line), [`PrintSink`]
//! (`-p`: notices on stderr, the answer printed by the caller) and [`HumanSink`] (the REPL:
//! markdown rendered as it streams, a line per tool call, or the lines a script's renderer
//! gave with the event). The REPL prints through a [`Printer`], which goes through rustyline's
//! external printer while a prompt is being edited, so lines from reloads, MCP servers or
//! follow-up runs never garble what the user is typing.

use std::io::Write;
use std::sync::{Arc, Mutex};

use super::markdown::Markdown;
pub use super::printer::Printer;
use super::spinner::Spinner;
use super::style::{term_width, terminal_width, Role, Style};
use super::tool_lines;
use futures_util::future::BoxFuture;

use crate::agent::EventSink;
use crate::tools::renderers::{Rendered, RendererRegistry};
use crate::vocab::protocol::{AgentEvent, ChildTag};
use crate::vocab::run::RunContext;
use crate::vocab::text::{inert, inert_sgr, truncate_middle};

/// A tool call's arguments with every string in them made inert ([`crate::vocab::text::inert()`]),
/// for the lines that show the call.
fn inert_value(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) => Value::String(inert(s).into_owned()),
        Value::Array(items) => Value::Array(items.iter().map(inert_value).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (inert(k).into_owned(), inert_value(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Writes a line to stderr; a closed stderr is ignored (no panic, unlike `eprintln!`). On a
/// terminal the text is made inert ([`crate::vocab::text::inert()`]): what is written here may hold
/// a server's or a script's words.
pub fn stderr_line(text: &str) {
    let text = if crate::platform::stdio::err_is_terminal() {
        inert(text)
    } else {
        std::borrow::Cow::Borrowed(text)
    };
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{text}");
}

/// Writes a line to stdout; a closed stdout (`mypi -p ... | head`) is ignored. On a terminal
/// the text is made inert ([`crate::vocab::text::inert()`]); to a pipe or a file it is written exactly.
pub fn stdout_line(text: &str) {
    if crate::platform::stdio::out_is_terminal() {
        crate::platform::stdio::out_line(&inert(text));
    } else {
        crate::platform::stdio::out_line(text);
    }
}

/// Writes one serialized JSON event as a line of stdout; on a terminal the characters JSON
/// leaves as they are but a terminal would act on are escaped ([`crate::vocab::text::inert_json`]).
pub fn json_line(line: &str) {
    if crate::platform::stdio::out_is_terminal() {
        crate::platform::stdio::out_line(&crate::vocab::text::inert_json(line));
    } else {
        crate::platform::stdio::out_line(line);
    }
}

/// `--json`: every event as one line on stdout.
pub struct JsonSink;

impl EventSink for JsonSink {
    fn emit(&self, event: AgentEvent) {
        if let Ok(line) = serde_json::to_string(&event) {
            json_line(&line);
        }
    }
}

/// `-p`: notices go to stderr; the final text is printed by the caller.
pub struct PrintSink;

impl EventSink for PrintSink {
    fn emit(&self, event: AgentEvent) {
        if let Some(text) = notice_text(&event) {
            stderr_line(&format!("mypi: {text}"));
        }
    }
}

/// The REPL's outlet: what happens outside a run (a script's notice, a reload, a child
/// agent a hook handler started) as `!` lines, and a plan set outside a run.
pub struct OutletSink(pub Arc<Printer>);

impl EventSink for OutletSink {
    fn emit(&self, event: AgentEvent) {
        if let AgentEvent::Plan { entries } = &event {
            for line in plan_lines(entries) {
                self.0.line(&line);
            }
            return;
        }
        if let Some(text) = notice_text(&event) {
            self.0.line(&format!("! {text}"));
        }
    }
}

/// The notice line of an event that is shown as one (a notice, a retry, what a child agent
/// did), unpainted and not yet made inert.
pub fn notice_text(event: &AgentEvent) -> Option<String> {
    match event {
        AgentEvent::Notice { message } => Some(message.clone()),
        AgentEvent::Retry { .. } => event.retry_text(),
        AgentEvent::Child { child, event, .. } => child_line(child, event),
        _ => None,
    }
}

/// A child agent's event as the line-mode status of a running child: which child, its turn,
/// and what it did (`[scout · depth 1 · turn 2] read {"path":"a.rs"}`); its results are not
/// shown.
fn child_line(child: &ChildTag, event: &AgentEvent) -> Option<String> {
    let what = match event {
        AgentEvent::ToolCall {
            name, arguments, ..
        } => format!("{name} {}", truncate_middle(&arguments.to_string(), 100)),
        AgentEvent::Error { message } => format!("failed: {message}"),
        AgentEvent::Notice { .. } | AgentEvent::Retry { .. } => notice_text(event)?,
        _ => return None,
    };
    Some(format!(
        "[{} · depth {} · turn {}] {what}",
        child.name, child.depth, child.turn
    ))
}

/// The width the reply is wrapped at: the terminal's (80 when a terminal does not tell);
/// none off a terminal, where lines are left whole.
fn reply_width() -> Option<usize> {
    use std::io::IsTerminal;
    std::io::stdout()
        .is_terminal()
        .then(|| terminal_width().unwrap_or(80))
}

/// A call of the running batch: `(id, name, arguments, its renderer's call line)`.
type Call = (String, String, serde_json::Value, Option<String>);

/// The REPL's renderer: streamed text, a line per tool call with its result under it
/// ([`super::tool_lines`]), notices and errors, each in its colour ([`Style`]).
pub struct HumanSink {
    pub printer: Arc<Printer>,
    style: Style,
    /// The calls of the running batch until their results are in.
    calls: Mutex<Vec<Call>>,
    /// The call whose line (or result) was printed last.
    last: Mutex<Option<String>>,
    /// The status line while the model thinks or a tool runs.
    spinner: Spinner,
    /// The model's text, rendered as it streams.
    markdown: Mutex<Markdown>,
    /// The output so far of running calls that report it, by call id (its last few KiB).
    outputs: Mutex<std::collections::HashMap<String, String>>,
    /// Scripts' renderers of tool lines (`api.renderer`), asked as a call's line or result
    /// is delivered.
    renderers: Arc<RendererRegistry>,
    /// The model's reasoning not yet shown (the line it is on), and whether there is any.
    thoughts: Mutex<super::thoughts::Thoughts>,
    thinking: std::sync::atomic::AtomicBool,
}

impl HumanSink {
    pub fn new(printer: Arc<Printer>, style: Style, renderers: Arc<RendererRegistry>) -> Self {
        HumanSink {
            renderers,
            thoughts: Mutex::default(),
            thinking: Default::default(),
            spinner: Spinner::new(printer.clone()),
            printer,
            style,
            calls: Mutex::default(),
            last: Mutex::default(),
            markdown: Mutex::new(Markdown::new(style.colour(), reply_width)),
            outputs: Mutex::default(),
        }
    }

    /// A running call's progress: its output's last lines, or its latest message, go above
    /// the status line (shown once the call has run a while).
    fn tool_update(&self, id: String, kind: crate::vocab::run::UpdateKind, text: &str) {
        let width = term_width().saturating_sub(1);
        let rows: Vec<String> = match kind {
            crate::vocab::run::UpdateKind::Output => {
                let mut outputs = self.outputs.lock().unwrap_or_else(|p| p.into_inner());
                let buf = outputs.entry(id).or_default();
                buf.push_str(text);
                if buf.len() > crate::vocab::run::MAX_PROGRESS_BYTES {
                    *buf =
                        crate::vocab::text::tail_bytes(buf, crate::vocab::run::MAX_PROGRESS_BYTES)
                            .to_string();
                }
                let lines: Vec<&str> = buf.lines().filter(|l| !l.trim().is_empty()).collect();
                let start = lines.len().saturating_sub(tool_lines::BASH_TAIL_LINES);
                lines[start..]
                    .iter()
                    .map(|l| {
                        let l = inert_sgr(l, false).replace('\t', "    ");
                        tool_lines::fit(&format!("  │ {l}"), width)
                    })
                    .collect()
            }
            crate::vocab::run::UpdateKind::Progress => {
                let message = inert(text.lines().last().unwrap_or_default());
                vec![tool_lines::fit(&format!("  ⋯ {message}"), width)]
            }
        };
        let rows = rows
            .iter()
            .map(|r| self.style.paint(Role::Dim, r))
            .collect();
        self.spinner.set_tail(rows);
    }

    /// The model's reasoning: while it streams, its last lines dimmed above the status line
    /// (on a terminal); once something else follows (`end`), folded to one dimmed line, its
    /// first, with how many more there were (`/thinking show` prints them all).
    fn thought(&self, delta: &str, end: bool) {
        use std::sync::atomic::Ordering;
        if delta.is_empty() && !self.thinking.load(Ordering::Acquire) {
            return;
        }
        let width = term_width().saturating_sub(1);
        let mut t = self.thoughts.lock().unwrap_or_else(|p| p.into_inner());
        if !delta.is_empty() {
            t.push(delta);
            self.thinking.store(true, Ordering::Release);
            let rows = t.last_rows(width);
            let rows = rows
                .iter()
                .map(|r| self.style.paint(Role::Dim, r))
                .collect();
            self.spinner.set_tail(rows);
        }
        if end {
            let folded = std::mem::take(&mut *t).folded(width);
            self.thinking.store(false, Ordering::Release);
            drop(t);
            self.spinner.set_tail(Vec::new());
            if let Some(line) = folded {
                self.spinner.stop(&self.printer);
                self.printer.styled(&self.style.paint(Role::Dim, &line));
            }
        }
    }

    /// Prints the rows of the reply that are complete (`end`: all of it, the message ended).
    fn text(&self, delta: &str, end: bool) {
        let rows = {
            let mut md = self.markdown.lock().unwrap_or_else(|p| p.into_inner());
            let mut rows = md.push(&inert(delta));
            if end {
                rows.extend(md.finish());
            }
            rows
        };
        if !rows.is_empty() {
            self.spinner.stop(&self.printer);
        }
        for row in rows {
            self.printer.styled(&row);
        }
    }

    /// A renderer's text (already cut and cleaned), line by line; without its colours when
    /// the REPL shows none.
    fn rendered(&self, text: &str) {
        let plain;
        let text = if self.style.colour() {
            text
        } else {
            plain = crate::tools::renderers::clean::without_colours(text);
            &plain
        };
        for line in text.lines() {
            self.printer.styled(line);
        }
    }

    /// A call's line: its renderer's text (`api.renderer`, see `renderers.rs`) as it is, or
    /// the default summary.
    fn tool_call(&self, call: Call) {
        match &call.3 {
            Some(text) => self.rendered(text),
            None => {
                let summary = tool_lines::call_line(&inert(&call.1), &inert_value(&call.2));
                let line = tool_lines::fit(&format!("→ {summary}"), term_width());
                self.printer.styled(&self.style.paint(Role::Tool, &line));
            }
        }
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(call.0.clone());
        self.spinner.start(&format!("running {}", inert(&call.1)));
        self.calls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(call);
    }

    /// A result, under its call: when another call's line came in between (parallel calls),
    /// the call is named again first. `rendered` is its renderer's text for the result.
    fn tool_result(&self, id: &str, name: &str, result: (&str, bool), rendered: Option<String>) {
        let (content, is_error) = result;
        self.spinner.stop(&self.printer);
        self.outputs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
        let (call, still_running) = {
            let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
            let call = calls
                .iter()
                .position(|c| c.0 == id)
                .map(|i| calls.remove(i));
            (call, calls.first().map(|c| c.1.clone()))
        };
        let args = call.as_ref().map(|c| inert_value(&c.2)).unwrap_or_default();
        let name = inert(name);
        let content = inert_sgr(content, false);
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if last.as_deref() != Some(id) {
            let summary = match call.as_ref().and_then(|c| c.3.as_deref()) {
                Some(text) => {
                    let first = text.lines().next().unwrap_or_default();
                    crate::tools::renderers::clean::without_colours(first)
                }
                None => tool_lines::call_line(&name, &args),
            };
            let line = tool_lines::fit(&format!("  ↳ {summary}"), term_width());
            self.printer.styled(&self.style.paint(Role::Dim, &line));
        }
        *last = Some(id.to_string());
        drop(last);
        match rendered {
            Some(text) => self.rendered(&text),
            None => {
                for line in tool_lines::result_lines(&name, &args, &content, is_error, &self.style)
                {
                    self.printer.styled(&line);
                }
            }
        }
        if let Some(next) = still_running {
            self.spinner.start(&format!("running {}", inert(&next)));
        }
    }
}

impl EventSink for HumanSink {
    fn emit(&self, event: AgentEvent) {
        self.show(event, None);
    }

    /// A call's line or result: its renderer's text when the tool has one (its failure
    /// notice first, then the default lines).
    fn deliver<'a>(&'a self, event: AgentEvent, ctx: &'a Arc<RunContext>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let r = &self.renderers;
            let rendered = match &event {
                AgentEvent::ToolCall {
                    name, arguments, ..
                } => r.call_line(name, arguments, ctx).await,
                AgentEvent::ToolResult {
                    name,
                    content,
                    is_error,
                    details,
                    ..
                } => {
                    r.result_lines(name, content, details.as_ref(), *is_error, ctx)
                        .await
                }
                _ => Rendered::default(),
            };
            if let Some(message) = rendered.notice {
                self.show(AgentEvent::Notice { message }, None);
            }
            self.show(event, rendered.text);
        })
    }
}

impl HumanSink {
    /// Prints `event`; `rendered` is a renderer's text for a call's line or result.
    fn show(&self, event: AgentEvent, rendered: Option<String>) {
        let p = &self.printer;
        let paint = |role, text: &str| self.style.paint(role, text);
        if let AgentEvent::Thinking { delta } = &event {
            return self.thought(delta, false);
        }
        self.settle(&event);
        match event {
            AgentEvent::TextDelta { delta } => self.text(&delta, false),
            AgentEvent::MessageEnd { .. } | AgentEvent::Final { .. } => {}
            // Shown above (and returned).
            AgentEvent::Thinking { .. } => {}
            AgentEvent::ToolCall {
                id,
                name,
                arguments,
            } => self.tool_call((id, name, arguments, rendered)),
            AgentEvent::ToolResult {
                id,
                name,
                content,
                is_error,
                ..
            } => self.tool_result(&id, &name, (&content, is_error), rendered),
            AgentEvent::ToolUpdate { id, kind, text, .. } => self.tool_update(id, kind, &text),
            // A `code` script's calls: one dim line each, and a failure's first line.
            AgentEvent::NestedToolCall { name, .. } => {
                p.styled(&paint(Role::Dim, &format!("  ↳ {}", inert(&name))))
            }
            AgentEvent::NestedToolResult {
                name,
                content,
                is_error: true,
                ..
            } => {
                let first = crate::vocab::text::one_line(&content, 120);
                let line = format!("  ↳ {} failed: {}", inert(&name), inert(&first));
                p.styled(&paint(Role::Dim, &line))
            }
            AgentEvent::NestedToolResult { .. } => {}
            AgentEvent::Notice { .. } | AgentEvent::Retry { .. } | AgentEvent::Child { .. } => {
                if let Some(text) = notice_text(&event) {
                    p.styled(&paint(Role::Notice, &format!("! {}", inert(&text))));
                }
            }
            AgentEvent::Error { message } if message == "cancelled" => {
                p.styled(&paint(Role::Dim, "(cancelled)"))
            }
            AgentEvent::Error { message } => {
                p.styled(&paint(Role::Error, &format!("error: {}", inert(&message))))
            }
            // A command that answers nothing prints no line.
            AgentEvent::Command { output, .. } if output.is_empty() => {}
            AgentEvent::Command { output, .. } => self.command_output(&output),
            // A queued message shows as a line the user typed, when it reaches the model.
            AgentEvent::QueuedMessage { text, .. } => p.styled(&format!(
                "{}{}",
                paint(Role::Prompt, "> "),
                inert(&text).replace('\n', "\n  ")
            )),
            AgentEvent::Plan { entries } => plan_lines(&entries)
                .iter()
                .for_each(|line| p.styled(&paint(Role::Dim, line))),
            AgentEvent::AgentStart { .. }
            | AgentEvent::TurnStart { .. }
            | AgentEvent::TurnEnd { .. }
            | AgentEvent::Session { .. }
            // Settings hooks are quiet in the REPL; their failures are notices.
            | AgentEvent::HookRun(_) => {}
        }
    }

    /// Before `event` (not a thought) shows: the thought in progress ends, the spinner starts
    /// on a turn's start, and the reply so far is shown whole before anything that ends or
    /// follows it (the spinner stops then, but for a tool's line or result).
    fn settle(&self, event: &AgentEvent) {
        self.thought("", true);
        match event {
            AgentEvent::TurnStart { .. } => self.spinner.start("thinking"),
            AgentEvent::TextDelta { .. }
            | AgentEvent::Notice { .. }
            | AgentEvent::Child { .. }
            | AgentEvent::ToolUpdate { .. }
            | AgentEvent::NestedToolResult { .. }
            | AgentEvent::HookRun(_) => {}
            AgentEvent::ToolCall { .. } | AgentEvent::ToolResult { .. } => self.text("", true),
            _ => {
                self.text("", true);
                self.spinner.stop(&self.printer);
            }
        }
    }

    /// A command's output, which is not mypi's: colours dropped, other controls shown; on a
    /// terminal long lines wrap between words.
    fn command_output(&self, output: &str) {
        let output = inert_sgr(output, false);
        match reply_width() {
            Some(width) => {
                for line in output.lines() {
                    for row in crate::vocab::text::wrap_line(line, width.saturating_sub(1)) {
                        self.printer.styled(&row);
                    }
                }
            }
            None => self.printer.styled(&output),
        }
    }
}

/// A script's plan as a compact checklist: `plan` and a line per entry (`[x]` done, `[~]`
/// under way, `[ ]` to do; a priority other than medium after the text). The text is one
/// line, its control characters dropped: a script's words never reach the terminal as
/// escape sequences.
fn plan_lines(entries: &[crate::vocab::protocol::PlanEntry]) -> Vec<String> {
    use crate::vocab::protocol::{PlanPriority, PlanStatus};
    if entries.is_empty() {
        return vec!["plan cleared".to_string()];
    }
    let mut lines = vec!["plan".to_string()];
    for e in entries {
        let mark = match e.status {
            PlanStatus::Completed => "[x]",
            PlanStatus::InProgress => "[~]",
            PlanStatus::Pending => "[ ]",
        };
        let priority = match e.priority {
            PlanPriority::High => " (high)",
            PlanPriority::Medium => "",
            PlanPriority::Low => " (low)",
        };
        let text: String = e
            .content
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let text = crate::vocab::text::truncate_middle(text.trim(), 200);
        lines.push(format!("  {mark} {text}{priority}"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_is_a_checklist_without_the_scripts_escapes() {
        use crate::vocab::protocol::{PlanEntry, PlanPriority, PlanStatus};
        let entry = |content: &str, status, priority| PlanEntry {
            content: content.into(),
            status,
            priority,
        };
        let lines = plan_lines(&[
            entry("read", PlanStatus::Completed, PlanPriority::Medium),
            entry(
                "\x1b[31mred\x1b]0;t\x07\nnext",
                PlanStatus::InProgress,
                PlanPriority::High,
            ),
            entry("ship", PlanStatus::Pending, PlanPriority::Low),
        ]);
        assert_eq!(
            lines,
            [
                "plan",
                "  [x] read",
                "  [~] [31mred ]0;t  next (high)",
                "  [ ] ship (low)"
            ]
        );
        assert_eq!(plan_lines(&[]), ["plan cleared"]);
    }
}
