//! Client certificates as kube-apiserver takes them: asked for in every handshake, with
//! the client CAs' names as hints, but not required to verify there (Go's
//! `RequestClientCert`). Each request's chain is verified against the client CA bundle
//! current at that moment, so a bundle reloaded while a connection is open applies to
//! that connection's next request; a chain that does not verify fails authentication
//! (401) instead of the handshake.

use bytes::Bytes;
use futures_rustls::rustls::client::danger::HandshakeSignatureValid;
use futures_rustls::rustls::crypto::{
    verify_tls12_signature, verify_tls13_signature, WebPkiSupportedAlgorithms,
};
use futures_rustls::rustls::pki_types::pem::PemObject;
use futures_rustls::rustls::pki_types::{CertificateDer, UnixTime};
use futures_rustls::rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use futures_rustls::rustls::{
    DigitallySignedStruct, DistinguishedName, Error, RootCertStore, SignatureScheme,
};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A verdict on a connection's chain is reused for at most this long when the bundle
/// has not changed, so that a certificate expiring mid-connection stops working.
const VERDICT_LIFETIME: Duration = Duration::from_secs(1);

/// Every bundle loaded gets the next number: a connection's verdict names the bundle
/// it was reached with.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// The CAs client certificates are verified against.
pub struct ClientCa {
    generation: u64,
    roots: RootCertStore,
}

impl fmt::Debug for ClientCa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCa")
            .field("generation", &self.generation)
            .field("cas", &self.roots.len())
            .finish()
    }
}

impl ClientCa {
    /// Its number: every bundle loaded gets a new one.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    fn new(roots: RootCertStore) -> ClientCa {
        ClientCa {
            generation: GENERATION.fetch_add(1, Ordering::Relaxed),
            roots,
        }
    }

    /// Apiary's own CA.
    pub fn from_der(ca: &CertificateDer<'_>) -> Result<ClientCa, String> {
        let mut roots = RootCertStore::empty();
        roots
            .add(ca.clone())
            .map_err(|e| format!("the CA certificate is unusable: {e}"))?;
        Ok(ClientCa::new(roots))
    }

    /// A PEM bundle of one or more CA certificates; `file` names it in errors.
    pub fn from_pem(pem: &[u8], file: &str) -> Result<ClientCa, String> {
        if pem.is_empty() {
            return Err(format!("missing content for CA bundle {file:?}"));
        }
        let mut roots = RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| format!("error loading CA bundle {file:?}: {e}"))?;
            roots
                .add(cert)
                .map_err(|e| format!("error loading CA bundle {file:?}: {e}"))?;
        }
        if roots.is_empty() {
            return Err(format!(
                "error loading CA bundle {file:?}: it holds no PEM certificate"
            ));
        }
        Ok(ClientCa::new(roots))
    }

    /// How many CAs the bundle holds.
    pub fn len(&self) -> usize {
        self.roots.len()
    }

    /// Whether `chain` (DER, leaf first) is a client certificate one of the CAs issued,
    /// valid at `now`.
    pub fn verify(&self, chain: &[Bytes], now: SystemTime) -> Result<(), webpki::Error> {
        let Some((leaf, intermediates)) = chain.split_first() else {
            return Err(webpki::Error::BadDer);
        };
        let leaf = CertificateDer::from(leaf.as_ref());
        let leaf = webpki::EndEntityCert::try_from(&leaf)?;
        let intermediates: Vec<CertificateDer<'_>> = intermediates
            .iter()
            .map(|c| CertificateDer::from(c.as_ref()))
            .collect();
        let now = UnixTime::since_unix_epoch(now.duration_since(UNIX_EPOCH).unwrap_or_default());
        leaf.verify_for_usage(
            webpki::ALL_VERIFICATION_ALGS,
            &self.roots.roots,
            &intermediates,
            now,
            webpki::KeyUsage::client_auth(),
            None,
            None,
        )
        .map(|_| ())
    }

    /// The handshake's half: ask for a client certificate naming these CAs (and the
    /// front proxy's, when there is one), check that the client holds its key, and
    /// leave the chain to [`ClientCa::verify`].
    pub fn handshake_verifier(
        &self,
        front_proxy: Option<&ClientCa>,
        algorithms: WebPkiSupportedAlgorithms,
    ) -> Arc<dyn ClientCertVerifier> {
        let mut subjects = self.roots.subjects();
        for subject in front_proxy.map(|ca| ca.roots.subjects()).unwrap_or_default() {
            if !subjects.iter().any(|s| s.as_ref() == subject.as_ref()) {
                subjects.push(subject);
            }
        }
        Arc::new(RequestClientCert { subjects, algorithms })
    }
}

