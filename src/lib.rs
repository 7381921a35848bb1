//! mypi: a line-mode coding agent whose behaviour is customised by Lua and Rhai scripts.

pub mod agent;
pub mod cancel;
pub mod hooks;
pub mod owner;
pub mod protocol;
pub mod providers;
pub mod text;
pub mod tools;
