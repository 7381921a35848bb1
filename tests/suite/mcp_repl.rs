//! MCP on a REPL reading from a pipe, against the fake server (`tests/common/mcp_fake.py`):
//! elicitation asked field by field as the server's schema says, the time spent answering
//! not counted against the call's timeout, and progress that comes just before a call's
//! answer not printed after it.

use std::time::Duration;

use serde_json::{json, Value};

use crate::common::mcp::{config, received, settled_line, slow_test_server, stdio_entry};
use crate::common::{Running, TestDir};

use super::ext_util::faux;

const WAIT: Duration = Duration::from_secs(30);

/// A call of tool `tool` of server `srv` as one faux-model turn.
fn call(tool: &str, args: Value) -> Value {
    json!({"tool_calls": [{"name": format!("mcp__srv__{tool}"), "arguments": args}]})
}

/// A REPL (piped stdin) on the faux model playing `replies`, with the fake server `srv`
/// (`timeout` seconds), once the server is connected.
fn repl(dir: &TestDir, timeout: u64, replies: &[Value]) -> Running {
    let cfg = config(dir, json!({"srv": stdio_entry(dir, "normal", timeout)}));
    let mut m = faux(dir, replies)
        .timeout(Duration::from_secs(90))
        .arg("--mcp-config")
        .arg(cfg)
        .args(["--no-watch", "--no-session"])
        .spawn();
    let line = settled_line(&mut m, "srv", WAIT);
    assert!(line.contains("srv: connected"), "never connected: {line}");
    m
}

/// Progress sent just before a call's answer belongs to that call: it is never printed
/// after the answer as a notice of its own.
#[test]
fn progress_just_before_the_answer_is_not_a_notice_after_it() {
    let dir = TestDir::new();
    let mut replies: Vec<Value> = (0..8).map(|_| call("rush", json!({"steps": 5}))).collect();
    replies.push(json!({"text": "all done"}));
    let mut m = repl(&dir, 30, &replies);
    m.send_line("go");
    m.wait_for_line("all done", WAIT);
    m.send_line("/quit");
    let out = m.wait();
    let all = format!("{}\n{}", out.stdout, out.stderr);
    assert!(!all.contains("[mcp srv] progress"), "{}", out.describe());
    let calls = received(&dir)
        .iter()
        .filter(|r| r["method"] == "tools/call")
        .count();
    assert_eq!(calls, 8, "{}", out.describe());
}

/// A one-field elicitation schema.
/// Waits for the tool's end, quits, and gives what the fake server received as the
/// answer to its elicitation `ask-1`, with the run's output.
fn quit_with_answer(mut m: Running, dir: &TestDir) -> (Value, crate::common::Output) {
    m.wait_for_line("asked", WAIT);
    m.send_line("/quit");
    let out = m.wait();
    let answer = received(dir)
        .into_iter()
        .find(|r| r["id"] == "ask-1")
        .unwrap_or_else(|| panic!("no answer: {}", out.describe()));
    (answer, out)
}

fn city_schema() -> Value {
    json!({"type": "object", "properties": {"city": {"type": "string"}}})
}

