//! The built-in `edit` tool: exact-string replacement in a text file. The text to replace must
//! occur exactly once unless `replace_all` is set; failures say why (with the line numbers of
//! the occurrences, or of a near match that differs only in whitespace or line endings). Files
//! with CRLF line endings keep them. The file is replaced atomically, and only if nothing else
//! changed it since it was read (else the error says "the file changed; read it again"); a
//! directory, named pipe, socket or device is refused untouched, a symbolic link edited through.
//! The line numbers, snippets and near-match hints it shows are in `edit/hints.rs`.

mod hints;

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};

use hints::{line_numbers, list_lines, not_found, snippet};

use super::files::{editing, fits, unless_cancelled, Files, TextFiles};
use super::fsguard::{Action, Kind, Target};
use super::replace::{self, CommitError};
use super::snapshot::Snapshot;
use super::{Tool, ToolContext};
use crate::vocab::protocol::{ToolOutput, ToolSpec};
use futures_util::future::BoxFuture;

const DESCRIPTION: &str = "\
Edit a file by replacing exact text.

- `old_text` must match the file exactly, character for character, including indentation and \
whitespace. Read the file first and copy the text from it.
- `old_text` must occur exactly once: include enough surrounding lines to make it unique. To \
change every occurrence (e.g. renaming a variable), set `replace_all` to true.
- `new_text` replaces it; it may be empty to delete text.
- Line endings are handled for you: a file with CRLF line endings keeps them.
- To create a new file or rewrite one completely, use `write` instead.
- On success the result shows the edited region with line numbers.
- If the file changes on disk while the edit is made, nothing is written and the error says \
\"the file changed; read it again\": read it and redo the edit.";

/// The error for an empty `old_text`.
const EMPTY_OLD: &str = "old_text is empty; give the exact text to replace (to create or \
                         rewrite a whole file, use write)";

pub struct EditTool {
    spec: ToolSpec,
    files: Files,
}

impl EditTool {
    /// `edit` of the disk.
    pub fn new() -> Self {
        Self::through(None)
    }

    /// `edit` through `files` (see [`super::files`]).
    pub fn through(files: Files) -> Self {
        EditTool {
            files,
            spec: ToolSpec {
                name: "edit".into(),
                description: DESCRIPTION.into(),
                parameters: json!({
                    "type": "object",
                    "properties": {
                        "path": {
                            "type": "string",
                            "minLength": 1,
                            "description": "File to edit, relative to the working folder or absolute"
                        },
                        "old_text": {
                            "type": "string",
                            "description": "Exact text to replace; must occur once unless replace_all is true"
                        },
                        "new_text": {
                            "type": "string",
                            "description": "Text to put in its place (may be empty)"
                        },
                        "replace_all": {
                            "type": "boolean",
                            "description": "Replace every occurrence of old_text (default false)"
                        }
                    },
                    "required": ["path", "old_text", "new_text"],
                    "additionalProperties": false
                }),
            },
        }
    }
}

impl Default for EditTool {
    fn default() -> Self {
        Self::new()
    }
}

impl Tool for EditTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'static, ToolOutput> {
        let files = editing(&self.files);
        Box::pin(async move {
            let text = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_string);
            let (Some(path), Some(old), Some(new)) =
                (text("path"), text("old_text"), text("new_text"))
            else {
                return ToolOutput::error(
                    "edit needs string arguments `path`, `old_text` and `new_text`",
                );
            };
            let replace_all = args
                .get("replace_all")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let target = ctx.resolve(&path);
            let edit = Edit {
                display: path,
                old,
                new,
                replace_all,
            };
            if let Some(files) = files.filter(|_| fits(&target)) {
                let display = edit.display.clone();
                let apply = |content: &str| apply(content, &edit);
                if edit.old.is_empty() {
                    return ToolOutput::error(EMPTY_OLD);
                }
                let edited = edit_through(files, &target, &display, apply);
                return unless_cancelled(&ctx.cancel, edited).await;
            }
            tokio::task::spawn_blocking(move || edit_file(&target, &edit))
                .await
                .unwrap_or_else(|e| ToolOutput::error(format!("edit failed: {e}")))
        })
    }
}

/// One requested edit.
struct Edit {
    display: String,
    old: String,
    new: String,
    replace_all: bool,
}

/// The file `path` names, when it is one `edit` may change: an existing regular file
/// (through symbolic links); else why not.
fn regular_file(path: &Path, display: &str) -> Result<Target, String> {
    let target = Target::resolve(path, display, Action::Edit)?;
    match target.kind() {
        Some(Kind::Regular) => Ok(target),
        None => Err(format!(
            "{} (to create a file, use write)",
            target.missing()
        )),
        Some(_) => Err(target.refusal(Action::Edit)),
    }
}

