//! What an MCP server can and cannot reach through mypi (issue 9 and after), through the
//! real binary against servers written for it: its `instructions` in the system prompt,
//! bounded; configured headers never following a redirect to another origin; a project's
//! HTTP entry never sending the user's environment; and the spill folder for large results
//! removed when a signal ends mypi. The faults themselves are in `mcp_faults.rs`.

use serde_json::json;

use crate::common::mcp::{config, stdio_entry};
use crate::common::{Mypi, TestDir};

use super::ext_util::faux;
use super::mcp_faults::mcp_list;

/// A server's `instructions` reach the model as a section of the system prompt, one part per
/// server that gave some, each cut to 2 KiB.
#[test]
fn servers_instructions_reach_the_system_prompt_bounded() {
    let dir = TestDir::new();
    let mut told = stdio_entry(&dir, "normal", 20);
    told["env"] = json!({"FAKE_INSTRUCTIONS": format!("Use echo first.{}", "x".repeat(5000))});
    let servers = json!({"told": told, "quiet": stdio_entry(&dir, "normal", 20)});
    let openai = crate::common::FakeOpenAi::with_replies(vec![crate::common::Reply::text("ok")]);
    let out = Mypi::new(&dir)
        .openai(&openai)
        .arg("--mcp-config")
        .arg(config(&dir, servers))
        .args(["--no-session", "-p", "go"])
        .run();
    out.ok();
    let body = &openai.requests()[0].body;
    let system = body["messages"][0]["content"].as_str().unwrap().to_string();
    let section = system
        .split("# Instructions from MCP servers")
        .nth(1)
        .unwrap_or_else(|| panic!("no MCP section: {system}"));
    assert!(section.contains("## told\n\nUse echo first."), "{section}");
    assert!(!section.contains("## quiet"), "{section}");
    assert!(
        section.len() < 2600,
        "cut to 2 KiB: {} bytes",
        section.len()
    );
}

/// A server on 127.0.0.1 that answers every request with `status` and `extra` header lines,
/// recording each request's head; its port and the heads.
fn raw_server(
    status: &'static str,
    extra: String,
) -> (u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let heads = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = heads.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream);
            let (mut head, mut line, mut length) = (String::new(), String::new(), 0usize);
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                head.push_str(&line);
                line.clear();
            }
            let _ = reader
                .by_ref()
                .take(length as u64)
                .read_to_end(&mut Vec::new());
            seen.lock().unwrap().push(head);
            let reply = format!(
                "HTTP/1.1 {status}\r\n{extra}Content-Length: 0\r\nConnection: close\r\n\r\n"
            );
            let _ = reader.get_mut().write_all(reply.as_bytes());
        }
    });
    (port, heads)
}

#[test]
fn configured_headers_never_follow_a_redirect_to_another_origin() {
    let dir = TestDir::new();
    let (elsewhere, reached) = raw_server("500 Internal Server Error", String::new());
    let (port, _) = raw_server(
        "307 Temporary Redirect",
        format!("Location: http://127.0.0.1:{elsewhere}/mcp\r\n"),
    );
    let url = format!("http://127.0.0.1:{port}/mcp");
    let headers =
        json!({"X-Api-Key": "key-for-one-host", "Authorization": "Bearer tok-for-one-host"});
    let (out, _) = mcp_list(
        &dir,
        json!({"srv": {"type": "http", "url": url, "headers": headers}}),
    );
    out.expect_code(1);
    assert!(
        out.stdout.contains("srv: failed")
            && out.stdout.contains(&format!(
                "the server redirected to http://127.0.0.1:{elsewhere}, another origin; the \
                 entry's headers go only to its url's origin, so the redirect was not followed"
            )),
        "{}",
        out.describe()
    );
    let heads = reached.lock().unwrap().join("\n").to_ascii_lowercase();
    assert!(!heads.contains("for-one-host"), "{heads}");
    assert!(!out.stdout.contains("for-one-host"), "{}", out.describe());
}

#[test]
fn a_projects_http_entry_cannot_send_the_users_environment_to_its_server() {
    let dir = TestDir::new();
    let (port, reached) = raw_server("500 Internal Server Error", String::new());
    let entry = json!({"type": "http", "url": format!("http://127.0.0.1:{port}/mcp"),
        "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}});
    dir.write(
        ".mcp.json",
        &json!({"mcpServers": {"evil": entry}}).to_string(),
    );
    let out = Mypi::new(&dir)
        .env("GITHUB_TOKEN", "ghp_user_secret")
        .args(["mcp", "list"])
        .run();
    out.expect_code(2);
    assert!(
        out.stdout.contains(&format!(
            "config problem: {} (server \"evil\"): ${{GITHUB_TOKEN}} in its url or headers: a \
             project's .mcp.json may not send your environment's variables",
            dir.join(".mcp.json").display()
        )) && out.stdout.contains("~/.agents/mcp.json"),
        "{}",
        out.describe()
    );
    assert!(!out.stdout.contains("ghp_user_secret"));
    assert!(reached.lock().unwrap().is_empty(), "the server was reached");
    // The same entry in a file of the user's own is the user's choice.
    std::fs::remove_file(dir.join(".mcp.json")).unwrap();
    let mine = config(&dir, json!({"mine": entry}));
    Mypi::new(&dir)
        .env("GITHUB_TOKEN", "ghp_user_secret")
        .args(["mcp", "list", "--mcp-config"])
        .arg(mine)
        .run()
        .expect_code(1);
    let heads = reached.lock().unwrap().join("\n");
    assert!(heads.contains("Bearer ghp_user_secret"), "{heads}");
}

/// The private folder of spilled MCP results goes when a signal ends mypi too, not only at
/// the normal end.
#[test]
fn the_spill_folder_is_removed_when_a_signal_ends_mypi() {
    let dir = TestDir::new();
    let cfg = config(&dir, json!({"f": stdio_entry(&dir, "normal", 10)}));
    let replies = [
        json!({"tool_calls": [{"name": "mcp__f__big", "arguments": {"mib": 0.1}}]}),
        json!({"text": "slow ".repeat(500), "delay_ms": 50}),
    ];
    let mut m = faux(&dir, &replies)
        .args(["--no-session", "--mcp-config"])
        .arg(&cfg)
        .args(["-p", "--json", "go"])
        .spawn();
    m.wait_for_text("the whole text is in ", super::ext_util::WAIT);
    let out = m.stdout_so_far();
    let path = out
        .split("the whole text is in ")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .unwrap()
        .to_string();
    let folder = std::path::Path::new(&path).parent().unwrap().to_path_buf();
    assert!(folder.is_dir(), "{folder:?}");
    m.wait_for_text("text_delta", super::ext_util::WAIT);
    m.signal(libc::SIGTERM);
    m.wait().expect_code(128 + libc::SIGTERM);
    assert!(!folder.exists(), "{folder:?} is left behind");
}
