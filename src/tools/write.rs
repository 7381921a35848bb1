//! The built-in `write` tool (placeholder until implemented).

use serde_json::{json, Value};

use super::{Tool, ToolContext};
use crate::protocol::{ToolOutput, ToolSpec};
use crate::providers::BoxFuture;

pub struct WriteTool {
    spec: ToolSpec,
}

impl WriteTool {
    pub fn new() -> Self {
        WriteTool {
            spec: ToolSpec {
                name: "write".into(),
                description: String::new(),
                parameters: json!({"type": "object"}),
            },
        }
    }
}

impl Default for WriteTool {
    fn default() -> Self {
        Self::new()
    }
}

impl Tool for WriteTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, _args: Value, _ctx: ToolContext) -> BoxFuture<'static, ToolOutput> {
        Box::pin(async { ToolOutput::error("not implemented") })
    }
}
