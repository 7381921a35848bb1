//! Tools that need MCP tasks (`"execution": {"taskSupport": "required"}` in `tools/list`),
//! which mypi does not support yet: they are not offered to the model and a call of one is
//! refused with [`refusal`]. The SDK's tool type has no `execution` field, so the transports
//! read it off the raw answers to `tools/list` ([`TaskTools::note`]: the stdio decoder, the
//! Streamable HTTP client of `listing.rs`, the legacy SSE transport) and the connection puts
//! it back into the tools' JSON ([`TaskTools::mark`]).

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;

/// The `execution` of each tool of the server's last `tools/list` that has one.
#[derive(Default)]
pub struct TaskTools(Mutex<HashMap<String, Value>>);

impl TaskTools {
    /// Notes the tools of one page of a `tools/list` answer (its `result`); the first page
    /// (asked without a cursor) starts a new list.
    pub fn note(&self, result: &Value, first: bool) {
        let mut seen = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if first {
            seen.clear();
        }
        let Some(tools) = result["tools"].as_array() else {
            return;
        };
        for tool in tools {
            if let (Some(name), Some(execution)) = (tool["name"].as_str(), tool.get("execution")) {
                seen.insert(name.to_string(), execution.clone());
            }
        }
    }

    /// Puts each tool's `execution` back into `tools` (as the SDK read them, without it).
    pub fn mark(&self, tools: &mut [Value]) {
        let seen = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if seen.is_empty() {
            return;
        }
        for tool in tools {
            let execution = tool["name"].as_str().and_then(|n| seen.get(n)).cloned();
            if let (Some(e), Some(map)) = (execution, tool.as_object_mut()) {
                map.insert("execution".into(), e);
            }
        }
    }
}

/// Whether `tool` (its `tools/list` JSON) can only be called as a task.
pub fn needs_tasks(tool: &Value) -> bool {
    tool["execution"]["taskSupport"] == "required"
}

/// Why a call of `tool` is refused.
pub fn refusal(tool: &str) -> String {
    format!("tool {tool} needs MCP tasks, which mypi does not support yet")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn execution_is_put_back_and_a_new_list_forgets_the_old() {
        let t = TaskTools::default();
        let page = json!({"tools": [
            {"name": "a", "execution": {"taskSupport": "required"}},
            {"name": "b", "execution": {"taskSupport": "optional"}},
            {"name": "c"}
        ]});
        t.note(&page, true);
        t.note(
            &json!({"tools": [{"name": "d", "execution": {"taskSupport": "required"}}]}),
            false,
        );
        let mut tools = vec![
            json!({"name": "a"}),
            json!({"name": "b"}),
            json!({"name": "c"}),
            json!({"name": "d"}),
        ];
        t.mark(&mut tools);
        let needs: Vec<bool> = tools.iter().map(needs_tasks).collect();
        assert_eq!(needs, [true, false, false, true]);
        assert_eq!(tools[1]["execution"]["taskSupport"], "optional");
        t.note(&json!({"tools": [{"name": "a"}]}), true);
        let mut again = vec![json!({"name": "a"})];
        t.mark(&mut again);
        assert!(!needs_tasks(&again[0]));
    }
}
