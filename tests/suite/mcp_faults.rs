//! MCP faults never hang or crash (issue 9, point 8): each test runs the real binary against
//! a server written to misbehave one way (`tests/common/mcp_fake.py` over stdio,
//! `tests/common/mcp_http.py` over Streamable HTTP) and checks what the user sees: the tool
//! result in `mypi -p --json`, `/mcp`, `mypi mcp list` and its exit code, and how long it
//! took (bounded generously: the CI machines are slow).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::mcp::{
    config, stdio_entry, tool_results, wait_received, watch_peak_memory, HttpFake,
};
use crate::common::{Mypi, Output, TestDir};

use super::ext_util::faux;

/// A call of tool `tool` of server `srv` as one faux-model turn.
fn call(tool: &str, args: Value) -> Value {
    json!({"tool_calls": [{"name": format!("mcp__srv__{tool}"), "arguments": args}]})
}

/// `mypi -p go --json` on the faux model playing `turns` then "done", with `servers`.
fn print_run(dir: &TestDir, servers: Value, turns: &[Value]) -> (Output, Duration) {
    let cfg = config(dir, servers);
    let mut replies = turns.to_vec();
    replies.push(json!({"text": "done"}));
    let started = Instant::now();
    let out = faux(dir, &replies)
        .timeout(Duration::from_secs(90))
        .arg("--mcp-config")
        .arg(cfg)
        .args(["--json", "-p", "go"])
        .run();
    (out, started.elapsed())
}

/// `mypi mcp list` with `servers`.
pub(super) fn mcp_list(dir: &TestDir, servers: Value) -> (Output, Duration) {
    let cfg = config(dir, servers);
    let started = Instant::now();
    let out = Mypi::new(dir)
        .timeout(Duration::from_secs(60))
        // After the subcommand, as users type it (mcp_exit passes it before).
        .args(["mcp", "list", "--mcp-config"])
        .arg(cfg)
        .run();
    (out, started.elapsed())
}

#[test]
fn a_server_that_exits_at_start_is_a_failed_line_and_prompts_go_on() {
    let dir = TestDir::new();
    let servers = json!({"srv": stdio_entry(&dir, "exit_start", 20)});
    let (out, took) = mcp_list(&dir, servers.clone());
    out.expect_code(1);
    assert!(
        out.stdout.contains("srv: failed") && out.stdout.contains("exiting at start on purpose"),
        "the state and the tail of its stderr: {}",
        out.describe()
    );
    assert!(took < Duration::from_secs(10), "{took:?}");

    let (out, took) = print_run(&dir, servers, &[call("echo", json!({"text": "x"}))]);
    out.ok();
    let results = tool_results(&out.stdout);
    assert!(results[0].1, "{}", out.describe());
    assert!(out.stdout.contains("\"final\""), "{}", out.describe());
    assert!(took < Duration::from_secs(15), "{took:?}");
}

#[test]
fn a_server_exiting_mid_call_fails_it_at_once_and_is_started_again_once() {
    let dir = TestDir::new();
    // A long timeout: the failed call must not wait for it.
    let servers = json!({"srv": stdio_entry(&dir, "normal", 60)});
    let turns = [
        call("die", json!({})),
        call("echo", json!({"text": "after the restart"})),
        call("die", json!({})),
        call("echo", json!({"text": "after the second crash"})),
    ];
    let (out, took) = print_run(&dir, servers, &turns);
    out.ok();
    let r = tool_results(&out.stdout);
    assert_eq!(r.len(), 4, "{}", out.describe());
    assert!(r[0].1 && r[0].0.contains("closed the connection"), "{r:?}");
    assert_eq!(r[1], ("after the restart".into(), false), "restarted once");
    assert!(r[2].1 && r[2].0.contains("closed the connection"), "{r:?}");
    assert!(
        r[3].1 && r[3].0.contains("not available") && r[3].0.contains("/mcp reconnect"),
        "no second restart, and the model is told why: {r:?}"
    );
    assert!(
        took < Duration::from_secs(20),
        "waited for a timeout: {took:?}"
    );
}

#[test]
fn mcp_shows_a_server_that_crashed_as_failed_with_its_stderr() {
    let dir = TestDir::new();
    let cfg = config(&dir, json!({"srv": stdio_entry(&dir, "normal", 60)}));
    let replies = [
        call("die", json!({})),
        json!({"text": "after the crash"}),
        call("echo", json!({"text": "back again"})),
        json!({"text": "after the echo"}),
    ];
    let mut m = faux(&dir, &replies)
        .timeout(Duration::from_secs(60))
        .arg("--mcp-config")
        .arg(cfg)
        .arg("--no-watch")
        .spawn();
    let wait = Duration::from_secs(20);
    m.send_line("go");
    m.wait_for_line("after the crash", wait);
    m.send_line("/mcp");
    m.wait_for_line("srv: failed: the server closed the connection", wait);
    m.wait_for_line("dying in the middle of a call", wait);
    m.send_line("go");
    m.wait_for_line("after the echo", wait);
    m.send_line("/mcp");
    m.wait_for_line("srv: connected (stdio", wait);
    m.send_line("/quit");
    m.wait().ok();
}

