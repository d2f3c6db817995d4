//! Binding pods to nodes against the real binary, as a custom scheduler does: kube-rs
//! posts a Binding to `pods/{name}/binding` while watching the pod, and to the older
//! `bindings` collection; kubectl lists `bindings` among the API resources.

mod kube_support;

use apiary_conformance::harness::{ok, Apiary};
use futures::StreamExt;
use k8s_openapi::api::core::v1::{Binding, Pod};
use kube::api::{Api, PostParams, WatchEvent, WatchParams};
use kube_support::client;
use serde_json::{json, Value};
use std::time::Duration;

fn pod(name: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}
    }))
    .unwrap()
}

fn binding(pod: &str, node: &str) -> Binding {
    serde_json::from_value(json!({
        "metadata": {"name": pod, "annotations": {"scheduled-by": "test"}},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node}
    }))
    .unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn kube_rs_binds_a_pod_and_a_watch_sees_its_node() {
    let apiary = Apiary::start();
    let client = client(&apiary).await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let created = pods
        .create(&PostParams::default(), &pod("unscheduled"))
        .await
        .expect("create the pod");
    assert!(created.spec.as_ref().unwrap().node_name.is_none());
    let rv = created.metadata.resource_version.clone().unwrap();

    let watch = WatchParams::default().fields("metadata.name=unscheduled");
    let mut events = pods.watch(&watch, &rv).await.expect("watch").boxed();

    let answer: Value = pods
        .create_subresource(
            "binding",
            "unscheduled",
            &PostParams::default(),
            &binding("unscheduled", "node-a"),
        )
        .await
        .expect("bind");
    assert_eq!(
        answer,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
    );

    let event = tokio::time::timeout(Duration::from_secs(30), events.next())
        .await
        .expect("an event within 30 s")
        .expect("the watch goes on")
        .expect("no watch error");
    let bound = match event {
        WatchEvent::Modified(p) => p,
        other => panic!("expected MODIFIED, got {other:?}"),
    };
    assert_eq!(
        bound.spec.as_ref().unwrap().node_name.as_deref(),
        Some("node-a")
    );
    assert_eq!(
        bound.metadata.annotations.as_ref().unwrap()["scheduled-by"],
        "test"
    );
    let conditions = bound.status.as_ref().unwrap().conditions.as_ref().unwrap();
    let scheduled = conditions
        .iter()
        .find(|c| c.type_ == "PodScheduled")
        .unwrap();
    assert_eq!(scheduled.status, "True");

    // Bound once: a second binding conflicts.
    let err = pods
        .create_subresource::<_, Value>(
            "binding",
            "unscheduled",
            &PostParams::default(),
            &binding("unscheduled", "node-b"),
        )
        .await
        .unwrap_err();
    match err {
        kube::Error::Api(status) => {
            assert_eq!(status.code, 409);
            assert_eq!(status.reason, "Conflict");
            assert_eq!(
                status.message,
                "Operation cannot be fulfilled on pods/binding \"unscheduled\": pod unscheduled is already assigned to node \"node-a\""
            );
        }
        other => panic!("expected a Status, got {other:?}"),
    }
    let got = pods.get("unscheduled").await.expect("get");
    assert_eq!(got.spec.unwrap().node_name.as_deref(), Some("node-a"));
}

#[tokio::test(flavor = "current_thread")]
async fn the_bindings_collection_binds_the_pod_it_names() {
    let apiary = Apiary::start();
    let client = client(&apiary).await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    pods.create(&PostParams::default(), &pod("legacy"))
        .await
        .expect("create the pod");

    let post = |body: &Binding, query: &str| {
        http::Request::post(format!("/api/v1/namespaces/default/bindings{query}"))
            .header("content-type", "application/json")
            .body(serde_json::to_vec(body).unwrap())
            .unwrap()
    };
    // A dry run answers as a real one and binds nothing.
    let answer: Value = client
        .request(post(&binding("legacy", "node-c"), "?dryRun=All"))
        .await
        .expect("dry-run bind");
    assert_eq!(answer["status"], "Success");
    assert!(pods
        .get("legacy")
        .await
        .unwrap()
        .spec
        .unwrap()
        .node_name
        .is_none());

    let answer: Value = client
        .request(post(&binding("legacy", "node-c"), ""))
        .await
        .expect("bind");
    assert_eq!(answer["code"], 201);
    let got = pods.get("legacy").await.expect("get");
    assert_eq!(got.spec.unwrap().node_name.as_deref(), Some("node-c"));

    // A target that is no node is refused.
    let mut bad = binding("legacy", "");
    bad.target.kind = Some("Pod".into());
    let err = client.request::<Value>(post(&bad, "")).await.unwrap_err();
    match err {
        kube::Error::Api(status) => {
            assert_eq!(status.code, 422);
            assert_eq!(status.reason, "Invalid");
        }
        other => panic!("expected a Status, got {other:?}"),
    }
}

#[test]
fn kubectl_lists_bindings_among_the_api_resources() {
    let apiary = Apiary::start();
    let out = ok(&apiary.kubectl("1.33", &["api-resources", "--api-group=", "-o", "wide"]));
    let row = out
        .lines()
        .find(|l| l.split_whitespace().next() == Some("bindings"))
        .unwrap_or_else(|| panic!("no bindings row in:\n{out}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    // NAME APIVERSION NAMESPACED KIND VERBS (no short names, no categories).
    assert_eq!(
        cells,
        ["bindings", "v1", "true", "Binding", "create"],
        "{row}"
    );
}
