//! The built-in `read` tool (placeholder until implemented).

use serde_json::{json, Value};

use super::{Tool, ToolContext};
use crate::protocol::{ToolOutput, ToolSpec};
use crate::providers::BoxFuture;

pub struct ReadTool {
    spec: ToolSpec,
}

impl ReadTool {
    pub fn new() -> Self {
        ReadTool {
            spec: ToolSpec {
                name: "read".into(),
                description: String::new(),
                parameters: json!({"type": "object"}),
            },
        }
    }
}

impl Default for ReadTool {
    fn default() -> Self {
        Self::new()
    }
}

impl Tool for ReadTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, _args: Value, _ctx: ToolContext) -> BoxFuture<'static, ToolOutput> {
        Box::pin(async { ToolOutput::error("not implemented") })
    }
}
