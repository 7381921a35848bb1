//! Where the built-in `read`, `write` and `edit` tools get and put a file's text: the disk,
//! unless the front end hands them a [`TextFiles`] when they are built (an editor's, in
//! `mypi acp`, so the model reads unsaved buffers and its writes land in the editor's
//! buffers). What is on disk still decides what a path is: a directory is listed from disk,
//! and what is not a regular file is refused as before; only a regular file's (or a new
//! file's) text goes through the front end.
//!
//! - `read` takes the text from [`TextFiles::read`] when it [`TextFiles::reads`], and pages
//!   it as it pages a file;
//! - `write` puts the text with [`TextFiles::write`] when it [`TextFiles::writes`] (missing
//!   folders are still made on disk);
//! - `edit` goes through it only when it does both: it reads the text, replaces, reads
//!   again and writes only when nothing changed meanwhile.

use std::io;
use std::path::Path;
use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::fsguard::{Action, Kind, Target};
use super::{page, MAX_OUTPUT_BYTES};
use crate::vocab::protocol::ToolOutput;

/// A front end's files (an editor's buffers).
pub trait TextFiles: Send + Sync {
    /// Whether `read` (and `edit`) read through it.
    fn reads(&self) -> bool;
    /// Whether `write` (and `edit`) write through it.
    fn writes(&self) -> bool;
    /// The text of the file at `path` (absolute), or why not.
    fn read(&self, path: &Path) -> BoxFuture<'static, Result<String, String>>;
    /// Replaces the text of the file at `path` (absolute; created when missing).
    fn write(&self, path: &Path, text: &str) -> BoxFuture<'static, Result<(), String>>;
}

/// What the tools are built with: `None` is the disk.
pub type Files = Option<Arc<dyn TextFiles>>;

/// The files to read through, when there are such.
pub(super) fn reading(files: &Files) -> Option<Arc<dyn TextFiles>> {
    files.clone().filter(|f| f.reads())
}

/// The files to write through, when there are such.
pub(super) fn writing(files: &Files) -> Option<Arc<dyn TextFiles>> {
    files.clone().filter(|f| f.writes())
}

/// The files `edit` goes through: ones that both read and write.
pub(super) fn editing(files: &Files) -> Option<Arc<dyn TextFiles>> {
    files.clone().filter(|f| f.reads() && f.writes())
}

/// `read` through `files`: a regular file's text from them, paged as from disk; `None` for
/// anything else (a folder, nothing, a pipe), which is read as the disk has it.
pub(super) async fn read(
    files: Arc<dyn TextFiles>,
    path: &Path,
    display: &str,
    (offset, limit, note_room): (usize, usize, usize),
) -> Option<ToolOutput> {
    let target = match Target::resolve(path, display, Action::Read) {
        Ok(t) => t,
        Err(msg) => return Some(ToolOutput::error(msg)),
    };
    if target.kind() != Some(Kind::Regular) {
        return None;
    }
    let text = match files.read(&target.path).await {
        Ok(text) => text,
        Err(e) => {
            let why = format!("could not read {display} from the editor: {e}");
            return Some(ToolOutput::error(why));
        }
    };
    if text.contains('\0') {
        return Some(ToolOutput::error(format!(
            "{display} is a binary file ({} bytes); read only shows text",
            text.len()
        )));
    }
    let reader = io::Cursor::new(text.into_bytes());
    Some(
        match page::read_page(reader, offset, limit, MAX_OUTPUT_BYTES - note_room) {
            Ok(p) => page::render_page(p, display, offset),
            Err(e) => ToolOutput::error(format!("could not read {display}: {e}")),
        },
    )
}

