//! Support for the MCP fault tests: the misbehaving servers written for them
//! (`mcp_fake.py` over stdio, `mcp_http.py` over Streamable HTTP), `--mcp-config` files
//! naming them, the tool results of a `--json` run, a run's peak memory, and the processes
//! a server left behind.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{Running, TestDir};

/// The stdio fake server (`mcp_fake.py MODE [LOG]`).
pub fn fake_py() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/common/mcp_fake.py")
}

/// A stdio entry running the fake in `mode`, logging what it receives to `dir/log`.
pub fn stdio_entry(dir: &TestDir, mode: &str, timeout: u64) -> Value {
    let fake = fake_py().display().to_string();
    let log = dir.join("log").display().to_string();
    json!({"command": "python3", "args": [fake, mode, log], "timeout": timeout})
}

/// The well-behaved test server's script (`mcp_server.py`: tools, resources, prompts).
pub fn server_script() -> String {
    format!("{}/tests/common/mcp_server.py", env!("CARGO_MANIFEST_DIR"))
}

/// Writes `.mcp.json` with the well-behaved test server as `t`, logging the requests it gets
/// to `dir/requests.jsonl` (and `extra` entries).
pub fn mcp_json(dir: &TestDir, extra: Value) {
    let mut servers = json!({"t": {"command": "python3", "args": [server_script()],
        "env": {"MCP_LOG": dir.join("requests.jsonl").display().to_string()}}});
    if let (Some(s), Some(e)) = (servers.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    dir.write(".mcp.json", &json!({"mcpServers": servers}).to_string());
}

/// Writes `.mcp.json` with the well-behaved test server (`mcp_server.py`: tools, resources,
/// prompts) as `t`, started 2 s late: slower than the grace a prompt gives a server never seen.
pub fn slow_test_server(dir: &TestDir) {
    let slow = format!("sleep 2; exec python3 '{}'", server_script());
    dir.write(
        ".mcp.json",
        &json!({"mcpServers": {"t": {"command": "sh", "args": ["-c", slow]}}}).to_string(),
    );
}

/// A stdio entry that starts the fake through `sh -c`, after starting a grandchild
/// (`sleep 1000` in the background): the shell writes its pid (the group id) to `dir/pgid`
/// and the grandchild's to `dir/grandchild`. Every process of it carries `MCP_MARK=dir` in
/// its environment (see [`marked`]).
pub fn grandchild_entry(dir: &TestDir, mode: &str, timeout: u64) -> Value {
    let d = dir.path().display().to_string();
    let script = format!(
        "echo $$ > '{d}/pgid.tmp' && mv '{d}/pgid.tmp' '{d}/pgid'; \
         sleep 1000 & echo $! > '{d}/gc.tmp' && mv '{d}/gc.tmp' '{d}/grandchild'; \
         exec python3 '{}' {mode} '{d}/log'",
        fake_py().display()
    );
    json!({"command": "sh", "args": ["-c", script], "env": {"MCP_MARK": d}, "timeout": timeout})
}

/// Writes `dir/mcp.json` with these servers; its path (for `--mcp-config`).
pub fn config(dir: &TestDir, servers: Value) -> PathBuf {
    dir.write("mcp.json", &json!({ "mcpServers": servers }).to_string())
}

/// The tool results of a `--json` run: (content, is_error) in order.
pub fn tool_results(stdout: &str) -> Vec<(String, bool)> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "tool_result")
        .map(|v| {
            (
                v["content"].as_str().unwrap_or("").to_string(),
                v["is_error"] == true,
            )
        })
        .collect()
}

