//! Metadata-only reads against the real binary: kube-rs's metadata API
//! (`get_metadata`, `list_metadata`, `metadata_watcher`, which send
//! `as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1`) and the same Accept headers by
//! hand over TLS (the answers' kinds, content types, a watch stream's events, the 406
//! for the wrong pairing).

mod kube_support;
mod raw_tls;

use apiary_conformance::harness::Apiary;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use kube_support::client;
use serde_json::json;
use std::time::Duration;

const POM: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
const POML: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

fn configmap(name: &str) -> ConfigMap {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"pom": "yes"}},
        "data": {"k": "v"}
    }))
    .unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn kube_rs_reads_and_watches_metadata_only() {
    let apiary = Apiary::start();
    let client = client(&apiary).await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    api.create(&PostParams::default(), &configmap("first")).await.expect("create");

    let meta = api.get_metadata("first").await.expect("get_metadata");
    assert_eq!(meta.metadata.name.as_deref(), Some("first"));
    assert_eq!(meta.types.as_ref().map(|t| t.kind.as_str()), Some("PartialObjectMetadata"));
    assert_eq!(meta.metadata.labels.as_ref().unwrap()["pom"], "yes");

    let listed = api
        .list_metadata(&ListParams::default().labels("pom=yes"))
        .await
        .expect("list_metadata");
    assert_eq!(listed.items.len(), 1);
    assert_eq!(listed.items[0].metadata.name.as_deref(), Some("first"));
    assert!(listed.metadata.resource_version.is_some());
    // Paged: kube-rs follows nothing itself, the continue token is there.
    api.create(&PostParams::default(), &configmap("second")).await.expect("create");
    let page = api
        .list_metadata(&ListParams::default().labels("pom=yes").limit(1))
        .await
        .expect("a page");
    assert_eq!(page.items.len(), 1);
    let token = page.metadata.continue_.clone().expect("a continue token");
    let rest = api
        .list_metadata(&ListParams::default().labels("pom=yes").limit(1).continue_token(&token))
        .await
        .expect("the next page");
    assert_eq!(rest.items[0].metadata.name.as_deref(), Some("second"));

    // The watcher lists (as PartialObjectMetadataList) then watches (as
    // PartialObjectMetadata): an add, an update and a delete after its initial list.
    #[allow(deprecated)]
    let mut events = Box::pin(kube::runtime::metadata_watcher(
        api.clone(),
        watcher::Config::default().labels("pom=yes"),
    ));
    let mut next = async || {
        tokio::time::timeout(Duration::from_secs(20), events.next())
            .await
            .expect("an event in time")
            .expect("the stream goes on")
            .expect("no watch error")
    };
    let mut initial = Vec::new();
    loop {
        match next().await {
            watcher::Event::Init => {}
            watcher::Event::InitApply(obj) => initial.push(obj.metadata.name.unwrap()),
            watcher::Event::InitDone => break,
            other => panic!("unexpected {other:?} before the initial list ends"),
        }
    }
    initial.sort();
    assert_eq!(initial, ["first", "second"]);

    api.create(&PostParams::default(), &configmap("third")).await.expect("create");
    match next().await {
        watcher::Event::Apply(obj) => {
            assert_eq!(obj.metadata.name.as_deref(), Some("third"));
            assert_eq!(obj.types.as_ref().map(|t| t.kind.as_str()), Some("PartialObjectMetadata"));
        }
        other => panic!("expected the add, got {other:?}"),
    }
    let patch = json!({"metadata": {"labels": {"changed": "true"}}});
    api.patch("third", &PatchParams::default(), &Patch::Merge(&patch)).await.expect("patch");
    match next().await {
        watcher::Event::Apply(obj) => {
            assert_eq!(obj.metadata.labels.as_ref().unwrap()["changed"], "true");
        }
        other => panic!("expected the update, got {other:?}"),
    }
    api.delete("third", &DeleteParams::default()).await.expect("delete");
    match next().await {
        watcher::Event::Delete(obj) => assert_eq!(obj.metadata.name.as_deref(), Some("third")),
        other => panic!("expected the delete, got {other:?}"),
    }
}

#[test]
fn raw_requests_with_metadata_only_accept_headers() {
    let apiary = Apiary::start();
    raw_tls::runtime().block_on(async {
        let mut raw = raw_tls::connect(&apiary).await.expect("connect");
        let body = raw_tls::configmap("raw", json!({"k": "v"}));
        let created = raw.call("POST", raw_tls::CONFIGMAPS, Some(&body)).await.expect("create");
        assert_eq!(created.status, 201);
        let rv = created.json()["metadata"]["resourceVersion"].as_str().unwrap().to_owned();

        let request = |path: &str, accept: &str| {
            format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: {accept}\r\n\r\n").into_bytes()
        };
        raw.send(&request(&format!("{}/raw", raw_tls::CONFIGMAPS), POM)).await.unwrap();
        let one = raw.read_response().await.unwrap();
        assert_eq!(one.status, 200);
        assert_eq!(one.header("content-type"), Some("application/json"));
        let text = String::from_utf8_lossy(&one.body).into_owned();
        assert!(
            text.starts_with("{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":{\"name\":\"raw\",\"namespace\":\"default\","),
            "{text}"
        );
        assert!(text.ends_with("}\n"));
        assert!(one.json().get("data").is_none());

        raw.send(&request(raw_tls::CONFIGMAPS, &format!("{POML}, application/json"))).await.unwrap();
        let list = raw.read_response().await.unwrap().json();
        assert_eq!(list["kind"], "PartialObjectMetadataList");
        assert!(list["items"].as_array().unwrap().iter().all(|i| i["kind"] == "PartialObjectMetadata"));

        raw.send(&request(raw_tls::CONFIGMAPS, POM)).await.unwrap();
        let refused = raw.read_response().await.unwrap();
        assert_eq!(refused.status, 406);
        assert_eq!(
            refused.json()["message"],
            "you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)"
        );

        // A watch from before an update: its event is metadata only.
        let update = json!({"metadata": {"labels": {"seen": "yes"}}}).to_string();
        let patch = format!(
            "PATCH {}/raw HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\nContent-Type: application/merge-patch+json\r\nContent-Length: {}\r\n\r\n{update}",
            raw_tls::CONFIGMAPS,
            update.len()
        );
        raw.send(patch.as_bytes()).await.unwrap();
        assert_eq!(raw.read_response().await.unwrap().status, 200);
        raw.send(&request(&format!("{}?watch=true&resourceVersion={rv}&timeoutSeconds=1", raw_tls::CONFIGMAPS), POM))
            .await
            .unwrap();
        let watch = raw.read_response().await.unwrap();
        assert_eq!(watch.status, 200);
        let frames: Vec<serde_json::Value> = watch
            .body
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(frames[0]["type"], "MODIFIED");
        assert_eq!(frames[0]["object"]["kind"], "PartialObjectMetadata");
        assert_eq!(frames[0]["object"]["metadata"]["labels"]["seen"], "yes");
        assert!(frames[0]["object"].get("data").is_none());
    });
}
