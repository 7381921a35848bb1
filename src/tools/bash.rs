//! The built-in `bash` tool (placeholder until implemented).

use serde_json::{json, Value};

use super::{Tool, ToolContext};
use crate::protocol::{ToolOutput, ToolSpec};
use crate::providers::BoxFuture;

pub struct BashTool {
    spec: ToolSpec,
}

impl BashTool {
    pub fn new() -> Self {
        BashTool {
            spec: ToolSpec {
                name: "bash".into(),
                description: String::new(),
                parameters: json!({"type": "object"}),
            },
        }
    }
}

impl Default for BashTool {
    fn default() -> Self {
        Self::new()
    }
}

impl Tool for BashTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, _args: Value, _ctx: ToolContext) -> BoxFuture<'static, ToolOutput> {
        Box::pin(async { ToolOutput::error("not implemented") })
    }
}
