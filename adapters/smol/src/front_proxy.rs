//! Front-proxy authentication, both ways, as kube-apiserver configures it.
//!
//! Sending: the client certificate the aggregator presents to extension API servers
//! (`--proxy-client-cert-file`, `--proxy-client-key-file`). Without the flags apiary
//! makes them in `--cert-dir` on first start as kubeadm lays them out: a front-proxy CA
//! (`front-proxy-ca.crt`, `.key`) and `front-proxy-client.crt`, `.key` signed by it.
//!
//! Receiving: `--requestheader-*`, the front proxy trusted to name users in headers.
//! When apiary made the front-proxy CA and no `--requestheader-client-ca-file` is
//! given, each setting not given takes kubeadm's value (that CA, allowed name
//! `front-proxy-client`, `X-Remote-User`, `X-Remote-Group`, `X-Remote-Extra-`): an
//! apiary then trusts what another one proxies with the same cert dir, out of the box.

use crate::pki::{leaf_params, name, Authority, PkiError, Usage};
use crate::tls::{cert_and_key, file_flag, CaBundle};
use apiary_core::authn::RequestHeader;
use apiary_core::effect::ClientTls;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The front-proxy client certificate's common name, which kubeadm allows.
const CLIENT_NAME: &str = "front-proxy-client";

/// The raw values of the flags.
#[derive(Clone, Copy, Debug, Default)]
pub struct Flags<'a> {
    pub proxy_client_cert_file: Option<&'a str>,
    pub proxy_client_key_file: Option<&'a str>,
    pub requestheader_client_ca_file: Option<&'a str>,
    pub requestheader_allowed_names: Option<&'a str>,
    pub requestheader_username_headers: Option<&'a str>,
    pub requestheader_group_headers: Option<&'a str>,
    pub requestheader_extra_headers_prefix: Option<&'a str>,
}

/// The flags, checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrontProxyOptions {
    /// The proxy client certificate and key files; `None`: apiary's own.
    pub proxy_client_files: Option<(PathBuf, PathBuf)>,
    pub request_header_ca_file: Option<PathBuf>,
    /// Each list as given; `None` when its flag is not.
    pub allowed_names: Option<Vec<String>>,
    pub username_headers: Option<Vec<String>>,
    pub group_headers: Option<Vec<String>>,
    pub extra_headers_prefix: Option<Vec<String>>,
}

/// Check the flags as kube-apiserver does; each problem goes to `problems`.
pub fn from_flags(flags: Flags<'_>, problems: &mut Vec<String>) -> FrontProxyOptions {
    let proxy_client_files = cert_and_key(
        ("proxy-client-cert-file", flags.proxy_client_cert_file),
        ("proxy-client-key-file", flags.proxy_client_key_file),
        problems,
    );
    let request_header_ca_file =
        file_flag("requestheader-client-ca-file", flags.requestheader_client_ca_file, problems);
    let mut list = |flag: &str, value: Option<&str>, standard: Option<&str>| {
        let items = string_slice(value?);
        if items.iter().any(|i| i.trim().is_empty()) {
            problems.push(format!("empty value in {flag:?}"));
        }
        if let Some(standard) = standard.filter(|s| !items.is_empty() && !items.iter().any(|i| i.eq_ignore_ascii_case(s))) {
            tracing::warn!("--{flag} is set without specifying the standard {standard} header - API aggregation will not work");
        }
        Some(items)
    };
    FrontProxyOptions {
        proxy_client_files,
        request_header_ca_file,
        allowed_names: list("requestheader-allowed-names", flags.requestheader_allowed_names, None),
        username_headers: list("requestheader-username-headers", flags.requestheader_username_headers, Some("X-Remote-User")),
        group_headers: list("requestheader-group-headers", flags.requestheader_group_headers, Some("X-Remote-Group")),
        extra_headers_prefix: list(
            "requestheader-extra-headers-prefix",
            flags.requestheader_extra_headers_prefix,
            Some("X-Remote-Extra-"),
        ),
    }
}

/// A comma-separated list flag as pflag's string slices read it: an empty value is
/// an empty list.
fn string_slice(value: &str) -> Vec<String> {
    if value.is_empty() {
        return Vec::new();
    }
    value.split(',').map(str::to_owned).collect()
}

/// What the server is configured with at start.
#[derive(Debug)]
pub struct FrontProxy {
    /// Presented to extension API servers.
    pub proxy_client: ClientTls,
    /// The request-header authenticator, when there is a front proxy CA to trust.
    pub request_header: Option<RequestHeader>,
    /// That CA, for the TLS layer to verify against.
    pub request_header_ca: Option<CaBundle>,
}

/// Read the files the flags name, or make apiary's own in `cert_dir`.
pub fn complete(options: &FrontProxyOptions, cert_dir: &Path, now: SystemTime) -> Result<FrontProxy, String> {
    let read = |flag: &str, path: &Path| {
        std::fs::read(path).map_err(|e| format!("reading --{flag} {}: {e}", path.display()))
    };
    let (proxy_client, generated_ca) = match &options.proxy_client_files {
        Some((cert, key)) => {
            let client = ClientTls {
                client_cert_pem: read("proxy-client-cert-file", cert)?,
                client_key_pem: read("proxy-client-key-file", key)?,
                ..ClientTls::default()
            };
            (client, None)
        }
        None => {
            let (client, ca_pem) = ensure_files(cert_dir, now).map_err(|e| e.to_string())?;
            (client, Some(ca_pem))
        }
    };
    let (request_header, request_header_ca) = match (&options.request_header_ca_file, generated_ca) {
        (Some(path), _) => {
            let pem = read("requestheader-client-ca-file", path)?;
            let settings = RequestHeader {
                client_ca_pem: String::from_utf8_lossy(&pem).into_owned(),
                ..RequestHeader::default()
            };
            (Some(with_flags(settings, options)), Some(CaBundle::File(path.clone())))
        }
        (None, Some(ca_pem)) => {
            let settings = RequestHeader::kubeadm(ca_pem.clone());
            (Some(with_flags(settings, options)), Some(CaBundle::Pem(ca_pem)))
        }
        // kube-apiserver ignores the other requestheader flags without the CA.
        (None, None) => (None, None),
    };
    Ok(FrontProxy { proxy_client, request_header, request_header_ca })
}

