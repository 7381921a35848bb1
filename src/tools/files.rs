//! Where the built-in `read`, `write` and `edit` tools get and put a file's text: the disk,
//! unless the front end hands them a [`TextFiles`] when they are built (an editor's, in
//! `mypi acp`, so the model reads unsaved buffers and its writes land in the editor's
//! buffers). What is on disk still decides what a path is: a directory is listed from disk,
//! and what is not a regular file is refused as before; only a regular file's (or a new
//! file's) text goes through the front end.
//!
//! - `read` takes the text from [`TextFiles::read`] when it [`TextFiles::reads`], and pages
//!   it as it pages a file (a file over [`MAX_THROUGH`] is read from disk);
//! - `write` puts the text with [`TextFiles::write`] when it [`TextFiles::writes`] (missing
//!   folders are still made on disk);
//! - `edit` goes through it only when it does both: it reads the text, replaces, reads
//!   again and writes only when nothing changed meanwhile.
//!
//! Each tool's own file has its way through them (`through`); this one only says what
//! they are and which of them a tool uses.

use std::path::Path;
use std::sync::Arc;

use futures_util::future::BoxFuture;

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

/// Files larger than this on disk are read and edited there even when a front end's files
/// are given: the editor would send the whole text in one message, past what its connection
/// carries (mypi reads messages of up to 16 MiB).
pub const MAX_THROUGH: u64 = 4 * 1024 * 1024;

/// Whether the file at `path` is small enough to go through a front end (or not on disk).
pub(super) fn fits(path: &Path) -> bool {
    std::fs::metadata(path).map_or(true, |m| m.len() <= MAX_THROUGH)
}

/// What the tools are built with: `None` is the disk.
pub type Files = Option<Arc<dyn TextFiles>>;

/// `work` through a front end's files, given up (the requests to it withdrawn) when the run
/// is cancelled: an editor that never answers holds up nothing.
pub(super) async fn unless_cancelled<T: From<ToolOutput>>(
    cancel: &tokio_util::sync::CancellationToken,
    work: impl std::future::Future<Output = T>,
) -> T {
    tokio::select! {
        out = work => out,
        () = cancel.cancelled() => T::from(ToolOutput::error("cancelled")),
    }
}

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
