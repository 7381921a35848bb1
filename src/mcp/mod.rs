//! The MCP client: servers from `.mcp.json` become agent tools, slash commands and resource
//! tools, and scripts call them through `api.mcp`, all through one [`Manager`] that hides the
//! SDK (rmcp): no rmcp type leaves this module.
//!
//! - [`config`]: the `mcpServers` files; [`auth`]: OAuth for HTTP servers (logins, tokens);
//! - [`manager`]: every server's state and connection task, requests routed by server name;
//! - [`conn`]: one connection (handshake of either protocol generation, lists, requests with
//!   timeouts reset by progress); `deadline`: those timeouts, a timer per request reset by
//!   progress and held while the user answers the server; [`handler`]: mypi's answers to the server's
//!   requests; [`stdio`]: the child-process transport with mypi's own limits (`decode`: its
//!   messages, with a short way for tool-call answers); `noticing`:
//!   counts tool-list changes as they arrive, so a call's answer can wait for the re-list,
//!   and hands progress notifications to `progress` in order with the answers;
//! - [`registry`]: the tools and commands a server adds, with handles; [`exposure`]: which
//!   of them are offered directly, deferred to `tool_search` or hidden; [`cache`]: the lists
//!   of the last connection, offered while a server starts; `waiting`: how long a prompt or a
//!   call waits for a server still connecting;
//! - [`script`]: `api.mcp.*` on the host side (script calls pass the tool hooks too);
//! - [`naming`], [`content`]: agent names, and results as text for the model; [`spill`]: the
//!   private folder of results too big for it.

mod anyhttp;
pub mod auth;
pub mod cache;
pub mod commands;
pub mod config;
pub mod conn;
mod connect;
pub mod content;
mod deadline;
mod decode;
pub mod exposure;
mod failure;
pub mod handler;
mod instructions;
mod legacy_sse;
pub(crate) mod listing;
pub mod manager;
pub mod naming;
mod noticing;
mod progress;
mod prompts;
pub mod registry;
pub mod reports;
pub mod script;
pub mod spill;
mod sse;
pub mod stdio;
pub mod tasks;

use std::time::Duration;

pub use manager::waiting::{CONNECT_WAIT, PROMPT_GRACE};
pub use manager::{Manager, State};
pub use registry::Registry;
pub use reports::{Elicit, Elicitation, Elicited, Hooks};

/// Why an MCP request failed. The Display is what the user (or the model) reads.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McpError {
    #[error("no MCP server named '{name}'; {known}")]
    NoServer { name: String, known: String },
    #[error("server '{server}' is not available: {why}")]
    Unavailable { server: String, why: String },
    #[error("no answer within {} s; the request was cancelled (raise \"timeout\" in the server's entry for slow tools)", .0.as_secs())]
    Timeout(Duration),
    #[error("the request was cancelled")]
    Cancelled,
    #[error("the server closed the connection (it exited or crashed){}", if .0.is_empty() { String::new() } else { format!("; its last output: {}", .0) })]
    Closed(String),
    #[error("{0}")]
    Server(String),
    #[error("the connection failed: {0}")]
    Transport(String),
    #[error("{0}")]
    Call(String),
}
