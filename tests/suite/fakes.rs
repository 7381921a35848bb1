//! Self-tests of the test support: the fake OpenAI / Anthropic servers (driven by the raw
//! HTTP client in `common/http.rs`, no `mypi` binary needed), `TestDir` and `Running`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::http::{parse_sse, post_json, HttpConn, SseEvent};
use crate::common::{FakeAnthropic, FakeOpenAi, Reply, Running, TestDir, EXHAUSTED_MESSAGE};

fn chat_url(s: &FakeOpenAi) -> String {
    format!("{}/chat/completions", s.url())
}

fn messages_url(s: &FakeAnthropic) -> String {
    format!("{}/v1/messages", s.url())
}

fn data_json(events: &[SseEvent]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e.data != "[DONE]")
        .map(|e| serde_json::from_str(&e.data).expect("SSE data is JSON"))
        .collect()
}

/// Reassembled OpenAI stream: (text, content delta count, calls (id, name, args, pieces), finish).
type OpenAiStream = (String, usize, Vec<(String, String, String, usize)>, String);

fn reassemble_openai(body: &str) -> OpenAiStream {
    let events = parse_sse(body);
    assert_eq!(
        events.last().unwrap().data,
        "[DONE]",
        "stream ends with [DONE]"
    );
    let (mut text, mut deltas, mut finish) = (String::new(), 0, String::new());
    let mut calls: Vec<(String, String, String, usize)> = Vec::new();
    for chunk in data_json(&events) {
        assert_eq!(chunk["object"], "chat.completion.chunk");
        let Some(choice) = chunk["choices"].get(0) else {
            assert!(chunk["usage"]["total_tokens"].as_u64().unwrap() > 0);
            continue;
        };
        if let Some(t) = choice["delta"]["content"]
            .as_str()
            .filter(|t| !t.is_empty())
        {
            text.push_str(t);
            deltas += 1;
        }
        for tc in choice["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let i = tc["index"].as_u64().unwrap() as usize;
            if let Some(id) = tc["id"].as_str() {
                assert_eq!(calls.len(), i, "tool call indexes are dense");
                let name = tc["function"]["name"].as_str().unwrap().to_string();
                calls.push((id.to_string(), name, String::new(), 0));
            }
            let piece = tc["function"]["arguments"].as_str().unwrap_or("");
            if !piece.is_empty() {
                calls[i].2.push_str(piece);
                calls[i].3 += 1;
            }
        }
        if let Some(f) = choice["finish_reason"].as_str() {
            finish = f.to_string();
        }
    }
    (text, deltas, calls, finish)
}

#[test]
fn openai_records_request_and_streams_text_in_pieces() {
    let server = FakeOpenAi::with_replies(vec![Reply::text("Hello there, fake world!")]);
    assert!(server.url().ends_with("/v1"));
    let body = json!({"model": "test-model", "stream": true,
                      "messages": [{"role": "user", "content": "hi"}]});
    let resp = post_json(&chat_url(&server), &body);
    assert_eq!(resp.status, 200);
    assert_eq!(resp.header("content-type"), Some("text/event-stream"));
    assert_eq!(resp.header("transfer-encoding"), Some("chunked"));
    let (text, deltas, calls, finish) = reassemble_openai(&resp.body);
    assert_eq!(text, "Hello there, fake world!");
    assert!(deltas >= 2, "text split into several deltas, got {deltas}");
    assert!(calls.is_empty());
    assert_eq!(finish, "stop");

    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].method, "POST");
    assert_eq!(reqs[0].path, "/v1/chat/completions");
    assert_eq!(reqs[0].header("Content-Type"), Some("application/json"));
    assert_eq!(reqs[0].body, body);
    assert_eq!(reqs[0].raw_body, body.to_string());
}

#[test]
fn openai_tool_calls_arguments_reassemble() {
    let args_a = json!({"path": "a.txt"});
    let args_b = json!({"command": "echo \"hi\" && ls -la", "timeout": 5});
    let server = FakeOpenAi::with_replies(vec![Reply::tool_calls(vec![
        ("call_1", "read", args_a.clone()),
        ("call_2", "bash", args_b.clone()),
    ])
    .with_text("Let me look.")]);
    let resp = post_json(&chat_url(&server), &json!({"model": "m"}));
    let (text, _, calls, finish) = reassemble_openai(&resp.body);
    assert_eq!(text, "Let me look.");
    assert_eq!(finish, "tool_calls");
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (calls[0].0.as_str(), calls[0].1.as_str()),
        ("call_1", "read")
    );
    assert_eq!(
        (calls[1].0.as_str(), calls[1].1.as_str()),
        ("call_2", "bash")
    );
    assert_eq!(calls[0].2, args_a.to_string());
    assert_eq!(serde_json::from_str::<Value>(&calls[1].2).unwrap(), args_b);
    assert!(calls.iter().all(|c| c.3 >= 2), "arguments split: {calls:?}");
}

