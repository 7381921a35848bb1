//! MCP servers behind OAuth (issue 37, points 1, 2 and 6), from the user's side, against a
//! small MCP server with its own authorization server on 127.0.0.1
//! (`tests/common/oauth_server.py`) and a fake `xdg-open` that fetches the authorization page
//! and follows its redirect to mypi's callback (as a browser whose user approves would):
//! "needs login" in `mypi mcp list`, `mypi mcp login` keeping the token in the user's folder
//! (mode 0600, not in the project), the expired token refreshed without the user, no secret
//! in the session, the log or the output, `mypi mcp logout`, and a login against bad metadata
//! or a forged state ending with a clear message.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::common::mcp::{config, tool_results};
use crate::common::{Mypi, Output, TestDir};

use super::ext_util::faux;

/// The fake MCP + authorization server, killed on drop.
struct OAuthFake {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl OAuthFake {
    fn start(dir: &TestDir, mode: &str) -> OAuthFake {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/common/oauth_server.py");
        let log = dir.join(&format!("oauth-{mode}.log"));
        let mut child = Command::new("python3")
            .arg(script)
            .arg(mode)
            .arg(&log)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start python3 oauth_server.py");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped stdout");
        BufReader::new(stdout).read_line(&mut line).unwrap();
        let port = line.trim().strip_prefix("PORT ").unwrap().parse().unwrap();
        OAuthFake { child, port, log }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    fn events(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

impl Drop for OAuthFake {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `bin/xdg-open` that GETs the page and follows redirects (to mypi's callback).
fn fake_browser(dir: &TestDir) -> String {
    let script = dir.write(
        "bin/xdg-open",
        "#!/bin/sh\nexec python3 -c 'import sys, urllib.request; \
         urllib.request.urlopen(sys.argv[1], timeout=10).read()' \"$1\"\n",
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = std::env::var("PATH").unwrap_or_default();
    format!("{}:{path}", dir.join("bin").display())
}

fn mypi_mcp(dir: &TestDir, cfg: &Path, args: &[&str]) -> Output {
    Mypi::new(dir)
        .env("PATH", fake_browser(dir))
        .timeout(Duration::from_secs(90))
        .args(["mcp"])
        .args(args)
        .arg("--mcp-config")
        .arg(cfg)
        .run()
}

/// Every file under `root` whose text contains `needle`, but the token folder.
fn files_containing(root: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(root) else {
        return found;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.ends_with("mcp-auth") {
            continue;
        }
        if p.is_dir() {
            found.extend(files_containing(&p, needle));
        } else if std::fs::read(&p)
            .map(|b| String::from_utf8_lossy(&b).contains(needle))
            .unwrap_or(false)
        {
            found.push(p);
        }
    }
    found
}

#[test]
fn login_keeps_a_private_token_which_is_refreshed_and_logout_deletes_it() {
    let dir = TestDir::new();
    let fake = OAuthFake::start(&dir, "ok");
    let cfg = config(&dir, json!({"srv": {"type": "http", "url": fake.url()}}));

    let out = mypi_mcp(&dir, &cfg, &["list"]);
    assert!(
        out.stdout
            .contains("srv: needs login — run: mypi mcp login srv"),
        "{}",
        out.describe()
    );

    let out = mypi_mcp(&dir, &cfg, &["login", "srv"]);
    out.ok();
    let token = dir.home().join(".agents/mcp-auth/srv.json");
    assert!(
        out.stdout.contains("logged in to 'srv'"),
        "{}",
        out.describe()
    );
    assert!(token.is_file(), "{}", out.describe());
    assert!(!dir.path().join(".agents/mcp-auth").exists());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&token).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    assert!(!out.stdout.contains("SECRET") && !out.stderr.contains("SECRET"));

    // The first token lives one second: the next run refreshes it without the user.
    std::thread::sleep(Duration::from_millis(1500));
    let replies = [
        json!({"tool_calls": [{"name": "mcp__srv__echo", "arguments": {}}]}),
        json!({"text": "done"}),
    ];
    let out = faux(&dir, &replies)
        .timeout(Duration::from_secs(90))
        .arg("--mcp-config")
        .arg(&cfg)
        .args(["--json", "-p", "go"])
        .run();
    out.ok();
    assert_eq!(
        tool_results(&out.stdout),
        [("echoed".to_string(), false)],
        "{}",
        out.describe()
    );
    let events = fake.events();
    assert!(
        events.iter().any(|e| e == "token refresh_token"),
        "{events:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| e == "mcp tools/call at-refreshed-SECRET-ACCESS-2"),
        "{events:?}"
    );
    for secret in ["SECRET-ACCESS", "SECRET-REFRESH"] {
        let found = files_containing(dir.path(), secret);
        let found: Vec<_> = found.into_iter().filter(|p| *p != fake.log).collect();
        assert!(found.is_empty(), "{secret} in {found:?}");
        assert!(!out.stdout.contains(secret) && !out.stderr.contains(secret));
    }

    let out = Mypi::new(&dir).args(["mcp", "logout", "srv"]).run();
    out.ok();
    assert!(
        out.stdout.contains("logged out of 'srv'"),
        "{}",
        out.describe()
    );
    assert!(!token.exists());
    let out = mypi_mcp(&dir, &cfg, &["list"]);
    assert!(
        out.stdout.contains("srv: needs login"),
        "{}",
        out.describe()
    );
}

#[test]
fn bad_metadata_and_a_forged_state_end_the_login_with_a_clear_message() {
    let dir = TestDir::new();
    let bad = OAuthFake::start(&dir, "malformed");
    let forged = OAuthFake::start(&dir, "state");
    let cfg = config(
        &dir,
        json!({"bad": {"type": "http", "url": bad.url()},
               "forged": {"type": "http", "url": forged.url()}}),
    );
    let out = mypi_mcp(&dir, &cfg, &["login", "bad"]);
    out.expect_code(1);
    assert!(
        out.stderr
            .contains("login to 'bad' failed: cannot find out how to sign in"),
        "{}",
        out.describe()
    );
    let out = mypi_mcp(&dir, &cfg, &["login", "forged"]);
    out.expect_code(1);
    assert!(
        out.stderr.contains("login to 'forged' failed")
            && out.stderr.contains("state does not match"),
        "{}",
        out.describe()
    );
    assert!(!dir.home().join(".agents/mcp-auth/forged.json").exists());
    assert!(forged.events().iter().all(|e| !e.starts_with("token")));
}

#[test]
fn a_refused_token_is_refreshed_once_and_the_request_sent_again() {
    let dir = TestDir::new();
    let fake = OAuthFake::start(&dir, "revoke");
    let cfg = config(&dir, json!({"srv": {"type": "http", "url": fake.url()}}));
    mypi_mcp(&dir, &cfg, &["login", "srv"]).ok();
    let out = mypi_mcp(&dir, &cfg, &["list"]);
    out.ok();
    assert!(
        out.stdout.contains("srv: connected (http"),
        "{}",
        out.describe()
    );
    let events = fake.events();
    let refreshes = events
        .iter()
        .filter(|e| *e == "token refresh_token")
        .count();
    assert_eq!(refreshes, 1, "{events:?}");
}

#[test]
fn a_call_refused_for_scope_says_what_to_run_and_the_next_login_asks_for_it() {
    let dir = TestDir::new();
    let fake = OAuthFake::start(&dir, "scope");
    let cfg = config(&dir, json!({"srv": {"type": "http", "url": fake.url()}}));
    mypi_mcp(&dir, &cfg, &["login", "srv"]).ok();
    let replies = [
        json!({"tool_calls": [{"name": "mcp__srv__echo", "arguments": {}}]}),
        json!({"text": "done"}),
    ];
    let run = || {
        faux(&dir, &replies)
            .timeout(Duration::from_secs(90))
            .arg("--mcp-config")
            .arg(&cfg)
            .args(["--json", "-p", "go"])
            .run()
    };
    let out = run();
    let results = tool_results(&out.stdout);
    assert_eq!(results.len(), 1, "{}", out.describe());
    assert!(results[0].1, "an error: {results:?}");
    assert!(
        results[0]
            .0
            .contains("(scope write); run: mypi mcp login srv"),
        "{results:?}"
    );
    mypi_mcp(&dir, &cfg, &["login", "srv"]).ok();
    let authorized: Vec<_> = fake
        .events()
        .into_iter()
        .filter(|e| e.starts_with("authorize"))
        .collect();
    assert_eq!(authorized, ["authorize -", "authorize write"]);
    let out = run();
    assert_eq!(
        tool_results(&out.stdout),
        [("echoed".to_string(), false)],
        "{}",
        out.describe()
    );
}
