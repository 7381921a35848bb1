//! Configuration files (issue 12, point 1): `~/.agents/config.toml` < `.agents/config.toml`
//! (trusted projects only) < environment < command line, shown by `mypi config` with where
//! each value came from; named providers that a run really talks to; a bad key or type is
//! one error with file, line and key (exit 2).

use crate::common::{FakeOpenAi, Mypi, Reply, TestDir};

fn user_config(dir: &TestDir, text: &str) {
    dir.write("home/.agents/config.toml", text);
}

/// `mypi config`'s line for `key`.
fn line<'a>(out: &'a str, key: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(&format!("{key} = ")))
        .unwrap_or_else(|| panic!("no {key} in:\n{out}"))
}

#[test]
fn each_layer_overrides_the_one_below_and_config_says_where_from() {
    let dir = TestDir::new();
    user_config(&dir, "model = \"user-model\"\nmax_turns = 7\n[queue]\nmax = 40\n[extensions]\nbudget_ms = 1500\n");
    dir.write(
        ".agents/config.toml",
        "model = \"project-model\"\nmax_turns = 8\n",
    );
    let out = Mypi::new(&dir)
        .env("MYPI_MAX_TURNS", "9")
        .env("MYPI_EXT_BUDGET_MS", "2500")
        .args(["--trust", "--model", "flag-model", "config"])
        .run();
    out.ok();
    let s = &out.stdout;
    let home = dir.home().join(".agents/config.toml").display().to_string();
    assert!(
        line(s, "model").contains("\"flag-model\"") && line(s, "model").ends_with("# --model"),
        "{s}"
    );
    assert!(
        line(s, "max_turns").contains("= 9")
            && line(s, "max_turns").ends_with("# environment MYPI_MAX_TURNS"),
        "{s}"
    );
    assert!(
        line(s, "queue.max").contains("= 40")
            && line(s, "queue.max").ends_with(&format!("# {home}:4")),
        "{s}"
    );
    assert!(
        line(s, "extensions.budget_ms").ends_with("# environment MYPI_EXT_BUDGET_MS"),
        "{s}"
    );
    assert!(line(s, "read_timeout_s").ends_with("# default"), "{s}");
    // Without the flag and the environment, the project's file wins over the user's.
    let out = Mypi::new(&dir).args(["--trust", "config"]).run();
    let project = dir.path().join(".agents/config.toml").display().to_string();
    assert!(
        line(&out.stdout, "model").ends_with(&format!("# {project}:1")),
        "{}",
        out.stdout
    );
    assert!(
        line(&out.stdout, "max_turns").contains("= 8"),
        "{}",
        out.stdout
    );
}

#[test]
fn an_untrusted_projects_file_is_not_read_and_that_is_said() {
    let dir = TestDir::new();
    dir.untrust();
    dir.write(".agents/config.toml", "model = \"project-model\"\n");
    // One print run; its output and the model it asked for.
    let run = |flags: &[&str]| {
        let fake = FakeOpenAi::with_replies(vec![Reply::text("hi")]);
        let out = Mypi::new(&dir)
            .env("OPENAI_API_KEY", "k")
            .env("OPENAI_BASE_URL", fake.url())
            .args(flags.iter().copied().chain(["--no-session", "-p", "hello"]))
            .run();
        out.ok();
        let model = fake.requests()[0].body["model"].clone();
        (out, model)
    };
    let (out, model) = run(&[]);
    assert!(
        out.stderr
            .contains(".agents/config.toml is not read: this folder is not trusted"),
        "{}",
        out.describe()
    );
    assert_ne!(model, "project-model");
    // Trusted: read.
    assert_eq!(run(&["--trust"]).1, "project-model");
    // Trusted by the list in the user's own file (read once, with the rest of that file).
    Mypi::new(&dir).args(["trust"]).run().ok();
    let (out, model) = run(&[]);
    assert!(!out.stderr.contains("not trusted"), "{}", out.describe());
    assert_eq!(model, "project-model");
}

#[test]
fn a_named_provider_is_what_a_run_talks_to() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![Reply::text("from local")]);
    user_config(
        &dir,
        &format!(
            "provider = \"local\"\n[providers.local]\napi = \"openai\"\nbase_url = \"{}\"\n\
             api_key_env = \"LOCAL_KEY\"\nmodels = [\"qwen-small\", {{ name = \"qwen-big\", context_window = 32768 }}]\n",
            fake.url()
        ),
    );
    let out = Mypi::new(&dir)
        .env("LOCAL_KEY", "sk-local")
        .args(["--no-session", "-p", "hello"])
        .run();
    out.ok();
    assert_eq!(out.stdout.trim(), "from local");
    let req = &fake.requests()[0];
    assert_eq!(
        req.body["model"], "qwen-small",
        "the provider's first model by default"
    );
    assert_eq!(req.header("authorization"), Some("Bearer sk-local"));
    // --provider picks it too, and a provider that is nowhere is one clear error.
    let out = Mypi::new(&dir)
        .args(["--provider", "nowhere", "-p", "x"])
        .run();
    out.expect_code(2);
    assert!(out.stderr.contains("unknown provider \"nowhere\": the providers are openai, anthropic, faux, and the configured local"), "{}", out.describe());
}

#[test]
fn a_bad_key_or_type_is_one_error_with_file_line_and_key() {
    let dir = TestDir::new();
    let file = dir.home().join(".agents/config.toml").display().to_string();
    for (text, want) in [
        (
            "model = \"m\"\n[extensions]\nbudgt_ms = 5\n",
            format!(
                "{file}:3: unknown key `extensions.budgt_ms`; did you mean `extensions.budget_ms`?"
            ),
        ),
        (
            "max_turns = \"many\"\n",
            format!("{file}:1: `max_turns` must be a whole number above 0, not \"many\""),
        ),
        (
            "[mcp]\nenabled = 1\n",
            format!("{file}:2: `mcp.enabled` must be true or false, not 1"),
        ),
    ] {
        user_config(&dir, text);
        let out = Mypi::new(&dir).args(["-p", "hi"]).run();
        out.expect_code(2);
        assert_eq!(out.stderr.trim(), format!("mypi: {want}"), "{text}");
        let out = Mypi::new(&dir).arg("config").run();
        out.expect_code(2);
    }
}

#[test]
fn settings_in_the_file_turn_features_off() {
    let dir = TestDir::new();
    dir.write(
        ".agents/extensions/x.lua",
        "api.command('hello', function() return 'hi' end)\n",
    );
    user_config(&dir, "[extensions]\nenabled = false\n");
    let out = Mypi::new(&dir).args(["--trust", "-p", "/extensions"]).run();
    out.ok();
    assert!(!out.stdout.contains("x (lua"), "{}", out.describe());
    user_config(&dir, "[extensions]\nenabled = true\n");
    let out = Mypi::new(&dir).args(["--trust", "-p", "/extensions"]).run();
    assert!(out.stdout.contains("x (lua"), "{}", out.describe());
}

#[test]
fn the_readmes_example_file_is_a_valid_configuration() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let section = &readme[readme.find("### Configuration file").expect("the section")..];
    let start = section.find("```toml\n").expect("the example") + "```toml\n".len();
    let example = &section[start..start + section[start..].find("```").unwrap()];
    let dir = TestDir::new();
    user_config(&dir, example);
    let out = Mypi::new(&dir)
        .env("LOCAL_API_KEY", "k")
        .arg("config")
        .run();
    out.ok();
    assert!(
        out.stdout.contains(
            "# using local (openai) with model qwen2.5-coder at http://localhost:11434/v1"
        ),
        "{}",
        out.describe()
    );
}
