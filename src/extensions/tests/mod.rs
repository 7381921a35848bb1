//! Tests of the extension host as a whole (several extensions, workers and the bus together).

mod call_path;
