//! The one-shot listener the browser is sent back to after the user approves: a socket on
//! 127.0.0.1 at a port the system picks, answering `GET /callback?...` with a short page and
//! handing the URL over. Neither rmcp nor `oauth2` has one. Anything else (a favicon, a
//! stray request) is answered 404 and the wait goes on; each request is read within 10 s and
//! 8 KiB, so a client that sends nothing holds nothing.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The path of the redirect URI.
pub const PATH: &str = "/callback";

/// How long one request may take to arrive whole.
const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest request read.
const MAX_REQUEST: usize = 8 * 1024;

/// A listener bound on 127.0.0.1, waiting for the browser.
pub struct Callback {
    listener: TcpListener,
    port: u16,
}

impl Callback {
    /// Binds a port on 127.0.0.1.
    pub async fn bind() -> std::io::Result<Callback> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        Ok(Callback { listener, port })
    }

    /// The redirect URI to register and send: `http://127.0.0.1:PORT/callback`.
    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{PATH}", self.port)
    }

    /// Waits (without bound: the caller bounds it) for the browser's `GET /callback?...` and
    /// returns its full URL.
    pub async fn wait(&self) -> std::io::Result<String> {
        loop {
            let (stream, _) = self.listener.accept().await?;
            if let Some(target) = answer(stream).await {
                return Ok(format!("http://127.0.0.1:{}{target}", self.port));
            }
        }
    }
}

/// Reads one request; answers it; the request target when it is the callback.
async fn answer(mut stream: TcpStream) -> Option<String> {
    let head = tokio::time::timeout(READ_TIMEOUT, read_head(&mut stream))
        .await
        .ok()??;
    let mut parts = head.lines().next()?.split_whitespace();
    let (method, target) = (parts.next()?, parts.next()?);
    let is_callback =
        method == "GET" && (target == PATH || target.starts_with(&format!("{PATH}?")));
    let (status, body) = match is_callback {
        true => (
            "200 OK",
            "<!doctype html><title>mypi</title><p>mypi got the answer of the authorization \
             server. You can close this page and go back to the terminal.</p>",
        ),
        false => ("404 Not Found", "not found"),
    };
    let reply = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(reply.as_bytes()).await;
    let _ = stream.shutdown().await;
    is_callback.then(|| target.to_string())
}

/// The request's head (up to the blank line), within [`MAX_REQUEST`] bytes.
async fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 || buf.len() + n > MAX_REQUEST {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    String::from_utf8(buf).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_callback_url_comes_back_and_other_requests_do_not_end_the_wait() {
        let cb = Callback::bind().await.unwrap();
        let uri = cb.redirect_uri();
        assert!(uri.starts_with("http://127.0.0.1:") && uri.ends_with("/callback"));
        let port = uri.trim_start_matches("http://127.0.0.1:");
        let port: u16 = port.trim_end_matches("/callback").parse().unwrap();
        let send = move |req: &'static str| async move {
            let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
            s.write_all(req.as_bytes()).await.unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).await.unwrap();
            out
        };
        let client = tokio::spawn(async move {
            let a = send("GET /favicon.ico HTTP/1.1\r\n\r\n").await;
            let b = send("GET /callback?code=c&state=s HTTP/1.1\r\nhost: x\r\n\r\n").await;
            (a, b)
        });
        let url = cb.wait().await.unwrap();
        assert_eq!(url, format!("{uri}?code=c&state=s"));
        let (a, b) = client.await.unwrap();
        assert!(a.starts_with("HTTP/1.1 404"));
        assert!(b.starts_with("HTTP/1.1 200"));
    }
}
