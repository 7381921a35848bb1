//! Host control and the events a handler can cancel (issue 13, points 4, 6 and 8), the same
//! scenario in Lua and in Rhai through the binary: `ctx.is_idle`, `ctx.system_prompt`,
//! `ctx.context_usage`, `api.tools` / `api.set_active_tools` / `api.commands`,
//! `session_before_new` cancelling `/new` and `ctx.new_session()`, `before_quit` keeping
//! mypi open once, `ctx.shutdown()` leaving it, and `model_select` after `/model`.

use super::ext_util::{install, quit, repl, WAIT};
use crate::common::{FakeOpenAi, Mypi, TestDir};

const LUA: &str = r#"
api.command("probe", function(_, ctx)
  local u = ctx.context_usage()
  return "idle=" .. tostring(ctx.is_idle()) .. " window=" .. u.window
    .. " counted=" .. tostring(u.tokens > 0)
end)
api.on("before_agent_start", function(e, ctx)
  api.state.idle_in_run = ctx.is_idle()
  return { updated_system_prompt = e.system_prompt .. "\nEXTRA-RULE" }
end)
api.command("sys", function(_, ctx)
  return "in_run_idle=" .. tostring(api.state.idle_in_run)
    .. " rewritten=" .. tostring(ctx.system_prompt():find("EXTRA%-RULE") ~= nil)
end)
api.command("toolinfo", function()
  local out = {}
  for _, t in ipairs(api.tools()) do
    out[#out + 1] = t.name .. ":" .. t.owner .. ":" .. tostring(t.active)
  end
  return table.concat(out, ",")
end)
api.command("only", function(args)
  if args == "" then api.set_active_tools(nil) else api.set_active_tools({ args }) end
  return "active set"
end)
api.command("cmds", function()
  local out = {}
  for _, c in ipairs(api.commands()) do
    if c.name == "help" or c.name == "probe" then out[#out + 1] = c.name .. ":" .. c.owner end
  end
  return table.concat(out, ",")
end)
api.on("session_before_new", function(e)
  if api.state.keep then return { cancel = true, reason = "keep it" } end
end)
api.command("keep", function() api.state.keep = not api.state.keep return "keep=" .. tostring(api.state.keep) end)
api.command("fresh", function(_, ctx) ctx.new_session() return "asked for a new session" end)
api.command("id", function(_, ctx) return "id=" .. ctx.session_id end)
api.on("before_quit", function(e)
  if not api.state.left_once then
    api.state.left_once = true
    return { cancel = true, reason = "not yet (" .. e.source .. ")" }
  end
end)
api.command("bye", function(_, ctx) ctx.shutdown() return "leaving" end)
api.on("model_select", function(e)
  api.notify("model " .. e.previous_model .. " -> " .. e.model .. " by " .. e.source)
end)
"#;

const RHAI: &str = r#"
api.command("probe", |args, ctx| {
  let u = ctx.context_usage();
  `idle=${ctx.is_idle()} window=${u.window} counted=${u.tokens > 0}`
});
api.on("before_agent_start", |e, ctx| {
  api.state.idle_in_run = ctx.is_idle();
  #{ updated_system_prompt: e.system_prompt + "\nEXTRA-RULE" }
});
api.command("sys", |args, ctx| {
  `in_run_idle=${api.state.idle_in_run} rewritten=${ctx.system_prompt().contains("EXTRA-RULE")}`
});
api.command("toolinfo", |args, ctx| {
  let out = "";
  for t in api.tools() {
    if out != "" { out += ","; }
    out += `${t.name}:${t.owner}:${t.active}`;
  }
  out
});
api.command("only", |args, ctx| {
  if args == "" { api.set_active_tools(()); } else { api.set_active_tools([args]); }
  "active set"
});
api.command("cmds", |args, ctx| {
  let out = "";
  for c in api.commands() {
    if c.name == "help" || c.name == "probe" {
      if out != "" { out += ","; }
      out += `${c.name}:${c.owner}`;
    }
  }
  out
});
api.on("session_before_new", |e, ctx| {
  if "keep" in api.state && api.state.keep { return #{ cancel: true, reason: "keep it" }; }
});
api.command("keep", |args, ctx| {
  api.state.keep = !("keep" in api.state && api.state.keep);
  `keep=${api.state.keep}`
});
api.command("fresh", |args, ctx| { ctx.new_session(); "asked for a new session" });
api.command("id", |args, ctx| `id=${ctx.session_id}`);
api.on("before_quit", |e, ctx| {
  if !("left_once" in api.state) {
    api.state.left_once = true;
    return #{ cancel: true, reason: `not yet (${e.source})` };
  }
});
api.command("bye", |args, ctx| { ctx.shutdown(); "leaving" });
api.on("model_select", |e, ctx| {
  api.notify(`model ${e.previous_model} -> ${e.model} by ${e.source}`);
});
"#;

fn scenario(file: &str, source: &str) {
    let dir = TestDir::new();
    install(&dir, file, source);
    let mut m = repl(&dir);
    m.send_line("/probe");
    m.wait_for_line("idle=true window=128000 counted=true", WAIT);
    m.send_line("hello there");
    m.wait_for_line("hello there", WAIT);
    m.send_line("/sys");
    m.wait_for_line("in_run_idle=false rewritten=true", WAIT);
    m.send_line("/toolinfo");
    m.wait_for_line(
        "bash:core:true,code:core:true,edit:core:true,read:core:true,write:core:true",
        WAIT,
    );
    m.send_line("/only read");
    m.wait_for_line("active set", WAIT);
    m.send_line("/toolinfo");
    m.wait_for_line(
        "bash:core:false,code:core:false,edit:core:false,read:core:true,write:core:false",
        WAIT,
    );
    m.send_line("/tools");
    m.wait_for_line("read", WAIT);
    m.send_line("/only nope");
    m.wait_for_line(
        "api.set_active_tools: there is no tool 'nope'; the tools are: bash, code, edit, read, write",
        WAIT,
    );
    m.send_line("/only");
    m.wait_for_line("active set", WAIT);
    m.send_line("/toolinfo");
    m.wait_for_line("bash:core:true,code:core:true,edit:core:true", WAIT);
    m.send_line("/cmds");
    m.wait_for_line("help:core,probe:host", WAIT);
    // session_before_new cancels /new and ctx.new_session(); once let go, both work.
    m.send_line("/id");
    let first = m.wait_for_line("id=", WAIT);
    m.send_line("/keep");
    m.wait_for_line("keep=true", WAIT);
    m.send_line("/new");
    m.wait_for_line("no new session was started: keep it", WAIT);
    m.send_line("/fresh");
    m.wait_for_line("asked for a new session", WAIT);
    m.wait_for_line("no new session was started: keep it", WAIT);
    m.send_line("/id");
    assert_eq!(m.wait_for_line("id=", WAIT), first);
    m.send_line("/keep");
    m.wait_for_line("keep=false", WAIT);
    m.send_line("/fresh");
    m.wait_for_line("Started a new session.", WAIT);
    m.send_line("/id");
    let second = m.wait_for_line("id=", WAIT);
    assert_ne!(second, first);
    // before_quit keeps mypi open once; ctx.shutdown() then leaves.
    m.send_line("/quit");
    m.wait_for_line("mypi stays open: not yet (command)", WAIT);
    m.send_line("/bye");
    m.wait_for_line("leaving", WAIT);
    let out = m.wait();
    assert_eq!(out.code, 0, "{}", out.describe());
    super::wire::no_panic(&out.stderr);
}

#[test]
fn lua_host_control_and_cancellable_events() {
    scenario("host.lua", LUA);
}

#[test]
fn rhai_host_control_and_cancellable_events() {
    scenario("host.rhai", RHAI);
}

#[test]
fn model_select_follows_a_model_switch_in_both_languages() {
    for (file, source) in [("host.lua", LUA), ("host.rhai", RHAI)] {
        let dir = TestDir::new();
        install(&dir, file, source);
        let fake = FakeOpenAi::with_replies(vec![]);
        let out = Mypi::new(&dir)
            .openai(&fake)
            .args(["-p", "/model second-model"])
            .run();
        assert!(
            out.ok()
                .stderr
                .contains("[host] model test-model -> second-model by command"),
            "{file}: {}",
            out.describe()
        );
    }
}

#[test]
fn the_end_of_piped_input_cannot_be_cancelled() {
    let dir = TestDir::new();
    install(&dir, "host.lua", LUA);
    let mut m = repl(&dir);
    m.send_line("/probe");
    m.wait_for_line("idle=true", WAIT);
    let out = m.wait();
    assert_eq!(out.code, 0, "{}", out.describe());
    assert!(
        out.stdout
            .contains("an extension asked to stay open (not yet (eof)), but the input has ended"),
        "{}",
        out.describe()
    );
}

#[test]
fn a_session_started_by_new_names_its_model_in_its_header() {
    let dir = TestDir::new();
    let mut m = repl(&dir);
    m.send_line("hello");
    m.wait_for_line("hello", WAIT);
    m.send_line("/new");
    m.wait_for_line("Started a new session.", WAIT);
    m.send_line("again");
    m.wait_for_line("again", WAIT);
    let out = m.wait();
    assert_eq!(out.code, 0);
    let files = super::wire::session_files(&dir);
    assert_eq!(files.len(), 2, "{files:?}");
    for f in files {
        let first = std::fs::read_to_string(&f).unwrap();
        let header: serde_json::Value =
            serde_json::from_str(first.lines().next().unwrap()).unwrap();
        assert_eq!(header["provider"], "faux", "{}", f.display());
        assert!(header["model"].is_string(), "{}", f.display());
    }
}

#[test]
fn session_before_resume_can_keep_the_current_session_and_ctx_reload_reloads() {
    let dir = TestDir::new();
    install(
        &dir,
        "keep.lua",
        r#"
api.on("session_before_resume", function(e)
  if not api.state.allow then return { cancel = true, reason = "finish " .. e.session_id:sub(1, 0) .. "first" } end
end)
api.command("allow", function() api.state.allow = true return "allowed" end)
api.command("re", function(_, ctx) ctx.reload() return "reload asked" end)
api.on("session_start", function(e) if e.reason == "reload" then api.notify("reloaded me") end end)
"#,
    );
    // An earlier session to go back to.
    Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "first"])
        .run()
        .ok();
    let first = super::wire::session_files(&dir)[0].clone();
    let id = first.file_stem().unwrap().to_string_lossy().to_string();
    let mut m = repl(&dir);
    m.send_line(&format!("/resume {id}"));
    m.wait_for_line("the session was not resumed: finish first", WAIT);
    m.send_line("/re");
    m.wait_for_line("reload asked", WAIT);
    m.wait_for_line("[keep] reloaded me", WAIT);
    m.send_line("/allow");
    m.wait_for_line("allowed", WAIT);
    m.send_line(&format!("/resume {id}"));
    m.wait_for_line(&format!("Resumed session {id}."), WAIT);
    quit(m);
}

/// `api.version` is the version `mypi --version` prints, in Lua and in Rhai (issue 33).
#[test]
fn scripts_read_mypis_version() {
    let dir = TestDir::new();
    install(
        &dir,
        "version_lua.lua",
        r#"api.command("lua_version", function() return "lua " .. api.version end)"#,
    );
    install(
        &dir,
        "version_rhai.rhai",
        r#"api.command("rhai_version", |args, ctx| `rhai ${api.version}`);"#,
    );
    let version = Mypi::new(&dir).arg("--version").run();
    let version = version
        .ok()
        .stdout
        .split_whitespace()
        .last()
        .unwrap()
        .to_string();
    for (cmd, lang) in [("/lua_version", "lua"), ("/rhai_version", "rhai")] {
        let out = Mypi::new(&dir)
            .args(["--provider", "faux", "-p", cmd])
            .run();
        assert_eq!(out.ok().stdout.trim(), format!("{lang} {version}"));
    }
}
