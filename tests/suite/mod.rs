//! Integration test modules; each file covers one area.

mod errors;
mod fakes;
mod hooks;
mod json_events;
mod print_mode;
mod repl;
mod sessions;
mod streaming;
mod tools;
mod wire;
