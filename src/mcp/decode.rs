//! Decoding a server's messages off the stdio wire, with a short way for the answers to
//! `tools/call`.
//!
//! The SDK reads an answer's `result` as an untagged union of some twenty result types
//! tried in turn; a tool call's result is the sixteenth, so each answer first fails fifteen
//! others (under callgrind: about 45,000 instructions and 48 error values per `echo` answer,
//! half of what the client spends on a call). The transport knows which of its requests are
//! tool calls, so an answer to one of them whose `result` has only the fields of a tool
//! result is read as one directly, by the SDK's own `CallToolResult` reader. Anything else
//! (another answer, a notification, a result with other fields, a result the tool reader
//! refuses) takes the SDK's general path, so the outcome is the one the SDK would give.
//!
//! The answers to `tools/list` are read a second time, as plain JSON, for what the SDK's
//! tool type drops: each tool's `execution` ([`super::tasks`]).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rmcp::model::{
    CallToolResult, ClientNotification, ClientRequest, JsonRpcMessage, JsonRpcResponse,
    JsonRpcVersion2_0, RequestId, ServerResult,
};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use serde::de::IgnoredAny;
use serde::Deserialize;

/// Tool calls waiting for an answer past which the list is dropped (it is only a hint: an
/// answer whose id is not in it takes the general path).
const MAX_PENDING: usize = 4096;

/// The ids of the tool calls sent and not yet answered.
#[derive(Default)]
pub(super) struct Decoder {
    calls: HashSet<RequestId>,
    /// The `tools/list` requests not yet answered: whether each asked for the first page.
    lists: HashMap<RequestId, bool>,
    /// Where the tools' `execution` goes (none: not read).
    pub tasks: Option<Arc<super::tasks::TaskTools>>,
}

/// An answer, with nothing but the three fields of one.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer<R> {
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    result: R,
}

/// The fields a tool result may have, and no others.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolFields {
    #[serde(rename = "_meta")]
    _meta: Option<IgnoredAny>,
    #[serde(rename = "resultType")]
    _result_type: Option<IgnoredAny>,
    #[serde(rename = "content")]
    _content: Option<IgnoredAny>,
    #[serde(rename = "structuredContent")]
    _structured_content: Option<IgnoredAny>,
    #[serde(rename = "isError")]
    _is_error: Option<IgnoredAny>,
}

impl Decoder {
    /// Notes a message about to be sent: a tool call's id, or a cancelled one's end.
    pub fn sent(&mut self, message: &TxJsonRpcMessage<RoleClient>) {
        match message {
            JsonRpcMessage::Request(r)
                if matches!(r.request, ClientRequest::CallToolRequest(_)) =>
            {
                if self.calls.len() >= MAX_PENDING {
                    self.calls.clear();
                }
                self.calls.insert(r.id.clone());
            }
            JsonRpcMessage::Request(r) => {
                if let ClientRequest::ListToolsRequest(list) = &r.request {
                    if self.lists.len() >= MAX_PENDING {
                        self.lists.clear();
                    }
                    let first = list.params.as_ref().is_none_or(|p| p.cursor.is_none());
                    self.lists.insert(r.id.clone(), first);
                }
            }
            JsonRpcMessage::Notification(n) => {
                if let ClientNotification::CancelledNotification(c) = &n.notification {
                    if let Some(id) = &c.params.request_id {
                        self.calls.remove(id);
                    }
                }
            }
            _ => {}
        }
    }

    /// Reads one line: the short way when it answers a tool call, else the SDK's way.
    pub fn decode(&mut self, line: &[u8]) -> serde_json::Result<RxJsonRpcMessage<RoleClient>> {
        if !self.calls.is_empty() {
            if let Some(message) = self.tool_answer(line) {
                return Ok(message);
            }
        }
        let message: RxJsonRpcMessage<RoleClient> = serde_json::from_slice(line)?;
        if let JsonRpcMessage::Response(JsonRpcResponse { id, .. }) = &message {
            self.calls.remove(id);
            if let (Some(first), Some(tasks)) = (self.lists.remove(id), &self.tasks) {
                if let Ok(raw) = serde_json::from_slice::<serde_json::Value>(line) {
                    tasks.note(&raw["result"], first);
                }
            }
        } else if let JsonRpcMessage::Error(e) = &message {
            if let Some(id) = &e.id {
                self.calls.remove(id);
                self.lists.remove(id);
            }
        }
        Ok(message)
    }

