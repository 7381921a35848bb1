//! mypi: a line-mode coding agent whose behaviour is customised by Lua and Rhai scripts.
//!
//! # Layout
//!
//! - [`protocol`]: the vocabulary (messages, tool calls, agent events); no I/O.
//! - [`agent`]: the loop (turns, tool batches, steer/follow-up queues, session files).
//! - [`hooks`]: typed events, results and the bus that chains handlers.
//! - [`tools`]: the tool trait, the registry and the built-in tools.
//! - [`commands`]: the slash-command table.
//! - [`providers`]: OpenAI-compatible, Anthropic and faux models behind one trait.
//! - [`cli`], [`config`]: the command line and the resolved configuration.
//! - [`app`]: wiring; [`repl`]: the REPL and print-mode front ends.
//! - [`owner`], [`text`]: registration handles, text helpers.
//!
//! # Data flow
//!
//! A line from the REPL or `-p` goes to [`app::App::handle_line`]: a `/command` is answered
//! from the command table; anything else goes through the `input` hook to
//! [`agent::Agent::prompt`], which loops model request -> tool batch -> model request, firing
//! hooks at each step, appending every message to the session file, and reporting
//! [`protocol::AgentEvent`]s to the front end's sink.

pub mod agent;
pub mod app;
pub mod cli;
pub mod commands;
pub mod config;
pub mod extensions;
pub mod hooks;
pub mod http;
pub mod owner;
pub mod process;
pub mod protocol;
pub mod providers;
pub mod repl;
pub mod run;
#[cfg(test)]
mod testutil;
pub mod text;
pub mod tools;
pub mod ui;
