//! Failures a user meets in print mode: retried statuses (429, 5xx, connection refused),
//! fatal ones (401) as one clear stderr line with exit 1, and streams that are malformed or
//! cut off. Never a panic.

use std::net::TcpListener;

use serde_json::json;

use crate::common::{FakeAnthropic, FakeOpenAi, Mypi, Reply, TestDir};

use super::wire::{no_panic, run_api, Api, BOTH};

/// The stderr lines that are not retry notices.
fn error_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| !l.contains("retrying")).collect()
}

#[test]
fn server_error_then_success_is_retried() {
    for api in BOTH {
        let dir = TestDir::new();
        let replies = vec![
            Reply::error(500, "the server had an error"),
            Reply::text("Recovered answer."),
        ];
        let (out, reqs) = run_api(api, &dir, replies, &["-p", "hi"]);
        out.ok();
        no_panic(&out.stderr);
        assert_eq!(out.stdout, "Recovered answer.\n", "{api:?}");
        assert_eq!(reqs.len(), 2, "{api:?}: one retry");
        assert_eq!(reqs[0].body, reqs[1].body, "the retry sends the same body");
        let notices: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(notices.len(), 1, "{api:?}: {}", out.describe());
        assert!(notices[0].contains("500"), "{}", notices[0]);
        assert!(notices[0].contains("retrying"), "{}", notices[0]);
        assert!(notices[0].contains("(1/3)"), "{}", notices[0]);
    }
}

#[test]
fn rate_limit_then_success_is_retried() {
    for api in BOTH {
        let dir = TestDir::new();
        let replies = vec![
            Reply::error(429, "Rate limit reached for requests"),
            Reply::text("After the wait."),
        ];
        let (out, reqs) = run_api(api, &dir, replies, &["-p", "hi"]);
        out.ok();
        assert_eq!(out.stdout, "After the wait.\n", "{api:?}");
        assert_eq!(reqs.len(), 2, "{api:?}");
        assert!(out.stderr.contains("429"), "{}", out.describe());
        assert!(out.stderr.contains("retrying"), "{}", out.describe());
    }
}

