//! ServiceAccount tokens: kube-apiserver's `--service-account-*` and `--api-audiences`
//! flags, read and checked with the others (key files parsed at once, so a bad one stops
//! apiary before anything binds), then made into the core's
//! [`ServiceAccountTokens`] once the signing key is known.

use apiary_core::authn::keys::{self, PublicKey, SigningKey};
use apiary_core::authn::ServiceAccountTokens;
use std::path::Path;
use std::time::Duration;

/// The raw values of the flags.
pub struct Flags<'a> {
    pub issuers: Vec<&'a str>,
    pub api_audiences: Option<&'a str>,
    pub key_files: Vec<&'a str>,
    pub signing_key_file: Option<&'a str>,
    pub max_expiration: &'a str,
    pub extend_expiration: bool,
}

/// The flags, checked and with their files read.
#[derive(Clone, Debug)]
pub struct ServiceAccountOptions {
    /// `--service-account-issuer`: the first issues, all are accepted.
    pub issuers: Vec<String>,
    /// `--api-audiences`; empty means the issuers.
    pub api_audiences: Vec<String>,
    /// The keys of `--service-account-key-file`; empty means the signing key's.
    pub keys: Vec<PublicKey>,
    /// `--service-account-signing-key-file`; `None`: `<cert-dir>/sa.key`.
    pub signing_key: Option<SigningKey>,
    /// `--service-account-max-token-expiration`; `None` for 0.
    pub max_expiration: Option<Duration>,
    /// `--service-account-extend-token-expiration`.
    pub extend_expiration: bool,
}

/// The bounds upstream puts on `--service-account-max-token-expiration`.
const MAX_EXPIRATION_BOUNDS: (Duration, Duration) = (Duration::from_secs(3600), Duration::from_secs(1 << 32));

impl ServiceAccountOptions {
    /// Check the flags as kube-apiserver does, reading the key files; each problem is
    /// added to `problems`.
    pub fn from_flags(flags: Flags<'_>, problems: &mut Vec<String>) -> ServiceAccountOptions {
        let mut issuers: Vec<String> = Vec::new();
        for issuer in flags.issuers {
            if issuer.is_empty() {
                problems.push("service-account-issuer should not be an empty string".to_owned());
            } else if issuers.iter().any(|i| i == issuer) {
                problems.push(format!("service-account-issuer {issuer:?} is already specified"));
            } else {
                issuers.push(issuer.to_owned());
            }
        }
        let api_audiences = flags
            .api_audiences
            .into_iter()
            .flat_map(|list| list.split(','))
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(str::to_owned)
            .collect();
        let mut keys = Vec::new();
        for path in flags.key_files {
            let read = std::fs::read_to_string(path)
                .map_err(|e| e.to_string())
                .and_then(|text| keys::parse_public_keys(&text).map_err(|e| e.to_string()));
            match read {
                Ok(found) => keys.extend(found),
                Err(e) => problems.push(format!("error reading public key file {path}: {e}")),
            }
        }
        let signing_key = flags.signing_key_file.and_then(|path| {
            let read = std::fs::read_to_string(path)
                .map_err(|e| e.to_string())
                .and_then(|text| keys::parse_private_key(&text).map_err(|e| e.to_string()));
            read.map_err(|e| problems.push(format!("failed to parse service-account-issuer-key-file: {e}")))
                .ok()
        });
        let max_expiration = match apiary_core::duration::parse_duration(flags.max_expiration) {
            Ok(d) if d.is_zero() => None,
            Ok(d) if d < MAX_EXPIRATION_BOUNDS.0 || d > MAX_EXPIRATION_BOUNDS.1 => {
                problems.push("the service-account-max-token-expiration must be between 1 hour and 2^32 seconds".to_owned());
                None
            }
            Ok(d) => Some(d),
            Err(e) => {
                problems.push(format!(
                    "invalid value {:?} for --service-account-max-token-expiration: {e}",
                    flags.max_expiration
                ));
                None
            }
        };
        if let Some(max) = max_expiration.filter(|_| flags.extend_expiration) {
            if max.as_secs() < apiary_core::authn::service_account::EXTENDED_EXPIRATION_SECONDS as u64 {
                tracing::warn!(
                    "service-account-extend-token-expiration is true, enabling tokens valid up to {} seconds, which is longer than service-account-max-token-expiration set to {}",
                    apiary_core::authn::service_account::EXTENDED_EXPIRATION_SECONDS,
                    apiary_core::duration::format_duration(max)
                );
            }
        }
        ServiceAccountOptions {
            issuers,
            api_audiences,
            keys,
            signing_key,
            max_expiration,
            extend_expiration: flags.extend_expiration,
        }
    }

