//! The secure serving flags as kube-apiserver names them: where the serving
//! certificate and the client CA come from, the lowest TLS version, the TLS 1.2 cipher
//! suites. Checked with the other flags, before anything is read or bound.

use super::suites::{self, Suite};
use futures_rustls::rustls::SupportedCipherSuite;
use std::path::PathBuf;

/// `--tls-cert-file` and `--tls-private-key-file`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServingFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// `--tls-min-version`. rustls implements nothing older than TLS 1.2.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MinVersion {
    /// kube-apiserver's default.
    #[default]
    Tls12,
    Tls13,
}

/// Where a CA bundle comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaBundle {
    /// A file, read again when it changes.
    File(PathBuf),
    /// A PEM bundle apiary made.
    Pem(String),
}

/// How apiary serves TLS.
#[derive(Clone, Debug, Default)]
pub struct TlsOptions {
    /// Served instead of the certificate apiary generates in `--cert-dir`.
    pub serving_files: Option<ServingFiles>,
    /// `--client-ca-file`: the CAs client certificates are verified against, instead
    /// of apiary's own CA.
    pub client_ca_file: Option<PathBuf>,
    /// The front proxy's CA (`--requestheader-client-ca-file`, or the front-proxy CA
    /// apiary generated): client certificates it signed may name users in headers.
    pub request_header_ca: Option<CaBundle>,
    pub min_version: MinVersion,
    /// `--tls-cipher-suites`: the TLS 1.2 suites named, then every TLS 1.3 suite;
    /// `None` for rustls's defaults.
    pub cipher_suites: Option<Vec<SupportedCipherSuite>>,
}

impl TlsOptions {
    /// Whether anything is read from files the operator may replace while apiary runs.
    pub fn has_files(&self) -> bool {
        self.serving_files.is_some()
            || self.client_ca_file.is_some()
            || matches!(self.request_header_ca, Some(CaBundle::File(_)))
    }
}

/// The flags' values as given (an empty value counts as not given, as upstream's).
#[derive(Clone, Copy, Debug, Default)]
pub struct Flags<'a> {
    pub client_ca_file: Option<&'a str>,
    pub cert_file: Option<&'a str>,
    pub key_file: Option<&'a str>,
    pub min_version: Option<&'a str>,
    pub cipher_suites: Option<&'a str>,
}

/// A flag's value, unless it is empty (upstream treats an empty value as none).
fn given(value: Option<&str>) -> Option<&str> {
    value.filter(|v| !v.is_empty())
}

/// Check the flags; every problem goes to `problems`.
pub fn options_from_flags(flags: Flags<'_>, problems: &mut Vec<String>) -> TlsOptions {
    let client_ca_file = file_flag("client-ca-file", flags.client_ca_file, problems);
    let serving_files = cert_and_key(
        ("tls-cert-file", flags.cert_file),
        ("tls-private-key-file", flags.key_file),
        problems,
    )
    .map(|(cert, key)| ServingFiles { cert, key });
    TlsOptions {
        serving_files,
        client_ca_file,
        request_header_ca: None,
        min_version: min_version(given(flags.min_version), problems),
        cipher_suites: given(flags.cipher_suites).and_then(|list| cipher_suites(list, problems)),
    }
}

/// A flag naming a file, as an absolute path; `None` when not given.
pub fn file_flag(flag: &str, value: Option<&str>, problems: &mut Vec<String>) -> Option<PathBuf> {
    let value = given(value)?;
    match std::path::absolute(value) {
        Ok(path) => Some(path),
        Err(e) => {
            problems.push(format!("invalid value {value:?} for --{flag}: {e}"));
            None
        }
    }
}

/// A certificate file and its key file, named by two flags given both or neither
/// (upstream refuses one without the other).
pub fn cert_and_key(
    cert: (&str, Option<&str>),
    key: (&str, Option<&str>),
    problems: &mut Vec<String>,
) -> Option<(PathBuf, PathBuf)> {
    let cert_file = file_flag(cert.0, cert.1, problems);
    let key_file = file_flag(key.0, key.1, problems);
    match (cert_file, key_file) {
        (Some(cert), Some(key)) => Some((cert, key)),
        (None, None) => None,
        _ => {
            problems.push(format!(
                "missing filename for serving cert: --{} and --{} must be given together",
                cert.0, key.0
            ));
            None
        }
    }
}

fn min_version(value: Option<&str>, problems: &mut Vec<String>) -> MinVersion {
    match value {
        None | Some("VersionTLS12") => MinVersion::Tls12,
        Some("VersionTLS13") => MinVersion::Tls13,
        Some(old @ ("VersionTLS10" | "VersionTLS11")) => {
            problems.push(format!(
                "invalid value {old:?} for --tls-min-version: apiary serves TLS 1.2 and 1.3 \
                 only (rustls implements no older version); use VersionTLS12 or VersionTLS13"
            ));
            MinVersion::Tls12
        }
        Some(other) => {
            problems.push(format!(
                "invalid value {other:?} for --tls-min-version: unknown tls version {other:?} \
                 (one of: VersionTLS12, VersionTLS13)"
            ));
            MinVersion::Tls12
        }
    }
}

