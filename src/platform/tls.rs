//! The TLS set-up of the HTTP clients: rustls with the `ring` provider, checking servers
//! against the platform's root certificates (as reqwest would), except that those
//! certificates are read at the first TLS handshake instead of when a client is built.
//! Reading and parsing the system's few hundred certificates costs milliseconds of CPU and
//! about a MiB of memory, which a run against a local `http://` server never needs.

use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, Error, SignatureScheme};
use rustls_platform_verifier::Verifier;

/// The client configuration every HTTP client of the process uses: ALPN offers HTTP/2 and
/// HTTP/1.1, as reqwest's own configuration does.
pub fn client_config() -> Result<rustls::ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(LazyVerifier {
        provider: provider.clone(),
    });
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("could not set up TLS: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// The platform verifier, built by the first handshake that needs it (one for the process).
static VERIFIER: OnceLock<Result<Verifier, Error>> = OnceLock::new();

fn platform(provider: &Arc<CryptoProvider>) -> Result<&'static Verifier, Error> {
    VERIFIER
        .get_or_init(|| Verifier::new(provider.clone()))
        .as_ref()
        .map_err(Clone::clone)
}

/// A certificate verifier that defers to the platform's, built on first use; signatures
/// are checked with the provider's algorithms, which need no root certificate.
#[derive(Debug)]
struct LazyVerifier {
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for LazyVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        platform(&self.provider)?.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        )
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use std::process::{Command, Stdio};

    use super::*;

    /// Builds a client with this configuration and asks `https://127.0.0.1:PORT/` of an
    /// `openssl s_server` with a self-signed certificate: the handshake must fail on the
    /// certificate (the roots are read then, not before).
    #[tokio::test]
    async fn certificates_are_checked_at_the_first_handshake_only() {
        let dir = crate::platform::testutil::TempDir::new("tls");
        let (cert, key) = (dir.0.join("c.pem"), dir.0.join("k.pem"));
        let made = Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            ])
            .args(["-subj", "/CN=127.0.0.1", "-keyout"])
            .arg(&key)
            .arg("-out")
            .arg(&cert)
            .stderr(Stdio::null())
            .status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipped: openssl is not installed");
            return;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("port")
            .port();
        let mut server = Command::new("openssl")
            .args(["s_server", "-www", "-accept", &format!("127.0.0.1:{port}")])
            .arg("-cert")
            .arg(&cert)
            .arg("-key")
            .arg(&key)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("s_server");
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(client_config().expect("config"))
            .build()
            .expect("client");
        assert!(VERIFIER.get().is_none(), "roots read before any handshake");
        let url = format!("https://127.0.0.1:{port}/");
        let mut answer = client.get(&url).send().await;
        for _ in 0..50 {
            match &answer {
                Err(e) if e.is_connect() && !format!("{e:?}").contains("ertificate") => {
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    answer = client.get(&url).send().await;
                }
                _ => break,
            }
        }
        let _ = server.kill();
        let _ = server.wait();
        let err = answer.expect_err("a self-signed certificate must be refused");
        assert!(format!("{err:?}").contains("ertificate"), "{err:?}");
        assert!(VERIFIER.get().is_some(), "the handshake read the roots");
    }
}
