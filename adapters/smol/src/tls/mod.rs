//! TLS serving: the rustls configuration new connections are accepted with, built from
//! a serving certificate and a client CA. Both are apiary's own (see [`crate::pki`])
//! unless `--tls-cert-file`/`--tls-private-key-file` and `--client-ca-file` name files;
//! those are read again every [`RELOAD_INTERVAL`] and, when their content changed and
//! is valid, a new configuration is swapped in, as kube-apiserver's dynamic certificate
//! controllers do. A connection keeps the configuration it was accepted with; each of
//! its requests is authenticated against the client CA current at that moment.
//!
//! TLS 1.2 and 1.3 on ring (`--tls-min-version`, `--tls-cipher-suites`), ALPN
//! `h2` and `http/1.1` (as kube-apiserver offers them), and session tickets that outlive
//! a reload.

mod client_ca;
mod options;
mod suites;
mod watched;

pub use client_ca::{ClientCa, PeerChain};
pub use options::{cert_and_key, file_flag, options_from_flags, CaBundle, Flags, MinVersion, ServingFiles, TlsOptions};

use crate::pki::Pki;
use futures_rustls::rustls::crypto::{ring, CryptoProvider};
use futures_rustls::rustls::pki_types::pem::PemObject;
use futures_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use futures_rustls::rustls::server::{
    ProducesTickets, ServerSessionMemoryCache, StoresServerSessions,
};
use futures_rustls::rustls::sign::{CertifiedKey, SingleCertAndKey};
use futures_rustls::rustls::{self, InconsistentKeys, ServerConfig, SupportedProtocolVersion};
use futures_rustls::TlsAcceptor;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use watched::Watched;

/// The ALPN name of HTTP/2 over TLS.
pub const ALPN_H2: &[u8] = b"h2";

/// How often the certificate files are read for changes. Upstream reacts to file
/// events at once and re-reads every minute; reading three small files every second
/// costs nothing and needs no file-event machinery.
pub const RELOAD_INTERVAL: Duration = Duration::from_secs(1);

/// What new connections are served with.
pub struct Current {
    pub config: Arc<ServerConfig>,
    /// The CAs client certificates are verified against, request by request.
    pub client_ca: Arc<ClientCa>,
    /// The front proxy's CAs, when there are any.
    pub request_header_ca: Option<Arc<ClientCa>>,
}

/// The TLS configuration, and the sources it is rebuilt from when they change.
pub struct ServerTls {
    settings: Settings,
    sources: Mutex<Sources>,
    current: RwLock<Arc<Current>>,
    /// `current`'s client CA generation, read by every request without a lock.
    client_ca_generation: AtomicU64,
    /// `current`'s front-proxy CA generation, likewise.
    request_header_ca_generation: AtomicU64,
}

/// What every configuration shares.
struct Settings {
    provider: Arc<CryptoProvider>,
    versions: &'static [&'static SupportedProtocolVersion],
    /// Shared by every configuration, so that resumption survives a reload.
    ticketer: Arc<dyn ProducesTickets>,
    sessions: Arc<dyn StoresServerSessions>,
}

impl Settings {
    fn build(&self, sources: &Sources) -> Result<Current, rustls::Error> {
        let client_ca = sources.client_ca.value.clone();
        let request_header_ca = sources.request_header_ca.as_ref().map(|s| s.value.clone());
        let verifier = client_ca.handshake_verifier(
            request_header_ca.as_deref(),
            self.provider.signature_verification_algorithms,
        );
        let mut config = ServerConfig::builder_with_provider(self.provider.clone())
            .with_protocol_versions(self.versions)?
            .with_client_cert_verifier(verifier)
            .with_cert_resolver(Arc::new(SingleCertAndKey::from(
                sources.serving.value.clone(),
            )));
        // HTTP/2 first, as Go offers it; a client without ALPN gets HTTP/1.1.
        config.alpn_protocols = vec![crate::tls::ALPN_H2.to_vec(), b"http/1.1".to_vec()];
        // Session tickets let clients that reconnect (kubectl runs) skip the full handshake.
        config.ticketer = self.ticketer.clone();
        config.session_storage = self.sessions.clone();
        Ok(Current {
            config: Arc::new(config),
            client_ca,
            request_header_ca,
        })
    }
}

struct Sources {
    serving: Source<Arc<CertifiedKey>>,
    client_ca: Source<Arc<ClientCa>>,
    request_header_ca: Option<Source<Arc<ClientCa>>>,
}

/// A part of the configuration: made once, or read from files and read again.
struct Source<T> {
    value: T,
    reload: Option<Reload<T>>,
}

type Parse<T> = Box<dyn Fn(&[Vec<u8>]) -> Result<T, String> + Send>;

struct Reload<T> {
    files: Watched,
    /// What the files hold, for the log.
    what: String,
    parse: Parse<T>,
}

impl<T> Source<T> {
    fn fixed(value: T) -> Source<T> {
        Source {
            value,
            reload: None,
        }
    }

