//! Usage and cost (issue 12, point 6): the session's totals (tokens in and out, cached where
//! the provider says, cost at the configured prices) in `/session`, in the session file after
//! each run, and in the JSON stream's final event.

use serde_json::Value;

use super::json_events::events;
use super::wire::only_session;
use crate::common::{FakeOpenAi, Mypi, Reply, TestDir};

#[test]
fn totals_and_cost_are_in_session_the_file_and_the_final_event() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![
        Reply::text("one").usage(1_000_000, 200_000).cached(400_000),
        Reply::text("two").usage(2_000_000, 100_000),
    ]);
    dir.write(
        "home/.agents/config.toml",
        &format!(
            "provider = \"priced\"\n[providers.priced]\napi = \"openai\"\nbase_url = \"{}\"\n\
             models = [{{ name = \"m\", input_price = 2.0, output_price = 8.0 }}]\n",
            fake.url()
        ),
    );
    let out = Mypi::new(&dir)
        .env("OPENAI_API_KEY", "k")
        .args(["-p", "first", "--json"])
        .run();
    out.ok();
    let last = events(&out).pop().unwrap();
    assert_eq!(last["type"], "final");
    // 0.6M in at $2 + 0.4M read from the cache at a tenth of it + 0.2M out at $8 = $2.88.
    assert_eq!(last["usage"]["cached_tokens"], 400_000);
    assert!(
        (last["usage"]["cost_usd"].as_f64().unwrap() - 2.88).abs() < 1e-9,
        "{last}"
    );
    assert_eq!(last["session_usage"]["input_tokens"], 1_000_000);
    let out = Mypi::new(&dir)
        .env("OPENAI_API_KEY", "k")
        .args(["--continue", "-p", "second", "--json"])
        .run();
    out.ok();
    let last = events(&out).pop().unwrap();
    // The session so far: 3M in, 0.3M out; $2.88 + $4.80.
    assert_eq!(last["session_usage"]["input_tokens"], 3_000_000);
    assert_eq!(last["session_usage"]["output_tokens"], 300_000);
    assert_eq!(last["session_usage"]["cached_tokens"], 400_000);
    assert!(
        (last["session_usage"]["cost_usd"].as_f64().unwrap() - 7.68).abs() < 1e-9,
        "{last}"
    );
    // The file says the totals after each run.
    let text = std::fs::read_to_string(only_session(&dir)).unwrap();
    let totals: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["type"] == "totals")
        .collect();
    assert_eq!(totals.len(), 2, "{text}");
    assert_eq!(totals[1]["usage"]["output_tokens"], 300_000);
    // /session says so too.
    let out = Mypi::new(&dir)
        .env("OPENAI_API_KEY", "k")
        .args(["--continue", "-p", "/session"])
        .run();
    out.ok();
    assert!(
        out.stdout
            .contains("Tokens this session: 3000000 in (400000 from the cache), 300000 out"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("Cost this session: $7.6800"),
        "{}",
        out.stdout
    );
}
