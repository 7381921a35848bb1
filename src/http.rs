//! The HTTP client of the process (reqwest over rustls with the `ring` provider), shared by
//! the model providers, and its twin without a read timeout for MCP's Streamable HTTP
//! transport (one TLS stack for both). Each is built on first
//! use, so an offline run never pays for TLS set-up, and the rustls crypto provider is
//! installed exactly once here.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// How long connecting to a server may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);

/// How long a response may send nothing (headers or body) before the read fails, in
/// milliseconds; see [`set_read_timeout`].
static READ_TIMEOUT_MS: AtomicU64 = AtomicU64::new(120_000);

/// How long a response may stall before it fails.
pub fn read_timeout() -> Duration {
    Duration::from_millis(READ_TIMEOUT_MS.load(Ordering::Relaxed))
}

/// Sets how long a response may stall (no byte at all) before it fails as timed out. Takes
/// effect for the client built after it (call it before the first request).
pub fn set_read_timeout(timeout: Duration) {
    let ms = u64::try_from(timeout.as_millis())
        .unwrap_or(u64::MAX)
        .max(1);
    READ_TIMEOUT_MS.store(ms, Ordering::Relaxed);
}

/// The shared client, or why it could not be built (a message for the user).
pub fn client() -> Result<reqwest::Client, String> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT.get_or_init(|| build(Some(read_timeout()))).clone()
}

/// The client for MCP's Streamable HTTP: the same TLS stack, but no read timeout, since an
/// event stream may rightly stay quiet for long (each MCP request has its own timeout).
pub fn streaming_client() -> Result<reqwest::Client, String> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT.get_or_init(|| build(None)).clone()
}

fn build(read: Option<Duration>) -> Result<reqwest::Client, String> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder().connect_timeout(CONNECT_TIMEOUT);
    if let Some(t) = read {
        builder = builder.read_timeout(t);
    }
    builder
        .build()
        .map_err(|e| format!("could not set up the HTTP client: {e}"))
}
