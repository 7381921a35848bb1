//! Helpers for the extension tests: the shipped examples and isolation fixtures, installing
//! scripts into a TestDir's `.agents/extensions/`, and faux-model scripts.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::common::{Mypi, Running, TestDir};

/// How long a REPL test waits for one line.
pub const WAIT: Duration = Duration::from_secs(15);

/// The per-call script budget the tests use (`MYPI_EXT_BUDGET_MS`), so loops end fast.
pub const BUDGET_MS: &str = "300";

/// The text of `examples/extensions/NAME`.
pub fn example(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples/extensions")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
}

/// The text of `tests/fixtures/isolation/NAME`.
pub fn fixture(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/isolation")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
}

/// Writes `content` as `.agents/extensions/REL`.
pub fn install(dir: &TestDir, rel: &str, content: &str) -> PathBuf {
    dir.write(&format!(".agents/extensions/{rel}"), content)
}

/// Installs the example `name` under its own file name.
pub fn install_example(dir: &TestDir, name: &str) -> PathBuf {
    install(dir, name, &example(name))
}

/// Installs the isolation fixture `name` under its own file name.
pub fn install_fixture(dir: &TestDir, name: &str) -> PathBuf {
    install(dir, name, &fixture(name))
}

/// Writes a faux-model script (one JSON reply per line) to `faux.jsonl`.
pub fn faux_script(dir: &TestDir, replies: &[Value]) -> PathBuf {
    let text: String = replies.iter().map(|r| format!("{r}\n")).collect();
    dir.write("faux.jsonl", &text)
}

/// `mypi --provider faux --faux-script faux.jsonl` with the test budget.
pub fn faux(dir: &TestDir, replies: &[Value]) -> Mypi {
    let script = faux_script(dir, replies);
    Mypi::new(dir)
        .env("MYPI_EXT_BUDGET_MS", BUDGET_MS)
        .args(["--provider", "faux", "--faux-script"])
        .arg(script)
}

/// A REPL on the faux model (no script: it echoes), reading from a pipe.
pub fn repl(dir: &TestDir) -> Running {
    repl_with_budget(dir, BUDGET_MS)
}

/// Like [`repl`] with a script budget of `ms` (for work that is slow on a loaded machine).
pub fn repl_with_budget(dir: &TestDir, ms: &str) -> Running {
    Mypi::new(dir)
        .env("MYPI_EXT_BUDGET_MS", ms)
        .args(["--provider", "faux", "--no-watch"])
        .spawn()
}

/// Sends `/healthy LABEL` and waits for the healthy extension's answer.
pub fn healthy_still_works(m: &mut Running, label: &str) {
    m.send_line(&format!("/healthy {label}"));
    m.wait_for_line(&format!("healthy ok {label}"), WAIT);
}

/// Ends a REPL with `/quit` and checks it left normally without a panic.
pub fn quit(mut m: Running) -> crate::common::Output {
    m.send_line("/quit");
    let out = m.wait();
    out.ok();
    super::wire::no_panic(&out.stderr);
    out
}
