//! The TLS client configurations of outbound requests, built once per [`ClientTls`]:
//! the CA to trust (the system's roots when none is given), the client certificate,
//! or no verification at all; TLS 1.3 and 1.2 on ring; ALPN `http/1.1`.

use apiary_core::effect::ClientTls;
use futures_rustls::rustls::client::danger::{
    HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier,
};
use futures_rustls::rustls::crypto::{ring, CryptoProvider, WebPkiSupportedAlgorithms};
use futures_rustls::rustls::pki_types::pem::PemObject;
use futures_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use futures_rustls::rustls::{
    self, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// How many distinct TLS configurations are kept (webhooks and aggregated APIs are few).
const MAX_CONFIGS: usize = 64;

/// A built configuration and its identity: connections made with it are pooled under
/// `id`, which no other configuration ever gets.
#[derive(Clone, Debug)]
pub(super) struct Built {
    pub(super) id: u64,
    pub(super) config: Arc<ClientConfig>,
}

/// A configuration built (or failed to build) from `tls`.
#[derive(Debug)]
struct Entry {
    tls: Arc<ClientTls>,
    built: Result<Built, String>,
}

/// The configurations built so far, by the [`ClientTls`] they were built from (the same
/// `Arc`, or equal content: PEM is parsed once either way). Failures are kept too: the
/// same bad PEM fails the same way.
#[derive(Debug, Default)]
pub(super) struct Configs {
    built: Mutex<Vec<Entry>>,
    next_id: AtomicU64,
    /// The system's roots, loaded at the first request that needs them.
    system_roots: OnceLock<Result<Arc<RootCertStore>, String>>,
}

impl Configs {
    /// The configuration for `tls` (`None`: the system's roots, no client certificate).
    pub(super) fn get(&self, tls: Option<&Arc<ClientTls>>) -> Result<Built, String> {
        static PLAIN: OnceLock<Arc<ClientTls>> = OnceLock::new();
        let tls = tls.unwrap_or_else(|| PLAIN.get_or_init(Default::default));
        if let Some(found) = find(&self.lock(), tls) {
            return found;
        }
        // Built outside the lock: loading the system's roots reads many files.
        let built = build(tls, || self.system_roots()).map(|config| Built {
            id: self.next_id.fetch_add(1, Ordering::Relaxed) + 1,
            config: Arc::new(config),
        });
        let mut cache = self.lock();
        if let Some(found) = find(&cache, tls) {
            // Another request built it meanwhile: keep one identity.
            return found;
        }
        if cache.len() >= MAX_CONFIGS {
            let _evicted = cache.remove(0);
        }
        cache.push(Entry {
            tls: tls.clone(),
            built: built.clone(),
        });
        built
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        self.built.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn system_roots(&self) -> Result<Arc<RootCertStore>, String> {
        self.system_roots.get_or_init(load_system_roots).clone()
    }
}

/// What was built from `tls` (the same `Arc` or an equal one), if anything.
fn find(cache: &[Entry], tls: &Arc<ClientTls>) -> Option<Result<Built, String>> {
    cache
        .iter()
        .find(|entry| Arc::ptr_eq(&entry.tls, tls) || *entry.tls == **tls)
        .map(|entry| entry.built.clone())
}

/// The name to verify the server's certificate against: the override, else the host.
pub(super) fn server_name(tls: Option<&ClientTls>, host: &str) -> Result<ServerName<'static>, String> {
    let name = tls.and_then(|tls| tls.server_name.as_deref()).unwrap_or(host);
    ServerName::try_from(name.to_owned()).map_err(|e| format!("invalid TLS server name {name:?}: {e}"))
}

fn build(
    tls: &ClientTls,
    system_roots: impl FnOnce() -> Result<Arc<RootCertStore>, String>,
) -> Result<ClientConfig, String> {
    let provider = Arc::new(ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| format!("TLS client configuration: {e}"))?;
    let builder = if tls.insecure_skip_verify {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyServer(provider)))
    } else if tls.ca_pem.is_empty() {
        builder.with_root_certificates(system_roots()?)
    } else {
        builder.with_root_certificates(roots_from_pem(&tls.ca_pem)?)
    };
    let mut config = match (tls.client_cert_pem.is_empty(), tls.client_key_pem.is_empty()) {
        (true, true) => builder.with_no_client_auth(),
        (false, false) => {
            let chain = CertificateDer::pem_slice_iter(&tls.client_cert_pem)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("client certificate: {e}"))?;
            if chain.is_empty() {
                return Err("client certificate: no certificate in the PEM data".to_owned());
            }
            let key = PrivateKeyDer::from_pem_slice(&tls.client_key_pem)
                .map_err(|e| format!("client key: {e}"))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("client certificate and key: {e}"))?
        }
        _ => return Err("a client certificate and its key go together".to_owned()),
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

fn roots_from_pem(pem: &[u8]) -> Result<Arc<RootCertStore>, String> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(pem) {
        let cert = cert.map_err(|e| format!("CA certificates: {e}"))?;
        roots.add(cert).map_err(|e| format!("CA certificates: {e}"))?;
    }
    if roots.is_empty() {
        return Err("CA certificates: no certificate in the PEM data".to_owned());
    }
    Ok(Arc::new(roots))
}

/// The system's roots, as Go's client trusts them (`SSL_CERT_FILE` and `SSL_CERT_DIR`
/// are honoured as Go honours them).
fn load_system_roots() -> Result<Arc<RootCertStore>, String> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        let why = found.errors.first().map(|e| format!(" ({e})")).unwrap_or_default();
        return Err(format!(
            "no system root certificates were found{why}; name the server's CA"
        ));
    }
    tracing::debug!(added, "loaded the system's root certificates");
    Ok(Arc::new(roots))
}

/// `insecure-skip-tls-verify`: any certificate is taken, though the handshake's
/// signatures are still checked (they prove the peer holds the key it presented).
#[derive(Debug)]
struct AnyServer(Arc<CryptoProvider>);

impl AnyServer {
    fn algorithms(&self) -> &WebPkiSupportedAlgorithms {
        &self.0.signature_verification_algorithms
    }
}

impl ServerCertVerifier for AnyServer {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, self.algorithms())
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, self.algorithms())
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms().supported_schemes()
    }
}
