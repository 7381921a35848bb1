//! What the user sees of MCP configuration mistakes and switches, through the real binary: a
//! missing `--mcp-config` file, an entry whose `type` contradicts it, two entries of one
//! file that are the same server, `/mcp reconnect` of a disabled server, and `/mcp` and
//! `mypi mcp list` with MCP turned off (and by what).

use std::time::Duration;

use serde_json::json;

use crate::common::mcp::{config, stdio_entry};
use crate::common::{Mypi, TestDir};

/// `mypi mcp list --mcp-config FILE`.
fn mcp_list(dir: &TestDir, file: &std::path::Path) -> crate::common::Output {
    Mypi::new(dir)
        .timeout(Duration::from_secs(60))
        .args(["mcp", "list", "--mcp-config"])
        .arg(file)
        .run()
}

#[test]
fn an_mcp_config_fifo_is_refused_at_once() {
    let dir = TestDir::new();
    let fifo = dir.mkfifo("servers.json");
    let out = mcp_list(&dir, &fifo);
    out.expect_code(2);
    assert!(
        out.stdout.contains(&format!(
            "config problem: {}: cannot read it: it is not a regular file",
            fifo.display()
        )),
        "{}",
        out.describe()
    );
}

#[test]
fn a_missing_mcp_config_file_is_an_error_naming_it() {
    let dir = TestDir::new();
    let missing = dir.join("nonexistent.json");
    let out = mcp_list(&dir, &missing);
    out.expect_code(2);
    assert!(
        out.stdout.contains(&format!(
            "config problem: {}: there is no such file",
            missing.display()
        )),
        "{}",
        out.describe()
    );

    // A prompt says so and goes on without MCP.
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "--no-session", "--mcp-config"])
        .arg(&missing)
        .args(["-p", "hi"])
        .run();
    out.ok();
    assert!(
        out.stderr.contains(&format!(
            "MCP config: {}: there is no such file",
            missing.display()
        )),
        "{}",
        out.describe()
    );
}

#[test]
fn a_type_that_contradicts_the_entry_is_a_config_error() {
    let dir = TestDir::new();
    let cfg = config(
        &dir,
        json!({
            "h": {"type": "http", "command": "true"},
            "s": {"type": "stdio", "url": "http://127.0.0.1:1/mcp"},
        }),
    );
    let out = mcp_list(&dir, &cfg);
    out.expect_code(2);
    let s = &out.stdout;
    assert!(
        s.contains("(server \"h\"): \"type\": \"http\" needs \"url\""),
        "{}",
        out.describe()
    );
    assert!(
        s.contains("(server \"s\"): \"type\": \"stdio\" needs \"command\""),
        "{}",
        out.describe()
    );
    assert!(!s.contains("h: failed") && !s.contains("s: failed"), "{s}");
}

#[test]
fn two_entries_of_one_server_in_a_file_are_an_error_and_the_first_is_used() {
    let dir = TestDir::new();
    let mut second = stdio_entry(&dir, "exit_start", 20);
    second["env"] = json!({"SECOND": "1"});
    // Written by hand: the order in the file is what counts.
    let text = format!(
        "{{\"mcpServers\": {{\"my_srv\": {}, \"my-srv\": {}}}}}",
        stdio_entry(&dir, "normal", 20),
        second
    );
    let cfg = dir.write("mcp.json", &text);
    let out = mcp_list(&dir, &cfg);
    out.expect_code(1);
    let s = &out.stdout;
    assert!(
        s.contains(&format!(
            "config problem: {} (server \"my-srv\"): names the same server as the entry \
             \"my_srv\" before it",
            cfg.display()
        )),
        "{}",
        out.describe()
    );
    assert!(s.contains("my_srv: connected"), "{}", out.describe());
}

#[test]
fn reconnect_of_a_disabled_server_is_refused_saying_where_it_is_disabled() {
    let dir = TestDir::new();
    let mut off = stdio_entry(&dir, "normal", 20);
    off["enabled"] = json!(false);
    let cfg = config(&dir, json!({"off": off}));
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "--no-session", "--mcp-config"])
        .arg(&cfg)
        .args(["-p", "/mcp reconnect off"])
        .run();
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(
        all.contains(&format!(
            "server 'off' is not available: it is disabled in {} (\"enabled\": false)",
            cfg.display()
        )),
        "{}",
        out.describe()
    );
    assert!(!all.contains("off: connected"), "{}", out.describe());
    assert!(!dir.exists("log"), "the server was started");
}

