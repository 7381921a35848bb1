//! How a whole turn looks on an 80-column terminal, without and with colour, kept as
//! snapshots (`tests/snapshots/`): a change in how mypi shows a turn (markdown, tool lines,
//! diffs, bash tails, errors, the summary line) fails here until the new
//! look is stored and reviewed as part of the change.

use std::time::Duration;

use serde_json::json;

use super::ext_util::faux;
use crate::common::pty::{styled_lines, Pty};
use crate::common::snapshot::assert_snapshot;
use crate::common::TestDir;

const T: Duration = Duration::from_secs(20);

fn replies() -> Vec<serde_json::Value> {
    vec![
        json!({"text": "I'll look first.", "tool_calls": [
            {"name": "read", "arguments": {"path": "notes.md"}},
        ]}),
        json!({"tool_calls": [{"name": "read", "arguments": {"path": "missing.txt"}}]}),
        json!({"tool_calls": [{"name": "edit", "arguments":
            {"path": "notes.md", "old_text": "- [ ] ship\n", "new_text": "- [x] ship\n- [ ] rest\n"}}]}),
        json!({"tool_calls": [{"name": "bash", "arguments": {"command": "seq 1 8; echo done >&2; exit 3"}}]}),
        json!({"text": "## Summary\n\nI **ticked** the box in `notes.md` and ran the check, which \
                        *failed* with exit code 3:\n\n1. read the notes\n2. edited them\n\n\
                        ```sh\nseq 1 8\n```\n> Next: look at why it fails."}),
    ]
}

/// The screen after one scripted turn, from the prompt to the summary line, as the terminal
/// shows it; the time taken (the only part that varies) replaced.
fn turn(colour: bool) -> String {
    let dir = TestDir::new();
    dir.write("notes.md", "# Notes\n- [ ] ship\n");
    let mut m =
        faux(&dir, &replies()).args(["--no-session", "--no-watch", "--no-builtin-extensions"]);
    if colour {
        m = m.env_remove("NO_COLOR");
    }
    let mut pty = Pty::spawn_sized(m.command(), 80);
    let at = pty.wait_for("> ", 0, T);
    pty.type_keys("tidy my notes\r");
    let at = pty.wait_for("· faux · ", at, T);
    pty.wait_for(" s", at, T);
    pty.type_keys("/quit\r");
    pty.wait(T);
    let lines = styled_lines(&pty.screen());
    let start = lines
        .iter()
        .position(|l| l.contains("tidy my notes"))
        .expect("the prompt");
    let mut out = String::new();
    let end = start
        + lines[start..]
            .iter()
            .position(|l| l.contains("· faux · "))
            .expect("summary");
    for line in &lines[start..=end] {
        let line = match line.rfind(" · ") {
            Some(i) if line.trim_end().ends_with(" s") || line.contains(" s\u{1b}") => {
                format!("{} · <time>", &line[..i])
            }
            _ => line.clone(),
        };
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[test]
fn a_turn_on_a_plain_terminal_looks_as_stored() {
    assert_snapshot("repl_turn_plain", &turn(false));
}

#[test]
fn a_turn_on_a_colour_terminal_looks_as_stored() {
    assert_snapshot("repl_turn_colour", &turn(true));
}
