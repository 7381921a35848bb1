//! The lua engine (placeholder).

use std::sync::Arc;

use super::api::{ApiLink, Engine, ErrorKind, Limits, ScriptError};

/// Builds the engine for an extension (on its worker thread).
pub fn new_engine(_link: Arc<ApiLink>, _limits: Limits) -> Result<Box<dyn Engine>, ScriptError> {
    Err(ScriptError::new(ErrorKind::Unavailable, "not implemented"))
}
