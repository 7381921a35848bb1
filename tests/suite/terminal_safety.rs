//! Text mypi did not write itself is inert on a terminal (issue 32, point 1): model text,
//! tool output, MCP names, descriptions, results and error messages, elicitation questions,
//! script notices, status texts, titles, dialogs and command output, file and session names.
//! Each source carries an OSC 52 clipboard write, an OSC 0 title, an OSC 8 hyperlink, a screen
//! clear, a cursor jump and the one-character CSI; the raw bytes the terminal got must hold
//! none of them, and show them visibly (`^[`). Print mode to a pipe keeps the bytes exactly.

use std::time::Duration;

use serde_json::{json, Value};

use super::ext_util::{faux, faux_script};
use crate::common::mcp::{config, stdio_entry};
use crate::common::pty::Pty;
use crate::common::{Mypi, TestDir};

const T: Duration = Duration::from_secs(20);

/// Every kind of hostile sequence, between markers: `tag` names the source.
fn hostile(tag: &str) -> String {
    format!(
        "<{tag}>clip\x1b]52;c;cHduZWQ=\x07title\x1b]0;owned\x07link\x1b]8;;http://evil\x1b\\here\
         \x1b]8;;\x1b\\clear\x1b[2Jjump\x1b[3;1Hcsi\u{9b}2Jred\x1b[31mbell\x07</{tag}>"
    )
}

/// What the hostile text looks like once inert (its colour sequence shown or dropped).
fn shown(tag: &str) -> String {
    format!(
        "<{tag}>clip^[]52;c;cHduZWQ=^Gtitle^[]0;owned^Glink^[]8;;http://evil^[\\here\
         ^[]8;;^[\\clear^[[2Jjump^[[3;1Hcsi\\x9b2Jred^[[31mbell^G</{tag}>"
    )
}

/// The sequences that must never reach the terminal from a hostile source.
const FORBIDDEN: [&str; 7] = [
    "\x1b]52",
    "\x1b]0;owned",
    "\x1b]8;",
    "\x1b[2J",
    "\x1b[3;1H",
    "\u{9b}",
    "\x1b[31mbell",
];

fn assert_inert(screen: &str) {
    for bad in FORBIDDEN {
        assert!(
            !screen.contains(bad),
            "{bad:?} reached the terminal:\n{screen:?}"
        );
    }
}

/// A REPL on a terminal, colour on (mypi's own colours must still be there).
fn repl(m: Mypi) -> (Pty, usize) {
    let pty = Pty::spawn_sized(m.env_remove("NO_COLOR").command(), 200);
    let at = pty.wait_for("/help for commands", 0, T);
    let at = pty.wait_for("> ", at, T);
    (pty, at)
}

fn quit(mut pty: Pty) -> String {
    pty.type_keys("/quit\r");
    assert_eq!(pty.wait(T), 0, "{:?}", pty.screen());
    pty.screen()
}

#[test]
fn model_text_and_tool_output_are_inert_in_the_repl() {
    let dir = TestDir::new();
    // A file whose name carries a title sequence, and a command whose output is hostile.
    let name = "f\x1b]0;owned\x07.txt";
    dir.write(name, "x\n");
    let printf = hostile("bash")
        .replace('\x1b', "\\033")
        .replace('\x07', "\\007");
    let printf = printf.replace('\u{9b}', "\\302\\233");
    let replies: Vec<Value> = vec![
        json!({"tool_calls": [
            {"name": "read", "arguments": {"path": name}},
            {"name": "bash", "arguments": {"command": format!("printf '{printf}\\n'; exit 3")}},
        ]}),
        json!({"text": format!("{} and **bold**", hostile("model"))}),
    ];
    let m = faux(&dir, &replies).args(["--no-session", "--no-watch", "--no-builtin-extensions"]);
    let (mut pty, at) = repl(m);
    pty.type_keys("go\r");
    pty.wait_for("</model>", at, T);
    let at = pty.wait_for("> ", at, T);
    // A file name offered for completion with a control character in it is not offered.
    pty.type_keys("@f\t");
    std::thread::sleep(Duration::from_millis(300));
    pty.type_keys("\x15");
    pty.wait_for("> ", at, T);
    let screen = quit(pty);
    assert_inert(&screen);
    assert!(screen.contains(&shown("model")), "{screen:?}");
    // Tool output: its colour dropped, everything else shown.
    let bash = shown("bash").replace("red^[[31mbell", "redbell");
    assert!(screen.contains(&bash), "{screen:?}");
    assert!(screen.contains("read f^[]0;owned^G.txt"), "{screen:?}");
    // mypi's own colours are still there (the bold of the markdown, the tool line's cyan).
    assert!(screen.contains("\x1b[1m"), "{screen:?}");
}

