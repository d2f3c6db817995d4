//! ServiceAccount tokens and their keys, from any bytes. The first byte picks what the
//! rest is:
//!
//! - 0: a bearer token, parsed (`jwt::parse`, `jwt::unverified_issuer`) and put through
//!   both authenticators (`ServiceAccountTokens::authenticate`): never panics, and
//!   nothing is accepted but the very tokens the server issued (a bound one and a legacy
//!   one, signed with a fixed RSA key, so their bytes are the same every run: seeds).
//! - 1: claims, signed by the server's own key, then authenticated: the claims parsing
//!   and the bound and legacy validators over a fixed set of objects never panic, and
//!   whoever is accepted is a ServiceAccount that exists, with its uid.
//! - 2: a key file (`keys::parse_private_key`, `keys::parse_public_keys`): never
//!   panics, and a private key's public half reads back as itself.

#![no_main]

use apiary_core::authn::keys::{parse_private_key, parse_public_keys};
use apiary_core::authn::service_account::{Issue, Refusal};
use apiary_core::authn::{jwt, LiveObjects, NotKnown, ServiceAccountTokens};
use base64::Engine as _;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const KEY: &str = include_str!("../../core/src/authn/keys/testdata/rsa-pkcs1.key");
const NOW: u64 = 1_800_000_000;

/// A ServiceAccount `ns/robot`, two pods (one being deleted), a node, the Secret holding
/// the legacy token, and a Secret the server cannot tell about.
struct Objects {
    legacy: String,
}

impl LiveObjects for Objects {
    fn get(&self, plural: &str, namespace: &str, name: &str) -> Result<Option<Map<String, Value>>, NotKnown> {
        let object = match (plural, namespace, name) {
            ("serviceaccounts", "ns", "robot") => json!({ "metadata": { "name": "robot", "namespace": "ns", "uid": "sa-uid" } }),
            ("pods", "ns", "web") => json!({ "metadata": { "name": "web", "uid": "pod-uid" } }),
            ("pods", "ns", "gone") => json!({ "metadata": { "name": "gone", "uid": "gone-uid", "deletionTimestamp": "2026-01-01T00:00:00Z" } }),
            ("nodes", "", "n1") => json!({ "metadata": { "name": "n1", "uid": "node-uid" } }),
            ("secrets", "ns", "s") => {
                let token = base64::engine::general_purpose::STANDARD.encode(&self.legacy);
                json!({ "metadata": { "name": "s", "uid": "secret-uid" }, "data": { "token": token } })
            }
            ("secrets", _, "unknown") => return Err(NotKnown),
            _ => return Ok(None),
        };
        Ok(object.as_object().cloned())
    }
}

struct Fixture {
    tokens: ServiceAccountTokens,
    issued: String,
    objects: Objects,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let tokens = ServiceAccountTokens::new(
            vec!["https://kubernetes.default.svc.cluster.local".into()],
            parse_private_key(KEY).expect("the fixture key"),
        );
        let issued = tokens
            .issue(&Issue {
                namespace: "ns",
                name: "robot",
                uid: "sa-uid",
                bound: None,
                pod_node: None,
                audiences: &tokens.api_audiences,
                now: NOW as i64,
                expiration_seconds: 3600,
                warn_after: None,
                id: "jti".into(),
            })
            .expect("a signing key");
        let legacy = tokens.issue_legacy(("ns", "robot", "sa-uid"), "s").expect("a signing key");
        Fixture {
            tokens,
            issued,
            objects: Objects { legacy },
        }
    })
}

fn now() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(NOW)
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let f = fixture();
    match mode % 3 {
        0 => {
            let Ok(token) = std::str::from_utf8(rest) else {
                return;
            };
            let _ = jwt::unverified_issuer(token);
            if let Ok(parsed) = jwt::parse(token) {
                for key in &f.tokens.keys {
                    let _ = parsed.verify(key);
                }
            }
            for audiences in [None, Some(&["vault".to_owned()][..])] {
                if let Ok(found) = f.tokens.authenticate(token, audiences, now(), &f.objects) {
                    assert!(token == f.issued || token == f.objects.legacy, "accepted a token never issued: {token}");
                    assert_eq!(found.user.name, "system:serviceaccount:ns:robot");
                }
            }
        }
        1 => {
            let Ok(claims) = serde_json::from_slice::<Value>(rest) else {
                return;
            };
            let token = jwt::sign(f.tokens.signing_key.as_ref().expect("a signing key"), &claims);
            match f.tokens.authenticate(&token, None, now(), &f.objects) {
                Ok(found) => {
                    assert_eq!(found.user.name, "system:serviceaccount:ns:robot", "{claims}");
                    assert_eq!(found.user.uid, "sa-uid", "{claims}");
                    assert!(!found.audiences.is_empty());
                }
                Err(Refusal::NotMine) | Err(Refusal::Invalid(_)) => {}
            }
        }
        _ => {
            let Ok(text) = std::str::from_utf8(rest) else {
                return;
            };
            if let Ok(key) = parse_private_key(text) {
                let public = parse_public_keys(&key.public_key().to_pem()).expect("a public key reads back");
                assert_eq!(&public[0], key.public_key());
            }
            if let Ok(keys) = parse_public_keys(text) {
                assert!(!keys.is_empty());
                for key in keys {
                    assert_eq!(parse_public_keys(&key.to_pem()).expect("reads back")[0], key);
                }
            }
        }
    }
});
