//! Integration test modules; each file covers one area.

mod budgets;
mod call_path;
mod cancel;
mod children;
mod errors;
mod ext_check;
mod ext_examples;
mod ext_features;
mod ext_isolation;
mod ext_util;
mod fakes;
mod front_end_purity;
mod hooks;
mod hostile_values;
mod json_events;
mod parity;
mod print_mode;
mod reload;
mod reload_more;
mod repl;
mod runaway;
mod sessions;
mod streaming;
mod tools;
mod tools_safety;
mod wire;