/// Reads, edits and atomically rewrites the file. Only a regular file is edited (through
/// symbolic links), and only if nothing else changed it since it was read.
fn edit_file(path: &Path, edit: &Edit) -> ToolOutput {
    let display = &edit.display;
    if edit.old.is_empty() {
        return ToolOutput::error(EMPTY_OLD);
    }
    let target = match regular_file(path, display) {
        Ok(t) => t,
        Err(msg) => return ToolOutput::error(msg),
    };
    let snap = match Snapshot::take(&target) {
        Ok(s) => s,
        Err(msg) => return ToolOutput::error(msg),
    };
    let Ok(content) = std::str::from_utf8(&snap.bytes) else {
        return ToolOutput::error(format!(
            "{display} is not valid UTF-8 text; edit only changes text files (use write to \
             replace it whole)"
        ));
    };
    let (updated, message) = match apply(content, edit) {
        Ok(done) => done,
        Err(msg) => return ToolOutput::error(msg),
    };
    match commit(&target, &snap, updated.as_bytes()) {
        Ok(()) => ToolOutput::ok(message),
        Err(msg) => ToolOutput::error(msg),
    }
}

/// `edit` through `files`: the text read from them, the replacement made by `apply`, and
/// the result written back only if the text is still what was read.
async fn edit_through(
    files: Arc<dyn TextFiles>,
    path: &Path,
    display: &str,
    apply: impl FnOnce(&str) -> Result<(String, String), String>,
) -> ToolOutput {
    let target = match regular_file(path, display) {
        Ok(t) => t,
        Err(msg) => return ToolOutput::error(msg),
    };
    let from_editor = |e: String| format!("could not read {display} from the editor: {e}");
    let before = match files.read(&target.path).await {
        Ok(text) => text,
        Err(e) => return ToolOutput::error(from_editor(e)),
    };
    let (updated, message) = match apply(&before) {
        Ok(done) => done,
        Err(msg) => return ToolOutput::error(msg),
    };
    match files.read(&target.path).await {
        Ok(now) if now == before => {}
        Ok(_) => {
            return ToolOutput::error(format!(
                "{display} was changed in the editor after edit read it, so the edit was not \
                 written: {} and redo the edit",
                super::snapshot::CHANGED
            ))
        }
        Err(e) => return ToolOutput::error(from_editor(e)),
    }
    match files.write(&target.path, &updated).await {
        Ok(()) => ToolOutput::ok(message),
        Err(e) => ToolOutput::error(format!("could not write {display} in the editor: {e}")),
    }
}

/// Writes the new content over the file, unless it changed since `snap` was taken.
fn commit(target: &Target, snap: &Snapshot, bytes: &[u8]) -> Result<(), String> {
    let display = &target.display;
    let staged = replace::stage(&target.path, bytes, Some(&snap.meta))
        .map_err(|e| format!("could not write {display}: {e}"))?;
    snap.unchanged()?;
    staged
        .commit_over(|entry| snap.check_entry(entry))
        .map_err(|e| match e {
            CommitError::Refused(msg) => msg,
            CommitError::Exists => snap.changed(),
            CommitError::Io(e) => format!("could not write {display}: {e}"),
        })
}

/// Whether every line break in `text` is CRLF (and there is at least one).
fn uses_crlf(text: &str) -> bool {
    let crlf = text.matches("\r\n").count();
    crlf > 0 && crlf == text.matches('\n').count()
}

/// Performs the replacement in memory: the new content and the success message, or the error.
fn apply(content: &str, edit: &Edit) -> Result<(String, String), String> {
    let display = &edit.display;
    let crlf = uses_crlf(content);
    let lf = |s: &str| {
        if crlf {
            s.replace("\r\n", "\n")
        } else {
            s.to_string()
        }
    };
    let (work, old, new) = (lf(content), lf(&edit.old), lf(&edit.new));
    if old == new {
        return Err("old_text and new_text are the same; there is nothing to change".into());
    }
    let starts: Vec<usize> = work.match_indices(old.as_str()).map(|(i, _)| i).collect();
    if starts.is_empty() {
        return Err(not_found(&work, &old, display));
    }
    let lines = line_numbers(&work, &starts);
    if starts.len() > 1 && !edit.replace_all {
        return Err(format!(
            "old_text occurs {} times in {display} (lines {}); add surrounding lines to make it \
             unique, or set replace_all",
            starts.len(),
            list_lines(&lines)
        ));
    }
    let updated = if edit.replace_all {
        work.replace(old.as_str(), &new)
    } else {
        work.replacen(old.as_str(), &new, 1)
    };
    let first = lines.first().copied().unwrap_or(1);
    let what = if lines.len() == 1 {
        format!("replaced 1 occurrence at line {first}")
    } else {
        format!(
            "replaced {} occurrences at lines {}",
            lines.len(),
            list_lines(&lines)
        )
    };
    let snippet = snippet(&updated, first, new.matches('\n').count() + 1);
    let message = format!("edited {display}: {what}\n\n{snippet}");
    let out = if crlf {
        updated.replace('\n', "\r\n")
    } else {
        updated
    };
    Ok((out, message))
}

