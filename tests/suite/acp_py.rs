//! `mypi acp` driven by a second client nobody here wrote: the Python `agent-client-protocol`
//! package (its pydantic models check every message mypi sends) runs
//! `tests/acp_py/client.py`: a prompt with a tool call, a prompt with an image, a cancelled
//! prompt, and the session loaded on a second connection; the script exits non-zero saying
//! what did not match. The Python with the package installed comes from `MYPI_TEST_ACP_PY`,
//! set by `.ci/run`, which installs it in a virtual environment; the test is `#[ignore]`d
//! with the reason, and `.ci/run` runs it with `--ignored`.

use std::process::Command;

use serde_json::json;

use super::ext_util::faux_script;
use crate::common::{mypi_bin, Running, TestDir};

#[test]
#[ignore = "needs python with agent-client-protocol: .ci/run installs it and runs this (cargo test -- --ignored with MYPI_TEST_ACP_PY set)"]
fn acp_py_the_python_client_runs_a_session_with_an_image_cancels_and_loads_it() {
    let python = std::env::var("MYPI_TEST_ACP_PY")
        .expect("MYPI_TEST_ACP_PY names a python that has agent-client-protocol installed");
    let dir = TestDir::new();
    let script = faux_script(
        &dir,
        &[
            json!({"tool_calls": [{"name": "write", "arguments": {"path": "out.txt", "content": "hello\n"}}]}),
            json!({"text": "wrote it"}),
            json!({"text": "seen: ", "echo": true}),
            json!({"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 300"}}]}),
            json!({"text": "never asked for"}),
        ],
    );
    let client = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/acp_py/client.py");
    let mut cmd = Command::new(python);
    cmd.arg(client)
        .arg(mypi_bin())
        .arg(dir.path())
        .args(["--provider", "faux", "--faux-script"])
        .arg(script)
        .arg("--no-extensions")
        .env("HOME", dir.home())
        .stdin(std::process::Stdio::null());
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("MYPI_") {
            cmd.env_remove(k);
        }
    }
    std::fs::create_dir_all(dir.home()).unwrap();
    let out = Running::start(cmd, std::time::Duration::from_secs(60)).wait();
    assert_eq!(out.code, 0, "{}", out.describe());
    assert_eq!(out.stdout.trim(), "acp_py: ok", "{}", out.describe());
}