    /// Read and parse the files now; they must be good at start.
    fn from_files(what: String, files: Watched, parse: Parse<T>) -> Result<Source<T>, String> {
        let mut reload = Reload { files, what, parse };
        let contents = reload.files.changed().expect("the first look sees the files")?;
        Ok(Source {
            value: (reload.parse)(&contents)?,
            reload: Some(reload),
        })
    }

    /// Take the files' new content if it changed and is good; keep the value loaded
    /// before (and say why) if it is not. Whether the value changed.
    fn refresh(&mut self) -> bool {
        let Some(reload) = &mut self.reload else {
            return false;
        };
        let Some(seen) = reload.files.changed() else {
            return false;
        };
        match seen.and_then(|contents| (reload.parse)(&contents)) {
            Ok(value) => {
                self.value = value;
                tracing::info!("loaded a new {}", reload.what);
                true
            }
            Err(e) => {
                tracing::error!("{e}; keeping the {} loaded before", reload.what);
                false
            }
        }
    }
}

impl ServerTls {
    /// The configuration `options` asks for, over apiary's own certificates in `pki`
    /// where no file is named. A file that cannot be used is an error here.
    pub fn new(options: &TlsOptions, pki: &Pki) -> Result<ServerTls, String> {
        let mut provider = ring::default_provider();
        if let Some(suites) = &options.cipher_suites {
            provider.cipher_suites = suites.clone();
        }
        let provider = Arc::new(provider);
        let serving = match &options.serving_files {
            Some(files) => {
                let what = format!(
                    "serving certificate from --tls-cert-file {} and --tls-private-key-file {}",
                    files.cert.display(),
                    files.key.display()
                );
                let watched = Watched::new(vec![files.cert.clone(), files.key.clone()]);
                let (files, provider) = (files.clone(), provider.clone());
                Source::from_files(
                    what,
                    watched,
                    Box::new(move |contents| serving_key(&contents[0], &contents[1], &files, &provider)),
                )?
            }
            None => {
                let (cert, key) = pki
                    .serving
                    .as_ref()
                    .ok_or("no serving certificate was generated")?;
                let key = CertifiedKey::from_der(vec![cert.clone()], key.clone_key(), &provider)
                    .map_err(|e| format!("the generated serving certificate: {e}"))?;
                Source::fixed(Arc::new(key))
            }
        };
        let client_ca = match &options.client_ca_file {
            Some(path) => ca_file("--client-ca-file", path)?,
            None => Source::fixed(Arc::new(ClientCa::from_der(&pki.ca_cert)?)),
        };
        let request_header_ca = match &options.request_header_ca {
            Some(CaBundle::File(path)) => Some(ca_file("--requestheader-client-ca-file", path)?),
            Some(CaBundle::Pem(pem)) => Some(Source::fixed(Arc::new(ClientCa::from_pem(
                pem.as_bytes(),
                "the generated front-proxy CA",
            )?))),
            None => None,
        };
        static FROM_TLS12: [&SupportedProtocolVersion; 2] =
            [&rustls::version::TLS13, &rustls::version::TLS12];
        static FROM_TLS13: [&SupportedProtocolVersion; 1] = [&rustls::version::TLS13];
        let versions: &'static [&'static SupportedProtocolVersion] = match options.min_version {
            MinVersion::Tls12 => &FROM_TLS12,
            MinVersion::Tls13 => &FROM_TLS13,
        };
        let settings = Settings {
            provider,
            versions,
            ticketer: ring::Ticketer::new().map_err(|e| format!("configuring TLS: {e}"))?,
            sessions: ServerSessionMemoryCache::new(256),
        };
        let sources = Sources { serving, client_ca, request_header_ca };
        let current = settings
            .build(&sources)
            .map_err(|e| format!("configuring TLS: {e}"))?;
        Ok(ServerTls {
            settings,
            sources: Mutex::new(sources),
            client_ca_generation: AtomicU64::new(current.client_ca.generation()),
            request_header_ca_generation: AtomicU64::new(front_proxy_generation(&current)),
            current: RwLock::new(Arc::new(current)),
        })
    }

    /// Whether any part comes from files, so that [`ServerTls::reload`] has work.
    pub fn reloads_files(&self) -> bool {
        let sources = self.sources.lock().unwrap_or_else(|p| p.into_inner());
        sources.serving.reload.is_some()
            || sources.client_ca.reload.is_some()
            || sources.request_header_ca.as_ref().is_some_and(|s| s.reload.is_some())
    }

    /// Read the files again and, if what they hold changed and is good, serve new
    /// connections with it. Whether the configuration changed.
    pub fn reload(&self) -> bool {
        let mut sources = self.sources.lock().unwrap_or_else(|p| p.into_inner());
        let serving = sources.serving.refresh();
        let client_ca = sources.client_ca.refresh();
        let request_header_ca = sources.request_header_ca.as_mut().is_some_and(Source::refresh);
        if !serving && !client_ca && !request_header_ca {
            return false;
        }
        match self.settings.build(&sources) {
            Ok(current) => {
                let generation = current.client_ca.generation();
                let front_proxy = front_proxy_generation(&current);
                *self.current.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(current);
                self.client_ca_generation.store(generation, Ordering::Release);
                self.request_header_ca_generation.store(front_proxy, Ordering::Release);
                true
            }
            Err(e) => {
                tracing::error!("configuring TLS: {e}; new connections keep the configuration before");
                false
            }
        }
    }

    /// What a new connection is served with.
    pub fn current(&self) -> Arc<Current> {
        self.current.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// An acceptor for a new connection.
    pub fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(self.current().config.clone())
    }

    /// The client CA requests are authenticated against now.
    pub fn client_ca(&self) -> Arc<ClientCa> {
        self.current().client_ca.clone()
    }

    /// What a request on a connection presenting `peer` hands the core: the chain if
    /// the client CA of this moment trusts it, whether it was rejected, and the leaf's
    /// common name if the front proxy's CA trusts it.
    pub fn authenticate_peer(&self, peer: &mut PeerChain) -> PeerIdentity {
        let generation = self.client_ca_generation.load(Ordering::Acquire);
        let (certificates, rejected) = peer.for_request(generation, || self.client_ca());
        let front_proxy = self.request_header_ca_generation.load(Ordering::Acquire);
        let front_proxy_name = match front_proxy {
            NO_FRONT_PROXY => None,
            generation => {
                let current = self.current();
                current.request_header_ca.clone().and_then(|ca| peer.front_proxy_name(generation, || ca))
            }
        };
        PeerIdentity { certificates, rejected, front_proxy_name }
    }
}

