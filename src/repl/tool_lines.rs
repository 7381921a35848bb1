//! How the REPL shows tool work: one line per call with a per-tool summary of its arguments
//! (`read src/main.rs`, `bash ls -la && git status`, `edit hello.py`, `mcp__srv__tool {…}`),
//! cut to the terminal width, and under it what the result means to a reader: the diff an
//! `edit` made, the last lines and exit code of `bash`, the lines `read` showed, an error in
//! full. Pure functions of the call and its result; colour comes from [`Style`].

use serde_json::Value;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::style::{Role, Style};

/// Lines of a diff or of `bash` output shown at most; the rest is counted.
pub const MAX_DIFF_LINES: usize = 40;
pub const BASH_TAIL_LINES: usize = 5;

/// `text` cut to `width` terminal columns, with `…` when it was longer.
pub fn fit(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

fn arg<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The call as one line: the tool's name and what it works on.
pub fn call_line(name: &str, args: &Value) -> String {
    let what = match name {
        "read" => {
            let mut s = arg(args, "path").to_string();
            let offset = args.get("offset").and_then(Value::as_u64);
            let limit = args.get("limit").and_then(Value::as_u64);
            match (offset, limit) {
                (None, None) => {}
                (o, Some(l)) => {
                    let from = o.unwrap_or(1);
                    s.push_str(&format!(" (lines {from}-{})", from + l.saturating_sub(1)));
                }
                (Some(o), None) => s.push_str(&format!(" (from line {o})")),
            }
            s
        }
        "write" | "edit" => arg(args, "path").to_string(),
        "bash" => arg(args, "command").replace('\n', " ⏎ "),
        _ => match args {
            Value::Object(m) if m.is_empty() => String::new(),
            other => other.to_string(),
        },
    };
    if what.is_empty() {
        name.to_string()
    } else {
        format!("{name} {what}")
    }
}

/// The lines shown under a call once its result is in (without the call line).
pub fn result_lines(
    name: &str,
    args: &Value,
    content: &str,
    is_error: bool,
    style: &Style,
) -> Vec<String> {
    if name == "bash" {
        return bash_lines(content, is_error, style);
    }
    if is_error {
        let line = error_line(content, super::style::term_width().saturating_sub(1));
        return vec![style.paint(Role::Error, &line)];
    }
    match name {
        "edit" => {
            let mut out = vec![style.paint(Role::Ok, &format!("  ✓ {}", first_line(content)))];
            out.extend(diff_lines(
                arg(args, "old_text"),
                arg(args, "new_text"),
                style,
            ));
            out
        }
        "write" => {
            // A new file's lines are all added; an overwritten one's old text is not known
            // here, so no diff is made up for it.
            let mut out = vec![style.paint(Role::Ok, &format!("  ✓ {}", first_line(content)))];
            if content.contains("created new file") {
                out.extend(diff_lines("", arg(args, "content"), style));
            }
            out
        }
        "read" => {
            // A partial read ends with read's own note: `[showing lines 2-2 of 3; ...]`.
            let last = content.lines().last().unwrap_or("");
            let range = last
                .strip_prefix("[showing ")
                .map(|rest| rest.split(';').next().unwrap_or(rest).trim_end_matches(']'));
            let text = match range {
                Some(r) => format!("  ✓ {r}"),
                None => {
                    let n = content.lines().count();
                    format!("  ✓ {n} line{}", if n == 1 { "" } else { "s" })
                }
            };
            vec![style.paint(Role::Ok, &text)]
        }
        _ => {
            let n = content.lines().count();
            let more = if n > 1 {
                format!(" (+{})", crate::vocab::text::plural(n as u64 - 1, "line"))
            } else {
                String::new()
            };
            vec![style.paint(
                Role::Ok,
                &format!("  ✓ {}{more}", fit(first_line(content), 200)),
            )]
        }
    }
}

/// What the user sees of a failed call: one line, `  ✗ ` and the error, cut on a word
/// boundary to `width` columns; when anything is left out (the tool list after an unknown
/// tool, a schema after bad arguments, more lines) it says how to see it whole.
pub fn error_line(content: &str, width: usize) -> String {
    const MORE: &str = " … (/last shows it whole)";
    let mut lines = content.lines().filter(|l| !l.trim().is_empty());
    let first = lines.next().unwrap_or("failed").trim_end();
    let whole = format!("  ✗ {first}");
    let rest = lines.next().is_some();
    if !rest && whole.width() <= width {
        return whole;
    }
    let room = width.saturating_sub(MORE.width()).max(20);
    let mut cut = String::new();
    let mut used = 0;
    for word in whole.split_inclusive(' ') {
        let w = word.width();
        if used + w > room {
            break;
        }
        cut.push_str(word);
        used += w;
    }
    if cut.trim().len() <= "  ✗".len() {
        cut = fit(&whole, room);
    }
    format!("{}{MORE}", cut.trim_end())
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// `bash`: the last lines of its output, then its exit status.
fn bash_lines(content: &str, is_error: bool, style: &Style) -> Vec<String> {
    let mut lines: Vec<&str> = content.lines().collect();
    // How it ended: an exit code, a kill, a cancel, or a handler's block (the whole result).
    let blocked = is_error && lines.len() == 1 && lines[0].starts_with("blocked: ");
    let status = match lines.last() {
        Some(l) if l.starts_with("exit code: ") || l.starts_with("killed") => {
            lines.pop().map(str::to_string)
        }
        Some(&"cancelled") if is_error => lines.pop().map(str::to_string),
        Some(_) if blocked => lines.pop().map(str::to_string),
        _ => None,
    };
    let mut out = Vec::new();
    let skipped = lines.len().saturating_sub(BASH_TAIL_LINES);
    if skipped > 0 {
        let above = crate::vocab::text::plural(skipped as u64, "line");
        out.push(style.paint(Role::Dim, &format!("  │ … {above} above")));
    }
    for l in &lines[skipped..] {
        out.push(style.paint(Role::Dim, &format!("  │ {l}")));
    }
    out.push(match (is_error, status) {
        (true, Some(s)) => style.paint(Role::Error, &format!("  ✗ {s}")),
        (true, None) => style.paint(Role::Error, "  ✗ failed"),
        (false, _) => style.paint(Role::Ok, "  ✓ exit 0"),
    });
    out
}

/// A unified diff of `old` to `new`, coloured, at most [`MAX_DIFF_LINES`] lines.
pub fn diff_lines(old: &str, new: &str, style: &Style) -> Vec<String> {
    let diff = similar::TextDiff::from_lines(old, new);
    let mut out = Vec::new();
    let mut total = 0;
    for group in diff.grouped_ops(2) {
        for op in group {
            for change in diff.iter_changes(&op) {
                total += 1;
                if out.len() >= MAX_DIFF_LINES {
                    continue;
                }
                let text = change.value().trim_end_matches('\n');
                let line = match change.tag() {
                    similar::ChangeTag::Delete => {
                        style.paint(Role::Removed, &format!("  - {text}"))
                    }
                    similar::ChangeTag::Insert => style.paint(Role::Added, &format!("  + {text}")),
                    similar::ChangeTag::Equal => style.paint(Role::Dim, &format!("    {text}")),
                };
                out.push(line);
            }
        }
    }
    if total > out.len() {
        out.push(style.paint(
            Role::Dim,
            &format!(
                "  … {}",
                crate::vocab::text::plural((total - out.len()) as u64, "more diff line")
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn calls_read_as_what_they_do() {
        assert_eq!(call_line("read", &json!({"path": "a.rs"})), "read a.rs");
        assert_eq!(
            call_line("read", &json!({"path": "a.rs", "offset": 10, "limit": 5})),
            "read a.rs (lines 10-14)"
        );
        assert_eq!(
            call_line("bash", &json!({"command": "ls -la && git status"})),
            "bash ls -la && git status"
        );
        assert_eq!(call_line("edit", &json!({"path": "h.py"})), "edit h.py");
        assert_eq!(
            call_line("mcp__s__t", &json!({"q": 1})),
            r#"mcp__s__t {"q":1}"#
        );
        assert_eq!(call_line("todo_list", &json!({})), "todo_list");
        assert_eq!(fit("héllo wörld", 6), "héllo…");
        assert_eq!(fit("日本語です", 5), "日本…");
    }

    #[test]
    fn results_show_what_matters() {
        let plain = Style::plain();
        let edit = result_lines(
            "edit",
            &json!({"path": "h", "old_text": "a\nb\nc\n", "new_text": "a\nB\nc\n"}),
            "edited h",
            false,
            &plain,
        );
        assert_eq!(edit, ["  ✓ edited h", "    a", "  - b", "  + B", "    c"]);
        let out: String = (1..=8).map(|i| format!("line {i}\n")).collect();
        let bash = result_lines(
            "bash",
            &json!({}),
            &format!("{out}exit code: 3"),
            true,
            &plain,
        );
        assert_eq!(
            bash,
            [
                "  │ … 3 lines above",
                "  │ line 4",
                "  │ line 5",
                "  │ line 6",
                "  │ line 7",
                "  │ line 8",
                "  ✗ exit code: 3"
            ]
        );
        // A block and a cancel say so, not "failed".
        let bash = |content: &str| result_lines("bash", &json!({}), content, true, &plain);
        assert_eq!(bash("blocked: no shell"), ["  ✗ blocked: no shell"]);
        assert_eq!(bash("half\ncancelled"), ["  │ half", "  ✗ cancelled"]);
        assert_eq!(bash("cancelled"), ["  ✗ cancelled"]);
        assert_eq!(bash("odd"), ["  │ odd", "  ✗ failed"]);
        let err = result_lines(
            "read",
            &json!({}),
            "no such file\nsecond line",
            true,
            &plain,
        );
        assert_eq!(err, ["  ✗ no such file … (/last shows it whole)"]);
        // A long error for the model is one line, cut on a word boundary.
        let tools = (0..40)
            .map(|i| format!("tool_{i}"))
            .collect::<Vec<_>>()
            .join(", ");
        let long = format!("unknown tool 'x'; the tools are: {tools}");
        let line = error_line(&long, 80);
        assert!(line.width() <= 80, "{line}");
        assert_eq!(
            line,
            "  ✗ unknown tool 'x'; the tools are: tool_0, tool_1, … (/last shows it whole)"
        );
        assert_eq!(error_line("short", 60), "  ✗ short");
        let big: String = (0..100).map(|i| format!("{i}\n")).collect();
        let write = result_lines(
            "write",
            &json!({"content": big}),
            "wrote 290 bytes to w (created new file)",
            false,
            &plain,
        );
        assert_eq!(write.len(), 1 + MAX_DIFF_LINES + 1);
        assert_eq!(write.last().unwrap(), "  … 60 more diff lines");
    }
}