#[test]
fn openai_raw_tool_args_are_sent_verbatim() {
    let server = FakeOpenAi::with_replies(vec![Reply::raw_tool_args(
        "call_9",
        "bash",
        "{\"command\": ",
    )]);
    let resp = post_json(&chat_url(&server), &json!({}));
    let (text, _, calls, finish) = reassemble_openai(&resp.body);
    assert_eq!(text, "");
    assert_eq!(finish, "tool_calls");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].2, "{\"command\": ");
}

#[test]
fn openai_error_and_exhaustion() {
    let server = FakeOpenAi::with_replies(vec![Reply::error(429, "slow down")]);
    let resp = post_json(&chat_url(&server), &json!({}));
    assert_eq!(resp.status, 429);
    let err = resp.json();
    assert_eq!(err["error"]["message"], "slow down");
    assert!(err["error"]["type"].is_string());
    assert!(err["error"].get("code").is_some());

    let resp = post_json(&chat_url(&server), &json!({}));
    assert_eq!(resp.status, 500);
    assert_eq!(resp.json()["error"]["message"], EXHAUSTED_MESSAGE);
    assert_eq!(server.request_count(), 2);
}

#[test]
fn openai_malformed_stream_has_non_json_data_line() {
    let server = FakeOpenAi::with_replies(vec![Reply::malformed_stream()]);
    let resp = post_json(&chat_url(&server), &json!({}));
    assert_eq!(resp.status, 200);
    let events = parse_sse(&resp.body);
    let bad = events
        .iter()
        .filter(|e| e.data != "[DONE]")
        .filter(|e| serde_json::from_str::<Value>(&e.data).is_err())
        .count();
    assert_eq!(bad, 1, "{}", resp.body);
}