fn cipher_suites(list: &str, problems: &mut Vec<String>) -> Option<Vec<SupportedCipherSuite>> {
    let before = problems.len();
    let mut chosen = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        match suites::lookup(name) {
            Some(Suite::Tls12(suite)) => {
                if !chosen.contains(&suite) {
                    chosen.push(suite);
                }
            }
            Some(Suite::Tls13) => {}
            Some(Suite::Unsupported) => problems.push(format!(
                "invalid value for --tls-cipher-suites: cipher suite {name} is not supported by \
                 apiary; rustls implements these TLS 1.2 suites: {} (TLS 1.3 suites are always \
                 enabled)",
                suites::SUPPORTED.join(", ")
            )),
            None => problems.push(format!(
                "invalid value for --tls-cipher-suites: Cipher suite {name} not supported or \
                 doesn't exist"
            )),
        }
    }
    if problems.len() > before {
        return None;
    }
    chosen.extend(suites::tls13());
    Some(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(flags: Flags<'_>) -> Result<TlsOptions, Vec<String>> {
        crate::flags::checked(|problems| options_from_flags(flags, problems))
    }

    #[test]
    fn nothing_given_is_the_generated_pki_on_tls_12_and_13() {
        let o = parse(Flags::default()).unwrap();
        assert!(o.serving_files.is_none() && o.client_ca_file.is_none() && !o.has_files());
        assert_eq!(o.min_version, MinVersion::Tls12);
        assert!(o.cipher_suites.is_none());
        let empty = parse(Flags {
            cert_file: Some(""),
            key_file: Some(""),
            min_version: Some(""),
            cipher_suites: Some(""),
            ..Flags::default()
        })
        .unwrap();
        assert!(empty.serving_files.is_none() && empty.cipher_suites.is_none());
    }

    #[test]
    fn files_are_made_absolute_and_come_in_pairs() {
        let o = parse(Flags {
            client_ca_file: Some("ca.pem"),
            cert_file: Some("/etc/tls/tls.crt"),
            key_file: Some("/etc/tls/tls.key"),
            ..Flags::default()
        })
        .unwrap();
        assert!(o.has_files());
        assert!(o.client_ca_file.unwrap().is_absolute());
        assert_eq!(
            o.serving_files,
            Some(ServingFiles {
                cert: "/etc/tls/tls.crt".into(),
                key: "/etc/tls/tls.key".into()
            })
        );
        for flags in [
            Flags { cert_file: Some("/c"), ..Flags::default() },
            Flags { key_file: Some("/k"), ..Flags::default() },
        ] {
            assert_eq!(
                parse(flags).unwrap_err(),
                ["missing filename for serving cert: --tls-cert-file and --tls-private-key-file \
                  must be given together"]
            );
        }
    }

    #[test]
    fn tls_versions_older_than_12_are_refused_with_a_reason() {
        let version = |v| parse(Flags { min_version: Some(v), ..Flags::default() });
        assert_eq!(version("VersionTLS12").unwrap().min_version, MinVersion::Tls12);
        assert_eq!(version("VersionTLS13").unwrap().min_version, MinVersion::Tls13);
        let old = version("VersionTLS10").unwrap_err();
        assert!(old[0].contains("rustls implements no older version"), "{old:?}");
        assert_eq!(
            version("TLS1.3").unwrap_err(),
            ["invalid value \"TLS1.3\" for --tls-min-version: unknown tls version \"TLS1.3\" \
              (one of: VersionTLS12, VersionTLS13)"]
        );
    }

    #[test]
    fn cipher_suites_by_upstream_names() {
        let suites = |list| parse(Flags { cipher_suites: Some(list), ..Flags::default() });
        let chosen = suites(
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305,\
             TLS_AES_256_GCM_SHA384",
        )
        .unwrap()
        .cipher_suites
        .unwrap();
        let names: Vec<String> = chosen.iter().map(|s| format!("{:?}", s.suite())).collect();
        assert_eq!(
            names,
            [
                "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
                "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
                "TLS13_AES_128_GCM_SHA256",
                "TLS13_AES_256_GCM_SHA384",
                "TLS13_CHACHA20_POLY1305_SHA256",
            ]
        );
        // Every problem at once: an unknown name with upstream's words, one Go has
        // but rustls lacks with apiary's.
        let problems = suites("TLS_BOGUS,TLS_RSA_WITH_AES_128_CBC_SHA").unwrap_err();
        assert_eq!(problems.len(), 2);
        assert_eq!(
            problems[0],
            "invalid value for --tls-cipher-suites: Cipher suite TLS_BOGUS not supported or \
             doesn't exist"
        );
        assert!(
            problems[1].starts_with(
                "invalid value for --tls-cipher-suites: cipher suite TLS_RSA_WITH_AES_128_CBC_SHA \
                 is not supported by apiary; rustls implements these TLS 1.2 suites: \
                 TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,"
            ),
            "{problems:?}"
        );
    }
}
