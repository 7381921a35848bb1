//! Integration test modules; each file covers one area.

mod call_path;
mod errors;
mod ext_check;
mod ext_examples;
mod ext_features;
mod ext_isolation;
mod ext_util;
mod fakes;
mod hooks;
mod json_events;
mod parity;
mod print_mode;
mod reload;
mod reload_more;
mod repl;
mod session_safety;
mod sessions;
mod streaming;
mod tools;
mod wire;