/// The messages the stdio fake received (its log), each parsed; `<stdin closed>` as a string.
pub fn received(dir: &TestDir) -> Vec<Value> {
    std::fs::read_to_string(dir.join("log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| json!(l)))
        .collect()
}

/// Waits up to `max` for `ok` to hold of what the fake received; the last messages seen.
pub fn wait_received(dir: &TestDir, max: Duration, ok: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + max;
    loop {
        let got = received(dir);
        if ok(&got) || Instant::now() >= deadline {
            return got;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Follows the peak resident memory (`VmHWM`) of process `pid` until it exits; read the
/// result (KiB) when the run is over.
pub fn watch_peak_memory(pid: u32) -> Arc<AtomicU64> {
    let peak = Arc::new(AtomicU64::new(0));
    let p = peak.clone();
    std::thread::spawn(move || loop {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            return;
        };
        let hwm = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
        match hwm {
            Some(kib) => p.fetch_max(kib, Ordering::Relaxed),
            None => return, // a zombie: it has exited
        };
        std::thread::sleep(Duration::from_millis(10));
    });
    peak
}

/// The live processes (not zombies) whose environment has `MCP_MARK=dir`.
pub fn marked(dir: &TestDir) -> Vec<String> {
    let needle = format!("MCP_MARK={}", dir.path().display());
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(env) = std::fs::read(path.join("environ")) else {
            continue;
        };
        let has = env.split(|&b| b == 0).any(|v| v == needle.as_bytes());
        let stat = std::fs::read_to_string(path.join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
        if has && !zombie {
            found.push(stat);
        }
    }
    found
}

/// Asserts that no process of the server survives (allowing the kernel a moment).
pub fn assert_none_survive(dir: &TestDir, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let left = marked(dir);
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: processes outlived mypi: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for a number the server's shell wrote to `dir/name`.
pub fn wait_pid_file(dir: &TestDir, name: &str, max: Duration) -> i32 {
    let deadline = Instant::now() + max;
    loop {
        if let Some(n) = std::fs::read_to_string(dir.join(name))
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return n;
        }
        assert!(Instant::now() < deadline, "{name} was never written");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The HTTP fake (`mcp_http.py MODE LOG`), killed on drop.
pub struct HttpFake {
    child: Child,
    pub port: u16,
    log: PathBuf,
}

impl HttpFake {
    pub fn start(dir: &TestDir, mode: &str) -> HttpFake {
        Self::script(dir, "mcp_http.py", mode)
    }

    /// The legacy HTTP+SSE fake (`mcp_legacy_sse.py MODE LOG`); its url is [`Self::sse_url`].
    pub fn legacy(dir: &TestDir, mode: &str) -> HttpFake {
        Self::script(dir, "mcp_legacy_sse.py", mode)
    }

    fn script(dir: &TestDir, name: &str, mode: &str) -> HttpFake {
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/common")
            .join(name);
        let log = dir.join(&format!("http-{mode}.log"));
        let mut child = Command::new("python3")
            .arg(script)
            .arg(mode)
            .arg(&log)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the python3 fake");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped stdout");
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the port");
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port from {name}: {line:?}"));
        HttpFake { child, port, log }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    pub fn sse_url(&self) -> String {
        format!("http://127.0.0.1:{}/sse", self.port)
    }

    /// The request log as written.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The requests so far: (unix time, verb, session, JSON-RPC method).
    pub fn requests(&self) -> Vec<(f64, String, String, String)> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                Some((
                    f.first()?.parse().ok()?,
                    f.get(1)?.to_string(),
                    f.get(2)?.to_string(),
                    f.get(3)?.to_string(),
                ))
            })
            .collect()
    }

    /// How many POSTs of JSON-RPC `method` arrived.
    pub fn count(&self, method: &str) -> usize {
        self.requests()
            .iter()
            .filter(|r| r.1 == "POST" && r.3 == method)
            .count()
    }
}

impl Drop for HttpFake {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Asks `/mcp` on the REPL `m` until `server`'s line no longer says it is connecting (at most
/// `max`); that line.
pub fn settled_line(m: &mut Running, server: &str, max: Duration) -> String {
    let deadline = Instant::now() + max;
    let prefix = format!("{server}: ");
    loop {
        m.send_line("/mcp");
        let line = m.wait_for_line(&prefix, max);
        if !line.contains(&format!("{server}: connecting")) {
            return line;
        }
        assert!(
            Instant::now() < deadline,
            "{server} still connecting: {line}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
