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
    // 0.6M in at $2 + 0.4M read from the cache at half of it (an OpenAI-compatible API's
    // discount) + 0.2M out at $8 = $3.20.
    assert_eq!(last["usage"]["cached_tokens"], 400_000);
    assert!(
        (last["usage"]["cost_usd"].as_f64().unwrap() - 3.2).abs() < 1e-9,
        "{last}"
    );
    assert_eq!(last["session_usage"]["input_tokens"], 1_000_000);
    let out = Mypi::new(&dir)
        .env("OPENAI_API_KEY", "k")
        .args(["--continue", "-p", "second", "--json"])
        .run();
    out.ok();
    let last = events(&out).pop().unwrap();
    // The session so far: 3M in, 0.3M out; $3.20 + $4.80.
    assert_eq!(last["session_usage"]["input_tokens"], 3_000_000);
    assert_eq!(last["session_usage"]["output_tokens"], 300_000);
    assert_eq!(last["session_usage"]["cached_tokens"], 400_000);
    assert!(
        (last["session_usage"]["cost_usd"].as_f64().unwrap() - 8.0).abs() < 1e-9,
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
        out.stdout.contains("Cost this session: $8.0000"),
        "{}",
        out.stdout
    );
}

/// A model's table entry may price the cache itself (`cache_read_price`, `cache_write_price`,
/// per million tokens): the cost of an Anthropic session that reads and writes the cache is
/// at those prices.
#[test]
fn the_cache_is_priced_from_the_model_table() {
    let dir = TestDir::new();
    dir.write("notes.txt", &"Notes to read twice over.\n".repeat(400));
    let fake = crate::common::FakeAnthropic::caching(vec![
        Reply::tool_calls([("c1", "read", serde_json::json!({"path": "notes.txt"}))]),
        Reply::tool_calls([("c2", "read", serde_json::json!({"path": "notes.txt"}))]),
        Reply::text("read"),
    ]);
    dir.write(
        "home/.agents/config.toml",
        &format!(
            "provider = \"claude\"\n[providers.claude]\napi = \"anthropic\"\nbase_url = \"{}\"\n\
             models = [{{ name = \"claude-sonnet-4-5\", input_price = 3.0, output_price = 15.0, \
             cache_read_price = 0.5, cache_write_price = 4.0 }}]\n",
            fake.url()
        ),
    );
    let out = Mypi::new(&dir)
        .env("ANTHROPIC_API_KEY", "k")
        .args(["--no-session", "-p", "read the notes twice", "--json"])
        .run();
    out.ok();
    let usage = events(&out).pop().unwrap()["usage"].clone();
    let n = |k: &str| usage[k].as_u64().unwrap_or(0) as f64;
    let (read, write) = (n("cached_tokens"), n("cache_write_tokens"));
    assert!(read > 0.0 && write > 0.0, "{usage}");
    let plain = n("input_tokens") - read - write;
    let want = (plain * 3.0 + read * 0.5 + write * 4.0 + n("output_tokens") * 15.0) / 1e6;
    let cost = usage["cost_usd"].as_f64().unwrap();
    assert!((cost - want).abs() < 1e-12, "{cost} != {want}: {usage}");
}
