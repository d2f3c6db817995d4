//! The garbage collector over the whole server, as kube-controller-manager's collects:
//! dependents of a deleted owner go in the background; `Orphan` keeps them and takes
//! their references away first; `Foreground` keeps the owner until its blocking
//! dependents are gone; references to an owner that is gone (or another of its name)
//! get their object collected; core/v1 ReplicationControllers orphan by default.

use apiary_core::controllers::enabled::Enabled;
use apiary_core::harness::{Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};

const CMS: &str = "/api/v1/namespaces/default/configmaps";

fn server(disabled: &[&str]) -> Harness<MemoryStore> {
    let config = Config { controllers: Enabled::without(disabled).unwrap(), ..Config::default() };
    Harness::new(config, MemoryStore::new())
}

fn send(h: &Harness<MemoryStore>, method: &str, path: &str, content_type: &str, body: Option<&Value>) -> Reply {
    h.json_call(method, path, content_type, body)
}

fn get(h: &Harness<MemoryStore>, name: &str) -> Option<Value> {
    let r = send(h, "GET", &format!("{CMS}/{name}"), "application/json", None);
    (r.status == 200).then(|| r.json())
}

/// A ConfigMap owned by `owners` (each a ConfigMap: name and uid, blocking or not).
fn create(h: &Harness<MemoryStore>, name: &str, owners: &[(&str, &str, bool)], finalizers: &[&str]) -> String {
    let refs: Vec<Value> = owners
        .iter()
        .map(|(n, uid, block)| json!({"apiVersion": "v1", "kind": "ConfigMap", "name": n, "uid": uid, "blockOwnerDeletion": block}))
        .collect();
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": name, "ownerReferences": refs, "finalizers": finalizers}});
    let created = send(h, "POST", CMS, "application/json", Some(&cm));
    assert_eq!(created.status, 201, "{}", created.json());
    created.json()["metadata"]["uid"].as_str().unwrap().to_owned()
}

/// owner ← child ← grandchild, each reference blocking.
fn chain(h: &Harness<MemoryStore>, grandchild_finalizers: &[&str]) {
    let owner = create(h, "owner", &[], &[]);
    let child = create(h, "child", &[("owner", &owner, true)], &[]);
    create(h, "grandchild", &[("child", &child, true)], grandchild_finalizers);
}

fn delete(h: &Harness<MemoryStore>, name: &str, query: &str) -> Reply {
    send(h, "DELETE", &format!("{CMS}/{name}{query}"), "application/json", None)
}

#[test]
fn background_deletion_collects_dependents_after_their_owner() {
    let h = server(&[]);
    chain(&h, &[]);
    assert_eq!(delete(&h, "owner", "").json()["status"], "Success", "gone at once");
    assert_eq!(get(&h, "child"), None);
    assert_eq!(get(&h, "grandchild"), None);
}

#[test]
fn orphaning_takes_the_references_away_then_lets_the_owner_go() {
    let h = server(&[]);
    chain(&h, &[]);
    let marked = delete(&h, "owner", "?propagationPolicy=Orphan").json();
    assert_eq!(marked["metadata"]["finalizers"], json!(["orphan"]), "{marked}");
    assert_eq!(get(&h, "owner"), None, "the owner goes once its dependents are orphaned");
    let child = get(&h, "child").expect("the child stays");
    assert_eq!(child["metadata"].get("ownerReferences"), None);
    assert!(get(&h, "grandchild").is_some());
}

#[test]
fn foreground_deletion_keeps_the_owner_until_its_blocking_dependents_are_gone() {
    let h = server(&[]);
    chain(&h, &["example.com/hold"]);
    let body = json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground"});
    let marked = send(&h, "DELETE", &format!("{CMS}/owner"), "application/json", Some(&body)).json();
    assert_eq!(marked["metadata"]["finalizers"], json!(["foregroundDeletion"]));
    // The grandchild is held by its own finalizer: everything above it waits.
    let owner = get(&h, "owner").expect("the owner waits");
    let child = get(&h, "child").expect("the child waits");
    assert!(owner["metadata"]["deletionTimestamp"].is_string() && child["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(child["metadata"]["finalizers"], json!(["foregroundDeletion"]));
    let grandchild = get(&h, "grandchild").unwrap();
    assert!(grandchild["metadata"]["deletionTimestamp"].is_string());

    let release = json!({"metadata": {"finalizers": null}});
    send(&h, "PATCH", &format!("{CMS}/grandchild"), "application/merge-patch+json", Some(&release));
    assert_eq!((get(&h, "grandchild"), get(&h, "child"), get(&h, "owner")), (None, None, None));
}

#[test]
fn an_object_whose_owners_are_gone_is_collected_and_one_with_a_live_owner_is_not() {
    let h = server(&[]);
    let owner = create(&h, "owner", &[], &[]);
    create(&h, "orphan-of-nobody", &[("missing", "0000", false)], &[]);
    create(&h, "wrong-uid", &[("owner", "not-the-owners-uid", false)], &[]);
    create(&h, "two-owners", &[("owner", &owner, false), ("missing", "0000", false)], &[]);
    let unknown = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "unknown-kind",
        "ownerReferences": [{"apiVersion": "example.com/v1", "kind": "Gadget", "name": "g", "uid": "1"}]}});
    assert_eq!(send(&h, "POST", CMS, "application/json", Some(&unknown)).status, 201);
    assert_eq!(get(&h, "orphan-of-nobody"), None);
    assert_eq!(get(&h, "wrong-uid"), None);
    let kept = get(&h, "two-owners").expect("a live owner keeps it");
    assert_eq!(kept["metadata"]["ownerReferences"].as_array().unwrap().len(), 1, "the dangling reference is dropped");
    assert!(get(&h, "unknown-kind").is_some(), "an owner that cannot be looked up is not taken for gone");
}

