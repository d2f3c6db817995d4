//! `--tls-cipher-suites`: the names kube-apiserver takes (Go's crypto/tls names, secure
//! and insecure alike, and two legacy aliases) mapped onto what rustls implements.

use futures_rustls::rustls::crypto::ring::cipher_suite as ring;
use futures_rustls::rustls::SupportedCipherSuite;

/// What apiary makes of a cipher suite name kube-apiserver accepts.
#[derive(Clone, Copy, Debug)]
pub enum Suite {
    /// A TLS 1.2 suite rustls implements.
    Tls12(SupportedCipherSuite),
    /// A TLS 1.3 suite: always enabled, as Go enables them whatever the list says.
    Tls13,
    /// Go implements it, rustls does not: CBC, RC4 and 3DES ciphers and RSA key
    /// exchange (all but the CBC-SHA ECDHE ones are in Go's insecure list).
    Unsupported,
}

/// The TLS 1.2 suites apiary can serve, by the names the flag takes.
pub const SUPPORTED: &[&str] = &[
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
];

/// The suite a name stands for; `None` for a name kube-apiserver does not know either.
pub fn lookup(name: &str) -> Option<Suite> {
    Some(match name {
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256" => {
            Suite::Tls12(ring::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256)
        }
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384" => {
            Suite::Tls12(ring::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384)
        }
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256" | "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305" => {
            Suite::Tls12(ring::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256)
        }
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256" => {
            Suite::Tls12(ring::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)
        }
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384" => {
            Suite::Tls12(ring::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384)
        }
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256" | "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305" => {
            Suite::Tls12(ring::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256)
        }
        "TLS_AES_128_GCM_SHA256" | "TLS_AES_256_GCM_SHA384" | "TLS_CHACHA20_POLY1305_SHA256" => {
            Suite::Tls13
        }
        "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA"
        | "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA"
        | "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"
        | "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA"
        | "TLS_RSA_WITH_RC4_128_SHA"
        | "TLS_RSA_WITH_3DES_EDE_CBC_SHA"
        | "TLS_RSA_WITH_AES_128_CBC_SHA"
        | "TLS_RSA_WITH_AES_256_CBC_SHA"
        | "TLS_RSA_WITH_AES_128_CBC_SHA256"
        | "TLS_RSA_WITH_AES_128_GCM_SHA256"
        | "TLS_RSA_WITH_AES_256_GCM_SHA384"
        | "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA"
        | "TLS_ECDHE_RSA_WITH_RC4_128_SHA"
        | "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA"
        | "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256"
        | "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256" => Suite::Unsupported,
        _ => return None,
    })
}

/// The TLS 1.3 suites, always offered.
pub fn tls13() -> [SupportedCipherSuite; 3] {
    [
        ring::TLS13_AES_128_GCM_SHA256,
        ring::TLS13_AES_256_GCM_SHA384,
        ring::TLS13_CHACHA20_POLY1305_SHA256,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_supported_name_maps_to_its_rustls_suite() {
        for name in SUPPORTED {
            match lookup(name) {
                Some(Suite::Tls12(suite)) => {
                    assert_eq!(format!("{:?}", suite.suite()), *name)
                }
                other => panic!("{name}: {other:?}"),
            }
        }
    }
}
