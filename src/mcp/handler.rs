//! The client side of one connection ([`Handler`]): what mypi tells a server about itself
//! (protocol version, capabilities) and how it answers the server's requests and
//! notifications:
//!
//! - `roots/list`: the working folder (which leaves the machine for a remote server);
//! - elicitation: asked through [`Elicit`](super::reports::Elicit) (the REPL asks field by field; print mode declines),
//!   with the schema's defaults filled in for the fields left out; while it is open, the
//!   connection's request deadlines are held (`deadline.rs`);
//! - sampling: declined with a message saying mypi does not offer it;
//! - list changes: flagged in [`Changes`] for the server's refresh task (tools by the
//!   transport wrapper in `noticing.rs`, as they arrive);
//! - progress: handled as it is read off the wire (`progress.rs`); log messages: appended to
//!   the log file.

// Roots, sampling and logging are deprecated in the 2026 generation; 2025 servers use them.
#![allow(deprecated)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use rmcp::model::{
    ClientConfig, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ErrorData, ListRootsResult, LoggingMessageNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::ClientHandler;
use serde_json::{json, Value};
use tokio::sync::Notify;

use super::reports::{append_log, Elicitation, Elicited, Hooks};

/// The protocol version offered in the `initialize` request (the SDK's default would put the
/// stateless generation's version there).
pub const LEGACY_VERSION: &str = "2025-11-25";

/// Which lists a server said changed, waiting for the refresh task.
#[derive(Default)]
pub struct Changes {
    pub tools: AtomicBool,
    /// How many times the tools were said to have changed (see [`Changes::announce_tools`]).
    pub tools_announced: AtomicU64,
    pub resources: AtomicBool,
    pub prompts: AtomicBool,
    pub notify: Notify,
}

impl Changes {
    fn flag(&self, which: &AtomicBool) {
        which.store(true, Ordering::Release);
        self.notify.notify_one();
    }

    /// The tool list changed: counted first, then flagged, so a refresh that takes the flag
    /// reads a count that includes this change.
    pub fn announce_tools(&self) {
        self.tools_announced.fetch_add(1, Ordering::AcqRel);
        self.flag(&self.tools);
    }
}

/// One connection's client handler.
pub struct Handler {
    pub server: String,
    pub cwd: PathBuf,
    pub hooks: Hooks,
    pub changes: Arc<Changes>,
    /// The running requests' deadlines, held while an elicitation is open.
    pub(super) deadlines: Arc<super::deadline::Deadlines>,
    /// Where progress notifications go (read by the transport wrapper, `noticing.rs`).
    pub(super) progress: Arc<super::progress::Progress>,
    /// Each tool's `execution`, read off the raw `tools/list` answers by the transport.
    pub(super) tasks: Arc<super::tasks::TaskTools>,
}

/// What mypi says about itself in `initialize` (and in each request of the stateless
/// generation).
pub(crate) fn client_config() -> ClientConfig {
    let v = json!({
        "protocolVersion": LEGACY_VERSION,
        "capabilities": {"roots": {"listChanged": false}, "elicitation": {"form": {}}},
        "clientInfo": {"name": "mypi", "version": env!("CARGO_PKG_VERSION")},
    });
    serde_json::from_value(v).unwrap_or_default()
}

/// The `file://` URI of a folder.
pub fn file_uri(path: &std::path::Path) -> String {
    let mut uri = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                uri.push(b as char)
            }
            _ => uri.push_str(&format!("%{b:02X}")),
        }
    }
    uri
}

/// Fills the defaults of `schema`'s properties that `content` leaves out.
pub fn fill_defaults(schema: &Value, content: &mut Value) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    if !content.is_object() {
        *content = json!({});
    }
    let Some(map) = content.as_object_mut() else {
        return;
    };
    for (name, prop) in props {
        if let Some(default) = prop.get("default") {
            map.entry(name.clone()).or_insert_with(|| default.clone());
        }
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        client_config()
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let name = self
            .cwd
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let v = json!({"roots": [{"uri": file_uri(&self.cwd), "name": name}]});
        serde_json::from_value(v).map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        Err(ErrorData::invalid_request(
            "mypi does not offer sampling: the server cannot ask the user's model for completions",
            None,
        ))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let order = match &request {
            ElicitRequestParams::FormElicitationParams {
                requested_schema, ..
            } => requested_schema.property_order.clone(),
            _ => None,
        };
        let params = serde_json::to_value(&request).unwrap_or_default();
        let asked = Elicitation {
            message: params
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            schema: params.get("requestedSchema").cloned().unwrap_or(json!({})),
            order: order.unwrap_or_default(),
        };
        let schema = &asked.schema;
        // The user's time is not the server's: no request expires while they answer.
        let _held = self.deadlines.hold();
        // Not asked, or no longer: when the server withdraws it, and when no call of ours runs
        // on this connection (the call it is for was cancelled or is over; one that came
        // after its call was cancelled is never shown).
        let answer = tokio::select! {
            biased;
            _ = context.ct.cancelled() => Elicited::Cancel,
            _ = self.deadlines.none_running() => Elicited::Cancel,
            a = (self.hooks.elicit)(&self.server, &asked) => a,
        };
        let v = match answer {
            Elicited::Accept(mut content) => {
                fill_defaults(schema, &mut content);
                json!({"action": "accept", "content": content})
            }
            Elicited::Decline => json!({"action": "decline"}),
            Elicited::Cancel => json!({"action": "cancel"}),
        };
        serde_json::from_value(v).map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    // Progress is handled by the transport as it arrives (`progress.rs`).

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let data = match &params.data {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let level = serde_json::to_value(params.level).unwrap_or_default();
        let logger = params.logger.unwrap_or_default();
        let line = format!("{} {logger}: {data}", level.as_str().unwrap_or(""));
        append_log(&self.hooks, &self.server, &line);
    }

    // A tool-list change is announced by the transport as it arrives (`noticing.rs`).

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changes.flag(&self.changes.resources);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changes.flag(&self.changes.prompts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_legacy_version_is_pinned_in_initialize() {
        let v = serde_json::to_value(client_config()).unwrap();
        assert_eq!(v["protocolVersion"], LEGACY_VERSION);
        assert_eq!(v["clientInfo"]["name"], "mypi");
        assert!(v["capabilities"]["elicitation"].is_object());
        assert!(v["capabilities"]["roots"].is_object());
    }

    #[test]
    fn defaults_fill_only_missing_fields() {
        let schema = json!({"properties": {
            "name": {"type": "string", "default": "John"},
            "age": {"type": "integer", "default": 30},
            "x": {"type": "string"}
        }});
        let mut content = json!({"name": "Ann"});
        fill_defaults(&schema, &mut content);
        assert_eq!(content, json!({"name": "Ann", "age": 30}));
    }

    #[test]
    fn folders_become_file_uris() {
        assert_eq!(
            file_uri(std::path::Path::new("/a b/ü")),
            "file:///a%20b/%C3%BC"
        );
    }
}
