//! In-flight limits on the real binary, as kube-apiserver's MaxInFlightLimit filter
//! applies them: with `--max-requests-inflight=1 --max-mutating-requests-inflight=1`,
//! concurrent LISTs and creates past the limit get 429 with `Retry-After: 1` and a
//! TooManyRequests Status; /readyz and watches are never refused; a `system:masters`
//! user is always served; once the load stops every request succeeds.
//!
//! The load comes from a user outside `system:masters` (upstream never refuses those),
//! with a client certificate signed here by the CA apiary made.
use apiary_conformance::harness::Apiary;
use kube::client::Body;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use rcgen::{CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair};
use serde_json::{json, Value};

const CONFIGMAPS: usize = 300;
const LISTS: usize = 64;
const CREATES: usize = 32;

/// A client whose user is `loader` in group `dev`, not `system:masters`.
async fn unprivileged_client(apiary: &Apiary) -> Client {
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
    leaf.distinguished_name
        .push(DnType::OrganizationName, "dev");
    leaf.distinguished_name.push(DnType::CommonName, "loader");
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let key = KeyPair::generate().unwrap();
    let cert = leaf.signed_by(&key, &issuer, &ca_key).unwrap();
    let (cert_path, key_path) = (pki.join("loader.crt"), pki.join("loader.key"));
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

/// A client that shows every answer as it came: kube-rs retries 429 by default.
fn plain(mut config: Config) -> Client {
    config.default_retry = false;
    Client::try_from(config).expect("client")
}

async fn admin_client(apiary: &Apiary) -> Client {
    let kubeconfig = Kubeconfig::read_from(&apiary.kubeconfig).expect("kubeconfig parses");
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("kubeconfig is usable");
    plain(config)
}

struct Answer {
    status: u16,
    retry_after: Option<String>,
    body: Value,
}

async fn send(client: &Client, method: &str, path: &str, body: Option<Value>) -> Answer {
    let request = http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(match body {
            Some(b) => Body::from(serde_json::to_vec(&b).unwrap()),
            None => Body::empty(),
        })
        .unwrap();
    let response = client.send(request).await.expect("an answer");
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    let bytes = response.into_body().collect_bytes().await.expect("a body");
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Answer {
        status,
        retry_after,
        body,
    }
}

fn configmap(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
           "data": {"payload": "x".repeat(2048)}})
}

const LIST: &str = "/api/v1/namespaces/load/configmaps";

fn assert_too_many_requests(a: &Answer) {
    assert_eq!(a.retry_after.as_deref(), Some("1"), "Retry-After of a 429");
    assert_eq!(
        a.body,
        json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
               "message":"Too many requests, please try again later.",
               "reason":"TooManyRequests","details":{"retryAfterSeconds":1},"code":429})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn excess_requests_get_429_and_recover() {
    let apiary = Apiary::start_with(&[
        "--max-requests-inflight=1",
        "--max-mutating-requests-inflight=1",
    ]);
    let admin = admin_client(&apiary).await;
    let loader = unprivileged_client(&apiary).await;

    // Setup as system:masters, which the limits never refuse, even concurrently.
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "load"}});
    assert_eq!(
        send(&admin, "POST", "/api/v1/namespaces", Some(ns))
            .await
            .status,
        201
    );
    let mut setup = Vec::new();
    for w in 0..8 {
        let admin = admin.clone();
        setup.push(tokio::spawn(async move {
            for i in (w..CONFIGMAPS).step_by(8) {
                let a = send(&admin, "POST", LIST, Some(configmap(&format!("cm-{i}")))).await;
                assert_eq!(a.status, 201, "{}", a.body);
            }
        }));
    }
    for t in setup {
        t.await.unwrap();
    }
    assert_eq!(
        send(&loader, "GET", LIST, None).await.status,
        200,
        "loader may list"
    );

    // Watches opened before the load: long-running, never counted.
    let mut watches = Vec::new();
    for _ in 0..4 {
        let request = http::Request::builder()
            .uri(format!("{LIST}?watch=true&timeoutSeconds=60"))
            .body(Body::empty())
            .unwrap();
        let response = loader.send(request).await.expect("watch answers");
        assert_eq!(response.status(), 200, "a watch is never refused");
        watches.push(response);
    }

    // The load.
    let mut lists = Vec::new();
    for _ in 0..LISTS {
        let loader = loader.clone();
        lists.push(tokio::spawn(async move {
            send(&loader, "GET", LIST, None).await
        }));
    }
    let mut creates = Vec::new();
    for i in 0..CREATES {
        let loader = loader.clone();
        creates.push(tokio::spawn(async move {
            send(&loader, "POST", LIST, Some(configmap(&format!("new-{i}")))).await
        }));
    }
    let mut probes = Vec::new();
    for i in 0..16 {
        let loader = loader.clone();
        let admin = admin.clone();
        probes.push(tokio::spawn(async move {
            let readyz = send(&loader, "GET", "/readyz", None).await.status;
            let path = format!("{LIST}?watch=true&timeoutSeconds=1&resourceVersion=0&n={i}");
            let request = http::Request::builder()
                .uri(path)
                .body(Body::empty())
                .unwrap();
            let watch = loader
                .send(request)
                .await
                .expect("watch answers")
                .status()
                .as_u16();
            let master = send(&admin, "GET", LIST, None).await.status;
            (readyz, watch, master)
        }));
    }

    let (mut listed, mut refused_lists) = (0, 0);
    for t in lists {
        let a = t.await.unwrap();
        match a.status {
            200 => {
                assert!(a.body["items"].as_array().unwrap().len() >= CONFIGMAPS);
                listed += 1;
            }
            429 => {
                assert_too_many_requests(&a);
                refused_lists += 1;
            }
            other => panic!("a LIST got {other}: {}", a.body),
        }
    }
    let (mut created, mut refused_creates) = (0, 0);
    for t in creates {
        let a = t.await.unwrap();
        match a.status {
            201 => created += 1,
            429 => {
                assert_too_many_requests(&a);
                refused_creates += 1;
            }
            other => panic!("a create got {other}: {}", a.body),
        }
    }
    for t in probes {
        let (readyz, watch, master) = t.await.unwrap();
        assert_eq!(readyz, 200, "/readyz is never limited");
        assert_eq!(watch, 200, "a watch is never limited");
        assert_eq!(master, 200, "system:masters is always served");
    }
    eprintln!(
        "lists: {listed} served, {refused_lists} refused; creates: {created} served, \
         {refused_creates} refused"
    );
    assert!(
        listed > 0 && refused_lists > 0,
        "some LISTs were refused, not all"
    );
    assert!(
        created > 0 && refused_creates > 0,
        "some creates were refused, not all"
    );
    drop(watches);

    // Once the load stops, every request succeeds: the places were all given back.
    for i in 0..20 {
        let a = send(&loader, "GET", LIST, None).await;
        assert_eq!(a.status, 200, "{}", a.body);
        let a = send(
            &loader,
            "POST",
            LIST,
            Some(configmap(&format!("after-{i}"))),
        )
        .await;
        assert_eq!(a.status, 201, "{}", a.body);
    }
    let a = send(&loader, "GET", LIST, None).await;
    assert_eq!(
        a.body["items"].as_array().unwrap().len(),
        CONFIGMAPS + created + 20
    );
}
