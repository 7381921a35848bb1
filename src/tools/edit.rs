//! The built-in `edit` tool (placeholder until implemented).

use serde_json::{json, Value};

use super::{Tool, ToolContext};
use crate::protocol::{ToolOutput, ToolSpec};
use crate::providers::BoxFuture;

pub struct EditTool {
    spec: ToolSpec,
}

impl EditTool {
    pub fn new() -> Self {
        EditTool {
            spec: ToolSpec {
                name: "edit".into(),
                description: String::new(),
                parameters: json!({"type": "object"}),
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

    fn call(&self, _args: Value, _ctx: ToolContext) -> BoxFuture<'static, ToolOutput> {
        Box::pin(async { ToolOutput::error("not implemented") })
    }
}
