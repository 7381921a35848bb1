//! Prompt caching (`cargo bench --bench prompt_cache`): the real binary in a 20-turn session
//! (19 tool turns reading a file, then the answer) against a fake Anthropic server whose cache
//! serves like the real one (`tests/common/prompt_cache.rs`: reads and writes only at the
//! request's breakpoints, 20 blocks of lookback, nothing under 1024 tokens). Measured per turn:
//! the share of the request's input tokens read from the cache, and the tokens written to it;
//! once as is, once with a `context` handler that rewrites the first message from turn 10 on
//! (as a redaction would), which should cost one turn of writes. Issue 38 asks for over 80 %
//! read from turn 3 on.
// Benchmark code: unwrap as a failed check.
#![allow(clippy::unwrap_used)]

#[allow(dead_code)] // the tests' cache has more than the bench uses
#[path = "../tests/common/prompt_cache.rs"]
mod prompt_cache;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use prompt_cache::PromptCache;
use serde_json::{json, Value};

const TURNS: usize = 20;
/// The turn from which the `context` handler rewrites the first message.
const REWRITE_AT: u32 = 10;

/// The fake Messages API: each request is served by the cache; the first `TURNS - 1` replies
/// call `read`, the last answers.
fn serve(listener: TcpListener, cache: Arc<Mutex<PromptCache>>) {
    let mut seq = 0usize;
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        let Some(body) = read_request(&mut stream) else {
            continue;
        };
        let (input, read, write) = cache.lock().unwrap().serve(&body);
        seq += 1;
        let reply = sse_reply(seq, (input, read, write));
        let head =
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
        let _ = stream.write_all(head.as_bytes());
        let _ = stream.write_all(reply.as_bytes());
    }
}

/// The JSON body of one HTTP request.
fn read_request(stream: &mut TcpStream) -> Option<Value> {
    let mut reader = BufReader::new(stream);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().ok()?;
            }
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

/// The streamed reply to request `seq`, with the usage the cache served.
fn sse_reply(seq: usize, (input, read, write): (u64, u64, u64)) -> String {
    let event = |v: Value| format!("event: {}\ndata: {v}\n\n", v["type"].as_str().unwrap());
    let usage = json!({"input_tokens": input, "cache_read_input_tokens": read,
                       "cache_creation_input_tokens": write, "output_tokens": 1});
    let mut out = event(
        json!({"type": "message_start", "message": {"id": format!("m{seq}"),
        "type": "message", "role": "assistant", "content": [], "usage": usage}}),
    );
    let (block, delta, stop) = if seq < TURNS {
        (
            json!({"type": "tool_use", "id": format!("c{seq}"), "name": "read", "input": {}}),
            json!({"type": "input_json_delta", "partial_json": "{\"path\": \"notes.txt\"}"}),
            "tool_use",
        )
    } else {
        (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": "read them all"}),
            "end_turn",
        )
    };
    out += &event(json!({"type": "content_block_start", "index": 0, "content_block": block}));
    out += &event(json!({"type": "content_block_delta", "index": 0, "delta": delta}));
    out += &event(json!({"type": "content_block_stop", "index": 0}));
    out += &event(
        json!({"type": "message_delta", "delta": {"stop_reason": stop},
                         "usage": {"output_tokens": 10}}),
    );
    out + &event(json!({"type": "message_stop"}))
}

/// One session in a fresh folder (with the `context` handler when `rewrite`): per turn, the
/// share of the input read from the cache and the tokens written to it.
fn session(rewrite: bool) -> Vec<(f64, u64)> {
    let dir =
        std::env::temp_dir().join(format!("mypi-bench-cache-{}-{rewrite}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("home/.agents")).unwrap();
    // Project extensions load only in a trusted folder.
    let trust = format!("[trust]\ntrees = [{:?}]\n", dir.display().to_string());
    std::fs::write(dir.join("home/.agents/config.toml"), trust).unwrap();
    let notes = "A line of notes to read again and again.\n".repeat(20);
    std::fs::write(dir.join("notes.txt"), notes).unwrap();
    if rewrite {
        let ext = dir.join(".agents/extensions");
        std::fs::create_dir_all(&ext).unwrap();
        let handler = format!(
            "local turn = 0\napi.on(\"turn_start\", function(e) turn = e.turn end)\n\
             api.on(\"context\", function(e)\n  if turn < {REWRITE_AT} then return nil end\n  \
             e.messages[1].content = e.messages[1].content .. \" [redacted]\"\n  \
             return {{ updated_messages = e.messages }}\nend)\n"
        );
        std::fs::write(ext.join("redact.lua"), handler).unwrap();
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let cache = Arc::new(Mutex::new(PromptCache::default()));
    std::thread::spawn(move || serve(listener, cache));
    let out = run(&dir, &url);
    let _ = std::fs::remove_dir_all(&dir);
    out.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "turn_end")
        .map(|t| {
            let n = |k: &str| t["usage"][k].as_u64().unwrap_or(0);
            (
                n("cached_tokens") as f64 / n("input_tokens") as f64,
                n("cache_write_tokens"),
            )
        })
        .collect()
}

/// `mypi -p … --json` in `dir` against the fake at `url`: its stdout.
fn run(dir: &Path, url: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_mypi"))
        .current_dir(dir)
        .args([
            "--provider",
            "anthropic",
            "--base-url",
            url,
            "--model",
            "claude-sonnet-4-5",
        ])
        .args([
            "--no-session",
            "-p",
            "read the notes, again and again",
            "--json",
        ])
        .env("HOME", dir.join("home"))
        .env("ANTHROPIC_API_KEY", "bench")
        .env("NO_COLOR", "1")
        .env("NO_PROXY", "127.0.0.1")
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("HTTP_PROXY")
        .env_remove("http_proxy")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn report(name: &str, turns: &[(f64, u64)]) {
    assert_eq!(turns.len(), TURNS, "{name}: every turn reports its usage");
    println!("{name}");
    println!("  turn  read from cache  written");
    for (i, (share, written)) in turns.iter().enumerate() {
        println!("  {:>4}  {:>14.1} %  {written:>7}", i + 1, share * 100.0);
    }
    let from3: Vec<f64> = turns[2..].iter().map(|t| t.0).collect();
    let least = from3.iter().cloned().fold(f64::MAX, f64::min);
    let mean = from3.iter().sum::<f64>() / from3.len() as f64;
    println!(
        "  from turn 3 on: mean {:.1} %, least {:.1} %\n",
        mean * 100.0,
        least * 100.0
    );
}

fn main() {
    report("20-turn session", &session(false));
    let rewritten = session(true);
    let dip = rewritten[REWRITE_AT as usize - 1].1;
    assert!(
        dip > 2 * rewritten[REWRITE_AT as usize - 2].1,
        "the rewrite was not sent (is the handler loaded?)"
    );
    report(
        &format!(
            "20-turn session, a context handler rewriting the first message from turn {REWRITE_AT}"
        ),
        &rewritten,
    );
    let after: Vec<f64> = rewritten[REWRITE_AT as usize..]
        .iter()
        .map(|t| t.0)
        .collect();
    println!(
        "  after the rewrite's turn: least {:.1} % read",
        after.iter().cloned().fold(f64::MAX, f64::min) * 100.0
    );
}
