//! In-flight limits on the real binary, as kube-apiserver's MaxInFlightLimit filter
//! applies them: with `--max-requests-inflight=1 --max-mutating-requests-inflight=1`,
//! concurrent LISTs and creates past the limit get 429 with `Retry-After: 1` and a
//! TooManyRequests Status; /readyz and watches are never refused; a `system:masters`
//! user is always served; once the load stops every request succeeds.
//!
//! The load comes from a user outside `system:masters` (upstream never refuses those),
//! with a client certificate signed here by the CA apiary made.
mod limits_support;

use apiary_conformance::harness::Apiary;
use kube::client::Body;
use limits_support::{
    admin_client, assert_too_many_requests, configmap, send, unprivileged_client,
};
use serde_json::json;

const CONFIGMAPS: usize = 300;
const LISTS: usize = 64;
const CREATES: usize = 32;

const LIST: &str = "/api/v1/namespaces/load/configmaps";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn excess_requests_get_429_and_recover() {
    let apiary = Apiary::start_with(&[
        "--enable-priority-and-fairness=false",
        "--max-requests-inflight=1",
        "--max-mutating-requests-inflight=1",
    ]);
    let admin = admin_client(&apiary).await;
    let loader = unprivileged_client(&apiary).await;

    // Setup as system:masters, which the limits never refuse, even concurrently.
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "load"}});
    assert_eq!(
        send(&admin, "POST", "/api/v1/namespaces", Some(&ns))
            .await
            .status,
        201
    );
    let mut setup = Vec::new();
    for w in 0..8 {
        let admin = admin.clone();
        setup.push(tokio::spawn(async move {
            for i in (w..CONFIGMAPS).step_by(8) {
                let a = send(
                    &admin,
                    "POST",
                    LIST,
                    Some(&configmap(&format!("cm-{i}"), 2048)),
                )
                .await;
                assert_eq!(a.status, 201, "{}", a.json());
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
            send(
                &loader,
                "POST",
                LIST,
                Some(&configmap(&format!("new-{i}"), 2048)),
            )
            .await
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
                assert!(a.json()["items"].as_array().unwrap().len() >= CONFIGMAPS);
                listed += 1;
            }
            429 => {
                assert_too_many_requests(&a);
                refused_lists += 1;
            }
            other => panic!("a LIST got {other}: {}", a.json()),
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
            other => panic!("a create got {other}: {}", a.json()),
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
        assert_eq!(a.status, 200, "{}", a.json());
        let a = send(
            &loader,
            "POST",
            LIST,
            Some(&configmap(&format!("after-{i}"), 2048)),
        )
        .await;
        assert_eq!(a.status, 201, "{}", a.json());
    }
    let a = send(&loader, "GET", LIST, None).await;
    assert_eq!(
        a.json()["items"].as_array().unwrap().len(),
        // ... and the namespace's kube-root-ca.crt.
        CONFIGMAPS + created + 20 + 1
    );
}
