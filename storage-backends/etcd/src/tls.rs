//! TLS to etcd: the CA that signed etcd's serving certificates and, as kube-apiserver's
//! `--etcd-certfile`/`--etcd-keyfile` give it, a client certificate. gRPC needs ALPN h2.

use futures_rustls::rustls::pki_types::{pem::PemObject, CertificateDer, PrivateKeyDer};
use futures_rustls::rustls::{ClientConfig, RootCertStore};
use futures_rustls::TlsConnector;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `--etcd-cafile`, `--etcd-certfile`, `--etcd-keyfile`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsFiles {
    pub ca: Option<PathBuf>,
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
}

fn read_error(path: &Path, e: impl std::fmt::Display) -> String {
    format!("{}: {e}", path.display())
}

impl TlsFiles {
    pub(crate) fn connector(&self) -> Result<TlsConnector, String> {
        let mut roots = RootCertStore::empty();
        if let Some(ca) = &self.ca {
            for cert in CertificateDer::pem_file_iter(ca).map_err(|e| read_error(ca, e))? {
                roots
                    .add(cert.map_err(|e| read_error(ca, e))?)
                    .map_err(|e| read_error(ca, e))?;
            }
        }
        let builder = ClientConfig::builder().with_root_certificates(roots);
        let mut config = match (&self.cert, &self.key) {
            (Some(cert), Some(key)) => {
                let chain = CertificateDer::pem_file_iter(cert)
                    .map_err(|e| read_error(cert, e))?
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| read_error(cert, e))?;
                let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| read_error(key, e))?;
                builder
                    .with_client_auth_cert(chain, key_der)
                    .map_err(|e| read_error(cert, e))?
            }
            (None, None) => builder.with_no_client_auth(),
            _ => return Err("--etcd-certfile and --etcd-keyfile go together".to_owned()),
        };
        config.alpn_protocols = vec![b"h2".to_vec()];
        Ok(TlsConnector::from(Arc::new(config)))
    }
}

/// https endpoints without TLS flags: no CA to trust, so nothing will verify; said at
/// the first connection rather than here.
pub(crate) fn server_only() -> Result<TlsConnector, String> {
    TlsFiles {
        ca: None,
        cert: None,
        key: None,
    }
    .connector()
}