#[test]
fn a_line_that_is_not_json_is_skipped_and_logged() {
    let dir = TestDir::new();
    let servers = json!({"srv": stdio_entry(&dir, "garbage", 20)});
    let (out, _) = print_run(
        &dir,
        servers,
        &[call("echo", json!({"text": "still fine"}))],
    );
    out.ok();
    assert_eq!(
        tool_results(&out.stdout),
        [("still fine".to_string(), false)]
    );
    let log = dir.read(".agents/logs/mcp.log");
    assert!(log.contains("not JSON-RPC"), "{log}");
}

#[test]
fn a_call_never_answered_ends_at_its_timeout_and_is_cancelled() {
    let dir = TestDir::new();
    let servers = json!({"srv": stdio_entry(&dir, "normal", 2)});
    let (out, took) = print_run(&dir, servers, &[call("hang", json!({}))]);
    out.ok();
    let r = tool_results(&out.stdout);
    assert!(r[0].1 && r[0].0.contains("no answer within 2 s"), "{r:?}");
    assert!(took >= Duration::from_secs(2), "{took:?}");
    assert!(took < Duration::from_secs(15), "{took:?}");
    let id_of_hang = |got: &[Value]| {
        got.iter()
            .find(|m| m["method"] == "tools/call" && m["params"]["name"] == "hang")
            .map(|m| m["id"].clone())
    };
    let cancelled = |got: &[Value]| {
        let id = id_of_hang(got);
        got.iter().any(|m| {
            m["method"] == "notifications/cancelled"
                && Some(&m["params"]["requestId"]) == id.as_ref()
        })
    };
    let got = wait_received(&dir, Duration::from_secs(5), cancelled);
    assert!(
        cancelled(&got),
        "no notifications/cancelled for the call: {got:?}"
    );
}

#[test]
fn an_answer_of_20_mib_is_cut_and_one_over_32_mib_is_a_clear_error() {
    let dir = TestDir::new();
    let cfg = config(&dir, json!({"srv": stdio_entry(&dir, "normal", 60)}));
    let replies = [
        call("big", json!({"mib": 20})),
        call("big", json!({"mib": 40})),
        call("echo", json!({"text": "the connection survived"})),
        json!({"text": "done"}),
    ];
    let started = Instant::now();
    let m = faux(&dir, &replies)
        .timeout(Duration::from_secs(90))
        .arg("--mcp-config")
        .arg(cfg)
        .args(["--json", "-p", "go"])
        .spawn();
    let peak = watch_peak_memory(m.pid());
    let out = m.wait();
    out.ok();
    let r = tool_results(&out.stdout);
    assert_eq!(r.len(), 3, "{}", out.describe());
    assert!(
        !r[0].1 && r[0].0.contains("the result was 20 MiB"),
        "cut with a note"
    );
    assert!(
        r[0].0.len() < 64 * 1024,
        "{} bytes reached the model",
        r[0].0.len()
    );
    assert!(
        r[1].1 && r[1].0.contains("more than mypi reads (32 MiB)"),
        "{:?}",
        r[1]
    );
    assert_eq!(r[2], ("the connection survived".into(), false));
    assert!(started.elapsed() < Duration::from_secs(60));
    let mib = peak.load(std::sync::atomic::Ordering::Relaxed) / 1024;
    assert!(mib < 400, "peak memory {mib} MiB");
}

#[test]
fn a_stderr_flood_costs_bounded_memory() {
    let dir = TestDir::new();
    let cfg = config(&dir, json!({"srv": stdio_entry(&dir, "normal", 120)}));
    let replies = [call("flood", json!({"mib": 200})), json!({"text": "done"})];
    let m = faux(&dir, &replies)
        .timeout(Duration::from_secs(120))
        .arg("--mcp-config")
        .arg(cfg)
        .args(["--json", "-p", "go"])
        .spawn();
    let peak = watch_peak_memory(m.pid());
    let out = m.wait();
    out.ok();
    assert_eq!(tool_results(&out.stdout), [("flooded".to_string(), false)]);
    let mib = peak.load(std::sync::atomic::Ordering::Relaxed) / 1024;
    assert!(mib < 150, "peak memory {mib} MiB after 200 MiB of stderr");
}

