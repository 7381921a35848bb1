//! The single integration-test binary: support code in `common/`, tests in `suite/`.
// Test and benchmark code: system calls for fixtures and measures, and unwrap as a failed check.
#![allow(unsafe_code, clippy::unwrap_used)]

mod common;
mod suite;
