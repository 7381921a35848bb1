//! `ctx.ui.set_plan` in Lua and Rhai: the `plan` event of `--json` (its shape pinned), the
//! REPL's checklist (no escape sequence of the script's reaches the terminal), and the error
//! that names a wrong entry.

use serde_json::json;

use super::ext_util::{faux, install, quit, repl};
use super::json_events::events;
use crate::common::TestDir;

const LUA: &str = r#"
api.command("plan", function(args, ctx)
  ctx.ui.set_plan({
    {content = "read the code", status = "completed"},
    {content = "\27[31mwrite\27]0;x\7 the tests", status = "in_progress", priority = "high"},
  })
  return "planned"
end)
api.command("badplan", function(args, ctx)
  local ok, err = pcall(ctx.ui.set_plan, {{content = "a"}, {content = "b", status = "done"}})
  return tostring(err)
end)
"#;

const RHAI: &str = r#"
api.command("plan", |args, ctx| {
    ctx.ui.set_plan([
        #{ content: "read the code", status: "completed" },
        #{ content: "write the tests", status: "in_progress", priority: "high" },
    ]);
    "planned"
});
api.command("badplan", |args, ctx| {
    let said = "no error";
    try { ctx.ui.set_plan([#{ content: "a", priority: "urgent" }]); } catch (e) { said = `${e}`; }
    said
});
"#;

#[test]
fn set_plan_is_a_plan_event_in_json_mode_in_both_languages() {
    for (file, source) in [("plan.lua", LUA), ("plan.rhai", RHAI)] {
        let dir = TestDir::new();
        install(&dir, file, source);
        let out = faux(&dir, &[]).args(["-p", "/plan", "--json"]).run();
        out.ok();
        let plan = events(&out)
            .into_iter()
            .find(|e| e["type"] == "plan")
            .unwrap_or_else(|| panic!("no plan event: {}", out.describe()));
        let second = "\u{1b}[31mwrite\u{1b}]0;x\u{7} the tests";
        let second = if file.ends_with(".lua") {
            second
        } else {
            "write the tests"
        };
        assert_eq!(
            plan,
            json!({"type": "plan", "entries": [
                {"content": "read the code", "status": "completed", "priority": "medium"},
                {"content": second, "status": "in_progress", "priority": "high"}
            ]}),
            "{file}"
        );
        let out = faux(&dir, &[]).args(["-p", "/badplan"]).run();
        let expected = match file.ends_with(".lua") {
            true => "entry 2: 'status' must be \"pending\", \"in_progress\" or \"completed\", not \"done\"",
            false => "entry 1: 'priority' must be \"high\", \"medium\" or \"low\", not \"urgent\"",
        };
        assert!(out.stdout.contains(expected), "{file}: {}", out.describe());
        assert!(
            out.stdout.contains("set_plan"),
            "{file}: {}",
            out.describe()
        );
    }
}

#[test]
fn the_repl_shows_the_plan_as_a_checklist_without_the_scripts_escapes() {
    let dir = TestDir::new();
    install(&dir, "plan.lua", LUA);
    let mut m = repl(&dir);
    m.send_line("/plan");
    m.wait_for_line("planned", super::ext_util::WAIT);
    let out = quit(m);
    assert!(
        out.stdout.contains("  [x] read the code\n"),
        "{}",
        out.describe()
    );
    assert!(
        out.stdout
            .contains("  [~] [31mwrite ]0;x  the tests (high)\n"),
        "{}",
        out.describe()
    );
    assert!(!out.stdout.contains('\u{1b}'), "{}", out.describe());
}