#[cfg(test)]
mod tests {
    use super::super::fsguard::special;
    use super::*;
    use crate::platform::testutil::TempDir;
    use std::fs;
    use std::os::unix::fs::FileTypeExt;
    use std::path::PathBuf;
    use tokio_util::sync::CancellationToken;

    impl TempDir {
        fn file(&self, name: &str, content: &str) -> PathBuf {
            let p = self.0.join(name);
            fs::write(&p, content).unwrap();
            p
        }

        async fn edit(&self, args: Value) -> ToolOutput {
            let ctx = std::sync::Arc::new(
                crate::vocab::run::RunContext::detached(self.0.clone())
                    .with_cancel(CancellationToken::new()),
            );
            EditTool::new().call(args, ctx).await
        }
    }

    fn args(path: &str, old: &str, new: &str) -> Value {
        json!({"path": path, "old_text": old, "new_text": new})
    }

    #[tokio::test]
    async fn replaces_unique_text_and_shows_snippet() {
        let dir = TempDir::new("ok");
        let p = dir.file("a.rs", "fn a() {}\nfn b() {\n    1\n}\nfn c() {}\n");
        let out = dir.edit(args("a.rs", "    1\n", "    2\n    3\n")).await;
        assert!(!out.is_error, "{}", out.content);
        assert!(
            out.content
                .starts_with("edited a.rs: replaced 1 occurrence at line 3\n"),
            "{}",
            out.content
        );
        assert!(
            out.content.contains("     3\t    2\n     4\t    3"),
            "{}",
            out.content
        );
        assert_eq!(
            fs::read_to_string(p).unwrap(),
            "fn a() {}\nfn b() {\n    2\n    3\n}\nfn c() {}\n"
        );
        let leftovers = fs::read_dir(&dir.0).unwrap().count();
        assert_eq!(leftovers, 1, "temporary file left behind");
    }

    #[tokio::test]
    async fn multiple_occurrences_need_replace_all() {
        let dir = TempDir::new("multi");
        let p = dir.file("m.txt", "x = 1\ny = 2\nx = 1\n\nx = 1\n");
        let out = dir.edit(args("m.txt", "x = 1", "x = 9")).await;
        assert!(out.is_error);
        assert_eq!(
            out.content,
            "old_text occurs 3 times in m.txt (lines 1, 3, 5); add surrounding lines to make \
             it unique, or set replace_all"
        );
        assert_eq!(
            fs::read_to_string(&p).unwrap(),
            "x = 1\ny = 2\nx = 1\n\nx = 1\n"
        );
        let mut a = args("m.txt", "x = 1", "x = 9");
        a["replace_all"] = json!(true);
        let out = dir.edit(a).await;
        assert!(!out.is_error, "{}", out.content);
        assert!(out
            .content
            .starts_with("edited m.txt: replaced 3 occurrences at lines 1, 3, 5"));
        assert_eq!(
            fs::read_to_string(&p).unwrap(),
            "x = 9\ny = 2\nx = 9\n\nx = 9\n"
        );
    }

    #[tokio::test]
    async fn crlf_files_keep_crlf() {
        let dir = TempDir::new("crlf");
        let p = dir.file("w.txt", "one\r\ntwo\r\nthree\r\n");
        let out = dir.edit(args("w.txt", "one\ntwo\n", "uno\ndos\n")).await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(fs::read_to_string(&p).unwrap(), "uno\r\ndos\r\nthree\r\n");
        let out = dir.edit(args("w.txt", "dos\r\nthree", "tres")).await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(fs::read_to_string(&p).unwrap(), "uno\r\ntres\r\n");
    }

