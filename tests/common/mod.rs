//! Support for the integration tests: a temporary project folder ([`TestDir`]), a builder that
//! runs the real `mypi` binary in it ([`Mypi`]) with a timeout, a handle on a running binary for
//! REPL tests ([`Running`]), and the fake model servers ([`FakeOpenAi`], [`FakeAnthropic`]).
#![allow(dead_code)]

pub mod fake_reply;
pub mod fake_server;
pub mod fake_wire;
pub mod http;
pub mod mcp;
pub mod prompt_cache;
pub mod pty;
pub mod snapshot;

#[allow(unused_imports)]
pub use fake_server::{FakeServer, Recorded, Reply, EXHAUSTED_MESSAGE};
pub use fake_wire::{FakeAnthropic, FakeOpenAi};

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Default time a `mypi` run may take before it is killed and the test fails.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Path of the `mypi` binary cargo built for these tests.
pub fn mypi_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mypi"))
}

/// A unique temporary folder, removed on drop.
pub struct TestDir {
    path: PathBuf,
}

impl TestDir {
    pub fn new() -> TestDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let name = format!(
            "mypi-test-{}-{}-{nanos}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        );
        let path = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&path).expect("create test dir");
        let path = path.canonicalize().expect("canonicalize test dir");
        let dir = TestDir { path };
        // Project extensions load only in a trusted folder: the tests' projects are trusted
        // (with everything below them) unless a test says otherwise (`untrust`).
        dir.write(
            "home/.agents/config.toml",
            &format!("[trust]\ntrees = [{:?}]\n", dir.path.display().to_string()),
        );
        dir
    }

    /// Removes the trust the folder starts with (the user config in the fake home).
    pub fn untrust(&self) {
        let _ = std::fs::remove_file(self.home().join(".agents/config.toml"));
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `path()/rel`.
    pub fn join(&self, rel: &str) -> PathBuf {
        self.path.join(rel)
    }

    /// Writes `content` to `rel`, creating parent folders.
    pub fn write(&self, rel: &str, content: &str) -> PathBuf {
        let p = self.path.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("create parent dirs");
        }
        std::fs::write(&p, content).unwrap_or_else(|e| panic!("write {}: {e}", p.display()));
        p
    }

    /// Makes a FIFO (named pipe) at `rel`, creating parent folders: a file that blocks
    /// whoever opens it for reading.
    pub fn mkfifo(&self, rel: &str) -> PathBuf {
        let p = self.path.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("create parent dirs");
        }
        let c = std::ffi::CString::new(p.to_string_lossy().as_bytes()).expect("a path");
        // SAFETY: `c` is a valid NUL-terminated path for the call's duration.
        assert_eq!(
            unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
            0,
            "mkfifo {}",
            p.display()
        );
        p
    }

    /// Reads `rel` as UTF-8 (panics when missing).
    pub fn read(&self, rel: &str) -> String {
        let p = self.path.join(rel);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.path.join(rel).exists()
    }

    /// The fake home folder `Mypi` uses (`path()/home`).
    pub fn home(&self) -> PathBuf {
        self.path.join("home")
    }
}