#[test]
fn anthropic_overloaded_is_retried() {
    let dir = TestDir::new();
    let replies = vec![Reply::error(529, "Overloaded"), Reply::text("fine now")];
    let (out, reqs) = run_api(Api::Anthropic, &dir, replies, &["-p", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "fine now\n");
    assert_eq!(reqs.len(), 2);
    assert!(out.stderr.contains("529"), "{}", out.describe());
}

#[test]
fn retries_give_up_after_three() {
    let dir = TestDir::new();
    let replies = (0..4).map(|_| Reply::error(503, "try later")).collect();
    let (out, reqs) = run_api(Api::OpenAi, &dir, replies, &["-p", "hi"]);
    out.expect_code(1);
    no_panic(&out.stderr);
    assert_eq!(reqs.len(), 4, "first attempt + 3 retries");
    assert_eq!(
        out.stderr.matches("retrying").count(),
        3,
        "{}",
        out.describe()
    );
    let errors = error_lines(&out.stderr);
    assert_eq!(errors.len(), 1, "{}", out.describe());
    assert!(errors[0].contains("503") && errors[0].contains("try later"));
    assert!(out.stdout.is_empty());
}

#[test]
fn unauthorized_is_one_clear_line_and_not_retried() {
    for api in BOTH {
        let dir = TestDir::new();
        let msg = "Incorrect API key provided: test-key";
        let (out, reqs) = run_api(api, &dir, vec![Reply::error(401, msg)], &["-p", "hi"]);
        out.expect_code(1);
        no_panic(&out.stderr);
        assert_eq!(reqs.len(), 1, "{api:?}: a 401 is not retried");
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{api:?}: {}", out.describe());
        assert!(lines[0].contains("401"), "{}", lines[0]);
        assert!(lines[0].contains(msg), "{}", lines[0]);
        assert!(out.stdout.is_empty(), "{}", out.describe());
    }
}

#[test]
fn bad_request_shows_the_server_message() {
    let dir = TestDir::new();
    let msg = "'messages' must contain at least one message";
    let (out, reqs) = run_api(
        Api::OpenAi,
        &dir,
        vec![Reply::error(400, msg)],
        &["-p", "x"],
    );
    out.expect_code(1);
    assert_eq!(reqs.len(), 1);
    assert!(out.stderr.contains("400") && out.stderr.contains(msg));
}

#[test]
fn malformed_stream_fails_cleanly() {
    for api in BOTH {
        let dir = TestDir::new();
        let (out, reqs) = run_api(api, &dir, vec![Reply::malformed_stream()], &["-p", "hi"]);
        out.expect_code(1);
        no_panic(&out.stderr);
        assert_eq!(reqs.len(), 1, "{api:?}: a malformed stream is not retried");
        let lines = error_lines(&out.stderr);
        assert_eq!(lines.len(), 1, "{api:?}: {}", out.describe());
        assert!(lines[0].contains("malformed"), "{}", lines[0]);
    }
}

#[test]
fn truncated_stream_fails_cleanly_without_retry() {
    for api in BOTH {
        let dir = TestDir::new();
        // Long enough that the cut (half the body) falls after the first text delta.
        let replies = vec![Reply::truncated("This answer is cut off. ".repeat(30))];
        let (out, reqs) = run_api(api, &dir, replies, &["-p", "hi"]);
        out.expect_code(1);
        no_panic(&out.stderr);
        assert_eq!(reqs.len(), 1, "{api:?}: text was streamed, so no retry");
        assert_eq!(error_lines(&out.stderr).len(), 1, "{}", out.describe());
    }
}

#[test]
fn malformed_stream_in_json_mode_is_an_error_event() {
    let dir = TestDir::new();
    let fake = FakeOpenAi::with_replies(vec![Reply::malformed_stream()]);
    let out = Mypi::new(&dir)
        .openai(&fake)
        .args(["-p", "hi", "--json"])
        .run();
    out.expect_code(1);
    no_panic(&out.stderr);
    let last: serde_json::Value =
        serde_json::from_str(out.stdout.lines().last().expect("some events")).unwrap();
    assert_eq!(last["type"], "error", "{}", out.describe());
    assert!(last["message"].as_str().unwrap().contains("malformed"));
}

#[test]
fn unreachable_server_is_retried_then_reported() {
    let dir = TestDir::new();
    // A port nobody listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = Mypi::new(&dir)
        .args(["--provider", "openai", "--model", "test-model"])
        .args(["--base-url", &format!("http://127.0.0.1:{port}/v1")])
        .env("OPENAI_API_KEY", "k")
        .env("MYPI_RETRY_BASE_MS", "1")
        .args(["-p", "hi"])
        .run();
    out.expect_code(1);
    no_panic(&out.stderr);
    assert_eq!(
        out.stderr.matches("retrying").count(),
        3,
        "{}",
        out.describe()
    );
    let errors = error_lines(&out.stderr);
    assert_eq!(errors.len(), 1, "{}", out.describe());
    assert!(errors[0].contains("could not reach"), "{}", errors[0]);
}

#[test]
fn a_slow_first_byte_is_waited_for() {
    let dir = TestDir::new();
    let fake = FakeAnthropic::with_replies(vec![Reply::hang_then_text(
        std::time::Duration::from_millis(300),
        "late but fine",
    )]);
    let out = Mypi::new(&dir).anthropic(&fake).args(["-p", "hi"]).run();
    out.ok();
    assert_eq!(out.stdout, "late but fine\n");
    assert_eq!(fake.request_count(), 1);
}

#[test]
fn html_error_page_is_still_one_line() {
    let page = "<html>\n<head><title>403 Forbidden</title></head>\n<body>\n\
                <center><h1>403 Forbidden</h1></center>\n<hr><center>nginx</center>\n\
                </body>\n</html>\n";
    let dir = TestDir::new();
    let replies = vec![Reply::raw(403, "text/html", page)];
    let (out, reqs) = run_api(Api::OpenAi, &dir, replies, &["-p", "hi"]);
    out.expect_code(1);
    assert_eq!(reqs.len(), 1);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", out.describe());
    assert!(lines[0].contains("403"), "{}", lines[0]);
    assert!(lines[0].contains("403 Forbidden"), "{}", lines[0]);
}

#[test]
fn huge_plain_error_body_is_shortened_to_one_line() {
    let dir = TestDir::new();
    let body = "upstream failure\n".repeat(500);
    let replies = vec![Reply::raw(400, "text/plain", body)];
    let (out, _) = run_api(Api::Anthropic, &dir, replies, &["-p", "hi"]);
    out.expect_code(1);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", out.describe());
    assert!(lines[0].len() < 700, "{} bytes", lines[0].len());
}

/// An Anthropic stream that starts, then reports an error event before any content.
fn anthropic_stream_error(kind: &str, message: &str) -> String {
    let start = json!({"type": "message_start", "message": {
        "id": "msg_x", "type": "message", "role": "assistant", "model": "test-model",
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 3, "output_tokens": 1}}});
    let error = json!({"type": "error", "error": {"type": kind, "message": message}});
    format!("event: message_start\ndata: {start}\n\nevent: ping\ndata: {{\"type\": \"ping\"}}\n\nevent: error\ndata: {error}\n\n")
}

