//! The real binary on a real etcd: kubectl through it, and two apiary processes on one
//! etcd serving one state — a write through one is seen by a watch on the other, and
//! optimistic concurrency holds across them.
mod kube_support;

use kube_support::client;

use apiary_conformance::etcd::Etcd;
use apiary_conformance::harness::{ok, Apiary};
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use kube::runtime::watcher::{self, Event};
use std::time::Duration;

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
        ok(&apiary.kubectl(
            version,
            &["create", "configmap", &name, "--from-literal=k=v"],
        ));
        let got = ok(&apiary.kubectl(
            version,
            &["get", "configmap", &name, "-o", "jsonpath={.data.k}"],
        ));
        assert_eq!(got, "v");
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
