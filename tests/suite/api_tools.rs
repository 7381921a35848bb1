//! `api.builtin_tool` (issue 13, point 8), through the binary in Lua and Rhai: an override of
//! `bash` that refuses one command and hands the rest to the built-in, whose result the model
//! gets; an unknown name and bad arguments are clear errors.

use serde_json::json;

use super::ext_util::{faux, install};
use crate::common::mcp::tool_results;
use crate::common::TestDir;

const LUA: &str = r#"
local bash = api.builtin_tool("bash")
api.tool{ name = "bash", description = bash.description, parameters = bash.parameters,
  execute = function(args, ctx)
    if args.command:find("rm -rf", 1, true) then return { content = "refused: rm -rf", is_error = true } end
    local out = api.builtin_tool("bash").execute(args, ctx)
    out.content = "[wrapped] " .. out.content
    return out
  end }
api.command("nope", function() return api.builtin_tool("nope") end)
api.command("badargs", function() return api.builtin_tool("read"):execute({ lines = 3 }).content end)
"#;

const RHAI: &str = r#"
let bash = api.builtin_tool("bash");
api.tool(#{ name: "bash", description: bash.description, parameters: bash.parameters,
  execute: |args, ctx| {
    if args.command.contains("rm -rf") { return #{ content: "refused: rm -rf", is_error: true }; }
    let out = api.builtin_tool("bash").execute(args, ctx);
    out.content = "[wrapped] " + out.content;
    out
  } });
api.command("nope", |args, ctx| api.builtin_tool("nope"));
api.command("badargs", |args, ctx| api.builtin_tool("read").execute(#{ lines: 3 }).content);
"#;

fn scenario(file: &str, source: &str) {
    let dir = TestDir::new();
    install(&dir, file, source);
    let replies = [
        json!({"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi > out.txt && echo done"}}]}),
        json!({"tool_calls": [{"name": "bash", "arguments": {"command": "rm -rf out.txt"}}]}),
        json!({"text": "finished"}),
    ];
    let out = faux(&dir, &replies).args(["--json", "-p", "go"]).run();
    out.ok();
    let results = tool_results(&out.stdout);
    assert_eq!(results.len(), 2, "{}", out.describe());
    assert!(results[0].0.starts_with("[wrapped] done"), "{results:?}");
    assert!(!results[0].1);
    assert_eq!(results[1], ("refused: rm -rf".to_string(), true));
    assert_eq!(dir.read("out.txt").trim(), "hi");
    let out = faux(&dir, &[]).args(["-p", "/nope"]).run();
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains(
            "api.builtin_tool: there is no built-in tool 'nope'; they are: read, write, edit, bash"
        ),
        "{}",
        out.describe()
    );
    let out = faux(&dir, &[]).args(["-p", "/badargs"]).run();
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("api.builtin_tool(name).execute: invalid arguments for read: "),
        "{}",
        out.describe()
    );
}

#[test]
fn lua_wraps_the_builtin_bash() {
    scenario("wrap.lua", LUA);
}

#[test]
fn rhai_wraps_the_builtin_bash() {
    scenario("wrap.rhai", RHAI);
}

#[test]
fn ctx_update_reports_progress_like_ctx_progress() {
    let dir = TestDir::new();
    install(
        &dir,
        "slow.lua",
        r#"api.tool{ name = "slow", description = "d", execute = function(args, ctx)
  ctx.update("half way")
  return "done"
end }"#,
    );
    let replies = [
        json!({"tool_calls": [{"name": "slow", "arguments": {}}]}),
        json!({"text": "ok"}),
    ];
    let out = faux(&dir, &replies).args(["--json", "-p", "go"]).run();
    out.ok();
    let update = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|e| e["type"] == "tool_update")
        .unwrap_or_else(|| panic!("no tool_update: {}", out.stdout));
    assert_eq!(update["kind"], "progress");
    assert_eq!(update["text"], "half way");
    assert_eq!(update["name"], "slow");
}
