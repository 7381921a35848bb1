//! The editor's files ([`EditorFiles`]): when the editor's `initialize` offers
//! `fs.readTextFile` / `fs.writeTextFile`, a session's built-in `read`, `write` and `edit`
//! go through `fs/read_text_file` and `fs/write_text_file` ([`crate::tools::files`]): the
//! model reads unsaved buffers, and what it writes lands in the editor's buffer (the editor
//! saves it; the disk is not touched). `edit` goes through the editor only when it offers
//! both. The text written last to each file, and the text it had before, are kept for the
//! `diff` the editor is shown with the call's result.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    FileSystemCapabilities, ReadTextFileRequest, WriteTextFileRequest,
};
use futures_util::future::BoxFuture;

use super::updates::AcpSink;
use crate::tools::files::TextFiles;

/// A file's text before and after a write through the editor (`None`: unknown, or new).
pub type Written = (Option<String>, String);

/// A session's files, as its editor has them.
pub struct EditorFiles {
    sink: Arc<AcpSink>,
    reads: bool,
    writes: bool,
    /// The text each file had when read last.
    read: Arc<Mutex<HashMap<PathBuf, String>>>,
    /// The writes not yet shown as a diff.
    written: Arc<Mutex<HashMap<PathBuf, Written>>>,
}

impl EditorFiles {
    /// The editor's files, when it offers any.
    pub fn offered(fs: &FileSystemCapabilities, sink: Arc<AcpSink>) -> Option<Arc<EditorFiles>> {
        (fs.read_text_file || fs.write_text_file).then(|| {
            Arc::new(EditorFiles {
                sink,
                reads: fs.read_text_file,
                writes: fs.write_text_file,
                read: Arc::default(),
                written: Arc::default(),
            })
        })
    }

    /// `fs/read_text_file` of `path`.
    fn fetch(sink: &AcpSink, path: &Path) -> BoxFuture<'static, Result<String, String>> {
        let Some(session) = sink.session() else {
            return Box::pin(async { Err("the session is not open yet".to_string()) });
        };
        let sent = sink
            .connection()
            .send_request(ReadTextFileRequest::new(session, path.to_path_buf()));
        Box::pin(async move {
            sent.block_task()
                .await
                .map(|r| r.content)
                .map_err(|e| e.to_string())
        })
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl super::updates::Written for EditorFiles {
    fn take_written(&self, path: &Path) -> Option<Written> {
        lock(&self.written).remove(path)
    }
}

impl TextFiles for EditorFiles {
    fn reads(&self) -> bool {
        self.reads
    }

    fn writes(&self) -> bool {
        self.writes
    }

    fn read(&self, path: &Path) -> BoxFuture<'static, Result<String, String>> {
        let fetched = Self::fetch(&self.sink, path);
        let (read, path) = (self.read.clone(), path.to_path_buf());
        Box::pin(async move {
            let text = fetched.await?;
            lock(&read).insert(path, text.clone());
            Ok(text)
        })
    }

    fn write(&self, path: &Path, text: &str) -> BoxFuture<'static, Result<(), String>> {
        let sink = self.sink.clone();
        let (path, text) = (path.to_path_buf(), text.to_string());
        let (read, written, reads) = (self.read.clone(), self.written.clone(), self.reads);
        Box::pin(async move {
            let session = sink.session().ok_or("the session is not open yet")?;
            // The text before, for the diff: the one read last, else the editor's now.
            let mut before = lock(&read).remove(&path);
            if before.is_none() && reads {
                before = Self::fetch(&sink, &path).await.ok();
            }
            let request = WriteTextFileRequest::new(session, path.clone(), text.clone());
            let sent = sink.connection().send_request(request);
            sent.block_task().await.map_err(|e| e.to_string())?;
            lock(&written).insert(path, (before, text));
            Ok(())
        })
    }
}