#[test]
fn http_500_on_connect_is_retried_at_250_ms_and_1_s_then_failed() {
    let dir = TestDir::new();
    let http = HttpFake::start(&dir, "fail500");
    let (out, took) = mcp_list(&dir, json!({"srv": {"type": "http", "url": http.url()}}));
    out.expect_code(1);
    assert!(
        out.stdout
            .contains("srv: failed: the handshake failed: HTTP 500"),
        "{}",
        out.describe()
    );
    assert!(
        !out.stdout.contains("rmcp::"),
        "no SDK type names: {}",
        out.stdout
    );
    let times: Vec<f64> = http
        .requests()
        .iter()
        .filter(|r| r.3 == "initialize")
        .map(|r| r.0)
        .collect();
    assert_eq!(times.len(), 3, "three attempts: {:?}", http.requests());
    let (first, second) = (times[1] - times[0], times[2] - times[1]);
    assert!((0.2..0.9).contains(&first), "first retry after {first} s");
    assert!(
        (0.9..2.5).contains(&second),
        "second retry after {second} s"
    );
    assert!(took < Duration::from_secs(15), "{took:?}");
}

#[test]
fn an_expired_session_is_initialised_again_and_the_call_sent_twice() {
    let dir = TestDir::new();
    let http = HttpFake::start(&dir, "expire");
    let servers = json!({"srv": {"type": "http", "url": http.url(), "timeout": 20}});
    let turns = [
        call("echo", json!({"text": "one"})),
        call("echo", json!({"text": "two"})),
    ];
    let (out, _) = print_run(&dir, servers, &turns);
    out.ok();
    let r = tool_results(&out.stdout);
    assert_eq!(
        r,
        [
            ("one (session s2)".to_string(), false),
            ("two (session s2)".to_string(), false)
        ],
        "{}",
        out.describe()
    );
    assert_eq!(http.count("initialize"), 2, "{:?}", http.requests());
    assert_eq!(
        http.count("tools/call"),
        3,
        "the expired call twice, the next once: {:?}",
        http.requests()
    );
}

#[test]
fn a_call_that_failed_with_http_500_is_not_sent_again() {
    let dir = TestDir::new();
    let http = HttpFake::start(&dir, "call500");
    let servers = json!({"srv": {"type": "http", "url": http.url(), "timeout": 20}});
    let (out, _) = print_run(&dir, servers, &[call("echo", json!({"text": "one"}))]);
    out.ok();
    let r = tool_results(&out.stdout);
    assert!(r[0].1 && r[0].0.contains("HTTP 500"), "{r:?}");
    assert!(!r[0].0.contains("rmcp::"), "no SDK type names: {r:?}");
    assert_eq!(http.count("tools/call"), 1, "{:?}", http.requests());
}

#[test]
fn a_refused_connection_is_a_failed_line() {
    let dir = TestDir::new();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (out, took) = mcp_list(&dir, json!({"srv": {"type": "http", "url": url}}));
    out.expect_code(1);
    assert!(
        out.stdout.contains("srv: failed") && out.stdout.contains("Connection refused"),
        "{}",
        out.describe()
    );
    assert!(took < Duration::from_secs(15), "{took:?}");
}

#[test]
fn a_server_taking_30_s_to_start_does_not_delay_a_prompt_nor_help() {
    let dir = TestDir::new();
    let servers = json!({"slow": stdio_entry(&dir, "slow_start", 60)});
    let (out, took) = print_run(&dir, servers.clone(), &[]);
    out.ok();
    assert!(
        out.stdout
            .contains("not waiting for MCP server slow: still connecting"),
        "{}",
        out.describe()
    );
    assert_eq!(out.stdout.matches("not waiting for").count(), 1);
    assert!(
        out.stdout
            .contains("this run goes on without its tools; `mypi mcp list` waits for it"),
        "{}",
        out.describe()
    );
    // At most the short grace a server never seen gets (1.5 s), and the exit.
    assert!(took < Duration::from_secs(4), "{took:?}");

    let cfg = config(&dir, servers);
    let started = Instant::now();
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "--mcp-config"])
        .arg(cfg)
        .args(["-p", "/help"])
        .run();
    out.ok();
    assert!(out.stdout.contains("/help"), "{}", out.describe());
    assert!(!out.stderr.contains("waiting for"), "{}", out.describe());
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