/// `write` through `files`: what is at the path must be a regular file or nothing; missing
/// folders are made on disk, the text goes to the editor. The message is `write`'s, saying
/// where the text went.
pub(super) async fn write(
    files: Arc<dyn TextFiles>,
    path: &Path,
    display: &str,
    content: &str,
) -> ToolOutput {
    let target = match Target::resolve(path, display, Action::Write) {
        Ok(t) => t,
        Err(msg) => return ToolOutput::error(msg),
    };
    if target.kind().is_some_and(|k| k != Kind::Regular) {
        return ToolOutput::error(target.refusal(Action::Write));
    }
    if let Err(msg) = super::write::make_parent(&target) {
        return ToolOutput::error(msg);
    }
    match files.write(&target.path, content).await {
        Ok(()) => ToolOutput::ok(format!(
            "{}, in the editor",
            super::write::written(&target, content.len())
        )),
        Err(e) => ToolOutput::error(format!("could not write {display} in the editor: {e}")),
    }
}

/// `edit` through `files`: the text read from them, the replacement made by `apply`, and
/// the result written back only if the text is still what was read.
pub(super) async fn edit(
    files: Arc<dyn TextFiles>,
    path: &Path,
    display: &str,
    apply: impl FnOnce(&str) -> Result<(String, String), String>,
) -> ToolOutput {
    let target = match Target::resolve(path, display, Action::Edit) {
        Ok(t) => t,
        Err(msg) => return ToolOutput::error(msg),
    };
    match target.kind() {
        Some(Kind::Regular) => {}
        None => {
            return ToolOutput::error(format!(
                "{} (to create a file, use write)",
                target.missing()
            ))
        }
        Some(_) => return ToolOutput::error(target.refusal(Action::Edit)),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::testutil::TempDir;
    use crate::tools::Tool;
    use serde_json::json;
    use std::collections::HashMap;
    use std::path::PathBuf;
    use std::sync::Mutex;

    /// An editor's buffers, in memory.
    #[derive(Default)]
    struct Buffers(Mutex<HashMap<PathBuf, String>>);

    impl TextFiles for Buffers {
        fn reads(&self) -> bool {
            true
        }
        fn writes(&self) -> bool {
            true
        }
        fn read(&self, path: &Path) -> BoxFuture<'static, Result<String, String>> {
            let text = self.0.lock().unwrap().get(path).cloned();
            Box::pin(async move { text.ok_or_else(|| "no buffer".to_string()) })
        }
        fn write(&self, path: &Path, text: &str) -> BoxFuture<'static, Result<(), String>> {
            self.0
                .lock()
                .unwrap()
                .insert(path.to_path_buf(), text.to_string());
            Box::pin(async { Ok(()) })
        }
    }

    #[tokio::test]
    async fn the_tools_read_and_write_the_buffers_and_leave_the_disk_alone() {
        let dir = TempDir::new("files");
        let file = dir.0.join("a.txt");
        std::fs::write(&file, "on disk\n").unwrap();
        std::fs::create_dir(dir.0.join("sub")).unwrap();
        let buffers = Arc::new(Buffers::default());
        buffers
            .0
            .lock()
            .unwrap()
            .insert(file.clone(), "one\ntwo\n".into());
        let files: Files = Some(buffers.clone());
        let read = crate::tools::read::ReadTool::through(files.clone());
        let out = read
            .call(json!({"path": "a.txt", "offset": 2}), dir.ctx())
            .await;
        assert_eq!(out.content, "two\n");
        // A folder is still listed from disk.
        let out = read.call(json!({"path": "."}), dir.ctx()).await;
        assert!(out.content.contains("sub/"), "{}", out.content);
        let edit = crate::tools::edit::EditTool::through(files.clone());
        let args = json!({"path": "a.txt", "old_text": "two", "new_text": "2"});
        let out = edit.call(args, dir.ctx()).await;
        assert!(!out.is_error, "{}", out.content);
        let write = crate::tools::write::WriteTool::through(files);
        let args = json!({"path": "new/b.txt", "content": "bee"});
        let out = write.call(args, dir.ctx()).await;
        assert_eq!(
            out.content,
            "wrote 3 bytes to new/b.txt (created new file), in the editor"
        );
        let buffers = buffers.0.lock().unwrap();
        assert_eq!(buffers[&file], "one\n2\n");
        assert_eq!(buffers[&dir.0.join("new/b.txt")], "bee");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "on disk\n");
        assert!(!dir.0.join("new/b.txt").exists());
    }
}
