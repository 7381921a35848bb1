//! mypi: a line-mode coding agent whose behaviour is customised by Lua and Rhai scripts.
//!
//! # Layout
//!
//! Twelve top-level modules in one-way layers, lowest first; a module imports only from its
//! own layer or a lower one, and no two modules import each other. `tests/suite/layers.rs`
//! holds that (it names the file and line of an import that breaks it); the table there is
//! this one:
//!
//! ```text
//! platform -> vocab -> config -> {hooks, tools, commands, providers} -> agent
//!          -> {extensions, mcp} -> app -> repl
//! ```
//!
//! - [`platform`]: what mypi needs of the operating system: child processes in their own
//!   group, killed on every exit path (even `kill -9`: a parent-death signal, and
//!   [`platform::process::reaper`], a second process that kills the groups mypi left), the
//!   signals that end mypi, the allocator that charges every block to a meter (a Rhai VM's
//!   memory cap), mypi's own stdout in print mode, the one HTTP client, and
//!   [`platform::sys`], the few system calls neither std nor `nix` covers safely (with the
//!   allocator, processes and stdio, the only code allowed `unsafe` besides the Lua raw API).
//!   Below all of it, mypi's own small crates in `crates/`, built at opt-level 3 while this
//!   crate is built for size: `mypi-alloc`, the allocator itself, and `mypi-crossing`, what
//!   crosses to the script engines on every call (the values' conversions to and from Lua and
//!   Rhai, the event tape, the host's backstop on values, the calls into Lua coroutines and
//!   Rhai callbacks, and the Lua raw API they use).
//! - [`vocab`]: the vocabulary; imports nothing of ours above it (`mib` is `mypi-crossing`'s,
//!   below every layer). Messages, tool calls and agent events ([`vocab::protocol`]); the context of one run, its steer and follow-up queues and
//!   what its model calls spent ([`vocab::run`]); registration handles; what the core may ask
//!   of the user ([`vocab::ui`]); text helpers, among them
//!   [`vocab::text::inert`](mod@vocab::text::inert), the one rule that makes text mypi did
//!   not write itself safe for a terminal (every front end's writer goes through it).
//! - [`config`]: what the user asked for, as data: config files and the environment
//!   ([`config::settings`]), the options extensions declare ([`config::extflags`]), which
//!   project folders are trusted ([`config::trust`]), what users wrote for other agents
//!   (skills, prompt files: [`config::sources`]; Claude Code's and Codex's settings hooks:
//!   [`config::claude_hooks`]), and the resolved configuration
//!   ([`config::keyguard`]: a project's configuration never sends a key of the user's to a host
//!   the user did not name).
//! - Capabilities: [`hooks`] (typed events, results, the chaining rules and the bus;
//!   [`hooks::repeats`] says a burst of notices of one kind in a few lines;
//!   [`hooks::command`] runs settings hooks as handlers on it), [`tools`] (the
//!   tool trait, the registry, the built-in tools, [`tools::files`]: where `read`, `write`
//!   and `edit` get and put text, the disk or a front end's [`tools::files::TextFiles`] handed
//!   down when the app is built (an editor's buffers), [`tools::exposure`]: which tools a
//!   request offers (direct, deferred to [`tools::search`]'s `tool_search`, only for code
//!   mode, hidden), and
//!   [`tools::renderers`]: how the REPL shows a tool's lines when a script renders them),
//!   [`commands`] (the slash-command table),
//!   [`providers`] (OpenAI-compatible, Anthropic and faux models behind one trait).
//! - [`agent`]: the loop (turns, tool batches, session files, compaction), the hooks around
//!   one tool call, the model's or a tool's own ([`agent::calls`]), what child agents
//!   are asked for ([`agent::child`]), and [`agent::control`], what scripts and front ends may
//!   ask of the running agent (status texts, the title, model and session requests).
//! - Hosts: [`extensions`] (Lua and Rhai scripts, see below, and the `code` tool of code mode,
//!   [`extensions::code`]: the model's Lua script in a sandboxed VM of its own, whose tool
//!   calls pass the hooks as nested calls) and [`mcp`] (servers from
//!   `.mcp.json` as tools, prompts and resources, each tool's exposure planned by
//!   [`mcp::exposure`]); each plugs into the capability registries.
//! - [`app`]: wiring: configuration -> registries, hosts, agent; start-up and shutdown order.
//! - [`repl`]: the front ends: the REPL, print mode and `--json`, `mypi acp` (an editor
//!   drives mypi over the Agent Client Protocol, one [`app::App`] per editor session:
//!   `repl/acp/`; its scripts' dialogs are the editor's permission requests, plugged into
//!   [`app::ui::AppUi`] as a [`vocab::ui::Ui`] of its own, and the built-in file tools use
//!   the editor's buffers when it offers them), and the command line ([`repl::cli`]) that
//!   chooses among them.
//!
//! # Data flow
//!
//! A line from the REPL, `-p` or an editor's `session/prompt` goes to [`app::App::handle_line`], which builds the line's
//! [`vocab::run::RunContext`]: a `/command` is answered from the command table; anything else goes
//! through the `input` hook to [`agent::Agent::prompt`], which loops model request -> tool
//! batch -> model request, firing hooks at each step, appending every message to the session
//! file, and reporting [`vocab::protocol::AgentEvent`]s to the front end's sink
//! ([`vocab::run::EventSink`]). The events are data, never display text: each front end
//! renders them (the REPL's sink asks scripts' renderers for a tool's lines when a call's line
//! or result is delivered). Messages extensions queued meanwhile run after it
//! ([`app::App::run_queued`]).
//!
//! # Extensions
//!
//! Each extension is a script file with its own VM on its own thread
//! ([`extensions::worker`]). What a script can call is defined once, engine-neutral, in
//! [`extensions::surface`]: one row per member with its parameters and the function that
//! does it; the Lua and Rhai engines only convert values and keep callbacks. What scripts may
//! ask of the rest of mypi reaches them as values the wiring builds once
//! ([`extensions::services::HostContext`]): the registries, the queues, the user
//! ([`vocab::ui::Ui`]), the MCP servers ([`vocab::mcp::McpService`]), the child agents
//! ([`agent::child::Spawner`]) and the app's control ([`agent::control::Control`]).
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
//! hook bus and a [`vocab::run::RunContext::child`] one level deeper, whose cancellation is the
//! parent's child token. Its transcript goes back up as a [`vocab::protocol::ChildRecord`] in the
//! calling tool call's context, and the parent agent writes it to the session before that
//! call's result. What the child does goes up as typed [`vocab::protocol::AgentEvent::Child`]
//! events (through the calling tool call's report channel to the parent's sink, or, for a
//! child started outside a tool call, to the front end's outlet), which each front end
//! renders its own way. The extensions shipped in the binary (`scripts/`, [`extensions::builtin`])
//! load like user ones; `subagent.lua` builds its tool on this API.
//!
//! These docs are for the people working on mypi, so they link to private items: read them
//! with `cargo doc --document-private-items`.

// The library serves the binary, the tests and the benches; its docs explain internals.
#![allow(rustdoc::private_intra_doc_links)]

pub mod agent;
pub mod app;
pub mod commands;
pub mod config;
pub mod extensions;
pub mod hooks;
pub mod mcp;
pub mod platform;
pub mod providers;
pub mod repl;
pub mod tools;
pub mod vocab;
