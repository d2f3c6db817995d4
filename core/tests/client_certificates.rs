//! A client certificate the client CA does not trust, as kube-apiserver's x509
//! authenticator treats it: the TLS handshake accepts it (upstream asks for client
//! certificates without requiring them to verify), the request fails authentication
//! with 401 even on the paths anonymous clients may read, and a bearer token that
//! authenticates still wins, since upstream tries the next authenticator.

use apiary_core::authn::{Authenticators, TokenFile};
use apiary_core::harness::{single_reply as one, Harness};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use std::sync::Arc;

fn get(path: &str, token: Option<&str>) -> Vec<u8> {
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    format!("GET {path} HTTP/1.1\r\nHost: apiary\r\nAccept: application/json\r\n{auth}\r\n").into_bytes()
}

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

#[test]
fn an_untrusted_client_certificate_gets_401_even_where_anonymous_clients_are_served() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    h.act_as(None, &[]);
    assert_eq!(one(&h.send(&get("/version", None))).status, 200, "anonymous");

    h.act_with_untrusted_certificate();
    for path in ["/version", "/healthz", CONFIGMAPS] {
        let refused = one(&h.send(&get(path, None)));
        assert_eq!(refused.status, 401, "{path}");
        // Upstream's Status (responses/error-401-bad-bearer-token.json).
        assert_eq!(
            refused.json(),
            serde_json::json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
                               "message":"Unauthorized","reason":"Unauthorized","code":401}),
            "{path}"
        );
    }

    // A trusted certificate again: served.
    h.act_as(Some("apiary-admin"), &["system:masters"]);
    assert_eq!(one(&h.send(&get(CONFIGMAPS, None))).status, 200);
}

#[test]
fn a_bearer_token_beside_an_untrusted_certificate_still_authenticates() {
    let tokens = TokenFile::parse("tokens.csv", "s3cret,alice,1001,system:masters\n").unwrap();
    let h = Harness::new(
        Config {
            authenticators: Authenticators {
                token_file: Some(Arc::new(tokens)),
                ..Default::default()
            },
            ..Config::default()
        },
        MemoryStore::new(),
    );
    h.act_with_untrusted_certificate();
    assert_eq!(one(&h.send(&get(CONFIGMAPS, Some("s3cret")))).status, 200);
    assert_eq!(one(&h.send(&get(CONFIGMAPS, Some("guess")))).status, 401);
    assert_eq!(one(&h.send(&get(CONFIGMAPS, None))).status, 401);
}