/// The model may call a tool of a server still connecting by its name before the tool is
/// offered: the call waits for that server (at most 10 s, saying so once for both calls of
/// it), and then says why the tool is missing; the other tools and the turn go on.
#[test]
fn a_call_of_a_server_still_connecting_waits_at_most_10_s_then_says_why() {
    let dir = TestDir::new();
    let servers = json!({
        "slow": stdio_entry(&dir, "slow_start", 60),
        "quick": stdio_entry(&dir, "normal", 20),
    });
    let calls = json!({"tool_calls": [
        {"name": "mcp__slow__echo", "arguments": {"text": "a"}},
        {"name": "mcp__slow__add", "arguments": {"a": 1, "b": 2}},
        {"name": "mcp__quick__echo", "arguments": {"text": "b"}},
        {"name": "mcp__nowhere__echo", "arguments": {"text": "c"}},
    ]});
    let (out, took) = print_run(&dir, servers, &[calls]);
    out.ok();
    // Results come as the calls end.
    let results = tool_results(&out.stdout);
    assert_eq!(results.len(), 4, "{}", out.describe());
    let slow = "tool 'mcp__slow__echo' is not available yet: MCP server slow is still \
                connecting after 10 s";
    assert!(
        results
            .iter()
            .any(|(text, failed)| *failed && text.starts_with(slow)),
        "{}",
        out.describe()
    );
    assert!(results.contains(&("b".to_string(), false)), "{results:?}");
    assert!(
        results
            .iter()
            .any(|(text, _)| text.starts_with("unknown tool 'mcp__nowhere__echo'")),
        "{results:?}"
    );
    let waiting = "waiting for MCP server slow (still connecting; at most 10 s) to call";
    assert_eq!(out.stdout.matches(waiting).count(), 1, "{}", out.describe());
    assert!(took >= Duration::from_secs(10), "{took:?}");
    assert!(took < Duration::from_secs(20), "{took:?}");
}

/// A server that says its tools changed and then never answers the re-list delays the call
/// that changed them (by at most 5 s, though the re-list may take up to the server's
/// timeout), and no call after it.
#[test]
fn a_re_list_never_answered_delays_one_call_not_every_call() {
    let dir = TestDir::new();
    let servers = json!({"srv": stdio_entry(&dir, "normal", 30)});
    let mut turns = vec![call("churn", json!({}))];
    turns.extend((0..4).map(|i| call("echo", json!({"text": format!("e{i}")}))));
    let (out, took) = print_run(&dir, servers, &turns);
    out.ok();
    let results = tool_results(&out.stdout);
    assert_eq!(results.len(), 5, "{}", out.describe());
    assert_eq!(results[0].0, "churned");
    assert_eq!(results[4].0, "e3", "{}", out.describe());
    // One wait of 5 s; waiting again on each call would take 20 s more.
    assert!(
        took < Duration::from_secs(13),
        "{took:?}: {}",
        out.describe()
    );
}

/// Progress notifications reset a call's timeout: a call of 2.4 s that reports every 0.6 s
/// passes a timeout of 1 s; one that stops reporting ends at it.
#[test]
fn progress_resets_the_timeout_and_silence_ends_the_call_at_it() {
    let dir = TestDir::new();
    let servers = json!({"srv": stdio_entry(&dir, "normal", 1)});
    let turns = [
        call("slow", json!({"steps": 4, "every": 0.6})),
        call("slow", json!({"steps": 1, "every": 3})),
    ];
    let (out, _) = print_run(&dir, servers, &turns);
    out.ok();
    let results = tool_results(&out.stdout);
    assert_eq!(
        results[0],
        ("slept".to_string(), false),
        "{}",
        out.describe()
    );
    assert!(
        results[1].1 && results[1].0.contains("1 s"),
        "{}",
        out.describe()
    );
}

/// Two calls to one server at once, each reporting progress: each call's `tool_update`s
/// are its own (by the progress token its request carried), never the other's.
#[test]
fn progress_reaches_only_the_call_whose_token_it_carries() {
    let dir = TestDir::new();
    let servers = json!({"srv": stdio_entry(&dir, "normal", 20)});
    let slow = |steps: u32, every: f64| json!({"name": "mcp__srv__slow", "arguments": {"steps": steps, "every": every, "apart": true}});
    let turns = [json!({"tool_calls": [slow(2, 0.4), slow(3, 0.3)]})];
    let (out, _) = print_run(&dir, servers, &turns);
    out.ok();
    let events: Vec<Value> = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let ids: Vec<String> = events
        .iter()
        .filter(|e| e["type"] == "tool_call")
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 2, "{}", out.describe());
    for (id, total) in ids.iter().zip(["/2", "/3"]) {
        let texts: Vec<&str> = events
            .iter()
            .filter(|e| e["type"] == "tool_update" && e["id"] == id.as_str())
            .map(|e| e["text"].as_str().unwrap())
            .collect();
        assert!(!texts.is_empty(), "{id}: {}", out.describe());
        assert!(
            texts.iter().all(|t| t.contains(total)),
            "{id} got another call's progress: {texts:?}"
        );
    }
}
