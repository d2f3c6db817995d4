//! Object lifecycle through kube-rs on the real binary, the way controllers use it: a
//! finalizer holds a deleted object (kube-rs gets it back, being deleted) until the
//! controller takes its finalizer away; a foreground delete of an owner (kube-rs's
//! `DeleteParams::foreground`) waits for its dependents, which the built-in garbage
//! collector deletes; a new namespace has its `default` ServiceAccount.

mod kube_support;

use apiary_conformance::harness::Apiary;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, ServiceAccount};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use kube_support::client;
use serde_json::json;
use std::time::Duration;

fn configmap(value: serde_json::Value) -> ConfigMap {
    serde_json::from_value(value).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finalizers_foreground_deletion_and_namespace_defaults_through_kube_rs() {
    let apiary = Apiary::start();
    let client = client(&apiary).await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "kube-rs-life"}})).unwrap();
    namespaces.create(&PostParams::default(), &ns).await.expect("namespace");
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), "kube-rs-life");
    let default = await_condition(accounts, "default", |sa: Option<&ServiceAccount>| sa.is_some());
    tokio::time::timeout(Duration::from_secs(10), default).await.expect("the default ServiceAccount appears").expect("watch");

    // A finalizer holds the object; kube-rs sees it come back from the delete.
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "kube-rs-life");
    let held = configmap(json!({"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}));
    api.create(&PostParams::default(), &held).await.expect("create");
    let deleted = api.delete("held", &DeleteParams::default()).await.expect("delete");
    let marked = deleted.left().expect("the object comes back: it is being deleted");
    assert!(marked.metadata.deletion_timestamp.is_some());
    let release = json!({"metadata": {"finalizers": null}});
    api.patch("held", &PatchParams::default(), &Patch::Merge(&release)).await.expect("release");
    let gone = await_condition(api.clone(), "held", conditions::is_deleted(marked.metadata.uid.as_deref().unwrap()));
    tokio::time::timeout(Duration::from_secs(10), gone).await.expect("gone with its last finalizer").expect("watch");

    // Foreground: the owner waits for its dependent, which the collector deletes.
    let owner = api.create(&PostParams::default(), &configmap(json!({"metadata": {"name": "owner"}}))).await.expect("owner");
    let uid = owner.metadata.uid.clone().unwrap();
    let dependent = configmap(json!({"metadata": {"name": "dependent", "ownerReferences": [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": uid, "blockOwnerDeletion": true}]}}));
    api.create(&PostParams::default(), &dependent).await.expect("dependent");
    let answer = api.delete("owner", &DeleteParams::foreground()).await.expect("delete");
    let waiting = answer.left().expect("the owner waits");
    assert_eq!(waiting.metadata.finalizers, Some(vec!["foregroundDeletion".to_owned()]));
    for name in ["dependent", "owner"] {
        let gone = await_condition(api.clone(), name, |cm: Option<&ConfigMap>| cm.is_none());
        tokio::time::timeout(Duration::from_secs(10), gone).await.expect("collected").expect("watch");
    }
}
