//! The real binary on a real etcd: kubectl through it, and two apiary processes on one
//! etcd serving one state — a write through one is seen by a watch on the other, and
//! optimistic concurrency holds across them.
mod kube_support;

use kube_support::client;

use apiary_conformance::etcd::{Etcd, EtcdTls};
use apiary_conformance::harness::{apiary_command, ok, Apiary};
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use kube::runtime::watcher::{self, Event};
use std::time::Duration;

/// A CA, a serving certificate for 127.0.0.1 and a client certificate, in `dir`;
/// returns etcd's files and the client's (cert, key).
fn certificates(dir: &std::path::Path) -> (EtcdTls, std::path::PathBuf, std::path::PathBuf) {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    };
    let write = |name: &str, pem: String| {
        let path = dir.join(name);
        std::fs::write(&path, pem).unwrap();
        path
    };
    let mut ca = CertificateParams::default();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "etcd test CA");
    let ca_key = KeyPair::generate().unwrap();
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let leaf = |name: &str, sans: Vec<String>, usages: Vec<ExtendedKeyUsagePurpose>| {
        let mut params = CertificateParams::new(sans).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        params.extended_key_usages = usages;
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &ca_cert, &ca_key).unwrap();
        (
            write(&format!("{name}.crt"), cert.pem()),
            write(&format!("{name}.key"), key.serialize_pem()),
        )
    };
    let (server_cert, server_key) = leaf(
        "etcd",
        vec!["127.0.0.1".into()],
        vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ],
    );
    let (client_cert, client_key) =
        leaf("apiary", vec![], vec![ExtendedKeyUsagePurpose::ClientAuth]);
    let tls = EtcdTls {
        ca: write("ca.crt", ca_cert.pem()),
        cert: server_cert,
        key: server_key,
    };
    (tls, client_cert, client_key)
}

#[test]
fn etcd_over_tls_with_a_client_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let (tls, client_cert, client_key) = certificates(dir.path());
    let etcd = Etcd::start_tls(tls.clone());
    let apiary = Apiary::start_with(&[
        "--storage",
        "etcd",
        &format!("--etcd-servers={}", etcd.url()),
        &format!("--etcd-cafile={}", tls.ca.display()),
        &format!("--etcd-certfile={}", client_cert.display()),
        &format!("--etcd-keyfile={}", client_key.display()),
    ]);
    create_and_read(&apiary, "1.33", "over-tls");
    assert!(apiary
        .kubectl("1.33", &["get", "--raw", "/readyz/etcd"])
        .status
        .success());

    // Without a client certificate etcd refuses the connection: apiary says so, and
    // never reports ready.
    let data = tempfile::tempdir().unwrap();
    let mut refused = apiary_command(
        data.path(),
        &[
            "--storage",
            "etcd",
            &format!("--etcd-servers={}", etcd.url()),
            &format!("--etcd-cafile={}", tls.ca.display()),
        ],
    )
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let stderr = std::io::BufReader::new(refused.stderr.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in stderr.lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let mut log = Vec::new();
    let said = |log: &[String]| {
        log.iter().any(|l| l.contains("storage check etcd fails"))
            && log
                .iter()
                .any(|l| l.contains("BadCertificate") || l.contains("certificate"))
    };
    while !said(&log) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => log.push(line),
            Err(_) => break,
        }
    }
    let _ = refused.kill();
    let _ = refused.wait();
    assert!(said(&log), "{log:#?}");
    assert!(!log.iter().any(|l| l.contains("apiary ready")), "{log:#?}");
}

#[test]
fn a_dead_endpoint_is_skipped() {
    let etcd = Etcd::start();
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let servers = format!("--etcd-servers=http://{dead},{}", etcd.url());
    let apiary = Apiary::start_with(&["--storage", "etcd", &servers]);
    create_and_read(&apiary, "1.33", "failover");
}

/// kubectl `version` creates a ConfigMap `name` and reads its data back.
fn create_and_read(apiary: &Apiary, version: &str, name: &str) {
    ok(&apiary.kubectl(
        version,
        &["create", "configmap", name, "--from-literal=k=v"],
    ));
    let got = ok(&apiary.kubectl(
        version,
        &["get", "configmap", name, "-o", "jsonpath={.data.k}"],
    ));
    assert_eq!(got, "v");
}

fn start_on(etcd: &Etcd) -> Apiary {
    let servers = format!("--etcd-servers={}", etcd.url());
    Apiary::start_with(&["--storage", "etcd", &servers])
}

#[test]
fn kubectl_on_etcd() {
    let etcd = Etcd::start();
    let apiary = start_on(&etcd);
    for version in ["1.33", "1.27"] {
        let name = format!("on-etcd-{}", version.replace('.', "-"));
        create_and_read(&apiary, version, &name);
        ok(&apiary.kubectl(version, &["delete", "configmap", &name]));
    }
    let namespaces = ok(&apiary.kubectl("1.33", &["get", "namespaces", "-o", "name"]));
    assert!(namespaces.contains("namespace/kube-system"), "{namespaces}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_apiaries_on_one_etcd_serve_one_state() {
    let etcd = Etcd::start();
    let (a, b) = (start_on(&etcd), start_on(&etcd));
    let on_a: Api<ConfigMap> = Api::namespaced(client(&a).await, "default");
    let on_b: Api<ConfigMap> = Api::namespaced(client(&b).await, "default");

    // A watcher on B sees what kubectl creates through A.
    let mut events = watcher::watcher(
        on_b.clone(),
        watcher::Config::default().fields("metadata.name=shared"),
    )
    .boxed();
    loop {
        match tokio::time::timeout(Duration::from_secs(20), events.next()).await {
            Ok(Some(Ok(Event::InitDone))) => break,
            Ok(Some(Ok(_))) => {}
            other => panic!("the watcher on B did not start: {other:?}"),
        }
    }
    ok(&a.kubectl(
        "1.33",
        &["create", "configmap", "shared", "--from-literal=k=v1"],
    ));
    let seen = loop {
        match tokio::time::timeout(Duration::from_secs(20), events.next()).await {
            Ok(Some(Ok(Event::Apply(cm)))) => break cm,
            Ok(Some(Ok(_))) => {}
            other => panic!("the watcher on B did not see the create through A: {other:?}"),
        }
    };
    assert_eq!(seen.data.unwrap()["k"], "v1");

    // Two updates from the same resourceVersion, one through each: one wins, one 409.
    let current = on_a.get("shared").await.unwrap();
    let mut through_a = current.clone();
    through_a.data = Some([("k".to_owned(), "from-a".to_owned())].into());
    let mut through_b = current.clone();
    through_b.data = Some([("k".to_owned(), "from-b".to_owned())].into());
    let pp = PostParams::default();
    let won = on_a.replace("shared", &pp, &through_a).await;
    let lost = on_b.replace("shared", &pp, &through_b).await;
    assert!(won.is_ok(), "{won:?}");
    match lost {
        Err(kube::Error::Api(status)) => assert_eq!(status.code, 409, "{status:?}"),
        other => panic!("expected 409 Conflict through B, got {other:?}"),
    }
    assert_eq!(
        on_b.get("shared").await.unwrap().data.unwrap()["k"],
        "from-a"
    );
}