#[test]
fn print_mode_is_inert_on_a_terminal_and_exact_on_a_pipe() {
    let dir = TestDir::new();
    let replies = [json!({"text": hostile("model")})];
    let script = faux_script(&dir, &replies);
    let m = || {
        Mypi::new(&dir)
            .args(["--provider", "faux", "--faux-script"])
            .arg(&script)
            .args(["--no-session", "-p", "go"])
    };
    let mut pty = Pty::spawn(m().command());
    assert_eq!(pty.wait(T), 0, "{:?}", pty.screen());
    pty.wait_for("</model>", 0, T);
    let screen = pty.screen();
    assert_inert(&screen);
    assert!(screen.contains(&shown("model")), "{screen:?}");
    // To a pipe the answer is the model's bytes, exactly.
    let out = m().run();
    out.ok();
    assert_eq!(out.stdout.trim_end(), hostile("model"));
    // --json on a terminal stays valid JSON and inert.
    let mut pty = Pty::spawn(m().arg("--json").command());
    assert_eq!(pty.wait(T), 0, "{:?}", pty.screen());
    // The terminal may show the output a moment after the process ended.
    pty.wait_for("\n", pty.wait_for("\"type\":\"final\"", 0, T), T);
    let screen = pty.screen();
    assert_inert(&screen);
    let last = screen
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim_end()).ok())
        .find(|e| e["type"] == "final")
        .unwrap_or_else(|| panic!("no final event: {screen:?}"));
    assert_eq!(last["text"].as_str(), Some(hostile("model").as_str()));
}

