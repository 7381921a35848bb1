//! mypi: a line-mode coding agent whose behaviour is customised by Lua and Rhai scripts.
//!
//! # Layout
//!
//! - [`protocol`]: the vocabulary (messages, tool calls, agent events); no I/O.
//! - [`run`]: the context of one agent run (session, model, mode, cancellation, queues,
//!   depth) that every hook, tool and command call receives; the steer and follow-up queues
//!   themselves ([`run::queue`]).
//! - [`agent`]: the loop (turns, tool batches, session files), and what child agents are
//!   asked for ([`agent::child`]).
//! - [`hooks`]: typed events, results, the chaining rules and the bus that applies them;
//!   [`hooks::repeats`] says a burst of notices of one kind, from any source, in a few lines.
//! - [`tools`]: the tool trait, the registry and the built-in tools.
//! - [`commands`]: the slash-command table; [`renderers`]: how the REPL shows a tool's lines
//!   when a script renders them.
//! - [`providers`]: OpenAI-compatible, Anthropic and faux models behind one trait; [`http`]:
//!   the one HTTP client they (and later MCP) share.
//! - [`extensions`]: Lua and Rhai scripts (see below).
//! - [`mcp`]: the MCP client: servers from `.mcp.json` as tools, prompts and resources.
//! - [`process`]: child processes in their own process group, killed on every exit path
//!   (even `kill -9`: a parent-death signal, and [`process::reaper`], a second process that
//!   kills the groups mypi left); [`signals`]: the signals that end mypi (killing every child
//!   group first).
//! - [`alloc`]: the process allocator, which charges every block to a meter (a Rhai VM's
//!   memory cap).
//! - [`stdio`]: mypi's own stdout in print mode, out of reach of scripts and children.
//! - [`trust`]: which project folders may run their own code (and have their own sessions,
//!   agent files and configuration read).
//! - [`ui`]: what the core may ask of the user (a yes/no question).
//! - [`cli`], [`config`]: the command line and the resolved configuration ([`config::keyguard`]:
//!   a project's configuration never sends a key of the user's to a host the user did not
//!   name).
//! - [`app`]: wiring; [`repl`]: the REPL and print-mode front ends.
//! - [`owner`], [`text`]: registration handles, text helpers, and [`text::inert`](mod@text::inert), the one
//!   rule that makes text mypi did not write itself safe for a terminal (every front end's
//!   writer goes through it).
//!
//! The modules form one-way layers, lowest first: platform (`alloc`, `process`, `signals`,
//! `stdio`, `http`) -> vocabulary (`text`, `owner`, `protocol`, `run`, `ui`) -> configuration
//! (`trust`, `settings`, `extflags`, `config`, `control`) -> capabilities (`hooks`, `tools`,
//! `commands`, `renderers`, `providers`) -> `agent` -> hosts (`extensions`, `mcp`) -> wiring
//! (`app`) -> front ends (`repl`, `cli`). A module imports only from its layer or below and no
//! two modules import each other; `tests/suite/layers.rs` holds that, with the few upward
//! imports still to be untied listed there.
//!
//! # Data flow
//!
//! A line from the REPL or `-p` goes to [`app::App::handle_line`], which builds the line's
//! [`run::RunContext`]: a `/command` is answered from the command table; anything else goes
//! through the `input` hook to [`agent::Agent::prompt`], which loops model request -> tool
//! batch -> model request, firing hooks at each step, appending every message to the session
//! file, and reporting [`protocol::AgentEvent`]s to the front end's sink. Messages extensions
//! queued meanwhile run after it ([`app::App::run_queued`]).
//!
//! # Extensions
//!
//! Each extension is a script file with its own VM on its own thread
//! ([`extensions::worker`]). What a script can call is defined once, engine-neutral, in
//! [`extensions::surface`]; the Lua and Rhai engines only convert values and keep callbacks.
//! Registrations go through the extension's [`extensions::api::ApiLink`] into the Rust
//! registries as proxies (hook handlers, tools, commands), staged while the script's top level
//! runs so that a (re)load appears at once or not at all ([`extensions::host`],
//! [`extensions::reload`]).
//!
//! A call into a script flows: the hook bus (or tool registry, or command table) calls the
//! proxy with the run's context -> the proxy sends one job to the extension's thread (for an
//! event, all the extension's handlers of it, run in order with the chaining rules of
//! [`hooks::apply_outcome`]; an event is serialized straight into the engine's values, and a
//! rewrite copies the shared event without the fields it replaces) -> the engine calls the
//! script under its budget; a host operation the script asks for (`api.exec`,
//! `ctx.ui.confirm`) is awaited on the async runtime from that thread, outside the budget ->
//! the reply goes back on a oneshot channel.
//! In a burst of short calls the two sides poll for each other's message for a few tens of
//! µs, yielding the CPU, instead of paying a thread wake-up each way
//! ([`extensions::handoff`]); otherwise they sleep. A watchdog reads the call's script time
//! from the thread's [`extensions::meter::Meter`] and gives up on a call stuck in native code.
//! A run started from inside a call (a child agent) lists the waiting thread in its context,
//! so that thread is never re-entered.
//!
//! # Child agents
//!
//! `api.run_agent` reaches [`app::children::Children`] (an [`agent::child::Spawner`]): a new
//! [`agent::Agent`] with an empty conversation, a subset of the same tool registry, the same
//! hook bus and a [`run::RunContext::child`] one level deeper, whose cancellation is the
//! parent's child token. Its transcript goes back up as a [`protocol::ChildRecord`] in the
//! calling tool call's context, and the parent agent writes it to the session before that
//! call's result. The extensions shipped in the binary (`scripts/`, [`extensions::builtin`])
//! load like user ones; `subagent.lua` builds its tool on this API.
//!
//! These docs are for the people working on mypi, so they link to private items: read them
//! with `cargo doc --document-private-items`.

// The library serves the binary, the tests and the benches; its docs explain internals.
#![allow(rustdoc::private_intra_doc_links)]

pub mod agent;
pub mod alloc;
pub mod app;
pub mod cli;
pub mod commands;
pub mod config;
pub mod control;
pub mod extensions;
pub mod extflags;
pub mod hooks;
pub mod http;
pub mod mcp;
pub mod owner;
pub mod process;
pub mod protocol;
pub mod providers;
pub mod renderers;
pub mod repl;
pub mod run;
pub mod settings;
pub mod signals;
pub mod stdio;
#[cfg(test)]
mod testutil;
pub mod text;
pub mod tools;
pub mod trust;
pub mod ui;
