//! The HTTP client of the process (reqwest over rustls with the `ring` provider), shared by
//! the model providers (TLS set up in [`super::tls`]), and its twin without a read timeout for MCP's Streamable HTTP
//! transport (one TLS stack for both), and that twin again pinned to one origin for a server
//! whose configured headers must not follow a redirect elsewhere. Each is built on first
//! use, so an offline run never pays for TLS set-up, and the rustls crypto provider is
//! installed exactly once here. reqwest sets `TCP_NODELAY` on every connection (its
//! default), so mypi's own writes are never held back; the ACKs a server that keeps Nagle's
//! algorithm waits for are [`super::quickack`]'s.

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

/// [`streaming_client`] for a server whose entry has headers of its own (an API key): it
/// follows no redirect to another origin, since those headers are for the configured one
/// only.
pub fn pinned_streaming_client() -> Result<reqwest::Client, String> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| build_with(None, same_origin_redirects()))
        .clone()
}

/// A client that follows no redirect and gives up after `timeout` (OAuth's requests: an
/// authorization server's answer is read, never chased, and a hung one ends the login).
pub fn unredirected_client(timeout: Duration) -> Result<reqwest::Client, String> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .tls_backend_preconfigured(super::tls::client_config()?)
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("could not set up the HTTP client: {e}"))
}

/// Follows redirects (at most 10) within the first request's origin only; a redirect to
/// another origin is an error naming it.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let to = attempt.url().origin();
        let from = attempt.previous().first().map(|u| u.origin());
        if from.as_ref().is_some_and(|o| *o != to) {
            let to = to.ascii_serialization();
            return attempt.error(format!(
                "the server redirected to {to}, another origin; the entry's headers go only to \
                 its url's origin, so the redirect was not followed (put the new address in \
                 the entry's url if you trust it)"
            ));
        }
        if attempt.previous().len() > 10 {
            return attempt.error("too many redirects");
        }
        attempt.follow()
    })
}

fn build(read: Option<Duration>) -> Result<reqwest::Client, String> {
    build_with(read, reqwest::redirect::Policy::default())
}

fn build_with(
    read: Option<Duration>,
    redirects: reqwest::redirect::Policy,
) -> Result<reqwest::Client, String> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder()
        .tls_backend_preconfigured(super::tls::client_config()?)
        .connect_timeout(CONNECT_TIMEOUT)
        .redirect(redirects);
    if let Some(t) = read {
        builder = builder.read_timeout(t);
    }
    builder
        .build()
        .map_err(|e| format!("could not set up the HTTP client: {e}"))
}
