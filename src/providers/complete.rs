//! One model request without tools, read to its end: what `api.complete` and the
//! conversation's compaction (its summary) need. Cancelled with `cancel`.

use tokio_util::sync::CancellationToken;

use super::{Accumulator, ModelRequest, Payload, Provider};
use crate::vocab::protocol::Usage;

/// The reply's text and usage, or why there is none (`cancelled`, the provider's error).
pub async fn complete(
    provider: &dyn Provider,
    request: &ModelRequest<'_>,
    cancel: &CancellationToken,
) -> Result<(String, Usage), String> {
    let payload = match provider.encode(request) {
        Some(bytes) => Payload::Encoded(bytes.into()),
        None => Payload::Json(provider.payload(request)),
    };
    let cancelled = || "the run was cancelled".to_string();
    let mut stream = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(cancelled()),
        s = provider.stream(&payload) => s.map_err(|e| e.to_string())?,
    };
    let mut acc = Accumulator::default();
    loop {
        let next = tokio::select! {
            n = stream.next() => n,
            _ = cancel.cancelled() => return Err(cancelled()),
        };
        match next {
            None => break,
            Some(Ok(event)) => {
                acc.push(&event);
                if acc.done {
                    break;
                }
            }
            Some(Err(e)) => return Err(e.to_string()),
        }
    }
    Ok((acc.text, acc.usage))
}
