//! How a server's start fails ([`StartError`]) and how an error reads ([`readable`]), shared
//! by the transports' set-up (`connect.rs`, `legacy_sse.rs`) and the OAuth flow's messages.

/// A failed start: the message and the tail of the server's stderr.
pub struct StartError {
    pub message: String,
    pub stderr: String,
    /// Worth trying again (an HTTP 5xx or a refused connection).
    pub transient: bool,
}

/// An error and its causes in one line, without the SDK's type names (an HTTP client's
/// "error sending request" says why only in its source: "Connection refused").
pub(super) fn readable(e: &(dyn std::error::Error + 'static)) -> String {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let mut text = e.to_string();
    // The HTTP error of the SDK does not name the client's error as its source.
    let mut cause = match e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        Some(StreamableHttpError::Client(inner)) => {
            Some(inner as &(dyn std::error::Error + 'static))
        }
        _ => e.source(),
    };
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        cause = c.source();
    }
    text
}