    #[tokio::test]
    async fn missing_file_is_an_error() {
        let dir = TempDir::new("missing");
        let out = dir.edit(args("none.txt", "a", "b")).await;
        assert!(out.is_error);
        assert!(
            out.content.starts_with("no such file: none.txt"),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn empty_old_text_is_an_error() {
        let dir = TempDir::new("empty");
        dir.file("e.txt", "abc");
        let out = dir.edit(args("e.txt", "", "x")).await;
        assert!(out.is_error);
        assert!(
            out.content.starts_with("old_text is empty"),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn not_found_without_near_match() {
        let dir = TempDir::new("notfound");
        dir.file("n.txt", "alpha\nbeta\n");
        let out = dir.edit(args("n.txt", "gamma", "delta")).await;
        assert!(out.is_error);
        assert!(out
            .content
            .starts_with("old_text not found in n.txt; read the file again"));
        assert!(!out.content.contains("Hint"));
    }

    #[tokio::test]
    async fn not_found_hints_at_whitespace_near_match() {
        let dir = TempDir::new("near");
        let p = dir.file("h.py", "def f():\n\tif x:\n\t\treturn 1\n");
        let out = dir.edit(args("h.py", "if x:\n    return 1", "pass")).await;
        assert!(out.is_error);
        assert!(out.content.contains("matches lines 2-3"), "{}", out.content);
        assert!(
            out.content.contains("     3\t\t\treturn 1"),
            "{}",
            out.content
        );
        assert_eq!(
            fs::read_to_string(p).unwrap(),
            "def f():\n\tif x:\n\t\treturn 1\n"
        );
    }

    #[tokio::test]
    async fn not_found_hints_at_line_ending_difference_in_mixed_file() {
        let dir = TempDir::new("mixed");
        dir.file("x.txt", "a\nb\r\nc\n");
        let out = dir.edit(args("x.txt", "b\nc", "z")).await;
        assert!(out.is_error);
        assert!(out.content.contains("matches lines 2-3"), "{}", out.content);
    }

    #[tokio::test]
    async fn directory_and_binary_are_errors() {
        let dir = TempDir::new("dirbin");
        fs::create_dir(dir.0.join("d")).unwrap();
        let out = dir.edit(args("d", "a", "b")).await;
        assert!(out.is_error);
        assert!(out.content.contains("is a directory"), "{}", out.content);
        fs::write(dir.0.join("b.bin"), b"a\xffb").unwrap();
        let out = dir.edit(args("b.bin", "a", "b")).await;
        assert!(out.is_error);
        assert!(out.content.contains("not valid UTF-8"), "{}", out.content);
    }

    #[tokio::test]
    async fn special_files_are_refused_without_blocking() {
        let dir = TempDir::new("special");
        special::mkfifo(&dir.0.join("pipe"));
        let _sock = std::os::unix::net::UnixListener::bind(dir.0.join("sock")).unwrap();
        let mut names = vec!["pipe", "sock"];
        if special::mknod_null(&dir.0.join("null")) {
            names.push("null");
        }
        for name in names {
            let out = dir.edit(args(name, "a", "b")).await;
            assert!(out.is_error);
            assert!(
                out.content
                    .contains("not a regular file; edit only changes regular files"),
                "{name}: {}",
                out.content
            );
        }
        assert!(fs::symlink_metadata(dir.0.join("pipe"))
            .unwrap()
            .file_type()
            .is_fifo());
    }

    #[tokio::test]
    async fn edits_through_a_symlink_keeping_link_and_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = TempDir::new("link");
        let real = dir.file("real.sh", "echo old\n");
        fs::set_permissions(&real, fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::symlink("real.sh", dir.0.join("link.sh")).unwrap();
        let out = dir.edit(args("link.sh", "old", "new")).await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(fs::read_to_string(&real).unwrap(), "echo new\n");
        assert_eq!(
            fs::metadata(&real).unwrap().permissions().mode() & 0o777,
            0o700
        );
        assert!(fs::symlink_metadata(dir.0.join("link.sh"))
            .unwrap()
            .file_type()
            .is_symlink());
        std::os::unix::fs::symlink("gone", dir.0.join("dangling")).unwrap();
        let out = dir.edit(args("dangling", "a", "b")).await;
        assert!(out.is_error);
        assert!(
            out.content.contains("which does not exist"),
            "{}",
            out.content
        );
    }

    #[tokio::test]
    async fn identical_texts_and_odd_arguments_are_errors() {
        let dir = TempDir::new("odd");
        dir.file("s.txt", "same");
        let out = dir.edit(args("s.txt", "same", "same")).await;
        assert!(out.is_error);
        assert!(out.content.contains("the same"));
        let out = dir.edit(json!({"path": "s.txt", "old_text": 1})).await;
        assert!(out.is_error);
    }

    #[test]
    fn schema_is_complete() {
        let v = jsonschema::validator_for(&EditTool::new().spec().parameters).unwrap();
        assert!(v.is_valid(&args("a", "b", "c")));
        assert!(!v.is_valid(&json!({"path": "a", "old_text": "b"})));
        assert!(!v.is_valid(&json!({"path": "a", "old_text": "b", "new_text": "c", "x": 1})));
        assert!(!EditTool::new().parallel_safe());
    }
}
