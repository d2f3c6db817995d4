//! The TLS server configuration: TLS 1.2 and 1.3 on ring, the serving certificate,
//! client certificates optional but verified against apiary's CA when presented, and
//! ALPN `http/1.1`.

use crate::pki::Pki;
use futures_rustls::rustls::crypto::ring;
use futures_rustls::rustls::server::WebPkiClientVerifier;
use futures_rustls::rustls::{self, RootCertStore, ServerConfig};
use std::sync::Arc;

/// Build the server configuration from the certificates.
pub fn server_config(pki: &Pki) -> Result<Arc<ServerConfig>, rustls::Error> {
    let provider = Arc::new(ring::default_provider());
    let mut roots = RootCertStore::empty();
    roots.add(pki.ca_cert.clone())?;
    let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .allow_unauthenticated()
        .build()
        .map_err(|e| rustls::Error::General(format!("client certificate verifier: {e}")))?;
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])?
        .with_client_cert_verifier(verifier)
        .with_single_cert(vec![pki.serving_cert.clone()], pki.serving_key.clone_key())?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    // Session tickets let clients that reconnect (kubectl runs) skip the full handshake.
    config.ticketer = ring::Ticketer::new()?;
    Ok(Arc::new(config))
}
