//! Progress of a running tool (issue 11, points 3 and 9): `bash` streams its output, script
//! tools report with `ctx.progress`, both as `tool_update` events in `--json` (always before
//! the call's result), and on a terminal a tool that runs longer than two seconds shows its
//! output's last lines above the status line, erased when the result comes.

use std::time::Duration;

use serde_json::{json, Value};

use super::ext_util::{faux, install};
use super::json_events::events;
use crate::common::pty::{visible_lines, Pty};
use crate::common::TestDir;

/// The `tool_update` events of a JSON run, and the index of the first `tool_result`.
fn updates(ev: &[Value]) -> (Vec<&Value>, usize) {
    let result = ev
        .iter()
        .position(|e| e["type"] == "tool_result")
        .expect("a tool result");
    let ups: Vec<&Value> = ev.iter().filter(|e| e["type"] == "tool_update").collect();
    for u in &ups {
        let at = ev.iter().position(|e| std::ptr::eq(e, *u)).unwrap();
        assert!(at < result, "a tool_update after the result: {ev:#?}");
    }
    (ups, result)
}

#[test]
fn bash_output_streams_as_tool_update_events_before_the_result() {
    let dir = TestDir::new();
    let cmd = "for i in 1 2 3 4; do echo line$i; sleep 0.3; done";
    let replies = [
        json!({"tool_calls": [{"name": "bash", "arguments": {"command": cmd}}]}),
        json!({"text": "ok"}),
    ];
    let out = faux(&dir, &replies)
        .args(["--no-session", "-p", "go", "--json"])
        .run();
    out.ok();
    let ev = events(&out);
    let (ups, result) = updates(&ev);
    assert!(ups.len() >= 2, "streamed, not all at the end: {ups:#?}");
    for u in &ups {
        assert_eq!(u["kind"], "output");
        assert_eq!(u["name"], "bash");
        assert_eq!(u["id"], ev[result]["id"]);
    }
    let text: String = ups.iter().map(|u| u["text"].as_str().unwrap()).collect();
    assert_eq!(text, "line1\nline2\nline3\nline4\n");
}

const LUA_TOOL: &str = r#"
api.on("input", function(e, ctx) ctx.progress("ignored outside a tool") end)
api.tool{
  name = "slow_lua", description = "takes a while",
  execute = function(args, ctx)
    ctx.progress("step 1 of 2")
    api.exec("sleep", {"0.2"})
    ctx.progress({done = 2, of = 2})
    return "lua done"
  end,
}
"#;

const RHAI_TOOL: &str = r#"
api.tool(#{
  name: "slow_rhai", description: "takes a while",
  execute: |args, ctx| {
    ctx.progress("rhai step");
    "rhai done"
  },
});
"#;

#[test]
fn script_tools_report_progress_in_both_languages() {
    let dir = TestDir::new();
    install(&dir, "slow.lua", LUA_TOOL);
    install(&dir, "slow.rhai", RHAI_TOOL);
    let replies = [
        json!({"tool_calls": [{"name": "slow_lua", "arguments": {}}]}),
        json!({"tool_calls": [{"name": "slow_rhai", "arguments": {}}]}),
        json!({"text": "ok"}),
    ];
    let out = faux(&dir, &replies)
        .args(["--no-session", "--no-watch", "-p", "go", "--json"])
        .run();
    out.ok();
    let ev = events(&out);
    let ups: Vec<(String, String)> = ev
        .iter()
        .filter(|e| e["type"] == "tool_update")
        .map(|e| {
            assert_eq!(e["kind"], "progress");
            (
                e["name"].as_str().unwrap().into(),
                e["text"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        ups,
        [
            ("slow_lua".into(), "step 1 of 2".into()),
            ("slow_lua".into(), r#"{"done":2,"of":2}"#.into()),
            ("slow_rhai".into(), "rhai step".into()),
        ],
        "{}",
        out.describe()
    );
    // Each before its own call's result.
    let pos = |pred: &dyn Fn(&Value) -> bool| ev.iter().position(pred).unwrap();
    let lua_result = pos(&|e| e["type"] == "tool_result" && e["name"] == "slow_lua");
    let rhai_update = pos(&|e| e["type"] == "tool_update" && e["name"] == "slow_rhai");
    let rhai_result = pos(&|e| e["type"] == "tool_result" && e["name"] == "slow_rhai");
    assert!(lua_result < rhai_update && rhai_update < rhai_result);
}

#[test]
fn a_long_command_shows_its_last_lines_above_the_status_line_on_a_terminal() {
    let dir = TestDir::new();
    let cmd = "for i in 1 2 3 4 5 6 7; do echo tick$i; sleep 0.5; done";
    let replies = [
        json!({"tool_calls": [{"name": "bash", "arguments": {"command": cmd}}]}),
        json!({"text": "all ticked"}),
    ];
    let m = faux(&dir, &replies).args(["--no-session", "--no-watch"]);
    let mut pty = Pty::spawn_sized(m.command(), 80);
    let t = Duration::from_secs(20);
    let at = pty.wait_for("> ", 0, t);
    pty.type_keys("go\r");
    let at = pty.wait_for("→ bash", at, t);
    // Shown while it runs (the result, with its own tail, comes only at the end).
    let live = pty.wait_for("  │ tick5", at, t);
    assert!(
        !pty.screen()[at..live].contains("exit 0"),
        "{}",
        pty.screen()
    );
    let at = pty.wait_for("all ticked", live, t);
    pty.wait_for(" s\r\n", at, t);
    pty.type_keys("/quit\r");
    pty.wait(t);
    // What stays on the screen: the result's tail under the call, no leftover status rows.
    let lines = visible_lines(&pty.screen());
    let call = lines.iter().position(|l| l.starts_with("→ bash")).unwrap();
    let rest: Vec<&str> = lines[call + 1..].iter().map(String::as_str).collect();
    assert_eq!(
        &rest[..7],
        [
            "  │ … 2 lines above",
            "  │ tick3",
            "  │ tick4",
            "  │ tick5",
            "  │ tick6",
            "  │ tick7",
            "  ✓ exit 0"
        ],
        "{lines:#?}"
    );
    assert_eq!(rest[7], "all ticked", "{lines:#?}");
}
