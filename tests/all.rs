//! The single integration-test binary: support code in `common/`, tests in `suite/`.

mod common;
mod suite;