/// `defaults` with every list the flags give.
fn with_flags(defaults: RequestHeader, options: &FrontProxyOptions) -> RequestHeader {
    let setting = |given: &Option<Vec<String>>, default: &[String]| given.clone().unwrap_or_else(|| default.to_vec());
    RequestHeader {
        allowed_names: setting(&options.allowed_names, &defaults.allowed_names),
        username_headers: setting(&options.username_headers, &defaults.username_headers),
        group_headers: setting(&options.group_headers, &defaults.group_headers),
        extra_headers_prefix: setting(&options.extra_headers_prefix, &defaults.extra_headers_prefix),
        client_ca_pem: defaults.client_ca_pem,
    }
}

/// The front-proxy CA and client certificate of `cert_dir`, made or renewed as
/// apiary's own certificates are: the client identity and the CA's PEM.
fn ensure_files(cert_dir: &Path, now: SystemTime) -> Result<(ClientTls, String), PkiError> {
    let ca = Authority::ensure(cert_dir, "front-proxy-ca", "front-proxy-ca", now)?;
    let make = || leaf_params(now, name(CLIENT_NAME, None), rcgen::ExtendedKeyUsagePurpose::ClientAuth, Vec::new());
    let (_, cert_pem, key_pem) = ca.leaf(cert_dir, CLIENT_NAME, Usage::Client, &[], &make, now)?;
    let client = ClientTls {
        client_cert_pem: cert_pem.into_bytes(),
        client_key_pem: key_pem.into_bytes(),
        ..ClientTls::default()
    };
    Ok((client, ca.cert_pem))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(flags: Flags<'_>) -> Result<FrontProxyOptions, Vec<String>> {
        crate::flags::checked(|problems| from_flags(flags, problems))
    }

    fn tempdir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("apiary-front-proxy-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn the_proxy_client_files_go_together() {
        let one = options(Flags { proxy_client_cert_file: Some("/pki/c.crt"), ..Flags::default() }).unwrap_err();
        assert_eq!(
            one,
            ["missing filename for serving cert: --proxy-client-cert-file and --proxy-client-key-file must be given together"]
        );
        let both = Flags { proxy_client_cert_file: Some("/c"), proxy_client_key_file: Some("/k"), ..Flags::default() };
        assert_eq!(options(both).unwrap().proxy_client_files, Some(("/c".into(), "/k".into())));
    }

    #[test]
    fn lists_refuse_empty_items_as_upstream() {
        let bad = Flags { requestheader_username_headers: Some("X-Remote-User, "), ..Flags::default() };
        assert_eq!(options(bad).unwrap_err(), ["empty value in \"requestheader-username-headers\""]);
        let empty = Flags { requestheader_allowed_names: Some(""), ..Flags::default() };
        assert_eq!(options(empty).unwrap().allowed_names, Some(Vec::new()));
    }

    #[test]
    fn generated_files_are_kubeadms_and_default_the_request_header() {
        let dir = tempdir("generated");
        let now = SystemTime::now();
        let given = FrontProxyOptions { allowed_names: Some(Vec::new()), ..FrontProxyOptions::default() };
        let made = complete(&given, &dir, now).unwrap();
        for file in ["front-proxy-ca.crt", "front-proxy-ca.key", "front-proxy-client.crt", "front-proxy-client.key"] {
            assert!(dir.join(file).is_file(), "{file}");
        }
        let rh = made.request_header.unwrap();
        assert_eq!(rh.username_headers, ["X-Remote-User"]);
        assert!(rh.allowed_names.is_empty(), "a flag given wins over kubeadm's value");
        assert_eq!(made.request_header_ca, Some(CaBundle::Pem(rh.client_ca_pem.clone())));
        // The client certificate names front-proxy-client, and a second start reuses it.
        let der = rustls_pemfile_der(&made.proxy_client.client_cert_pem);
        let subject = apiary_core::authn::subject_of(&der).unwrap();
        assert_eq!(subject.common_name.as_deref(), Some(CLIENT_NAME));
        let again = complete(&FrontProxyOptions::default(), &dir, now).unwrap();
        assert_eq!(again.proxy_client, made.proxy_client);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn given_files_make_no_request_header_without_its_ca() {
        let dir = tempdir("given");
        let (cert, key) = (dir.join("c.pem"), dir.join("k.pem"));
        std::fs::write(&cert, "CERT").unwrap();
        std::fs::write(&key, "KEY").unwrap();
        let given = FrontProxyOptions { proxy_client_files: Some((cert, key)), ..FrontProxyOptions::default() };
        let made = complete(&given, &dir, SystemTime::now()).unwrap();
        assert_eq!(made.proxy_client.client_cert_pem, b"CERT");
        assert!(made.request_header.is_none() && made.request_header_ca.is_none());
        assert!(!dir.join("front-proxy-ca.crt").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn rustls_pemfile_der(pem: &[u8]) -> Vec<u8> {
        use futures_rustls::rustls::pki_types::pem::PemObject;
        futures_rustls::rustls::pki_types::CertificateDer::from_pem_slice(pem).unwrap().to_vec()
    }
}
