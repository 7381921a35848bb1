//! Extension scripts: discovery of `.lua` / `.rhai` files, one worker thread per extension
//! owning its VM, the engine-neutral script API, and the Lua and Rhai engines.
//!
//! - `discovery.rs`: roots and files, names;
//! - `script.rs`: a script as host and engines know it (its identity, limits, errors);
//! - `api.rs`: [`api::ApiLink`] (what `api.*` does) and the [`api::Engine`] trait;
//! - `registrar.rs`: the host side the link calls into, as two small traits:
//!   [`registrar::Registrar`] (registrations) and [`registrar::Services`] (what a script asks
//!   of the agent: messages, dialogs, MCP, children, model calls);
//! - `staging.rs`: their implementation, which stages a loading version's registrations;
//! - `services.rs`: [`services::HostContext`], what every extension shares;
//! - `worker.rs`: the thread per extension, jobs (one callback, or a whole handler chain),
//!   the watchdog, busy / disabled; `meter.rs`: the clock it reads; `handoff.rs`: the
//!   bounded poll that spares a burst of calls the threads' wake-ups;
//! - `proxies.rs`: script handlers, tools and commands as Rust registry entries;
//! - `host.rs`: loading, staging, reload of one extension, listing, unloading;
//! - `background.rs` (and `background/watch.rs`): events between extensions, timers and file
//!   watches, which call a script outside any run;
//! - `reload.rs`: the file watcher, debounce, and syncing the loaded set with the files;
//! - `code.rs`: the `code` tool (code mode: the model's Lua script calling tools, in a VM
//!   of its own built like an extension's, `lua/code.rs`);
//! - `lua/`, `rhai/`: the engines; `tape.rs`: events serialized for them without a JSON
//!   tree in between; `crossing.rs`: the backstop on values a script hands over (both of
//!   these, and the engines' conversions, are the `mypi-crossing` crate, built at opt-level
//!   3; here are their tests); `exec.rs`: `api.exec`.

pub mod api;
pub mod background;
pub mod builtin;
pub mod code;
pub mod crossing;
mod dialogs;
pub mod discovery;
pub mod exec;
mod files;
pub mod handoff;
pub mod host;
pub mod lua;
pub mod meter;
mod proxies;
#[cfg(test)]
mod reference;
pub mod registrar;
pub mod reload;
pub mod rhai;
pub mod script;
pub mod services;
pub mod staging;
pub mod surface;
mod tape;
#[cfg(test)]
mod tests;
mod thread;
pub mod worker;