/// The user's time answering an elicitation does not count against the call's timeout:
/// answered after 3 s with a timeout of 2 s, the call still gets its answer.
#[test]
fn time_answering_an_elicitation_is_not_the_calls_timeout() {
    let dir = TestDir::new();
    let ask = call(
        "elicit",
        json!({"message": "Where to?", "schema": city_schema()}),
    );
    let mut m = repl(&dir, 2, &[ask, json!({"text": "asked"})]);
    m.send_line("go");
    m.wait_for_line("Where to? — answer it?", WAIT);
    std::thread::sleep(Duration::from_secs(3));
    m.send_line("y");
    m.wait_for_line("  city", WAIT);
    m.send_line("Paris");
    let (answer, out) = quit_with_answer(m, &dir);
    assert_eq!(
        answer["result"],
        json!({"action": "accept", "content": {"city": "Paris"}}),
        "{}",
        out.describe()
    );
    assert!(
        out.stdout
            .contains(r#"✓ {"action": "accept", "content": {"city": "Paris"}}"#)
            && !out.stdout.contains("no answer within"),
        "{}",
        out.describe()
    );
}

/// A form in an order that is not alphabetical (JSON text, so the faux model's arguments keep
/// it): a required text, a bounded integer, a multi-select, a titled single select, a boolean.
const FORM: &str = r#"{"type": "object", "properties": {
    "city": {"type": "string", "title": "City"},
    "age": {"type": "integer", "minimum": 1, "maximum": 120},
    "colors": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
    "hero": {"type": "string", "oneOf": [{"const": "hero-1", "title": "Superman"},
                                         {"const": "hero-2", "title": "Wonder Woman"}]},
    "agree": {"type": "boolean"}
}, "required": ["city"]}"#;

/// The form is asked in the server's order, shows the choices, asks again (saying why) for a
/// required field left empty and for values that do not fit, and sends what the schema asks
/// for: an array for the multi-select, a choice's value for its number.
#[test]
fn a_form_is_asked_in_the_servers_order_and_answered_as_its_schema_says() {
    let dir = TestDir::new();
    let ask = call("elicit", json!({"message": "Your trip", "schema": FORM}));
    let mut m = repl(&dir, 30, &[ask, json!({"text": "asked"})]);
    m.send_line("go");
    m.wait_for_line("Your trip — answer it?", WAIT);
    m.send_line("y");
    let steps = [
        ("  city (required) — City:", ""),
        ("city is required; again:", "Paris"),
        ("  age [a whole number from 1 to 120]:", "abc"),
        ("\"abc\" is not a whole number; again:", "200"),
        ("200 is more than 120; again:", "30"),
        (
            "  colors [pick any number, separated by commas: 1 a, 2 b]:",
            "a,b",
        ),
        ("  hero [pick one: 1 Superman, 2 Wonder Woman]:", "2"),
        ("  agree [y or n]:", "y"),
    ];
    for (question, typed) in steps {
        m.wait_for_line(question, WAIT);
        m.send_line(typed);
    }
    let (answer, out) = quit_with_answer(m, &dir);
    let content = json!({"city": "Paris", "age": 30, "colors": ["a", "b"], "hero": "hero-2",
                         "agree": true});
    assert_eq!(
        answer["result"],
        json!({"action": "accept", "content": content}),
        "{}",
        out.describe()
    );
    // Each field asked once it is its turn, in the schema's order.
    let firsts: Vec<usize> = ["  city", "  age", "  colors", "  hero", "  agree"]
        .iter()
        .map(|f| out.stdout.find(f).unwrap_or(usize::MAX))
        .collect();
    assert!(firsts.windows(2).all(|w| w[0] < w[1]), "{}", out.describe());
}

