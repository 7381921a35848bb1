//! The platform layer, lowest of all: what mypi needs of the operating system and nothing
//! of mypi's own. Child processes in their own process group, killed on every exit path
//! ([`process`], with the reaper that outlives a `kill -9`); the signals that end mypi
//! ([`signals`]); the process allocator, which charges every block to a meter ([`alloc`]);
//! mypi's own stdout in print mode, out of reach of scripts and children ([`stdio`]); the one
//! HTTP client ([`http`]), its TLS set-up ([`tls`]) and the quick ACKs on a response's
//! connection ([`quickack`]); the few system calls neither std nor `nix` covers safely
//! ([`sys`]); stacks threads share for work that goes deep once ([`stacks`]).

pub mod alloc;
pub mod http;
pub mod process;
pub mod quickack;
pub mod signals;
pub mod stacks;
pub mod stdio;
pub mod sys;
/// Helpers for the unit tests of every layer.
#[cfg(test)]
pub mod testutil;
pub mod tls;
