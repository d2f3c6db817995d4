//! ServiceAccount tokens: kube-apiserver's `--service-account-*` and `--api-audiences`
//! flags, read and checked with the others (key files parsed at once, so a bad one stops
//! apiary before anything binds), then made into the core's
//! [`ServiceAccountTokens`] once the signing key is known.

use apiary_core::authn::keys;
use apiary_core::authn::service_account::EXTENDED_EXPIRATION_SECONDS;
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

/// The bounds upstream puts on `--service-account-max-token-expiration`.
const MAX_EXPIRATION_BOUNDS: (Duration, Duration) = (Duration::from_secs(3600), Duration::from_secs(1 << 32));

/// Check the flags as kube-apiserver does, reading the key files; each problem is added
/// to `problems`. No signing key means `<cert-dir>/sa.key` and no key file the signing
/// key's public half: [`complete`] fills them in at start.
pub fn from_flags(flags: Flags<'_>, problems: &mut Vec<String>) -> ServiceAccountTokens {
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
    let api_audiences: Vec<String> = flags
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
    ServiceAccountTokens {
        api_audiences: if api_audiences.is_empty() { issuers.clone() } else { api_audiences },
        issuers,
        keys,
        signing_key,
        max_expiration,
        extend_expiration: flags.extend_expiration,
        root_ca: None,
    }
}

/// The tokens of the flags made whole at start: signed with the key of
/// `<cert_dir>/sa.key` (made on first start) unless the flag named one, verified with
/// the signing key unless key files were given, and writing `root_ca` into legacy
/// token Secrets.
pub fn complete(flags: &ServiceAccountTokens, cert_dir: &Path, root_ca: &str) -> Result<ServiceAccountTokens, crate::pki::PkiError> {
    let mut tokens = flags.clone();
    // Said at start, once logging is on, as upstream warns.
    if let Some(max) = tokens.max_expiration.filter(|_| tokens.extend_expiration) {
        if max.as_secs() < EXTENDED_EXPIRATION_SECONDS as u64 {
            tracing::warn!(
                "service-account-extend-token-expiration is true, enabling tokens valid up to {EXTENDED_EXPIRATION_SECONDS} seconds, which is longer than service-account-max-token-expiration set to {}",
                apiary_core::duration::format_duration(max)
            );
        }
    }
    let signing_key = match &tokens.signing_key {
        Some(key) => key.clone(),
        None => crate::pki::ensure_service_account_key(cert_dir)?,
    };
    if tokens.keys.is_empty() {
        tokens.keys.push(signing_key.public_key().clone());
    }
    tokens.signing_key = Some(signing_key);
    tokens.root_ca = Some(root_ca.to_owned());
    Ok(tokens)
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
        let options = from_flags(
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
        let options = from_flags(Flags { max_expiration: "2h", ..flags() }, &mut problems);
        assert!(problems.is_empty());
        assert_eq!(options.max_expiration, Some(Duration::from_secs(7200)));
        assert_eq!(options.api_audiences, options.issuers, "the audiences default to the issuers");
    }

    #[test]
    fn key_files_that_do_not_read_stop_apiary() {
        let dir = std::env::temp_dir().join(format!("apiary-sa-flags-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let garbage = dir.join("garbage.pem");
        std::fs::write(&garbage, "not a key").unwrap();
        let garbage = garbage.to_str().unwrap().to_owned();
        let mut problems = Vec::new();
        from_flags(
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

        // The default key is made once, then reused, and verifies.
        let made = complete(&from_flags(flags(), &mut Vec::new()), &dir, "CA").unwrap();
        let again = complete(&from_flags(flags(), &mut Vec::new()), &dir, "CA").unwrap();
        let made_key = made.signing_key.as_ref().unwrap();
        assert_eq!(made_key.public_key(), again.signing_key.as_ref().unwrap().public_key());
        assert_eq!(made.keys, [made_key.public_key().clone()]);
        assert_eq!((made_key.algorithm(), made.root_ca.as_deref()), ("ES256", Some("CA")));
        let public = std::fs::read_to_string(dir.join("sa.pub")).unwrap();
        assert_eq!(keys::parse_public_keys(&public).unwrap(), made.keys);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