    /// The answer to a pending tool call, when `line` is one with only tool-result fields
    /// and the SDK's tool-result reader takes it.
    fn tool_answer(&mut self, line: &[u8]) -> Option<RxJsonRpcMessage<RoleClient>> {
        let shape: Answer<ToolFields> = serde_json::from_slice(line).ok()?;
        if !self.calls.remove(&shape.id) {
            return None;
        }
        let answer: Answer<CallToolResult> = serde_json::from_slice(line).ok()?;
        Some(JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: answer.jsonrpc,
            id: answer.id,
            result: ServerResult::CallToolResult(answer.result),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{CallToolRequestParams, ClientRequest, Request};
    use serde_json::{json, Value};

    fn call(id: i64) -> TxJsonRpcMessage<RoleClient> {
        let request =
            ClientRequest::CallToolRequest(Request::new(CallToolRequestParams::new("echo")));
        JsonRpcMessage::request(request, RequestId::Number(id))
    }

    /// What the SDK's own reader makes of `line`, as JSON.
    fn sdk(line: &str) -> Option<Value> {
        serde_json::from_str::<RxJsonRpcMessage<RoleClient>>(line)
            .ok()
            .map(|m| serde_json::to_value(m).unwrap())
    }

    /// Every combination of the tool-result fields, with sample values of several kinds,
    /// and results with other fields: whatever the short way reads, the SDK reads the same.
    #[test]
    fn the_short_way_reads_what_the_sdk_reads() {
        let fields: [(&str, Vec<Value>); 5] = [
            (
                "content",
                vec![json!([{"type": "text", "text": "Echo: hi"}]), json!([])],
            ),
            ("structuredContent", vec![json!({"a": 1}), Value::Null]),
            ("isError", vec![json!(true), json!(false)]),
            ("_meta", vec![json!({"k": "v"})]),
            ("resultType", vec![json!("complete"), json!("task")]),
        ];
        let mut results = Vec::new();
        for mask in 0u32..32 {
            for pick in 0..2 {
                let mut r = serde_json::Map::new();
                for (i, (k, vs)) in fields.iter().enumerate() {
                    if mask & (1 << i) != 0 {
                        r.insert(k.to_string(), vs[pick % vs.len()].clone());
                    }
                }
                results.push(Value::Object(r));
            }
        }
        results.push(json!({"content": [], "task": {"taskId": "t"}}));
        results.push(json!({"tools": []}));
        results.push(json!({"contents": []}));
        results.push(json!({"content": "not a list"}));
        let mut short = 0;
        for (n, result) in results.iter().enumerate() {
            let line = json!({"jsonrpc": "2.0", "id": n, "result": result}).to_string();
            let mut d = Decoder::default();
            d.sent(&call(n as i64));
            let ours = d
                .decode(line.as_bytes())
                .ok()
                .map(|m| serde_json::to_value(m).unwrap());
            assert_eq!(ours, sdk(&line), "{line}");
            short += usize::from(d.calls.is_empty() && ours.is_some());
        }
        assert!(short > 30, "the short way was taken {short} times");
    }

    #[test]
    fn only_tool_calls_take_the_short_way_and_ids_are_let_go() {
        let mut d = Decoder::default();
        // An answer to a request that is not a tool call: read the SDK's way.
        let line = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#;
        assert!(d.tool_answer(line.as_bytes()).is_none());
        assert_eq!(
            sdk(line),
            Some(serde_json::to_value(d.decode(line.as_bytes()).unwrap()).unwrap())
        );
        d.sent(&call(1));
        d.sent(&call(2));
        // An error answer lets its id go.
        let error = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"}}"#;
        d.decode(error.as_bytes()).unwrap();
        assert!(!d.calls.contains(&RequestId::Number(1)));
        // A cancelled call is let go too.
        let cancelled = rmcp::model::CancelledNotification::new(
            rmcp::model::CancelledNotificationParam::new(Some(RequestId::Number(2)), None),
        );
        d.sent(&JsonRpcMessage::notification(
            ClientNotification::CancelledNotification(cancelled),
        ));
        assert!(d.calls.is_empty());
        // A notification while a call is pending takes the general path.
        d.sent(&call(3));
        let note = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
        assert!(matches!(
            d.decode(note.as_bytes()),
            Ok(JsonRpcMessage::Notification(_))
        ));
        assert!(d.calls.contains(&RequestId::Number(3)));
        assert!(d.decode(b"not json").is_err());
    }
}