#[test]
fn bad_propagation_options_get_upstreams_422() {
    let h = server(&[]);
    create(&h, "owner", &[], &[]);
    let bad = delete(&h, "owner", "?propagationPolicy=Sideways");
    assert_eq!(bad.status, 422);
    assert_eq!(
        bad.json()["message"],
        "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"Sideways\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
    );
    let both = json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Orphan", "orphanDependents": true});
    let bad = send(&h, "DELETE", &format!("{CMS}/owner"), "application/json", Some(&both));
    assert_eq!(bad.status, 422);
    assert!(bad.json()["message"].as_str().unwrap().contains("orphanDependents and deletionPropagation cannot be both set"));
    let legacy = json!({"kind": "DeleteOptions", "apiVersion": "v1", "orphanDependents": false});
    let accepted = send(&h, "DELETE", &format!("{CMS}/owner"), "application/json", Some(&legacy));
    assert_eq!(accepted.status, 200, "nothing to wait for: deleted at once");
}

#[test]
fn with_the_collector_off_orphaning_waits_for_another_collector() {
    let h = server(&["garbage-collector"]);
    chain(&h, &[]);
    delete(&h, "owner", "?propagationPolicy=Orphan");
    let owner = get(&h, "owner").expect("nothing removes the orphan finalizer");
    assert_eq!(owner["metadata"]["finalizers"], json!(["orphan"]));
    assert!(get(&h, "child").unwrap()["metadata"]["ownerReferences"].is_array());
}

/// The collector keeps nothing it cannot read again: a server restarted in the middle
/// of a cascade (here, one that went down before its collector ran, then one stopped
/// while a foreground deletion waits) finishes it from what storage holds.
#[test]
fn a_restart_in_the_middle_of_a_cascade_finishes_it() {
    let store = MemoryStore::new();
    let first = Harness::new(Config { controllers: Enabled::without(&["garbage-collector"]).unwrap(), ..Config::default() }, store.clone());
    chain(&first, &["example.com/hold"]);
    let body = json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground"});
    send(&first, "DELETE", &format!("{CMS}/owner"), "application/json", Some(&body));
    drop(first);

    let second = Harness::new(Config::default(), store.clone());
    second.reflect();
    assert!(get(&second, "owner").is_some() && get(&second, "child").is_some(), "still waiting for the held grandchild");
    assert!(get(&second, "grandchild").unwrap()["metadata"]["deletionTimestamp"].is_string());
    drop(second);

    let third = Harness::new(Config::default(), store);
    let release = json!({"metadata": {"finalizers": null}});
    send(&third, "PATCH", &format!("{CMS}/grandchild"), "application/merge-patch+json", Some(&release));
    assert_eq!((get(&third, "grandchild"), get(&third, "child"), get(&third, "owner")), (None, None, None));
}

/// The Events the collector wrote in `namespace` with reason `OwnerRefInvalidNamespace`.
fn invalid_namespace_events(h: &Harness<MemoryStore>, namespace: &str) -> Vec<Value> {
    let path = format!("/api/v1/namespaces/{namespace}/events?fieldSelector=reason%3DOwnerRefInvalidNamespace");
    send(h, "GET", &path, "application/json", None).json()["items"].as_array().cloned().unwrap_or_default()
}

