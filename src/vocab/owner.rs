//! Ownership of registrations. Every tool, command and hook handler is registered by an
//! [`Owner`] (the core, an extension, an MCP server) and returns a [`Handle`] that removes
//! exactly that registration; unloading an owner removes everything it registered.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

/// Who registered something. `order` fixes the position of its hook handlers in a chain
/// (load order); the core is order 0. `generation` tells two loaded versions of one
/// extension apart (a reload registers the new version before removing the old one).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Owner {
    pub name: Arc<str>,
    pub order: u64,
    pub generation: u64,
}

impl Owner {
    pub fn new(name: impl Into<Arc<str>>, order: u64) -> Self {
        Owner {
            name: name.into(),
            order,
            generation: 0,
        }
    }

    /// The same owner, for another loaded version.
    pub fn with_generation(mut self, generation: u64) -> Self {
        self.generation = generation;
        self
    }

    /// The agent itself.
    pub fn core() -> Self {
        Owner::new("core", 0)
    }
}

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// A registry that can remove one registration by id.
pub trait Unregister: Send + Sync {
    /// Removes the registration; false when it was already gone.
    fn unregister(&self, id: u64) -> bool;
}

/// Removes exactly one registration. Dropping a handle does not remove anything.
#[derive(Clone)]
pub struct Handle {
    id: u64,
    target: Weak<dyn Unregister>,
}

impl Handle {
    pub fn new(id: u64, target: Weak<dyn Unregister>) -> Self {
        Handle { id, target }
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    /// Removes the registration; false when it (or its registry) is already gone.
    pub fn remove(&self) -> bool {
        self.target.upgrade().is_some_and(|t| t.unregister(self.id))
    }
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Handle({})", self.id)
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A process-wide unique id, never 0, rising: registrations (which it orders), runs, workers,
/// views, calls and temporary files all draw from this one counter.
pub fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}
