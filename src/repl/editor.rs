//! `ctx.ui.editor(initial)`: the text written to a temp file of its own, the user's editor
//! (`$VISUAL`, then `$EDITOR`, else `vi`) run on it through `sh` (so `code --wait` works),
//! and the file read back when the editor exits successfully. On a terminal the editor gets
//! it; off one (tests, pipes) it runs with stdin and stdout closed. The file is removed
//! afterwards, whatever happened.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The largest text read back from the editor.
const MAX_EDIT_BYTES: u64 = 16 * 1024 * 1024;

/// The editor command the user chose.
fn editor_command() -> String {
    ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|k| std::env::var(k).ok())
        .find(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "vi".to_string())
}

/// Runs the editor on `initial`; the text saved, or `None` when it failed or was quit with
/// an error.
pub fn edit(initial: &str, terminal: bool) -> Option<String> {
    let path: PathBuf = std::env::temp_dir().join(format!(
        "mypi-edit-{}-{}.md",
        std::process::id(),
        crate::vocab::owner::next_id()
    ));
    let out = run(&path, initial, terminal);
    let _ = std::fs::remove_file(&path);
    out
}

fn run(path: &PathBuf, initial: &str, terminal: bool) -> Option<String> {
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .ok()?;
        f.write_all(initial.as_bytes()).ok()?;
    }
    let io = || {
        if terminal {
            Stdio::inherit()
        } else {
            Stdio::null()
        }
    };
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{} \"$1\"", editor_command()))
        .arg("mypi-editor")
        .arg(path)
        .stdin(io())
        .stdout(io())
        .status()
        .ok()?;
    if !status.success() {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_EDIT_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}