/// A namespaced owner is looked up in its dependent's namespace: one that lives in
/// another namespace counts as gone, so the dependent is collected, with upstream's
/// Warning Event on it.
#[test]
fn an_owner_in_another_namespace_counts_as_gone_and_is_reported() {
    let h = server(&[]);
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}});
    assert_eq!(send(&h, "POST", "/api/v1/namespaces", "application/json", Some(&ns)).status, 201);
    let owner = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner"}});
    let made = send(&h, "POST", "/api/v1/namespaces/other/configmaps", "application/json", Some(&owner));
    let uid = made.json()["metadata"]["uid"].as_str().unwrap().to_owned();

    let dependent_uid = create(&h, "dependent", &[("owner", &uid, false)], &[]);
    assert_eq!(get(&h, "dependent"), None, "its owner is not in its namespace");
    let events = invalid_namespace_events(&h, "default");
    assert_eq!(events.len(), 1, "{events:?}");
    let event = &events[0];
    assert_eq!(event["type"], "Warning");
    assert_eq!(event["source"]["component"], "garbage-collector-controller");
    assert_eq!(event["involvedObject"], json!({"kind": "ConfigMap", "namespace": "default", "name": "dependent", "uid": dependent_uid, "apiVersion": "v1"}));
    let message = format!("ownerRef [v1/ConfigMap, namespace: default, name: owner, uid: {uid}] does not exist in namespace \"default\"");
    assert_eq!(event["message"], message);
    assert!(send(&h, "GET", "/api/v1/namespaces/other/configmaps/owner", "application/json", None).status == 200);
}

/// A cluster-scoped object cannot be owned by a namespaced one: upstream's collector
/// leaves such an object alone (its other references included) and reports it.
#[test]
fn a_cluster_scoped_object_with_a_namespaced_owner_is_left_alone_and_reported() {
    let h = server(&[]);
    let owner_uid = create(&h, "owner", &[], &[]);
    let refs = json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner_uid},
                      {"apiVersion": "v1", "kind": "Namespace", "name": "gone", "uid": "no-such-uid"}]);
    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                      "metadata": {"name": "owned", "ownerReferences": refs}, "rules": []});
    let roles = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
    assert_eq!(send(&h, "POST", roles, "application/json", Some(&role)).status, 201);
    h.reflect();
    let kept = send(&h, "GET", &format!("{roles}/owned"), "application/json", None);
    assert_eq!(kept.status, 200, "left alone");
    assert_eq!(kept.json()["metadata"]["ownerReferences"], refs, "its references untouched");
    let events = invalid_namespace_events(&h, "default");
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["involvedObject"]["kind"], "ClusterRole");
    assert_eq!(events[0]["involvedObject"].get("namespace"), None);
    let message = format!("ownerRef [v1/ConfigMap, namespace: , name: owner, uid: {owner_uid}] does not exist in namespace \"\"");
    assert_eq!(events[0]["message"], message);
}

/// Two objects that own each other, blocking: deleted in the foreground, each would
/// wait for the other. The collector unblocks the references of the one it deletes
/// second, as upstream's does, so both go.
#[test]
fn a_foreground_cycle_is_unblocked_and_both_objects_go() {
    let h = server(&[]);
    let a = create(&h, "a", &[], &[]);
    let b = create(&h, "b", &[("a", &a, true)], &[]);
    let refs = json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "b", "uid": b, "blockOwnerDeletion": true}]);
    let patch = json!({"metadata": {"ownerReferences": refs}});
    assert_eq!(send(&h, "PATCH", &format!("{CMS}/a"), "application/merge-patch+json", Some(&patch)).status, 200);
    assert!(get(&h, "a").is_some() && get(&h, "b").is_some(), "each has a live owner");

    let body = json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground"});
    assert_eq!(send(&h, "DELETE", &format!("{CMS}/a"), "application/json", Some(&body)).status, 200);
    h.reflect();
    assert_eq!((get(&h, "a"), get(&h, "b")), (None, None));
}

/// A reference to a kind not served yet is left alone (it cannot be looked up); once
/// the kind is served, the reference is looked up and the dependent of a missing
/// owner collected.
#[test]
fn an_owner_of_a_kind_served_later_is_looked_up_once_it_is() {
    let h = server(&[]);
    let refs = json!([{"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "uid": "no-such-widget"}]);
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dependent", "ownerReferences": refs}});
    assert_eq!(send(&h, "POST", CMS, "application/json", Some(&cm)).status, 201);
    h.reflect();
    assert!(get(&h, "dependent").is_some(), "a Widget cannot be looked up yet");

    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                     "metadata": {"name": "widgets.example.com"},
                     "spec": {"group": "example.com", "scope": "Namespaced",
                              "names": {"plural": "widgets", "kind": "Widget"},
                              "versions": [{"name": "v1", "served": true, "storage": true,
                                            "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}});
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    assert_eq!(send(&h, "POST", crds, "application/json", Some(&crd)).status, 201);
    h.reflect();
    assert_eq!(get(&h, "dependent"), None, "no Widget w: collected");
}