#[test]
fn anthropic_overloaded_event_before_any_content_is_retried() {
    let dir = TestDir::new();
    let replies = vec![
        Reply::raw(
            200,
            "text/event-stream",
            anthropic_stream_error("overloaded_error", "Overloaded"),
        ),
        Reply::text("second attempt worked"),
    ];
    let (out, reqs) = run_api(Api::Anthropic, &dir, replies, &["-p", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "second attempt worked\n", "{}", out.describe());
    assert_eq!(reqs.len(), 2);
    assert!(out.stderr.contains("Overloaded"), "{}", out.describe());
    assert!(out.stderr.contains("retrying"), "{}", out.describe());
}

#[test]
fn anthropic_invalid_request_event_is_reported_not_retried() {
    let dir = TestDir::new();
    let replies = vec![Reply::raw(
        200,
        "text/event-stream",
        anthropic_stream_error("invalid_request_error", "prompt is too long"),
    )];
    let (out, reqs) = run_api(Api::Anthropic, &dir, replies, &["-p", "hi"]);
    out.expect_code(1);
    assert_eq!(reqs.len(), 1);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", out.describe());
    assert!(lines[0].contains("prompt is too long"), "{}", lines[0]);
}

#[test]
fn openai_error_object_inside_the_stream_is_reported() {
    let dir = TestDir::new();
    let body = "data: {\"error\":{\"message\":\"context length exceeded\",\
                \"type\":\"invalid_request_error\"}}\n\n";
    let replies = vec![Reply::raw(200, "text/event-stream", body)];
    let (out, reqs) = run_api(Api::OpenAi, &dir, replies, &["-p", "hi"]);
    out.expect_code(1);
    assert_eq!(reqs.len(), 1);
    assert!(
        out.stderr.contains("context length exceeded"),
        "{}",
        out.describe()
    );
    assert_eq!(out.stderr.lines().count(), 1);
}

#[test]
fn crlf_event_streams_are_understood() {
    let dir = TestDir::new();
    let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"crlf \"}}]}\r\n\r\n\
                data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"works\"},\
                \"finish_reason\":\"stop\"}]}\r\n\r\ndata: [DONE]\r\n\r\n";
    let replies = vec![Reply::raw(200, "text/event-stream", body)];
    let (out, _) = run_api(Api::OpenAi, &dir, replies, &["-p", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "crlf works\n");
}

#[test]
fn anthropic_cut_after_message_start_is_retried() {
    let dir = TestDir::new();
    // A short text: half of the body ends before the first text delta, so the connection
    // breaks when only `message_start` (usage, no content) has arrived.
    let replies = vec![Reply::truncated("Short."), Reply::text("complete now")];
    let (out, reqs) = run_api(Api::Anthropic, &dir, replies, &["-p", "hi"]);
    out.ok();
    assert_eq!(out.stdout, "complete now\n", "{}", out.describe());
    assert_eq!(reqs.len(), 2);
    assert!(out.stderr.contains("retrying"), "{}", out.describe());
}

#[test]
fn a_login_page_instead_of_a_stream_is_named_as_such() {
    let page = "<!DOCTYPE html>\n<html><head><title>Corporate proxy: sign in</title>\
                <script>\x1b]0;owned\x07</script></head><body>Sign in to continue</body></html>";
    for api in BOTH {
        let dir = TestDir::new();
        let replies = vec![Reply::raw(200, "text/html; charset=utf-8", page)];
        let (out, reqs) = run_api(api, &dir, replies, &["-p", "hi"]);
        out.expect_code(1);
        no_panic(&out.stderr);
        assert_eq!(reqs.len(), 1, "{api:?}: a page is not retried");
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{api:?}: {}", out.describe());
        assert!(
            lines[0].contains("not an event stream: text/html; charset=utf-8")
                && lines[0].contains("<title>Corporate proxy: sign in</title>"),
            "{api:?}: {}",
            lines[0]
        );
        assert!(!lines[0].contains("ended early"), "{}", lines[0]);
        assert!(!lines[0].contains('\x1b') && !lines[0].contains('\x07'));
        // Only the start of the body is shown.
        assert!(!lines[0].contains("Sign in to continue"), "{}", lines[0]);
    }
}
