//! A successful reply that is not an event stream (a proxy's login page, `200 text/html`): its
//! content type and the start of its body, made inert, become one error naming both, instead
//! of a stream that "ended early".

use super::ProviderError;

/// The content type of a successful reply that is not an event stream; `None` for an event
/// stream, or for a reply that names no type (some small servers send none).
pub(crate) fn content_type(response: &reqwest::Response) -> Option<String> {
    let value = response.headers().get(reqwest::header::CONTENT_TYPE)?;
    let text = String::from_utf8_lossy(value.as_bytes());
    let media = text.split(';').next().unwrap_or_default().trim();
    if media.eq_ignore_ascii_case("text/event-stream") {
        return None;
    }
    Some(inert(&text, 80))
}

/// How many characters of a body that is not an event stream are shown.
const SHOWN_START: usize = 100;

/// The error for a successful reply of `content_type` (not an event stream): the start of
/// its body, made inert, says what answered (a proxy's login page, say).
pub(crate) async fn error(
    provider: &str,
    url: &str,
    content_type: String,
    mut response: reqwest::Response,
) -> ProviderError {
    let mut start = Vec::new();
    while start.len() < 4 * SHOWN_START {
        let next = tokio::time::timeout(std::time::Duration::from_secs(2), response.chunk());
        match next.await {
            Ok(Ok(Some(chunk))) => start.extend_from_slice(&chunk),
            _ => break,
        }
    }
    let text = inert(&String::from_utf8_lossy(&start), SHOWN_START);
    let hint = if content_type.starts_with("text/html") {
        " (a proxy or a login page in the way?)"
    } else {
        ""
    };
    let start = if text.is_empty() {
        format!("{hint}, with an empty body")
    } else {
        format!("{hint}; the body starts \"{text}\"")
    };
    ProviderError::NotAStream {
        provider: provider.to_string(),
        url: url.to_string(),
        content_type,
        start,
    }
}

/// `text` on one line, with nothing a terminal acts on: every run of whitespace and control
/// characters becomes one space; cut to `max` characters with "…".
fn inert(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut chars = 0;
    for word in text.split(|c: char| c.is_whitespace() || c.is_control()) {
        if word.is_empty() {
            continue;
        }
        if chars > 0 {
            out.push(' ');
            chars += 1;
        }
        for c in word.chars() {
            if chars >= max {
                out.push('…');
                return out;
            }
            out.push(c);
            chars += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_is_shown_inert_and_short() {
        let page = "<!DOCTYPE html>\n\t<title>Sign\x1b[31m in</title>\r\n";
        assert_eq!(
            inert(page, 100),
            "<!DOCTYPE html> <title>Sign [31m in</title>"
        );
        assert_eq!(inert("abc def", 5), "abc d…");
        assert_eq!(inert(" \n ", 5), "");
    }
}
