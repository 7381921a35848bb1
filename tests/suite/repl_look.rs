//! How a turn looks in the REPL (issue 11, point 2, and colour from point 1): each call on one
//! line as what it does, its result under it (parallel results under the call they belong
//! to), `edit` as a diff, `bash` as its last lines and exit code; colour on a terminal, none
//! with `NO_COLOR` or on a pipe.

use std::time::Duration;

use serde_json::json;

use super::ext_util::{faux, WAIT};
use crate::common::TestDir;

fn replies() -> Vec<serde_json::Value> {
    vec![
        json!({"tool_calls": [
            {"name": "read", "arguments": {"path": "a.txt"}},
            {"name": "read", "arguments": {"path": "b.txt", "offset": 2, "limit": 1}},
        ]}),
        json!({"tool_calls": [{"name": "edit", "arguments":
            {"path": "a.txt", "old_text": "two\n", "new_text": "TWO\n"}}]}),
        json!({"tool_calls": [{"name": "bash", "arguments": {"command": "seq 1 7; exit 2"}}]}),
        json!({"text": "all done"}),
    ]
}

#[test]
fn a_turn_reads_as_what_it_did() {
    let dir = TestDir::new();
    dir.write("a.txt", "one\ntwo\nthree\n");
    dir.write("b.txt", "x\ny\nz\n");
    let mut m = faux(&dir, &replies())
        .args(["--no-session", "--no-watch", "--no-builtin-extensions"])
        .spawn();
    m.send_line("go");
    m.wait_for_line("all done", WAIT);
    m.send_line("/quit");
    let out = m.wait();
    out.ok();
    let lines: Vec<&str> = out
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("→ "))
        .take_while(|l| !l.starts_with("all done"))
        .collect();
    // Parallel results: each under its call, which is named again when another call's line
    // came between (they finish in either order).
    let a = ["  ↳ read a.txt", "  ✓ 3 lines"];
    let b = ["  ↳ read b.txt (lines 2-2)", "  ✓ lines 2-2 of 3"];
    let parallel = &lines[2..];
    let a_first = parallel.starts_with(&a) && parallel[2..].starts_with(&b);
    let b_first = parallel[0] == b[1] && parallel[1..].starts_with(&a);
    assert!(a_first || b_first, "{}", out.stdout);
    let rest = if a_first { &lines[6..] } else { &lines[5..] };
    assert_eq!(&lines[..2], ["→ read a.txt", "→ read b.txt (lines 2-2)"]);
    assert_eq!(
        rest,
        [
            "→ edit a.txt",
            "  ✓ edited a.txt: replaced 1 occurrence at line 2",
            "  - two",
            "  + TWO",
            "→ bash seq 1 7; exit 2",
            "  │ … 2 lines above",
            "  │ 3",
            "  │ 4",
            "  │ 5",
            "  │ 6",
            "  │ 7",
            "  ✗ exit code: 2",
        ],
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains('\u{1b}'), "no colour on a pipe");
}

/// The raw screen of a REPL on a terminal after one turn with a tool call.
fn on_a_terminal(colour: bool) -> String {
    let dir = TestDir::new();
    dir.write("a.txt", "one\n");
    let mut m = faux(
        &dir,
        &[
            json!({"tool_calls": [{"name": "read", "arguments": {"path": "a.txt"}}]}),
            json!({"text": "finished"}),
        ],
    )
    .args(["--no-session", "--no-watch"]);
    if colour {
        m = m.env_remove("NO_COLOR");
    }
    let mut pty = crate::common::pty::Pty::spawn(m.command());
    let at = pty.wait_for("/help for commands", 0, Duration::from_secs(20));
    pty.type_keys("go\r");
    let at = pty.wait_for("finished", at, Duration::from_secs(20));
    pty.wait_for(" s", at, Duration::from_secs(20));
    pty.type_keys("/quit\r");
    pty.wait(Duration::from_secs(20));
    pty.screen()
}

#[test]
fn tool_lines_are_coloured_on_a_terminal_and_not_with_no_color() {
    let screen = on_a_terminal(true);
    let call = screen.find("→ read a.txt").expect("the call line");
    assert!(
        screen[..call].ends_with('m') && screen[..call].contains("\u{1b}[36m"),
        "the call line is cyan: {screen:?}"
    );
    assert!(screen.contains("\u{1b}[32m  ✓ 1 line"), "{screen:?}");
    let plain = on_a_terminal(false);
    assert!(plain.contains("→ read a.txt"), "{plain:?}");
    assert!(
        !plain.contains("\u{1b}[36m") && !plain.contains("\u{1b}[32m"),
        "{plain:?}"
    );
}

#[test]
fn a_status_line_shows_while_the_model_thinks_and_a_tool_runs_on_a_terminal_only() {
    let dir = TestDir::new();
    let replies = [
        json!({"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 1.5"}}]}),
        json!({"text": "slept well", "delay_ms": 1}),
    ];
    let m = faux(&dir, &replies).args(["--no-session", "--no-watch"]);
    let mut pty = crate::common::pty::Pty::spawn(m.command());
    let at = pty.wait_for("/help for commands", 0, Duration::from_secs(20));
    let at = pty.wait_for("> ", at, Duration::from_secs(20));
    pty.type_keys("go\r");
    let at = pty.wait_for("→ bash sleep 1.5", at, Duration::from_secs(20));
    let at = pty.wait_for("running bash… ", at, Duration::from_secs(20));
    pty.wait_for(" s · Ctrl-C to cancel", at, Duration::from_secs(20));
    let done = pty.wait_for("slept well", at, Duration::from_secs(20));
    // The status line was erased before the result was printed over it.
    let result = pty.screen()[at..].find("✓ exit 0").expect("the result");
    assert!(
        pty.screen()[at..at + result].contains("\r\u{1b}[J"),
        "the status line is erased: {:?}",
        &pty.screen()[at..done]
    );
    pty.type_keys("/quit\r");
    pty.wait(Duration::from_secs(20));

    // On a pipe there is no status line.
    let mut m = faux(&dir, &replies)
        .args(["--no-session", "--no-watch"])
        .spawn();
    m.send_line("go");
    m.wait_for_line("slept well", WAIT);
    m.send_line("/quit");
    let out = m.wait();
    assert!(!out.stdout.contains("Ctrl-C to cancel"), "{}", out.stdout);
}

