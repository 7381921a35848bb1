//! What a connection reports to the rest of mypi ([`Hooks`]): progress lines for the user,
//! elicitation (what a server asks the user for, and the answer), and the MCP log file. A
//! leaf the connection's files share.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

/// The user's answer to an elicitation.
#[derive(Debug, Clone, PartialEq)]
pub enum Elicited {
    Accept(Value),
    Decline,
    Cancel,
}

/// What a server asks the user for (a form elicitation).
#[derive(Debug, Clone, PartialEq)]
pub struct Elicitation {
    pub message: String,
    /// The requested JSON Schema (its properties sorted by name, as JSON objects are here).
    pub schema: Value,
    /// The schema's property names in the server's order.
    pub order: Vec<String>,
}

/// Asks the user for what a server requests: `(server, request)`.
pub type Elicit = Arc<dyn Fn(&str, &Elicitation) -> BoxFuture<'static, Elicited> + Send + Sync>;

/// What a connection reports to the rest of mypi.
#[derive(Clone)]
pub struct Hooks {
    /// A progress line for the user (the REPL's status line).
    pub progress: Arc<dyn Fn(&str) + Send + Sync>,
    pub elicit: Elicit,
    /// Where server log messages go.
    pub log_file: Option<PathBuf>,
    /// OAuth for HTTP servers (where tokens are kept); `None`: no server is signed in to.
    pub auth: Option<Arc<super::auth::AuthContext>>,
}

impl Hooks {
    /// No user: progress is dropped, elicitation declined, logs kept nowhere.
    pub fn quiet() -> Hooks {
        Hooks {
            progress: Arc::new(|_| {}),
            elicit: Arc::new(|_, _| Box::pin(async { Elicited::Decline })),
            log_file: None,
            auth: None,
        }
    }
}

/// Appends a line about `server` to the MCP log file (when there is one); lines are cut to
/// 8 KiB so a chatty server cannot fill a line without end.
pub fn append_log(hooks: &Hooks, server: &str, line: &str) {
    let Some(path) = &hooks.log_file else {
        return;
    };
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let line: String = line.chars().take(8192).collect();
        let _ = writeln!(f, "{secs} [{server}] {line}");
    }
}