#[test]
fn wire_is_chunked_in_small_pieces() {
    let server = FakeOpenAi::with_replies(vec![Reply::text("x".repeat(200))]);
    let mut s = TcpStream::connect(server.addr()).unwrap();
    let body = "{}";
    write!(
        s,
        "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (_, payload) = raw.split_once("\r\n\r\n").unwrap();
    assert!(payload.starts_with("7\r\n"), "{payload:.40}");
    assert!(payload.ends_with("0\r\n\r\n"));
    assert!(payload.matches("\r\n7\r\n").count() > 20);
}

#[test]
fn keep_alive_and_chunked_request_bodies() {
    let server = FakeOpenAi::with_replies(vec![Reply::text("one"), Reply::text("two")]);
    let mut conn = HttpConn::connect(&server.url());
    let first = conn.post_json("/v1/chat/completions", &json!({"n": 1}));
    assert_eq!(reassemble_openai(&first.body).0, "one");
    let body = json!({"n": 2, "text": "a longer body sent in chunked framing"}).to_string();
    let second = conn
        .request("POST", "/v1/chat/completions", &[], &body, true)
        .unwrap();
    assert_eq!(reassemble_openai(&second.body).0, "two");
    let reqs = server.requests();
    assert_eq!(reqs[0].body["n"], 1);
    assert_eq!(reqs[1].body["n"], 2);
    assert_eq!(reqs[1].raw_body, body);
}

#[test]
fn unknown_path_is_404_and_keeps_the_reply() {
    let server = FakeOpenAi::with_replies(vec![Reply::text("kept")]);
    let resp = post_json(&format!("{}/models", server.url()), &json!({}));
    assert_eq!(resp.status, 404);
    assert_eq!(server.replies_left(), 1);
    let resp = post_json(&chat_url(&server), &json!({}));
    assert_eq!(reassemble_openai(&resp.body).0, "kept");
}

#[test]
fn delayed_and_truncated_replies() {
    let server = FakeOpenAi::start();
    server.push(Reply::hang_then_text(Duration::from_millis(300), "late"));
    server.push(Reply::truncated(
        "this stream will be cut off half way through",
    ));
    let t = Instant::now();
    let resp = post_json(&chat_url(&server), &json!({}));
    assert!(t.elapsed() >= Duration::from_millis(300));
    assert_eq!(reassemble_openai(&resp.body).0, "late");
    let mut conn = HttpConn::connect(&server.url());
    let cut = conn.request("POST", "/v1/chat/completions", &[], "{}", false);
    assert!(cut.is_err(), "truncated body must fail: {cut:?}");
    assert_eq!(server.wait_for_requests(2, Duration::from_secs(1)).len(), 2);
}

#[test]
fn anthropic_text_and_tool_use_stream() {
    let args = json!({"path": "src/main.rs", "limit": 20});
    let server = FakeAnthropic::with_replies(vec![
        Reply::text("Hi from Claude").usage(42, 7),
        Reply::tool_calls(vec![("toolu_1", "read", args.clone())]).with_text("Reading."),
    ]);
    assert!(!server.url().ends_with("/v1"));
    let body = json!({"model": "test-model", "max_tokens": 100, "stream": true,
                      "messages": [{"role": "user", "content": "hi"}]});
    let resp = post_json(&messages_url(&server), &body);
    assert_eq!(resp.status, 200);
    assert_eq!(resp.header("content-type"), Some("text/event-stream"));
    let events = parse_sse(&resp.body);
    let names: Vec<_> = events.iter().map(|e| e.event.clone().unwrap()).collect();
    assert_eq!(names.first().unwrap(), "message_start");
    assert_eq!(names.last().unwrap(), "message_stop");
    assert!(names.iter().any(|n| n == "ping"));
    let data = data_json(&events);
    for (e, d) in events.iter().zip(&data) {
        assert_eq!(
            e.event.as_deref(),
            d["type"].as_str(),
            "event name matches type"
        );
    }
    assert_eq!(data[0]["message"]["usage"]["input_tokens"], 42);
    let text: String = data
        .iter()
        .filter_map(|d| d["delta"]["text"].as_str())
        .collect();
    assert_eq!(text, "Hi from Claude");
    let md = data.iter().find(|d| d["type"] == "message_delta").unwrap();
    assert_eq!(md["delta"]["stop_reason"], "end_turn");
    assert_eq!(md["usage"]["output_tokens"], 7);
    assert_eq!(server.requests()[0].body, body);
    assert_eq!(server.requests()[0].path, "/v1/messages");

    let resp = post_json(&messages_url(&server), &body);
    let data = data_json(&parse_sse(&resp.body));
    let start = data
        .iter()
        .find(|d| d["content_block"]["type"] == "tool_use")
        .unwrap();
    assert_eq!(start["index"], 1);
    assert_eq!(start["content_block"]["id"], "toolu_1");
    assert_eq!(start["content_block"]["name"], "read");
    let pieces: Vec<&str> = data
        .iter()
        .filter(|d| d["index"] == 1)
        .filter_map(|d| d["delta"]["partial_json"].as_str())
        .collect();
    assert!(pieces.len() >= 3, "{pieces:?}");
    assert_eq!(pieces.concat(), args.to_string());
    let md = data.iter().find(|d| d["type"] == "message_delta").unwrap();
    assert_eq!(md["delta"]["stop_reason"], "tool_use");
}

#[test]
fn anthropic_error_malformed_and_exhaustion() {
    let server = FakeAnthropic::with_replies(vec![
        Reply::error(529, "Overloaded"),
        Reply::malformed_stream(),
    ]);
    let resp = post_json(&messages_url(&server), &json!({}));
    assert_eq!(resp.status, 529);
    let err = resp.json();
    assert_eq!(err["type"], "error");
    assert_eq!(err["error"]["type"], "overloaded_error");
    assert_eq!(err["error"]["message"], "Overloaded");

    let resp = post_json(&messages_url(&server), &json!({}));
    assert_eq!(resp.status, 200);
    let bad = parse_sse(&resp.body)
        .iter()
        .filter(|e| serde_json::from_str::<Value>(&e.data).is_err())
        .count();
    assert_eq!(bad, 1);

    let resp = post_json(&messages_url(&server), &json!({}));
    assert_eq!(resp.status, 500);
    assert_eq!(resp.json()["error"]["message"], EXHAUSTED_MESSAGE);
}

#[test]
fn drop_closes_idle_connections_quickly() {
    let server = FakeAnthropic::with_replies(vec![Reply::text("unused")]);
    let mut idle = TcpStream::connect(server.addr()).unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let hanging = TcpStream::connect(server.addr()).unwrap();
    drop(hanging);
    std::thread::sleep(Duration::from_millis(50));
    let t = Instant::now();
    drop(server);
    assert!(t.elapsed() < Duration::from_secs(2));
    let mut buf = [0u8; 16];
    assert_eq!(idle.read(&mut buf).unwrap_or(0), 0, "connection closed");
}

#[test]
fn test_dir_writes_reads_and_cleans_up() {
    let dir = TestDir::new();
    let root = dir.path().to_path_buf();
    dir.write("a/b/c.txt", "content");
    assert_eq!(dir.read("a/b/c.txt"), "content");
    assert!(dir.exists("a/b"));
    assert_ne!(TestDir::new().path(), root);
    drop(dir);
    assert!(!root.exists());
}

fn sh(script: &str, timeout: Duration) -> Running {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", script]).stdin(Stdio::piped());
    Running::start(cmd, timeout)
}

#[test]
fn running_waits_for_lines_and_text() {
    let mut r = sh(
        "echo first; sleep 0.1; echo 'second line'; printf 'prompt> '; read x; echo \"got $x\"; \
         echo oops >&2; exit 3",
        Duration::from_secs(10),
    );
    assert_eq!(
        r.wait_for_line("second", Duration::from_secs(5)),
        "second line"
    );
    assert!(r
        .wait_for_text("prompt> ", Duration::from_secs(5))
        .ends_with("prompt> "));
    r.send_line("abc");
    assert_eq!(r.wait_for_line("got", Duration::from_secs(5)), "got abc");
    let out = r.wait();
    out.expect_code(3);
    assert!(out.stdout.starts_with("first\n"));
    assert_eq!(out.stderr, "oops\n");
}

#[test]
#[should_panic(expected = "did not finish within")]
fn running_kills_on_timeout() {
    sh("exec sleep 5", Duration::from_millis(200)).wait();
}