/// Issue 34, point 3: a blocked call ends `✗ blocked: REASON` and a cancelled one
/// `✗ cancelled`, not `✗ failed`.
#[test]
fn a_blocked_or_cancelled_call_says_so() {
    let dir = TestDir::new();
    dir.write(
        ".agents/extensions/guard.lua",
        r#"api.on("tool_call", function(e)
  if e.args.command == "rm -rf /" then return { block = true, reason = "not that" } end
end)"#,
    );
    let replies = [
        json!({"tool_calls": [{"name": "bash", "arguments": {"command": "rm -rf /"}}]}),
        json!({"text": "blocked then"}),
        json!({"tool_calls": [{"name": "bash", "arguments": {"command": "echo started; sleep 30"}}]}),
    ];
    let mut m = faux(&dir, &replies)
        .args(["--no-session", "--no-watch", "--no-builtin-extensions"])
        .spawn();
    m.send_line("go");
    m.wait_for_line("blocked then", WAIT);
    m.send_line("again");
    m.wait_for_line("→ bash echo started; sleep 30", WAIT);
    std::thread::sleep(Duration::from_millis(300));
    m.interrupt();
    m.wait_for_line("✗ cancelled", WAIT);
    m.send_line("/quit");
    let out = m.wait();
    out.ok();
    assert!(
        out.stdout.contains("  ✗ blocked: not that\n"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("✗ failed"), "{}", out.stdout);
}

/// Issue 34, point 3: an error meant for the model (the tool list after an unknown tool) is
/// one line for the user, cut between words; `/last` shows it whole, wrapped between words.
#[test]
fn an_error_for_the_model_is_one_line_and_last_shows_it_whole() {
    let dir = TestDir::new();
    let replies = [
        json!({"tool_calls": [{"name": "no_such_tool", "arguments": {}}]}),
        json!({"text": "finished"}),
    ];
    let m = faux(&dir, &replies).args(["--no-session", "--no-watch", "--no-builtin-extensions"]);
    let mut pty = crate::common::pty::Pty::spawn_sized(m.command(), 60);
    let t = Duration::from_secs(20);
    let at = pty.wait_for("/help for commands", 0, t);
    pty.type_keys("go\r");
    let at = pty.wait_for("finished", at, t);
    let at = pty.wait_for("> ", at, t);
    pty.type_keys("/last\r");
    let at = pty.wait_for("no_such_tool failed:", at, t);
    pty.wait_for("> ", at, t);
    pty.type_keys("/quit\r");
    pty.wait(t);
    let lines = crate::common::pty::visible_lines(&pty.screen());
    let error: Vec<&String> = lines.iter().filter(|l| l.contains("✗")).collect();
    assert_eq!(error.len(), 1, "{lines:#?}");
    assert!(
        error[0].starts_with("  ✗ unknown tool 'no_such_tool';")
            && error[0].ends_with("… (/last shows it whole)"),
        "{lines:#?}"
    );
    // /last: the whole message, every row within the width and no word broken.
    let from = lines
        .iter()
        .position(|l| l == "no_such_tool failed:")
        .unwrap();
    let shown: Vec<&String> = lines[from + 1..]
        .iter()
        .take_while(|l| !l.starts_with("> "))
        .collect();
    let joined = shown
        .iter()
        .map(|l| l.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    for tool in ["read", "write", "edit", "bash"] {
        assert!(joined.contains(tool), "{tool} missing: {shown:#?}");
    }
    assert!(shown.len() > 1, "{shown:#?}");
    for row in &shown {
        assert!(
            unicode_width::UnicodeWidthStr::width(row.as_str()) < 60,
            "{row}"
        );
        assert!(!row.ends_with('-'), "{row}");
    }
    assert!(joined.contains("the tools are: "), "{joined}");
}

/// The model's reasoning shows before its answer, folded to one marked line (its first, and
/// how many more: `/thinking show` prints them); escape sequences in it are shown inert.
#[test]
fn the_models_thinking_shows_marked_before_the_answer() {
    let dir = TestDir::new();
    let replies = [serde_json::json!({
        "thinking": "Which file?\nThe \u{1b}[31mred\u{1b}[0m one.",
        "text": "It is a.txt."
    })];
    let mut m = faux(&dir, &replies)
        .args(["--no-session", "--no-watch"])
        .spawn();
    m.send_line("go");
    m.wait_for_line("It is a.txt.", WAIT);
    m.send_line("/quit");
    let out = m.wait();
    out.ok();
    let folded = "┆ Which file? … (+1 line of reasoning: /thinking show)";
    let first = out
        .stdout
        .find(folded)
        .unwrap_or_else(|| panic!("{}", out.describe()));
    let answer = out.stdout.find("It is a.txt.").unwrap();
    assert!(first < answer, "{}", out.describe());
    assert!(!out.stdout.contains("┆ The "), "{}", out.describe());
    assert!(!out.stdout.contains('\u{1b}'), "{}", out.describe());
}
