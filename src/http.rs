//! The one HTTP client of the process (reqwest over rustls with the `ring` provider), shared
//! by the model providers and, later, MCP's Streamable HTTP transport. It is built on first
//! use, so an offline run never pays for TLS set-up, and the rustls crypto provider is
//! installed exactly once here.

use std::sync::OnceLock;
use std::time::Duration;

/// How long connecting to a server may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);

/// The shared client, or why it could not be built (a message for the user).
pub fn client() -> Result<reqwest::Client, String> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            let _ = rustls::crypto::ring::default_provider().install_default();
            reqwest::Client::builder()
                .connect_timeout(CONNECT_TIMEOUT)
                .build()
                .map_err(|e| format!("could not set up the HTTP client: {e}"))
        })
        .clone()
}