/// `n` declines the form and `c` cancels it, without asking its fields.
#[test]
fn a_form_can_be_declined_or_cancelled() {
    let dir = TestDir::new();
    let ask = || call("elicit", json!({"message": "Your trip", "schema": FORM}));
    let mut m = repl(&dir, 30, &[ask(), ask(), json!({"text": "asked"})]);
    m.send_line("go");
    m.wait_for_line("Your trip — answer it?", WAIT);
    m.send_line("n");
    m.wait_for_line(r#"✓ {"action": "decline"}"#, WAIT);
    m.wait_for_line("Your trip — answer it?", WAIT);
    m.send_line("c");
    m.wait_for_line(r#"✓ {"action": "cancel"}"#, WAIT);
    m.wait_for_line("asked", WAIT);
    m.send_line("/quit");
    let out = m.wait();
    assert!(!out.stdout.contains("  city"), "{}", out.describe());
}

/// On the REPL, a server never seen that is slower than a prompt's grace is passed over with
/// a notice saying its tools come once it is ready; a later prompt has them offered.
#[test]
fn a_slow_server_never_seen_is_passed_over_then_offered_on_the_repl() {
    let dir = TestDir::new();
    slow_test_server(&dir);
    let echo = json!({"tool_calls": [{"name": "mcp__t__echo", "arguments": {"text": "late"}}]});
    let replies = [
        json!({"text": "first answer"}),
        echo,
        json!({"text": "second answer"}),
    ];
    let mut m = faux(&dir, &replies)
        .timeout(Duration::from_secs(90))
        .args(["--trust", "--no-watch", "--no-session"])
        .spawn();
    m.send_line("one");
    let notice = m.wait_for_line("not waiting for MCP server t", WAIT);
    assert!(
        notice.contains("still connecting; its tools are offered once it is ready"),
        "{notice}"
    );
    m.wait_for_line("first answer", WAIT);
    let line = settled_line(&mut m, "t", WAIT);
    assert!(line.contains("t: connected"), "never connected: {line}");
    m.send_line("two");
    m.wait_for_line("second answer", WAIT);
    m.send_line("/quit");
    let out = m.wait();
    assert!(out.stdout.contains("echo: late"), "{}", out.describe());
    assert!(
        !out.stdout.contains("to call 'mcp__t__echo'"),
        "{}",
        out.describe()
    );
}

/// A question of a call that was cancelled (Ctrl-C while it waits for the answer) is not
/// asked any more: the server gets `cancel`, no field is asked, and the next line is a prompt.
#[test]
fn an_elicitation_stops_being_asked_once_its_call_is_cancelled() {
    let dir = TestDir::new();
    let ask = call(
        "elicit",
        json!({"message": "Where to?", "schema": city_schema()}),
    );
    let mut m = repl(&dir, 30, &[ask, json!({"text": "next prompt ran"})]);
    m.send_line("go");
    m.wait_for_line("Where to? — answer it?", WAIT);
    m.interrupt();
    let answer =
        crate::common::mcp::wait_received(&dir, WAIT, |r| r.iter().any(|r| r["id"] == "ask-1"));
    let answer = answer.iter().find(|r| r["id"] == "ask-1").cloned();
    m.send_line("y");
    m.wait_for_line("next prompt ran", WAIT);
    m.send_line("/quit");
    let out = m.wait();
    assert_eq!(
        answer.map(|a| a["result"].clone()),
        Some(json!({"action": "cancel"})),
        "{}",
        out.describe()
    );
    assert!(!out.stdout.contains("  city"), "{}", out.describe());
}

/// A question that comes after its call was cancelled (the server asks late) is never
/// shown: it is answered `cancel`, and the next line is a prompt.
#[test]
fn an_elicitation_coming_after_its_call_was_cancelled_is_not_asked() {
    let dir = TestDir::new();
    let ask = call(
        "elicit",
        json!({"message": "Where to?", "schema": city_schema(), "delay": 1.5}),
    );
    let mut m = repl(&dir, 30, &[ask]);
    m.send_line("go");
    m.wait_for_line("mcp__srv__elicit", WAIT);
    crate::common::mcp::wait_received(&dir, WAIT, |r| {
        r.iter().any(|r| r["method"] == "tools/call")
    });
    m.interrupt();
    let answered =
        crate::common::mcp::wait_received(&dir, WAIT, |r| r.iter().any(|r| r["id"] == "ask-1"));
    let answer = answered.iter().find(|r| r["id"] == "ask-1").cloned();
    m.send_line("/quit");
    let out = m.wait();
    assert_eq!(
        answer.map(|a| a["result"].clone()),
        Some(json!({"action": "cancel"})),
        "{answered:?}\n{}",
        out.describe()
    );
    assert!(!out.stdout.contains("answer it?"), "{}", out.describe());
}