#[test]
fn mcp_and_mcp_list_say_what_turned_mcp_off() {
    let dir = TestDir::new();
    let cfg = config(&dir, json!({"srv": stdio_entry(&dir, "normal", 20)}));
    let slash = |m: Mypi| {
        m.args(["--provider", "faux", "--no-session", "--mcp-config"])
            .arg(&cfg)
            .args(["-p", "/mcp"])
            .run()
    };
    let list = |m: Mypi| m.args(["mcp", "list", "--mcp-config"]).arg(&cfg).run();

    // --no-mcp and --mcp-config do not go together: the servers are in .mcp.json here.
    dir.write(".mcp.json", &std::fs::read_to_string(&cfg).unwrap());
    let out = Mypi::new(&dir)
        .args(["--provider", "faux", "--no-session", "--trust", "--no-mcp"])
        .args(["-p", "/mcp"])
        .run();
    out.ok();
    assert!(
        out.stdout
            .contains("MCP is turned off by --no-mcp: no MCP server is started"),
        "{}",
        out.describe()
    );
    let out = list(Mypi::new(&dir).env("MYPI_MCP", "0"));
    out.ok();
    assert!(
        out.stdout.contains("MCP is turned off by MYPI_MCP=0"),
        "{}",
        out.describe()
    );

    let toml = dir.home().join(".agents/config.toml");
    std::fs::create_dir_all(toml.parent().unwrap()).unwrap();
    std::fs::write(&toml, "[mcp]\nenabled = false\n").unwrap();
    let want = format!(
        "MCP is turned off by `enabled = false` in [mcp] at {}:2",
        toml.display()
    );
    for out in [slash(Mypi::new(&dir)), list(Mypi::new(&dir))] {
        out.ok();
        assert!(out.stdout.contains(&want), "{want}\n{}", out.describe());
    }
    assert!(!dir.exists("log"), "a server was started");
}

/// An `env` value from a command (`"!…"`) is the command's output when the server starts;
/// a project's HTTP entry may not use one (its output would go to the project's server), and
/// a failing command fails that server's start naming the key, not what it printed.
#[test]
fn env_and_header_values_may_come_from_a_command() {
    let dir = TestDir::new();
    let seen = dir.join("seen");
    let script = format!(
        "printf '%s' \"$TOKEN\" > '{}'; exec python3 '{}' normal '{}'",
        seen.display(),
        crate::common::mcp::fake_py().display(),
        dir.join("log").display()
    );
    let entry = json!({"command": "sh", "args": ["-c", script],
        "env": {"TOKEN": "!printf 'from-a-command\\n'", "LITERAL": "!!kept"}});
    let failing = json!({"command": "sh", "args": ["-c", "exit 0"],
        "env": {"TOKEN": "!echo printed-secret; exit 4"}});
    let cfg = config(&dir, json!({"ok": entry, "bad": failing}));
    let out = mcp_list(&dir, &cfg);
    assert!(out.stdout.contains("ok: connected"), "{}", out.describe());
    assert_eq!(dir.read("seen"), "from-a-command");
    assert!(
        out.stdout
            .contains("the value of \"TOKEN\" comes from a command that failed"),
        "{}",
        out.describe()
    );
    assert!(!out.stdout.contains("printed-secret"), "{}", out.describe());
    // In a project's file, an HTTP entry with one is not used.
    let http = json!({"type": "http", "url": "http://127.0.0.1:9/mcp",
        "headers": {"Authorization": "!cat ~/.token"}});
    dir.write(
        ".mcp.json",
        &json!({"mcpServers": {"proj": http}}).to_string(),
    );
    let out = Mypi::new(&dir).args(["mcp", "list"]).run();
    assert!(
        out.stdout
            .contains("a value from a command (\"!…\") in its url or headers"),
        "{}",
        out.describe()
    );
}
