//! `/model` across providers (issue 12, point 2): the configured providers' models are
//! listed, `/model PROVIDER/NAME` switches API and endpoint mid-conversation, the choice is
//! in the session file and `--continue` goes on with it; faux says it has no models.

use std::time::Duration;

use serde_json::Value;

use super::wire::{only_session, user_texts};
use crate::common::{FakeAnthropic, FakeOpenAi, Mypi, Reply, TestDir};

const WAIT: Duration = Duration::from_secs(20);

fn two_providers(dir: &TestDir, a: &FakeOpenAi, b: &FakeAnthropic) {
    dir.write(
        "home/.agents/config.toml",
        &format!(
            "provider = \"a\"\n\
             [providers.a]\napi = \"openai\"\nbase_url = \"{}\"\nmodels = [\"a-1\"]\n\
             [providers.b]\napi = \"anthropic\"\nbase_url = \"{}\"\napi_key_env = \"B_KEY\"\n\
             models = [\"b-1\", {{ name = \"b-2\", context_window = 200000 }}]\n",
            a.url(),
            b.url()
        ),
    );
}

#[test]
fn model_switches_across_providers_and_continue_goes_on_with_it() {
    let dir = TestDir::new();
    let a = FakeOpenAi::with_replies(vec![Reply::text("from a")]);
    let b = FakeAnthropic::with_replies(vec![Reply::text("from b"), Reply::text("b again")]);
    two_providers(&dir, &a, &b);
    let mut m = Mypi::new(&dir)
        .env("B_KEY", "sk-b")
        .arg("--no-watch")
        .spawn();
    m.send_line("/model");
    m.wait_for_line("* a/a-1", WAIT);
    m.wait_for_line("b/b-2  (200000 tokens)", WAIT);
    m.send_line("hello");
    m.wait_for_line("from a", WAIT);
    m.send_line("/model b/b-2");
    m.wait_for_line("Model set to b-2 (b, anthropic).", WAIT);
    m.send_line("again");
    m.wait_for_line("from b", WAIT);
    m.send_line("/quit");
    m.wait().ok();
    assert_eq!(a.requests()[0].body["model"], "a-1");
    let req = &b.requests()[0];
    assert_eq!(req.body["model"], "b-2");
    assert_eq!(req.header("x-api-key"), Some("sk-b"));
    assert_eq!(
        user_texts(req),
        ["hello", "again"],
        "the conversation goes on"
    );
    // The session names what it started with and the switch.
    let text = std::fs::read_to_string(only_session(&dir)).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        (lines[0]["provider"].as_str(), lines[0]["model"].as_str()),
        (Some("a"), Some("a-1"))
    );
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "model_change" && l["provider"] == "b" && l["model"] == "b-2"),
        "{text}"
    );
    // --continue uses b/b-2 again, without a flag saying so.
    let out = Mypi::new(&dir)
        .env("B_KEY", "sk-b")
        .args(["--continue", "-p", "third"])
        .run();
    out.ok();
    assert_eq!(out.stdout.trim(), "b again");
    let req = &b.requests()[1];
    assert_eq!(req.body["model"], "b-2");
    assert_eq!(user_texts(req), ["hello", "again", "third"]);
}

#[test]
fn a_provider_that_cannot_be_reached_is_refused_and_nothing_changes() {
    let dir = TestDir::new();
    let a = FakeOpenAi::with_replies(vec![Reply::text("still a")]);
    let b = FakeAnthropic::with_replies(vec![]);
    two_providers(&dir, &a, &b);
    let mut m = Mypi::new(&dir)
        .arg("--no-watch")
        .arg("--no-session")
        .spawn();
    m.send_line("/model b/b-1");
    m.wait_for_line("provider \"b\" needs an API key: set B_KEY", WAIT);
    m.send_line("/model nowhere/x");
    m.wait_for_line("unknown provider \"nowhere\"", WAIT);
    m.send_line("hi");
    m.wait_for_line("still a", WAIT);
    m.send_line("/quit");
    m.wait().ok();
    assert_eq!(a.requests()[0].body["model"], "a-1");
}

#[test]
fn faux_has_no_models_to_switch_to() {
    let dir = TestDir::new();
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "-p", "/model gpt-x"])
        .run();
    assert_ne!(out.code, 0, "{}", out.describe());
    assert!(
        out.stderr
            .contains("the faux model has no models to switch to"),
        "{}",
        out.describe()
    );
}
