//! Front-proxy authentication through the whole chain: a client the requestheader CA
//! vouches for names the user in `X-Remote-*` headers; the server publishes its client
//! CA and front-proxy settings in `kube-system/extension-apiserver-authentication`.

use apiary_core::authn::RequestHeader;
use apiary_core::harness::{json_request, single_reply, Harness};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use std::sync::Arc;

const CONFIGMAP: &str = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication";
const SELF_REVIEW: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
const REVIEW: &str = r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#;
/// PEM blocks standing for the two CAs (the ConfigMap's bundles are read as PEM).
const CLIENT_CA: &str = "-----BEGIN CERTIFICATE-----\nY2xpZW50IGNh\n-----END CERTIFICATE-----\n";
const FRONT_PROXY_CA: &str = "-----BEGIN CERTIFICATE-----\nZnJvbnQgcHJveHkgY2E=\n-----END CERTIFICATE-----\n";
const ALICE: &str = "X-Remote-User: alice\r\nX-Remote-Group: g1\r\nX-Remote-Group: g2\r\nX-Remote-Extra-Scopes: read\r\n";

fn harness() -> Harness<MemoryStore> {
    let mut config = Config { client_ca_pem: Some(CLIENT_CA.to_owned()), ..Config::default() };
    config.authenticators.request_header = Some(Arc::new(RequestHeader::kubeadm(FRONT_PROXY_CA.to_owned())));
    Harness::new(config, MemoryStore::new())
}

fn whoami(h: &Harness<MemoryStore>, headers: &str) -> serde_json::Value {
    let reply = single_reply(&h.send(&json_request("POST", SELF_REVIEW, headers, REVIEW)));
    assert_eq!(reply.status, 201, "{}", String::from_utf8_lossy(&reply.body));
    reply.json()["status"]["userInfo"].clone()
}

#[test]
fn the_front_proxy_names_the_user_and_authorization_judges_that_user() {
    let h = harness();
    h.act_as_front_proxy("front-proxy-client");
    let user = whoami(&h, ALICE);
    assert_eq!(user["username"], "alice");
    assert_eq!(user["groups"], serde_json::json!(["g1", "g2", "system:authenticated"]));
    assert_eq!(user["extra"]["scopes"], serde_json::json!(["read"]));

    // An anonymous request forwarded stays unauthenticated: not even a
    // SelfSubjectReview, which RBAC allows every authenticated user.
    let forwarded = "X-Remote-User: system:anonymous\r\nX-Remote-Group: system:unauthenticated\r\n";
    let anonymous = single_reply(&h.send(&json_request("POST", SELF_REVIEW, forwarded, REVIEW)));
    assert_eq!(anonymous.status, 403);

    let refused = single_reply(&h.send(&json_request("GET", "/api/v1/namespaces/default/secrets", ALICE, "")));
    assert_eq!(refused.status, 403);
    let message = refused.json()["message"].as_str().unwrap().to_owned();
    assert!(message.contains("User \"alice\" cannot list resource \"secrets\""), "{message}");
}

#[test]
fn without_a_username_or_an_allowed_name_the_other_authenticators_decide() {
    let h = harness();
    // The front proxy's certificate is no client certificate: without a username it
    // fails as any untrusted certificate does.
    h.act_as_front_proxy("front-proxy-client");
    let reply = single_reply(&h.send(&json_request("POST", SELF_REVIEW, "X-Remote-Group: g1\r\n", REVIEW)));
    assert_eq!(reply.status, 401);
    h.act_as_front_proxy("someone-else");
    let reply = single_reply(&h.send(&json_request("POST", SELF_REVIEW, ALICE, REVIEW)));
    assert_eq!(reply.status, 401);
    // A client certificate of the client CA: the headers mean nothing.
    h.act_as(Some("bob"), &["dev"]);
    assert_eq!(whoami(&h, ALICE)["username"], "bob");
}

#[test]
fn the_authentication_configmap_is_written_at_start_with_upstreams_keys() {
    let h = harness();
    let reply = single_reply(&h.send(&json_request("GET", CONFIGMAP, "", "")));
    assert_eq!(reply.status, 200);
    let data = reply.json()["data"].clone();
    let mut keys: Vec<&str> = data.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "client-ca-file",
            "requestheader-allowed-names",
            "requestheader-client-ca-file",
            "requestheader-extra-headers-prefix",
            "requestheader-group-headers",
            "requestheader-username-headers",
        ]
    );
    assert_eq!(data["client-ca-file"], CLIENT_CA);
    assert_eq!(data["requestheader-client-ca-file"], FRONT_PROXY_CA);
    assert_eq!(data["requestheader-allowed-names"], r#"["front-proxy-client"]"#);
    assert_eq!(data["requestheader-username-headers"], r#"["X-Remote-User"]"#);

    // Changed by someone, the next pass merges this server's data in again.
    let mut stored = reply.json();
    stored["data"]["client-ca-file"] = "tampered".into();
    stored["data"]["requestheader-allowed-names"] = r#"["aggregator"]"#.into();
    let put = single_reply(&h.send(&json_request("PUT", CONFIGMAP, "", &stored.to_string())));
    assert_eq!(put.status, 200);
    h.run_bootstrap(h.server.authentication_info()).unwrap();
    let again = single_reply(&h.send(&json_request("GET", CONFIGMAP, "", "")));
    assert_eq!(again.json()["data"]["client-ca-file"], CLIENT_CA);
    assert_eq!(again.json()["data"]["requestheader-allowed-names"], r#"["aggregator","front-proxy-client"]"#);
}

/// The keys of the ConfigMap recorded from a kube-apiserver without `--requestheader-*`
/// (the key layout alone when the shared recordings are absent).
fn recorded_keys() -> Vec<String> {
    let path = format!("{}/../../shared/upstream/bootstrap/flowcontrol.json", env!("CARGO_MANIFEST_DIR"));
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let recorded: serde_json::Value = serde_json::from_str(&text).unwrap();
            let object = &recorded["extensionApiserverAuthenticationConfigMap"];
            assert_eq!(object["metadata"]["namespace"], "kube-system");
            assert_eq!(object["metadata"]["name"], "extension-apiserver-authentication");
            serde_json::from_value(recorded["extensionApiserverAuthenticationKeys"].clone()).unwrap()
        }
        Err(_) => vec!["client-ca-file".to_owned()],
    }
}

#[test]
fn the_client_ca_alone_is_the_recorded_layout() {
    let config = Config { client_ca_pem: Some(CLIENT_CA.to_owned()), ..Config::default() };
    let h = Harness::new(config, MemoryStore::new());
    let reply = single_reply(&h.send(&json_request("GET", CONFIGMAP, "", "")));
    let data = reply.json()["data"].clone();
    let keys: Vec<String> = data.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, recorded_keys());
    assert_eq!(data["client-ca-file"], CLIENT_CA);
}