impl Default for TestDir {
    fn default() -> Self {
        TestDir::new()
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// What a finished run printed. `code` is -1 when the process died from a signal.
#[derive(Debug, Clone)]
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    pub fn success(&self) -> bool {
        self.code == 0
    }

    /// Panics (showing stdout and stderr) unless the exit code is `code`.
    pub fn expect_code(&self, code: i32) -> &Output {
        assert_eq!(self.code, code, "unexpected exit code; {}", self.describe());
        self
    }

    /// Panics (showing stdout and stderr) unless the exit code is 0.
    pub fn ok(&self) -> &Output {
        self.expect_code(0)
    }

    /// A multi-line account of the run for assertion messages.
    pub fn describe(&self) -> String {
        format!(
            "exit code {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Builder for one run of the `mypi` binary inside a [`TestDir`].
pub struct Mypi {
    cwd: PathBuf,
    home: PathBuf,
    provider_args: Vec<OsString>,
    args: Vec<OsString>,
    envs: Vec<(OsString, Option<OsString>)>,
    stdin: Option<String>,
    timeout: Duration,
}

impl Mypi {
    /// Runs in `dir` with `HOME` = `dir/home` (created; `XDG_*` inside it), `NO_COLOR=1`, and
    /// none of the caller's provider keys/URLs, proxies or `MYPI_*` variables.
    pub fn new(dir: &TestDir) -> Mypi {
        let home = dir.home();
        std::fs::create_dir_all(&home).expect("create fake home");
        Mypi {
            cwd: dir.path().to_path_buf(),
            home,
            provider_args: Vec::new(),
            args: Vec::new(),
            envs: Vec::new(),
            stdin: None,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    pub fn arg(mut self, a: impl Into<OsString>) -> Mypi {
        self.args.push(a.into());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Mypi
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub fn env(mut self, k: impl Into<OsString>, v: impl Into<OsString>) -> Mypi {
        self.envs.push((k.into(), Some(v.into())));
        self
    }

    pub fn env_remove(mut self, k: impl Into<OsString>) -> Mypi {
        self.envs.push((k.into(), None));
        self
    }

    /// Text written to stdin (then closed). Without it stdin is empty (`/dev/null`) for `run`.
    pub fn stdin(mut self, text: impl Into<String>) -> Mypi {
        self.stdin = Some(text.into());
        self
    }

    /// Working folder other than the TestDir root (e.g. a subfolder).
    pub fn cwd(mut self, p: impl Into<PathBuf>) -> Mypi {
        self.cwd = p.into();
        self
    }

    pub fn timeout(mut self, t: Duration) -> Mypi {
        self.timeout = t;
        self
    }

    /// `--provider openai --base-url URL --model test-model`, `OPENAI_API_KEY=test-key`,
    /// `MYPI_RETRY_BASE_MS=1`. Provider flags go before the other arguments.
    pub fn openai(self, server: &FakeOpenAi) -> Mypi {
        self.provider("openai", &server.url(), "OPENAI_API_KEY")
    }

    /// `--provider anthropic --base-url URL --model test-model`, `ANTHROPIC_API_KEY=test-key`,
    /// `MYPI_RETRY_BASE_MS=1`.
    pub fn anthropic(self, server: &FakeAnthropic) -> Mypi {
        self.provider("anthropic", &server.url(), "ANTHROPIC_API_KEY")
    }

    /// The model the fake provider is asked for (`test-model` unless told).
    pub fn model(mut self, model: &str) -> Mypi {
        if let Some(i) = self.provider_args.iter().position(|a| a == "test-model") {
            self.provider_args[i] = OsString::from(model);
        }
        self
    }

    fn provider(mut self, name: &str, url: &str, key_var: &str) -> Mypi {
        self.provider_args = [
            "--provider",
            name,
            "--base-url",
            url,
            "--model",
            "test-model",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        self.env(key_var, "test-key").env("MYPI_RETRY_BASE_MS", "1")
    }

    /// The `Command` this builder would run (stdio not configured).
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(mypi_bin());
        cmd.current_dir(&self.cwd)
            .args(&self.provider_args)
            .args(&self.args)
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env("XDG_STATE_HOME", self.home.join(".local/state"))
            .env("NO_COLOR", "1")
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("no_proxy", "127.0.0.1,localhost");
        for var in [
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            // A proxy from the caller's environment must not intercept 127.0.0.1 traffic.
            "HTTP_PROXY",
            "http_proxy",
            "HTTPS_PROXY",
            "https_proxy",
            "ALL_PROXY",
            "all_proxy",
        ] {
            cmd.env_remove(var);
        }
        for (k, _) in std::env::vars_os() {
            if k.to_string_lossy().starts_with("MYPI_") {
                cmd.env_remove(k);
            }
        }
        for (k, v) in &self.envs {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        cmd
    }

    /// Runs to completion; kills the child and panics with its output after the timeout.
    pub fn run(self) -> Output {
        let mut cmd = self.command();
        let input = self.stdin.clone();
        cmd.stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        let mut running = Running::start(cmd, self.timeout);
        if let Some(text) = input {
            running.write_stdin(&text);
            running.close_stdin();
        }
        running.wait()
    }

    /// Starts the binary with piped stdout and stderr, and piped stdin, except for a print
    /// mode run given no input (its stdin is then empty, as a user's `</dev/null`).
    pub fn spawn(self) -> Running {
        let mut cmd = self.command();
        let print = self.args.iter().any(|a| a == "-p" || a == "--print");
        if print && self.stdin.is_none() {
            cmd.stdin(Stdio::null());
        } else {
            cmd.stdin(Stdio::piped());
        }
        let mut running = Running::start(cmd, self.timeout);
        if let Some(text) = &self.stdin {
            running.write_stdin(text);
        }
        running
    }
}

/// Output collected from one pipe by a background thread.
#[derive(Default)]
struct Captured {
    buf: Vec<u8>,
    eof: bool,
}

type Pipe = Arc<(Mutex<Captured>, Condvar)>;

fn capture(mut src: impl Read + Send + 'static) -> Pipe {
    let pipe: Pipe = Arc::default();
    let p = pipe.clone();
    thread::spawn(move || {
        let mut chunk = [0u8; 4096];
        loop {
            let n = src.read(&mut chunk).unwrap_or(0);
            let (lock, cv) = &*p;
            let mut c = lock.lock().unwrap();
            if n == 0 {
                c.eof = true;
                cv.notify_all();
                return;
            }
            c.buf.extend_from_slice(&chunk[..n]);
            cv.notify_all();
        }
    });
    pipe
}

fn text_of(p: &Pipe) -> String {
    String::from_utf8_lossy(&p.0.lock().unwrap().buf).into_owned()
}

/// A running `mypi`. Dropping it kills the process.
pub struct Running {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Pipe,
    stderr: Pipe,
    /// Byte offset in stdout up to which `wait_for_*` has consumed.
    cursor: usize,
    deadline: Instant,
    timeout: Duration,
}

impl Running {
    /// Starts any command with piped stdout/stderr (stdin as configured on `cmd`); the run
    /// fails after `timeout`. `Mypi::spawn` / `Mypi::run` use this.
    pub fn start(mut cmd: Command, timeout: Duration) -> Running {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {}: {e}", mypi_bin().display()));
        let stdin = child.stdin.take();
        let stdout = capture(child.stdout.take().unwrap());
        let stderr = capture(child.stderr.take().unwrap());
        Running {
            child,
            stdin,
            stdout,
            stderr,
            cursor: 0,
            deadline: Instant::now() + timeout,
            timeout,
        }
    }

    /// The exit code once the process has ended (without waiting).
    pub fn try_exit_code(&mut self) -> Option<i32> {
        self.child
            .try_wait()
            .ok()
            .flatten()
            .map(|s| s.code().unwrap_or(-1))
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes `text` to stdin as is (ignores a closed pipe).
    pub fn write_stdin(&mut self, text: &str) {
        if let Some(s) = self.stdin.as_mut() {
            let _ = s.write_all(text.as_bytes());
            let _ = s.flush();
        }
    }

    /// Writes `line` plus a newline to stdin.
    pub fn send_line(&mut self, line: &str) {
        self.write_stdin(&format!("{line}\n"));
    }

    /// Closes stdin (end of input).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Sends SIGINT (like Ctrl-C).
    pub fn interrupt(&self) {
        self.signal(libc::SIGINT);
    }

    pub fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child's pid has no memory-safety preconditions.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, sig);
        }
    }

    pub fn stdout_so_far(&self) -> String {
        text_of(&self.stdout)
    }

    pub fn stderr_so_far(&self) -> String {
        text_of(&self.stderr)
    }

    fn describe(&self) -> String {
        format!(
            "--- stdout ---\n{}\n--- stderr ---\n{}",
            self.stdout_so_far(),
            self.stderr_so_far()
        )
    }

    /// Waits for a complete stdout line (after the last one matched) containing `pattern`;
    /// returns it without the newline. Panics with the output so far after `timeout` or EOF.
    pub fn wait_for_line(&mut self, pattern: &str, timeout: Duration) -> String {
        self.wait_for(pattern, timeout, true)
    }

    /// Like `wait_for_line` but also matches an unfinished last line (e.g. a prompt `> `);
    /// returns the text from the cursor through the end of the match.
    pub fn wait_for_text(&mut self, pattern: &str, timeout: Duration) -> String {
        self.wait_for(pattern, timeout, false)
    }

    fn wait_for(&mut self, pattern: &str, timeout: Duration, whole_line: bool) -> String {
        let deadline = Instant::now() + timeout;
        let (lock, cv) = &*self.stdout;
        let mut c = lock.lock().unwrap();
        loop {
            let avail = String::from_utf8_lossy(&c.buf[self.cursor..]).into_owned();
            let mut offset = 0;
            for line in avail.split_inclusive('\n') {
                let complete = line.ends_with('\n');
                if !complete && whole_line {
                    break;
                }
                if let Some(pos) = line.find(pattern) {
                    let found = if whole_line {
                        self.cursor += offset + line.len();
                        line.trim_end_matches(['\r', '\n']).to_string()
                    } else {
                        let end = offset + pos + pattern.len();
                        self.cursor += end;
                        avail[..end].to_string()
                    };
                    return found;
                }
                offset += line.len();
            }
            let now = Instant::now();
            if c.eof || now >= deadline {
                let why = if c.eof { "stdout closed" } else { "timed out" };
                drop(c);
                panic!(
                    "{why} waiting {timeout:?} for {pattern:?} on stdout\n{}",
                    self.describe()
                );
            }
            c = cv.wait_timeout(c, deadline - now).unwrap().0;
        }
    }

    /// Closes stdin and waits for exit until the run's deadline; kills and panics after it.
    pub fn wait(mut self) -> Output {
        self.close_stdin();
        let code = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status.code().unwrap_or(-1),
                Ok(None) if Instant::now() >= self.deadline => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    self.drain(Duration::from_millis(500));
                    panic!(
                        "mypi did not finish within {:?}; killed it\n{}",
                        self.timeout,
                        self.describe()
                    );
                }
                Ok(None) => thread::sleep(Duration::from_millis(10)),
                Err(e) => panic!("waiting for mypi: {e}"),
            }
        };
        // Grandchildren may hold the pipes open; do not wait for them for long.
        self.drain(Duration::from_secs(2));
        Output {
            code,
            stdout: self.stdout_so_far(),
            stderr: self.stderr_so_far(),
        }
    }

    /// Waits up to `max` for both pipes to reach end of file.
    fn drain(&self, max: Duration) {
        let deadline = Instant::now() + max;
        for pipe in [&self.stdout, &self.stderr] {
            let (lock, cv) = &**pipe;
            let mut c = lock.lock().unwrap();
            while !c.eof {
                let now = Instant::now();
                if now >= deadline {
                    break;
                }
                c = cv.wait_timeout(c, deadline - now).unwrap().0;
            }
        }
    }

    /// Kills the process now and returns what it printed.
    pub fn kill(mut self) -> Output {
        let _ = self.child.kill();
        let status = self.child.wait().ok();
        self.drain(Duration::from_millis(500));
        Output {
            code: status.and_then(|s| s.code()).unwrap_or(-1),
            stdout: self.stdout_so_far(),
            stderr: self.stderr_so_far(),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
