//! Tests of reading `.mcp.json` files.

use super::*;

fn env(k: &str) -> Option<String> {
    match k {
        "TOKEN" => Some("s3cret".into()),
        "EMPTY" => Some(String::new()),
        _ => None,
    }
}

fn one(text: &str) -> Servers {
    parse(Path::new("/p/.mcp.json"), text, &env)
}

#[test]
fn same_server_agrees_with_key() {
    let names = [
        "fs", "my-fs", "my_fs", "My-FS", "my-fsx", "myfs", "ü-x", "Ü_x", "ü_x", "",
    ];
    for a in names {
        for b in names {
            assert_eq!(same_server(a, b), key(a) == key(b), "{a} / {b}");
        }
    }
}

#[test]
fn stdio_and_http_entries_with_expansion() {
    let s = one(r#"{"mcpServers": {
          "fs": {"command": "npx", "args": ["-y", "srv", "${HOME:-/home/x}"], "env": {"T": "${TOKEN}"}, "timeout": 5},
          "web": {"type": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
          "off": {"command": "x", "enabled": false}
        }}"#);
    assert!(s.problems.is_empty(), "{:?}", s.problems);
    let fs = &s.servers[0];
    assert_eq!(fs.timeout, Duration::from_secs(5));
    assert_eq!(
        fs.transport,
        Transport::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "srv".into(), "/home/x".into()],
            env: [("T".to_string(), "s3cret".to_string())].into(),
            cwd: None,
        }
    );
    let web = s.servers.iter().find(|s| s.name == "web").unwrap();
    assert_eq!(
        web.transport,
        Transport::Http {
            url: "https://h/mcp".into(),
            headers: [("Authorization".to_string(), "Bearer s3cret".to_string())].into(),
            sse: false,
        }
    );
    assert!(!s.servers.iter().find(|s| s.name == "off").unwrap().enabled);
}

#[test]
fn bad_entries_are_named_and_the_others_load() {
    let s = one(r#"{"mcpServers": {
          "old": {"type": "sse", "url": "https://h/sse"},
          "oldcmd": {"type": "sse", "command": "x"},
          "both": {"command": "x", "url": "http://h"},
          "neither": {},
          "badargs": {"command": "x", "args": "not a list"},
          "ok": {"command": "x"}
        }}"#);
    assert_eq!(s.servers.len(), 2);
    let old = s.servers.iter().find(|s| s.name == "old").unwrap();
    assert!(
        matches!(&old.transport, Transport::Http { sse: true, url, .. } if url == "https://h/sse")
    );
    let text: Vec<String> = s.problems.iter().map(|p| p.to_string()).collect();
    assert!(
        text.iter()
            .any(|t| t.contains("/p/.mcp.json (server \"badargs\"): \"args\" must be a list")),
        "{text:?}"
    );
    assert!(
        text.iter()
            .any(|t| t.contains("\"oldcmd\"") && t.contains("needs \"url\"")),
        "{text:?}"
    );
    assert!(
        text.iter()
            .any(|t| t.contains("\"both\"") && t.contains("not both")),
        "{text:?}"
    );
    assert!(text.iter().any(|t| t.contains("\"neither\"")), "{text:?}");
    let broken = one("{\"mcpServers\": {");
    assert!(
        broken.problems[0]
            .to_string()
            .contains("not valid JSON (line 1"),
        "{:?}",
        broken.problems
    );
    assert!(one("[]").problems[0].message.contains("mcpServers"));
}

#[test]
fn expansion_rules() {
    assert_eq!(expand("a${TOKEN}b", &env), "as3cretb");
    assert_eq!(expand("${NOPE}", &env), "");
    assert_eq!(expand("${NOPE:-dflt}", &env), "dflt");
    assert_eq!(expand("${EMPTY:-dflt}", &env), "dflt");
    assert_eq!(expand("$(rm -rf /) ${TOKEN", &env), "$(rm -rf /) ${TOKEN");
}

#[test]
fn later_files_win_by_name_and_dash_equals_underscore() {
    let dir = std::env::temp_dir().join(format!("mypi-mcp-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let user = dir.join("user.json");
    let project = dir.join("project.json");
    std::fs::write(
        &user,
        r#"{"mcpServers": {"my-srv": {"command": "user"}, "u": {"command": "u"}}}"#,
    )
    .unwrap();
    std::fs::write(
        &project,
        r#"{"mcpServers": {"my_srv": {"command": "project"}}}"#,
    )
    .unwrap();
    let s = Servers::load(&[user, project], None, &env);
    assert!(s.problems.is_empty(), "{:?}", s.problems);
    assert_eq!(s.servers.len(), 2);
    let srv = s.servers.iter().find(|s| s.name == "my_srv").unwrap();
    assert!(matches!(&srv.transport, Transport::Stdio { command, .. } if command == "project"));
    let missing = Servers::load(&[dir.join("missing.json")], None, &env);
    assert_eq!(
        missing.problems[0].to_string(),
        format!(
            "{}: there is no such file",
            dir.join("missing.json").display()
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_type_that_contradicts_the_entry_is_an_error() {
    let s = one(r#"{"mcpServers": {
          "h": {"type": "http", "command": "true"},
          "s": {"type": "stdio", "url": "https://h/mcp"},
          "fine": {"type": "streamable-http", "url": "https://h/mcp"},
          "fine2": {"type": "stdio", "command": "true"}
        }}"#);
    let names: Vec<&str> = s.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["fine", "fine2"]);
    let text: Vec<String> = s.problems.iter().map(|p| p.to_string()).collect();
    assert!(
        text.iter()
            .any(|t| t.contains("(server \"h\"): \"type\": \"http\" needs \"url\"")),
        "{text:?}"
    );
    assert!(
        text.iter()
            .any(|t| t.contains("(server \"s\"): \"type\": \"stdio\" needs \"command\"")),
        "{text:?}"
    );
}

#[test]
fn two_entries_of_one_server_in_a_file_are_an_error_and_the_first_is_used() {
    // "z-srv" comes first in the file though "Z_srv" sorts before it.
    let s = one(r#"{"mcpServers": {
          "z-srv": {"command": "first"},
          "b": {"command": "b"},
          "Z_srv": {"command": "second"}
        }}"#);
    assert_eq!(s.servers.len(), 2, "{:?}", s.servers);
    let z = s.servers.iter().find(|s| s.name == "z-srv").unwrap();
    assert!(matches!(&z.transport, Transport::Stdio { command, .. } if command == "first"));
    assert_eq!(s.problems.len(), 1, "{:?}", s.problems);
    let text = s.problems[0].to_string();
    assert!(
        text.starts_with(
            "/p/.mcp.json (server \"Z_srv\"): names the same server as the entry \"z-srv\""
        ),
        "{text}"
    );
}
