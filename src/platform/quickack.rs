//! Quick ACKs on the connection a streamed response is read from. A server that leaves
//! Nagle's algorithm on (llama.cpp's server, most small Python servers) holds each write back
//! until its previous one is acknowledged, and Linux delays that ACK by up to 40 ms on a
//! connection that sent a request right after reading a reply, as a reused one does on every
//! model turn. [`QuickAck`] finds the socket under a response (by its addresses, as reqwest
//! gives no access to it) and acknowledges at once after each read (`TCP_QUICKACK`).

use std::net::SocketAddr;
use std::os::fd::RawFd;

use hyper_util::client::legacy::connect::HttpInfo;

use super::sys;

/// The socket a response is read from, to acknowledge each read at once.
#[derive(Debug, Default)]
pub struct QuickAck {
    fd: Option<RawFd>,
}

impl QuickAck {
    /// The socket under `response` (none off TCP or if it cannot be found), with what it has
    /// received acknowledged already.
    pub fn of(response: &reqwest::Response) -> QuickAck {
        let fd = response
            .extensions()
            .get::<HttpInfo>()
            .and_then(|info| find(info.local_addr(), info.remote_addr()));
        let quick = QuickAck { fd };
        quick.ack();
        quick
    }

    /// Acknowledges what the socket has received (call after each read of the body). Were
    /// the connection closed and its descriptor number reused meanwhile, this only hurries
    /// the ACKs of another socket of this process.
    pub fn ack(&self) {
        if let Some(fd) = self.fd {
            sys::tcp_quick_ack(fd);
        }
    }
}

/// The descriptor of this process's TCP socket from `local` to `peer`.
fn find(local: SocketAddr, peer: SocketAddr) -> Option<RawFd> {
    std::fs::read_dir("/proc/self/fd")
        .ok()?
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<RawFd>().ok())
        .find(|&fd| sys::tcp_addresses(fd) == Some((local, peer)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_connected_socket_is_found_by_its_addresses() {
        let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(server.local_addr().unwrap()).unwrap();
        let (local, peer) = (client.local_addr().unwrap(), client.peer_addr().unwrap());
        assert_eq!(find(local, peer), Some(client.as_raw_fd()));
        let (accepted, _) = server.accept().unwrap();
        assert_eq!(find(peer, local), Some(accepted.as_raw_fd()));
        drop(client);
        let other: SocketAddr = "127.0.0.1:9".parse().unwrap();
        assert_eq!(find(local, other), None);
    }

    #[tokio::test]
    async fn the_socket_under_a_response_is_found() {
        let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", server.local_addr().unwrap());
        std::thread::spawn(move || {
            use std::io::{Read, Write};
            let (mut c, _) = server.accept().unwrap();
            let _ = c.read(&mut [0; 4096]).unwrap();
            c.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                .unwrap();
            let _ = c.read(&mut [0; 16]);
        });
        let response = crate::platform::http::client()
            .unwrap()
            .get(url)
            .send()
            .await
            .unwrap();
        let quick = QuickAck::of(&response);
        let fd = quick.fd.expect("the response's socket is found");
        let (_, peer) = sys::tcp_addresses(fd).unwrap();
        assert_eq!(Some(peer), response.remote_addr());
        quick.ack();
        assert_eq!(response.text().await.unwrap(), "ok");
    }
}
