//! The first ten minutes (issue 34, point 4): a mistyped option is an error before anything
//! else is printed; the global options work after a subcommand; `mypi config` prints even
//! without a key, marking it; the README's sample configuration works as written; a REPL
//! started on a pipe says how to get just an answer.

use crate::common::{Mypi, TestDir};

#[test]
fn a_mistyped_option_is_an_error_before_the_banner() {
    let dir = TestDir::new();
    for args in [
        vec!["--provider", "faux", "--modle", "x"],
        vec!["--provider", "faux", "-p", "hi", "--modle=x"],
    ] {
        let out = Mypi::new(&dir).args(&args).stdin("hello\n").run();
        out.expect_code(2);
        assert_eq!(out.stdout, "", "{}", out.describe());
        assert!(
            out.stderr.contains("unknown option --modle") && out.stderr.contains("--model?"),
            "{}",
            out.describe()
        );
    }
    // An option an extension declares is still taken.
    dir.write(
        ".agents/extensions/f.lua",
        r#"api.flag{name = "plan", type = "bool"}
api.command("plan", function() return "plan=" .. tostring(api.flags.plan) end)"#,
    );
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "--plan", "-p", "/plan"])
        .run();
    assert_eq!(out.ok().stdout.trim(), "plan=true");
}

#[test]
fn global_options_work_after_a_subcommand() {
    let dir = TestDir::new();
    dir.untrust();
    let out = Mypi::new(&dir).args(["mcp", "list", "--trust"]).run();
    assert!(
        !out.stderr.contains("unexpected argument"),
        "{}",
        out.describe()
    );
    let out = Mypi::new(&dir)
        .args(["config", "--provider", "faux", "--model", "m1"])
        .run();
    let stdout = &out.ok().stdout;
    assert!(stdout.contains("with model m1"), "{stdout}");
}

#[test]
fn config_prints_with_a_key_missing_and_marks_it() {
    let dir = TestDir::new();
    let out = Mypi::new(&dir)
        .args(["config", "--provider", "openai"])
        .run();
    let stdout = &out.ok().stdout;
    assert!(
        stdout.starts_with("# --provider openai needs an API key: set OPENAI_API_KEY"),
        "{stdout}"
    );
    assert!(stdout.contains("provider = \"openai\""), "{stdout}");
    assert!(
        !stdout.contains("unset"),
        "the stand-in never shows: {stdout}"
    );
}

#[test]
fn the_readmes_sample_configuration_works_as_written() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let section = &readme[readme.find("### Configuration file").unwrap()..];
    let start = section.find("```toml\n").unwrap() + "```toml\n".len();
    let sample = &section[start..start + section[start..].find("```").unwrap()];
    let dir = TestDir::new();
    // The user's file, with the trust the tests' folders start with kept.
    let trust = dir.read("home/.agents/config.toml");
    let sample = sample.replace("folders = []", "folders = []\n").replace(
        "trees = []",
        trust.trim_start_matches("[trust]\n").trim_end(),
    );
    dir.write("home/.agents/config.toml", &sample);
    let out = Mypi::new(&dir).arg("config").run();
    let stdout = &out.ok().stdout;
    assert!(
        stdout.contains(
            "# using local (openai) with model qwen2.5-coder at http://localhost:11434/v1"
        ),
        "{stdout}"
    );
    assert!(!stdout.contains("needs an API key"), "{stdout}");
}

#[test]
fn a_repl_on_a_pipe_says_how_to_get_just_the_answer() {
    let dir = TestDir::new();
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "--no-session"])
        .stdin("hi\n")
        .run();
    out.ok();
    assert!(
        out.stderr.contains("standard input is not a terminal")
            && out.stderr.contains("`mypi -p` runs one prompt"),
        "{}",
        out.describe()
    );
    assert!(
        out.stdout.contains("hi"),
        "the prompt ran: {}",
        out.describe()
    );
}

#[test]
fn model_warns_about_a_name_no_provider_lists() {
    let dir = TestDir::new();
    let trust = dir.read("home/.agents/config.toml");
    dir.write(
        "home/.agents/config.toml",
        &format!(
            "provider = \"local\"\n[providers.local]\napi = \"openai\"\n\
             base_url = \"http://127.0.0.1:9/v1\"\nmodels = [\"qwen2.5-coder\", \"mistral-small\"]\n\n{trust}"
        ),
    );
    let out = Mypi::new(&dir).args(["-p", "/model mistral-smal"]).run();
    let stdout = &out.ok().stdout;
    assert!(
        stdout.contains("Model set to mistral-smal (local"),
        "{stdout}"
    );
    assert!(
        stdout.contains("no configured provider lists mistral-smal")
            && stdout.contains("Did you mean local/mistral-small?"),
        "{stdout}"
    );
    let out = Mypi::new(&dir).args(["-p", "/model mistral-small"]).run();
    assert!(!out.ok().stdout.contains("Note:"), "{}", out.describe());
}

#[test]
fn json_ends_with_a_closing_event_on_sigint() {
    let dir = TestDir::new();
    let slow = serde_json::json!({"text": "word ".repeat(400), "delay_ms": 20});
    let mut m = super::ext_util::faux(&dir, &[slow])
        .args(["--no-session", "-p", "--json", "go"])
        .spawn();
    m.wait_for_text("text_delta", super::ext_util::WAIT);
    m.interrupt();
    let out = m.wait();
    out.expect_code(130);
    let last = out.stdout.lines().last().unwrap_or_default();
    let event: serde_json::Value = serde_json::from_str(last).unwrap();
    assert_eq!(
        event,
        serde_json::json!({"type": "error", "message": "stopped by SIGINT"})
    );
}
