//! Integration test modules; each file covers one area.

mod fakes;
