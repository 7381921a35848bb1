//! The vocabulary every layer above speaks, importing nothing of mypi's own but the
//! platform: messages, tool calls and agent events, the typed payloads front ends render and
//! `--json` prints ([`protocol`]); the context of one agent run, its queues and what it spent
//! ([`run`]); registration handles ([`owner`]); what the core may ask of the user ([`ui`])
//! and what scripts may ask of the MCP servers ([`mcp`]);
//! text helpers, among them the one rule that makes text mypi did not write itself safe for
//! a terminal ([`text`]); thinking levels ([`thinking`]).

pub mod mcp;
pub mod owner;
pub mod protocol;
pub mod run;
pub mod text;
pub mod thinking;
pub mod ui;
