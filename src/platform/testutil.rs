//! Test support shared by the unit tests: a unique temporary folder removed on drop, and a
//! tool context rooted in it.

use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::tools::ToolContext;

/// A fresh folder under the system temp dir, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Self {
        static N: AtomicU64 = AtomicU64::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("mypi-test-{}-{tag}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    /// A tool context whose working folder is this folder.
    pub fn ctx(&self) -> ToolContext {
        std::sync::Arc::new(crate::vocab::run::RunContext::detached(self.0.clone()))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// The context of a test run in `cwd`, session `s1`, model `m1`, print mode.
pub fn run_ctx(cwd: &std::path::Path) -> std::sync::Arc<crate::vocab::run::RunContext> {
    let mut ctx = crate::vocab::run::RunContext::detached(cwd.to_path_buf());
    ctx.session_id = "s1".into();
    ctx.model = "m1".into();
    std::sync::Arc::new(ctx)
}

/// The events as `api.on`'s error lists them.
pub const EVENTS: &str = "session_start, session_shutdown, input, before_agent_start, \
turn_start, context, before_provider_request, message_update, message_end, tool_call, \
tool_result, turn_end, agent_end, extension_loaded, session_before_compact, session_before_new, \
session_before_resume, before_quit, model_select, user_shell";
