//! How the user is shown the authorization page ([`Browser`]): the system browser with the
//! URL printed too ([`SystemBrowser`], for a machine without one), or a plain GET whose
//! redirect is read instead of followed ([`HeadlessBrowser`]: tests, and the conformance
//! suite, whose authorization server approves at once and redirects to the callback).

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;

/// Shows the user the authorization page at `url`. `Ok(Some(callback URL))` when it has the
/// answer itself; `Ok(None)` when the answer comes to the callback listener.
pub trait Browser: Send + Sync {
    fn open<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<Option<String>, String>>;
}

/// The system browser (`xdg-open`, `open` on macOS), the URL also said through `say` for a
/// machine without a browser (over SSH).
pub struct SystemBrowser {
    pub say: Arc<dyn Fn(&str) + Send + Sync>,
}

impl Browser for SystemBrowser {
    fn open<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(async move {
            (self.say)(&format!(
                "Open this page to sign in (mypi tried to open your browser):\n  {url}"
            ));
            let program = if cfg!(target_os = "macos") {
                "open"
            } else {
                "xdg-open"
            };
            // No browser is fine: the URL was printed.
            let _ = std::process::Command::new(program)
                .arg(url)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .map(|mut child| {
                    std::thread::spawn(move || child.wait());
                });
            Ok(None)
        })
    }
}

/// A GET of the authorization page whose redirect (`Location`) is the answer.
pub struct HeadlessBrowser {
    pub timeout: Duration,
}

impl Default for HeadlessBrowser {
    fn default() -> Self {
        HeadlessBrowser {
            timeout: Duration::from_secs(30),
        }
    }
}

impl Browser for HeadlessBrowser {
    fn open<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(async move {
            let client = crate::platform::http::unredirected_client(self.timeout)?;
            let response = client
                .get(url)
                .send()
                .await
                .map_err(|e| format!("the authorization page did not answer: {e}"))?;
            let status = response.status();
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| {
                    format!("the authorization page answered HTTP {status} without a redirect")
                })?;
            let base = reqwest::Url::parse(url).map_err(|e| e.to_string())?;
            let target = base
                .join(location)
                .map_err(|e| format!("the authorization page redirected to a bad URL: {e}"))?;
            Ok(Some(target.to_string()))
        })
    }
}