/// Go's `tls.RequestClientCert`: a certificate is asked for, not required, and its
/// chain is not judged during the handshake.
#[derive(Debug)]
struct RequestClientCert {
    subjects: Vec<DistinguishedName>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ClientCertVerifier for RequestClientCert {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &self.subjects
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, Error> {
        // Go's handshake fails on a certificate that does not parse; so does this.
        webpki::EndEntityCert::try_from(end_entity)
            .map_err(|e| Error::General(format!("client certificate does not parse: {e}")))?;
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// A connection's client certificate chain and the last verdicts on it.
#[derive(Debug)]
pub struct PeerChain {
    chain: Vec<Bytes>,
    /// Against the client CA.
    verdict: Option<Verdict>,
    /// Against the front proxy's CA.
    front_proxy_verdict: Option<Verdict>,
}

#[derive(Clone, Copy, Debug)]
struct Verdict {
    generation: u64,
    at: Instant,
    trusted: bool,
}

impl PeerChain {
    /// The chain the client presented in the handshake (empty for none).
    pub fn new(chain: Vec<Bytes>) -> PeerChain {
        PeerChain {
            chain,
            verdict: None,
            front_proxy_verdict: None,
        }
    }

    /// What a request on this connection hands the core: the verified chain, and
    /// whether a chain was presented but rejected by the bundle current now, which is
    /// numbered `generation` and fetched by `current` only when the verdict on hand
    /// does not do (the request path then touches no lock).
    pub fn for_request(
        &mut self,
        generation: u64,
        current: impl FnOnce() -> Arc<ClientCa>,
    ) -> (Vec<Bytes>, bool) {
        if self.chain.is_empty() {
            return (Vec::new(), false);
        }
        let trusted = judge(&mut self.verdict, &self.chain, generation, current, Rejection::Logged);
        if trusted {
            (self.chain.clone(), false)
        } else {
            (Vec::new(), true)
        }
    }

    /// The common name of the leaf when the chain verifies against the front proxy's
    /// CA (numbered `generation`, fetched by `current` only when needed): whoever
    /// holds it may name users in headers, if the core allows the name.
    pub fn front_proxy_name(
        &mut self,
        generation: u64,
        current: impl FnOnce() -> Arc<ClientCa>,
    ) -> Option<String> {
        if self.chain.is_empty()
            || !judge(&mut self.front_proxy_verdict, &self.chain, generation, current, Rejection::Expected)
        {
            return None;
        }
        apiary_core::authn::subject_of(&self.chain[0])?.common_name
    }
}

/// How a chain that does not verify is told.
#[derive(Clone, Copy)]
enum Rejection {
    /// In the log: the client CA refuses the client.
    Logged,
    /// Not at all: most clients are not front proxies.
    Expected,
}

/// Whether `chain` verifies against the bundle numbered `generation`: the verdict on
/// hand while it is fresh, else a new one against `current()`, kept in `verdict`.
fn judge(
    verdict: &mut Option<Verdict>,
    chain: &[Bytes],
    generation: u64,
    current: impl FnOnce() -> Arc<ClientCa>,
    rejection: Rejection,
) -> bool {
    let fresh = verdict.filter(|v| v.generation == generation && v.at.elapsed() < VERDICT_LIFETIME);
    if let Some(fresh) = fresh {
        return fresh.trusted;
    }
    let ca = current();
    let result = ca.verify(chain, SystemTime::now());
    if let (Err(e), Rejection::Logged) = (&result, rejection) {
        tracing::info!("client certificate rejected: it does not verify against the client CA ({e})");
    }
    *verdict = Some(Verdict {
        generation: ca.generation,
        at: Instant::now(),
        trusted: result.is_ok(),
    });
    result.is_ok()
}
