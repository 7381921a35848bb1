//! Models and providers from scripts (issue 13, point 7), through the binary in Lua and
//! Rhai: `api.provider{...}` registers a provider that `--provider` starts with (waiting for
//! the extensions), `/model` lists and switches to, and `api.set_model` switches to after the
//! call, with `model_select`; a `--provider` nobody registers is still exit 2.

use super::ext_util::{install, quit, WAIT};
use crate::common::{FakeOpenAi, Mypi, Reply, TestDir};

fn lua(url: &str) -> String {
    format!(
        r#"
api.provider{{ name = "local", api = "openai", base_url = "{url}", api_key_env = "LOCAL_KEY",
  models = {{ "m-small", {{ name = "m-big", context_window = 1000 }} }} }}
api.command("big", function() api.set_model("m-big", {{ provider = "local" }}) return "asked" end)
api.on("model_select", function(e) api.notify("now " .. e.provider .. "/" .. e.model .. " by " .. e.source) end)
api.command("bad", function() api.provider{{ name = "openai", api = "openai" }} end)
"#
    )
}

fn rhai(url: &str) -> String {
    format!(
        r#"
api.provider(#{{ name: "local", api: "openai", base_url: "{url}", api_key_env: "LOCAL_KEY",
  models: ["m-small", #{{ name: "m-big", context_window: 1000 }}] }});
api.command("big", |args, ctx| {{ api.set_model("m-big", #{{ provider: "local" }}); "asked" }});
api.on("model_select", |e, ctx| api.notify(`now ${{e.provider}}/${{e.model}} by ${{e.source}}`));
api.command("bad", |args, ctx| {{ api.provider(#{{ name: "openai", api: "openai" }}); }});
"#
    )
}

fn scenario(file: &str, source: fn(&str) -> String) {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![
        Reply::text("small says hi"),
        Reply::text("big says hi"),
    ]);
    install(&dir, file, &source(&fake.url()));
    // --provider names the extension's provider: its first model is the default.
    let out = Mypi::new(&dir)
        .env("LOCAL_KEY", "k1")
        .args(["--provider", "local", "-p", "hello"])
        .run();
    assert_eq!(
        out.ok().stdout.trim(),
        "small says hi",
        "{}",
        out.describe()
    );
    let reqs = fake.requests();
    assert_eq!(reqs[0].body["model"], "m-small");
    assert_eq!(reqs[0].header("authorization"), Some("Bearer k1"));
    // /model lists it; api.set_model switches after the command, with model_select.
    let mut m = Mypi::new(&dir)
        .env("LOCAL_KEY", "k1")
        .args(["--provider", "local", "--no-watch"])
        .spawn();
    m.wait_for_line("Model: m-small (local, from an extension)", WAIT);
    m.send_line("/model");
    m.wait_for_line("local/m-big", WAIT);
    m.send_line("/big");
    m.wait_for_line("asked", WAIT);
    m.wait_for_line("now local/m-big by extension", WAIT);
    m.send_line("hello again");
    m.wait_for_line("big says hi", WAIT);
    assert_eq!(fake.requests()[1].body["model"], "m-big");
    m.send_line("/bad");
    m.wait_for_line(
        "api.provider: 'openai' is a built-in provider; choose another name",
        WAIT,
    );
    quit(m);
}

#[test]
fn lua_providers_and_set_model() {
    scenario("models.lua", lua);
}

#[test]
fn rhai_providers_and_set_model() {
    scenario("models.rhai", rhai);
}

#[test]
fn a_provider_no_extension_registers_is_still_an_error() {
    let dir = TestDir::new();
    let out = Mypi::new(&dir)
        .args(["--provider", "nosuch", "-p", "hi"])
        .run();
    assert_eq!(out.code, 2, "{}", out.describe());
    assert!(out.stderr.contains("nosuch"), "{}", out.describe());
    let out = Mypi::new(&dir)
        .args(["--no-extensions", "--provider", "nosuch", "-p", "hi"])
        .run();
    assert_eq!(out.code, 2, "{}", out.describe());
}

#[test]
fn a_provider_that_names_its_key_variable_needs_the_key() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![]);
    install(&dir, "models.lua", &lua(&fake.url()));
    let out = Mypi::new(&dir)
        .env_remove("LOCAL_KEY")
        .args(["--provider", "local", "-p", "hello"])
        .run();
    assert_eq!(out.code, 2, "{}", out.describe());
    assert!(
        out.stderr
            .contains("provider \"local\" needs an API key: set LOCAL_KEY"),
        "{}",
        out.describe()
    );
    let out = Mypi::new(&dir)
        .env_remove("LOCAL_KEY")
        .args(["--provider", "faux", "-p", "/model local/m-big"])
        .run();
    assert_eq!(out.code, 2, "{}", out.describe());
    assert!(out.stderr.contains("set LOCAL_KEY"), "{}", out.describe());
    assert!(fake.requests().is_empty());
}

/// pi's `preset` example: `api.set_model` in `session_start` picks the model of the very
/// first prompt of a print run.
#[test]
fn set_model_at_session_start_applies_to_the_first_prompt_of_a_print_run() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![Reply::text("from the preset")]);
    install(
        &dir,
        "preset.lua",
        r#"api.on("session_start", function() api.set_model("preset-model") end)"#,
    );
    let out = Mypi::new(&dir)
        .openai(&fake)
        .args(["--no-session", "-p", "hello"])
        .run();
    out.ok();
    assert_eq!(out.stdout.trim(), "from the preset");
    assert_eq!(fake.requests()[0].body["model"], "preset-model");
    assert!(
        out.stderr.contains("Model set to preset-model (openai)."),
        "{}",
        out.describe()
    );
}