#[test]
fn mcp_strings_are_inert() {
    let dir = TestDir::new();
    let tool = json!([{"name": "evil", "description": hostile("description"),
                       "inputSchema": {"type": "object"}}]);
    let mut entry = stdio_entry(&dir, "normal", 10);
    entry["env"] = json!({ "FAKE_TOOLS": tool.to_string() });
    let cfg = config(&dir, json!({ "f": entry }));
    let replies = vec![
        json!({"tool_calls": [{"name": "mcp__f__echo", "arguments": {"text": hostile("result")}}]}),
        json!({"tool_calls": [{"name": "mcp__f__fail", "arguments": {"message": hostile("error")}}]}),
        json!({"tool_calls": [{"name": "mcp__f__elicit", "arguments": {
            "message": hostile("question"),
            "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}}]}),
        json!({"text": "done"}),
    ];
    let m = faux(&dir, &replies)
        .args([
            "--no-session",
            "--no-watch",
            "--no-builtin-extensions",
            "--mcp-config",
        ])
        .arg(&cfg);
    let (mut pty, mut at) = repl(m);
    // The server was never seen: its tools come once it is connected.
    for _ in 0..100 {
        pty.type_keys("/mcp\r");
        at = pty.wait_for("> ", pty.wait_for("f:", at, T), T);
        if pty.screen()[..at].contains("f: connected") {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    pty.type_keys("/tools\r");
    let at = pty.wait_for("</description>", at, T);
    let at = pty.wait_for("> ", at, T);
    pty.type_keys("go\r");
    let at = pty.wait_for("answer it?", at, T);
    pty.type_keys("c\r");
    pty.wait_for("done", at, T);
    let screen = quit(pty);
    assert_inert(&screen);
    assert!(screen.contains(&shown("question")), "{screen:?}");
    // /tools is a command's output: colours dropped, the rest shown.
    let description = shown("description").replace("red^[[31mbell", "redbell");
    assert!(screen.contains(&description), "{screen:?}");
    // A result is tool output (its colour dropped); the error's text is shown.
    let result = shown("result").replace("red^[[31mbell", "redbell");
    assert!(screen.contains(&result[..60]), "{screen:?}");
    assert!(screen.contains("<error>clip^[]52;c;"), "{screen:?}");
}

#[test]
fn script_texts_are_inert() {
    let dir = TestDir::new();
    let h = hostile("x");
    let lua = format!(
        r#"local h = {h:?}
api.on("session_start", function(e, ctx)
  api.notify((h:gsub("x>", "notice>")))
  ctx.ui.set_status("k", (h:gsub("x>", "status>")))
  ctx.ui.set_title((h:gsub("x>", "title>")))
end)
api.tool{{name = "hostile_tool", description = "d", execute = function(args, ctx)
  return (h:gsub("x>", "tool>"))
end}}
api.command("hostile", function(args, ctx)
  ctx.ui.confirm((h:gsub("x>", "confirm>")), {{timeout_ms = 60000}})
  return (h:gsub("x>", "output>"))
end)
"#
    );
    // Lua's %q-like quoting: Rust's {:?} escapes are valid Lua escapes for these characters.
    dir.write(".agents/extensions/hostile.lua", &lua);
    let replies = [
        json!({"tool_calls": [{"name": "hostile_tool", "arguments": {}}]}),
        json!({"text": "done"}),
    ];
    let m = || faux(&dir, &replies).args(["--no-session", "--no-watch", "--no-builtin-extensions"]);
    let (mut pty, at) = repl(m());
    pty.type_keys("/hostile\r");
    let at = pty.wait_for("</confirm>", at, T);
    pty.type_keys("y\r");
    let at = pty.wait_for("</output>", at, T);
    pty.type_keys("go\r");
    pty.wait_for("done", at, T);
    let screen = quit(pty);
    // A script tool's result is tool output: its colour dropped, the rest shown.
    let tool = shown("tool").replace("red^[[31mbell", "redbell");
    assert!(screen.contains(&tool), "{screen:?}");
    assert_inert(&screen);
    for tag in ["notice", "status", "confirm"] {
        assert!(screen.contains(&shown(tag)), "{tag}: {screen:?}");
    }
    // Command output is not mypi's: its colour dropped, the rest shown.
    let output = shown("output").replace("red^[[31mbell", "redbell");
    assert!(screen.contains(&output), "{screen:?}");
    // mypi sets the title itself; its text is inert.
    assert!(screen.contains("\x1b]0;<title>clip^[]52;"), "{screen:?}");
    // In print mode the notice goes to stderr, a terminal here: inert too.
    let mut pty = Pty::spawn(m().args(["-p", "/hostile"]).command());
    pty.wait(T);
    // The terminal may show the output a moment after the process ended.
    pty.wait_for("</output>", 0, T);
    let screen = pty.screen();
    assert_inert(&screen);
    assert!(screen.contains(&shown("notice")), "{screen:?}");
}

#[test]
fn session_listings_are_inert() {
    let dir = TestDir::new();
    faux(&dir, &[]).args(["-p", &hostile("prompt")]).run().ok();
    let mut pty = Pty::spawn_sized(Mypi::new(&dir).arg("sessions").command(), 400);
    assert_eq!(pty.wait(T), 0, "{:?}", pty.screen());
    pty.wait_for("</prompt>", 0, T);
    let screen = pty.screen();
    assert_inert(&screen);
    assert!(screen.contains("<prompt>clip^[]52;"), "{screen:?}");
}