/// What the TLS layer makes of a request's client certificate chain.
#[derive(Debug, Default)]
pub struct PeerIdentity {
    /// The chain, when the client CA trusts it.
    pub certificates: Vec<bytes::Bytes>,
    /// A chain was sent that the client CA does not trust.
    pub rejected: bool,
    /// The leaf's common name, when the front proxy's CA trusts the chain.
    pub front_proxy_name: Option<String>,
}

/// The front-proxy generation of a configuration without a front proxy.
const NO_FRONT_PROXY: u64 = u64::MAX;

fn front_proxy_generation(current: &Current) -> u64 {
    current.request_header_ca.as_ref().map_or(NO_FRONT_PROXY, |ca| ca.generation())
}

/// A CA bundle read from the file a flag names, and read again when it changes.
fn ca_file(flag: &str, path: &std::path::Path) -> Result<Source<Arc<ClientCa>>, String> {
    let what = format!("CA bundle from {flag} {}", path.display());
    let file = path.display().to_string();
    Source::from_files(
        what,
        Watched::new(vec![path.to_path_buf()]),
        Box::new(move |contents| ClientCa::from_pem(&contents[0], &file).map(Arc::new)),
    )
}

/// A serving certificate chain and its key, as `--tls-cert-file` (the serving
/// certificate first, then any intermediate and CA certificates) and
/// `--tls-private-key-file` hold them.
fn serving_key(
    cert_pem: &[u8],
    key_pem: &[u8],
    files: &ServingFiles,
    provider: &CryptoProvider,
) -> Result<Arc<CertifiedKey>, String> {
    let (cert_file, key_file) = (files.cert.display(), files.key.display());
    if cert_pem.is_empty() || key_pem.is_empty() {
        return Err(format!("missing content for serving cert \"{cert_file}::{key_file}\""));
    }
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("--tls-cert-file {cert_file}: {e}"))?;
    let Some(leaf) = chain.first() else {
        return Err(format!("--tls-cert-file {cert_file}: no PEM certificate in the file"));
    };
    webpki::EndEntityCert::try_from(leaf)
        .map_err(|e| format!("--tls-cert-file {cert_file}: the first certificate does not parse ({e})"))?;
    let key = PrivateKeyDer::from_pem_slice(key_pem)
        .map_err(|e| format!("--tls-private-key-file {key_file}: no PEM private key ({e})"))?;
    let key = provider
        .key_provider
        .load_private_key(key)
        .map_err(|e| format!("--tls-private-key-file {key_file}: {e}"))?;
    let certified = CertifiedKey::new(chain, key);
    match certified.keys_match() {
        Ok(()) | Err(rustls::Error::InconsistentKeys(InconsistentKeys::Unknown)) => {
            Ok(Arc::new(certified))
        }
        Err(rustls::Error::InconsistentKeys(InconsistentKeys::KeyMismatch)) => Err(format!(
            "the private key in --tls-private-key-file {key_file} does not match the \
             certificate in --tls-cert-file {cert_file}"
        )),
        Err(e) => Err(format!("--tls-cert-file {cert_file}: {e}")),
    }
}

#[cfg(test)]
mod tests;