    /// The core's configuration, signing with `signing_key` (the flag's, or the one of
    /// the cert dir) and writing `root_ca` into legacy token Secrets.
    pub fn tokens(&self, signing_key: SigningKey, root_ca: &str) -> ServiceAccountTokens {
        let mut tokens = ServiceAccountTokens::new(self.issuers.clone(), signing_key);
        if !self.api_audiences.is_empty() {
            tokens.api_audiences = self.api_audiences.clone();
        }
        if !self.keys.is_empty() {
            tokens.keys = self.keys.clone();
        }
        tokens.max_expiration = self.max_expiration;
        tokens.extend_expiration = self.extend_expiration;
        tokens.root_ca = Some(root_ca.to_owned());
        tokens
    }

    /// The signing key: the flag's, or `<cert_dir>/sa.key`, made on first start.
    pub fn signing_key(&self, cert_dir: &Path) -> Result<SigningKey, crate::pki::PkiError> {
        match &self.signing_key {
            Some(key) => Ok(key.clone()),
            None => crate::pki::ensure_service_account_key(cert_dir),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags<'a>() -> Flags<'a> {
        Flags {
            issuers: vec!["https://kubernetes.default.svc.cluster.local"],
            api_audiences: None,
            key_files: Vec::new(),
            signing_key_file: None,
            max_expiration: "0s",
            extend_expiration: true,
        }
    }

    #[test]
    fn issuers_audiences_and_bounds_are_checked_as_upstream_checks_them() {
        let mut problems = Vec::new();
        let options = ServiceAccountOptions::from_flags(
            Flags {
                issuers: vec!["https://a", "", "https://a", "https://b"],
                api_audiences: Some("x, y,,"),
                max_expiration: "30m",
                ..flags()
            },
            &mut problems,
        );
        assert_eq!(options.issuers, ["https://a", "https://b"]);
        assert_eq!(options.api_audiences, ["x", "y"]);
        assert_eq!(
            problems,
            [
                "service-account-issuer should not be an empty string",
                "service-account-issuer \"https://a\" is already specified",
                "the service-account-max-token-expiration must be between 1 hour and 2^32 seconds",
            ]
        );
        let mut problems = Vec::new();
        let options = ServiceAccountOptions::from_flags(Flags { max_expiration: "2h", ..flags() }, &mut problems);
        assert!(problems.is_empty());
        assert_eq!(options.max_expiration, Some(Duration::from_secs(7200)));
    }

    #[test]
    fn key_files_that_do_not_read_stop_apiary() {
        let dir = std::env::temp_dir().join(format!("apiary-sa-flags-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let garbage = dir.join("garbage.pem");
        std::fs::write(&garbage, "not a key").unwrap();
        let garbage = garbage.to_str().unwrap().to_owned();
        let mut problems = Vec::new();
        ServiceAccountOptions::from_flags(
            Flags {
                key_files: vec![&garbage, "/nonexistent/sa.pub"],
                signing_key_file: Some(&garbage),
                ..flags()
            },
            &mut problems,
        );
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert_eq!(problems[0], format!("error reading public key file {garbage}: data does not contain any valid RSA or ECDSA public keys"));
        assert!(problems[1].starts_with("error reading public key file /nonexistent/sa.pub: "), "{problems:?}");
        assert_eq!(problems[2], "failed to parse service-account-issuer-key-file: data does not contain a valid RSA or ECDSA private key");

        // The default key is made once, then reused.
        let made = ServiceAccountOptions::from_flags(flags(), &mut Vec::new()).signing_key(&dir).unwrap();
        let again = ServiceAccountOptions::from_flags(flags(), &mut Vec::new()).signing_key(&dir).unwrap();
        assert_eq!(made.public_key(), again.public_key());
        assert_eq!(made.algorithm(), "ES256");
        let public = std::fs::read_to_string(dir.join("sa.pub")).unwrap();
        assert_eq!(keys::parse_public_keys(&public).unwrap(), [made.public_key().clone()]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
