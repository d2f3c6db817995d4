//! Front-proxy authentication on the real binary: the front-proxy CA and client
//! certificate apiary generates in its cert dir as kubeadm lays them out, a client
//! presenting that certificate naming the user in `X-Remote-*` headers, the same
//! headers from the admin certificate ignored, `--requestheader-allowed-names`
//! refusing the certificate, and `kube-system/extension-apiserver-authentication`
//! read with kubectl 1.33.

mod raw_tls;

use apiary_conformance::harness::{ok, Apiary};
use raw_tls::{connect_with, runtime, tls_config_presenting, Response};

const SELF_REVIEW: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
const REVIEW: &str = r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#;
const AS_ALICE: &str = "X-Remote-User: alice\r\nX-Remote-Group: g1\r\n";

/// One request with extra header lines, on a new connection presenting `<stem>.crt`.
fn call_presenting(apiary: &Apiary, stem: &str, method: &str, path: &str, headers: &str, body: &str) -> Response {
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n{headers}\r\n{body}",
        body.len()
    );
    runtime().block_on(async {
        let mut raw = connect_with(apiary, tls_config_presenting(apiary, stem)).await.expect("TLS handshake");
        raw.send(request.as_bytes()).await.expect("request sent");
        raw.read_response().await.expect("a response")
    })
}

fn whoami(apiary: &Apiary, stem: &str) -> Response {
    call_presenting(apiary, stem, "POST", SELF_REVIEW, AS_ALICE, REVIEW)
}

#[test]
fn the_generated_front_proxy_certificate_names_the_user_in_headers() {
    let apiary = Apiary::start();
    let pki = apiary.data_dir.join("pki");
    for file in ["front-proxy-ca.crt", "front-proxy-ca.key", "front-proxy-client.crt", "front-proxy-client.key"] {
        assert!(pki.join(file).is_file(), "{file} is generated");
    }

    // (a) The front proxy vouches for alice in g1.
    let review = whoami(&apiary, "front-proxy-client");
    assert_eq!(review.status, 201, "{}", String::from_utf8_lossy(&review.body));
    let user = &review.json()["status"]["userInfo"];
    assert_eq!(user["username"], "alice");
    assert_eq!(user["groups"], serde_json::json!(["g1", "system:authenticated"]));
    let refused = call_presenting(&apiary, "front-proxy-client", "GET", "/api/v1/namespaces/default/secrets", AS_ALICE, "");
    assert_eq!(refused.status, 403);
    let message = refused.json()["message"].as_str().unwrap_or_default().to_owned();
    assert!(message.contains("User \"alice\" cannot list resource \"secrets\""), "{message}");

    // (b) The admin certificate is not the front proxy's: its headers are ignored.
    let admin = whoami(&apiary, "admin");
    assert_eq!(admin.status, 201);
    assert_eq!(admin.json()["status"]["userInfo"]["username"], "apiary-admin");

    // Without a username header the front proxy's certificate is no client
    // certificate of the client CA: 401.
    let bare = call_presenting(&apiary, "front-proxy-client", "POST", SELF_REVIEW, "X-Remote-Group: g1\r\n", REVIEW);
    assert_eq!(bare.status, 401);

    // (d) What extension API servers read.
    let out = apiary.kubectl(
        "1.33",
        &["-n", "kube-system", "get", "configmap", "extension-apiserver-authentication", "-o", "json"],
    );
    let configmap: serde_json::Value = serde_json::from_str(&ok(&out)).expect("JSON");
    let data = &configmap["data"];
    let ca = std::fs::read_to_string(pki.join("ca.crt")).unwrap();
    let front_proxy_ca = std::fs::read_to_string(pki.join("front-proxy-ca.crt")).unwrap();
    assert_eq!(data["client-ca-file"], ca.as_str());
    assert_eq!(data["requestheader-client-ca-file"], front_proxy_ca.as_str());
    assert_eq!(data["requestheader-allowed-names"], r#"["front-proxy-client"]"#);
    assert_eq!(data["requestheader-username-headers"], r#"["X-Remote-User"]"#);
    assert_eq!(data["requestheader-group-headers"], r#"["X-Remote-Group"]"#);
    assert_eq!(data["requestheader-extra-headers-prefix"], r#"["X-Remote-Extra-"]"#);
}

#[test]
fn a_front_proxy_not_in_the_allowed_names_does_not_count() {
    // (c)
    let apiary = Apiary::start_with(&["--requestheader-allowed-names=someone-else"]);
    let review = whoami(&apiary, "front-proxy-client");
    assert_eq!(review.status, 401, "{}", String::from_utf8_lossy(&review.body));
    let admin = whoami(&apiary, "admin");
    assert_eq!(admin.json()["status"]["userInfo"]["username"], "apiary-admin");
    let out = apiary.kubectl(
        "1.33",
        &["-n", "kube-system", "get", "configmap", "extension-apiserver-authentication", "-o", "jsonpath={.data.requestheader-allowed-names}"],
    );
    assert_eq!(ok(&out), r#"["someone-else"]"#);
}
