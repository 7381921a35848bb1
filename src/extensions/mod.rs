//! Extension scripts: discovery of `.lua` / `.rhai` files, one worker thread per extension
//! owning its VM, the engine-neutral script API, and the Lua and Rhai engines.
//!
//! - `discovery.rs`: roots and files, names;
//! - `api.rs`: [`api::ApiLink`] (what `api.*` does) and the [`api::Engine`] trait;
//! - `registrar.rs`: the host side the link calls into;
//! - `host.rs`: workers (calls with deadlines, busy / disabled), proxies that put script
//!   handlers, tools and commands into the Rust registries, loading and listing;
//! - `lua.rs`, `rhai.rs`: the engines; `exec.rs`: `api.exec`.

pub mod api;
pub mod exec;
pub mod lua;
pub mod registrar;
pub mod rhai;
