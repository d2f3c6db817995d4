//! What the in-flight limit tests share: kube-rs clients for the admin and for a user
//! the limits apply to, raw requests through them, and the 429 they expect.

#![allow(dead_code)]

use apiary_conformance::harness::Apiary;
use kube::client::Body;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use rcgen::{CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair};
use serde_json::{json, Value};

/// A client whose user is `loader` in group `dev`, not `system:masters`: a
/// certificate signed here by the CA apiary made.
pub async fn unprivileged_client(apiary: &Apiary) -> Client {
    let client = user_client(apiary, "loader", "dev").await;
    // RBAC lets the loader's group work with ConfigMaps anywhere, and no more.
    for args in [
        &["create", "clusterrole", "loader", "--verb=get,list,watch,create,update,patch,delete,deletecollection", "--resource=configmaps"][..],
        &["create", "clusterrolebinding", "loader", "--clusterrole=loader", "--group=dev"],
    ] {
        apiary_conformance::harness::ok(&apiary.kubectl("1.33", args));
    }
    client
}

/// A client whose user is `name` in group `group`: a certificate signed here by the
/// CA apiary made. What the user may do is for the caller to grant.
pub async fn user_client(apiary: &Apiary, name: &str, group: &str) -> Client {
    let pki = apiary.data_dir.join("pki");
    let ca_key =
        KeyPair::from_pem(&std::fs::read_to_string(pki.join("ca.key")).unwrap()).expect("ca.key");
    let mut ca = CertificateParams::default();
    ca.distinguished_name = DistinguishedName::new();
    ca.distinguished_name.push(DnType::CommonName, "apiary-ca");
    ca.is_ca = IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let issuer = ca.self_signed(&ca_key).unwrap();

    let mut leaf = CertificateParams::default();
    leaf.distinguished_name = DistinguishedName::new();
    leaf.distinguished_name.push(DnType::OrganizationName, group);
    leaf.distinguished_name.push(DnType::CommonName, name);
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let key = KeyPair::generate().unwrap();
    let cert = leaf.signed_by(&key, &issuer, &ca_key).unwrap();
    let (cert_path, key_path) = (pki.join(format!("{name}.crt")), pki.join(format!("{name}.key")));
    std::fs::write(&cert_path, cert.pem()).unwrap();
    std::fs::write(&key_path, key.serialize_pem()).unwrap();

    let mut kubeconfig = Kubeconfig::read_from(&apiary.kubeconfig).expect("kubeconfig parses");
    for named in &mut kubeconfig.auth_infos {
        let auth = named.auth_info.as_mut().expect("admin credentials");
        auth.client_certificate_data = None;
        auth.client_key_data = None;
        auth.client_certificate = Some(cert_path.display().to_string());
        auth.client_key = Some(key_path.display().to_string());
    }
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("kubeconfig is usable");
    plain(config)
}

/// A client that shows every answer as it came: kube-rs retries 429 by default. Its
/// connection pool keeps one keep-alive connection per concurrent request.
pub fn plain(mut config: Config) -> Client {
    config.default_retry = false;
    Client::try_from(config).expect("client")
}

pub async fn admin_client(apiary: &Apiary) -> Client {
    let kubeconfig = Kubeconfig::read_from(&apiary.kubeconfig).expect("kubeconfig parses");
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("kubeconfig is usable");
    plain(config)
}

/// A client that presents no credentials: `system:anonymous`.
pub async fn anonymous_client(apiary: &Apiary) -> Client {
    let kubeconfig = Kubeconfig::read_from(&apiary.kubeconfig).expect("kubeconfig parses");
    let mut config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("kubeconfig is usable");
    config.auth_info = Default::default();
    plain(config)
}

pub struct Answer {
    pub status: u16,
    pub retry_after: Option<String>,
    pub headers: http::HeaderMap,
    pub body: bytes::Bytes,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

pub async fn send(client: &Client, method: &str, path: &str, body: Option<&Value>) -> Answer {
    let request = http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(match body {
            Some(b) => Body::from(serde_json::to_vec(b).unwrap()),
            None => Body::empty(),
        })
        .unwrap();
    let response = client.send(request).await.expect("an answer");
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    let headers = response.headers().clone();
    let body = response.into_body().collect_bytes().await.expect("a body");
    Answer {
        status,
        retry_after,
        headers,
        body,
    }
}

pub fn configmap(name: &str, payload: usize) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
           "data": {"payload": "x".repeat(payload)}})
}

pub fn assert_too_many_requests(a: &Answer) {
    assert_eq!(a.retry_after.as_deref(), Some("1"), "Retry-After of a 429");
    assert_eq!(
        a.json(),
        json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
               "message":"Too many requests, please try again later.",
               "reason":"TooManyRequests","details":{"retryAfterSeconds":1},"code":429})
    );
}
