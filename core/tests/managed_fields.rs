//! Managed fields across managers and kinds of write: a strategic merge patch or a
//! JSON merge patch on an object with managed fields leaves them consistent (the
//! patcher's Update entry takes what it changed, the others keep the rest), and
//! kubectl's server-side applies upgrade from client-side apply as upstream's
//! lastAppliedManager and lastAppliedUpdater do.
mod support;

use serde_json::{json, Value};
use support::{managers, Harness};

const DEPLOYS: &str = "/apis/apps/v1/namespaces/default/deployments";
const DEPLOY: &str = "/apis/apps/v1/namespaces/default/deployments/web";
const CMS: &str = "/api/v1/namespaces/default/configmaps";
const CM: &str = "/api/v1/namespaces/default/configmaps/a";
const APPLY: &str = "application/apply-patch+yaml";
const SMP: &str = "application/strategic-merge-patch+json";
const MERGE: &str = "application/merge-patch+json";
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

fn entry<'a>(object: &'a Value, manager: &str) -> Option<&'a Value> {
    object["metadata"]["managedFields"]
        .as_array()?
        .iter()
        .find(|e| e["manager"] == manager)
}

fn fields<'a>(object: &'a Value, manager: &str) -> &'a Value {
    &entry(object, manager).unwrap_or_else(|| panic!("no entry of {manager}: {object:#}"))
        ["fieldsV1"]
}


fn send(h: &Harness, method: &str, uri: &str, content_type: &str, body: &str) -> Value {
    let r = h.send(method, uri, &[("Content-Type", content_type)], body);
    assert!(
        r.status == 200 || r.status == 201,
        "{method} {uri}: {} {}",
        r.status,
        r.message()
    );
    r.json()
}

/// A Deployment created by a, then applied by b (forced: b takes the replicas and
/// the image from a, and adds a label).
fn created_by_a_applied_by_b(h: &Harness) -> Value {
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1"}]}
            }
        }
    });
    let created = send(
        h,
        "POST",
        &format!("{DEPLOYS}?fieldManager=a"),
        "application/json",
        &deployment.to_string(),
    );
    assert_eq!(managers(&created), ["a/Update"]);
    let config = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    tier: web
spec:
  replicas: 3
  template:
    spec:
      containers:
      - name: web
        image: nginx:2
";
    let applied = send(
        h,
        "PATCH",
        &format!("{DEPLOY}?fieldManager=b&force=true"),
        APPLY,
        config,
    );
    assert_eq!(managers(&applied), ["b/Apply", "a/Update"]);
    assert_eq!(applied["spec"]["replicas"], 3);
    assert_eq!(
        fields(&applied, "b"),
        &json!({
            "f:metadata": {"f:labels": {"f:tier": {}}},
            "f:spec": {
                "f:replicas": {},
                "f:template": {"f:spec": {"f:containers": {
                    "k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {}}
                }}}
            }
        })
    );
    // a lost what b forced away from it.
    let a = fields(&applied, "a");
    assert!(a["f:spec"].get("f:replicas").is_none(), "{a:#}");
    assert!(
        a["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"web\"}"]
            .get("f:image")
            .is_none(),
        "{a:#}"
    );
    applied
}

#[test]
fn a_strategic_merge_patch_takes_only_the_field_it_changed() {
    let h = Harness::new();
    let applied = created_by_a_applied_by_b(&h);
    h.clock.set(h.clock.get() + 60);

    let patched = send(
        &h,
        "PATCH",
        &format!("{DEPLOY}?fieldManager=c"),
        SMP,
        r#"{"spec":{"replicas":5}}"#,
    );
    assert_eq!(patched["spec"]["replicas"], 5);
    assert_eq!(managers(&patched), ["b/Apply", "a/Update", "c/Update"]);
    // b lost the replicas, and only them.
    assert_eq!(
        fields(&patched, "b"),
        &json!({
            "f:metadata": {"f:labels": {"f:tier": {}}},
            "f:spec": {
                "f:template": {"f:spec": {"f:containers": {
                    "k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {}}
                }}}
            }
        })
    );
    // c's Update entry holds them, at the time of the patch.
    let c = entry(&patched, "c").unwrap();
    assert_eq!(c["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
    assert_eq!(c["apiVersion"], "apps/v1");
    assert_ne!(c["time"], entry(&applied, "b").unwrap()["time"]);
    // a's and b's entries are otherwise as they were.
    assert_eq!(entry(&patched, "a"), entry(&applied, "a"));
    assert_eq!(
        entry(&patched, "b").unwrap()["time"],
        entry(&applied, "b").unwrap()["time"]
    );
    // And that is what is stored.
    let stored = h.call("GET", DEPLOY, Value::Null).json();
    assert_eq!(
        stored["metadata"]["managedFields"],
        patched["metadata"]["managedFields"]
    );
}

#[test]
fn a_strategic_merge_patch_of_a_container_takes_only_its_image() {
    let h = Harness::new();
    let applied = created_by_a_applied_by_b(&h);
    let patched = send(
        &h,
        "PATCH",
        &format!("{DEPLOY}?fieldManager=c"),
        SMP,
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:3"}]}}}}"#,
    );
    assert_eq!(
        patched["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:3"
    );
    // The container item stays b's (and a's); its image is c's now.
    assert_eq!(
        fields(&patched, "b")["f:spec"]["f:template"]["f:spec"]["f:containers"],
        json!({"k:{\"name\":\"web\"}": {".": {}, "f:name": {}}})
    );
    assert_eq!(
        fields(&patched, "c"),
        &json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
            "k:{\"name\":\"web\"}": {"f:image": {}}
        }}}}})
    );
    assert_eq!(entry(&patched, "a"), entry(&applied, "a"));
}

#[test]
fn a_json_merge_patch_takes_only_the_field_it_changed() {
    let h = Harness::new();
    let applied = created_by_a_applied_by_b(&h);
    let patched = send(
        &h,
        "PATCH",
        &format!("{DEPLOY}?fieldManager=c"),
        MERGE,
        r#"{"metadata":{"labels":{"tier":"api"}}}"#,
    );
    assert_eq!(
        patched["metadata"]["labels"],
        json!({"app": "web", "tier": "api"})
    );
    assert_eq!(managers(&patched), ["b/Apply", "a/Update", "c/Update"]);
    assert!(
        fields(&patched, "b")["f:metadata"]
            .get("f:labels")
            .is_none(),
        "{patched:#}"
    );
    assert_eq!(fields(&patched, "b")["f:spec"]["f:replicas"], json!({}));
    assert_eq!(
        fields(&patched, "c"),
        &json!({"f:metadata": {"f:labels": {"f:tier": {}}}})
    );
    assert_eq!(entry(&patched, "a"), entry(&applied, "a"));
}

#[test]
fn a_patch_that_changes_nothing_records_nothing() {
    let h = Harness::new();
    let applied = created_by_a_applied_by_b(&h);
    let patched = send(
        &h,
        "PATCH",
        &format!("{DEPLOY}?fieldManager=c"),
        SMP,
        r#"{"spec":{"replicas":3}}"#,
    );
    assert_eq!(
        patched["metadata"]["managedFields"],
        applied["metadata"]["managedFields"]
    );
    assert_eq!(
        patched["metadata"]["resourceVersion"],
        applied["metadata"]["resourceVersion"]
    );
}

/// A ConfigMap as client-side `kubectl apply` leaves it: created by
/// kubectl-client-side-apply with its configuration in the annotation, then `x`
/// changed by another manager (so the annotation no longer holds for `x`).
/// Apply `config` to the ConfigMap as `manager`.
fn apply_as(h: &Harness, manager: &str, config: &str) -> support::Reply {
    h.send("PATCH", &format!("{CM}?fieldManager={manager}"), &[("Content-Type", APPLY)], config)
}

fn client_side_applied(h: &Harness) -> Value {
    let last = r#"{"apiVersion":"v1","data":{"k":"v","x":"1"},"kind":"ConfigMap","metadata":{"annotations":{},"name":"a","namespace":"default"}}"#;
    let cm = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "a", "annotations": {LAST_APPLIED: format!("{last}\n")}},
        "data": {"k": "v", "x": "1"}
    });
    send(
        h,
        "POST",
        &format!("{CMS}?fieldManager=kubectl-client-side-apply"),
        "application/json",
        &cm.to_string(),
    );
    send(
        h,
        "PATCH",
        &format!("{CM}?fieldManager=edit"),
        MERGE,
        r#"{"data":{"x":"2"}}"#,
    )
}

#[test]
fn kubectl_applies_over_client_side_apply_without_conflicts_on_what_it_applied() {
    let h = Harness::new();
    client_side_applied(&h);
    let config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: default\ndata:\n  k: w\n  x: '2'\n";

    // Another manager than kubectl conflicts, as ever.
    let r = apply_as(&h, "tool", config);
    assert_eq!(r.status, 409, "{}", r.message());
    assert_eq!(
        r.message(),
        "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using v1: .data.k"
    );

    // kubectl: .data.k is in the last applied configuration with the live value, so
    // its conflict is no conflict. kubectl takes the field over.
    let r = apply_as(&h, "kubectl", config);
    assert_eq!(r.status, 200, "{}", r.message());
    let applied = r.json();
    assert_eq!(applied["data"], json!({"k": "w", "x": "2"}));
    assert_eq!(
        fields(&applied, "kubectl"),
        &json!({"f:data": {"f:k": {}, "f:x": {}}})
    );
    assert!(fields(&applied, "kubectl-client-side-apply")["f:data"]
        .get("f:k")
        .is_none());
    // And the annotation now holds what kubectl applied, as Go encodes it.
    assert_eq!(
        applied["metadata"]["annotations"][LAST_APPLIED],
        "{\"apiVersion\":\"v1\",\"data\":{\"k\":\"w\",\"x\":\"2\"},\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\",\"namespace\":\"default\"}}\n"
    );
}

#[test]
fn kubectl_still_conflicts_where_the_object_left_its_last_applied_configuration() {
    let h = Harness::new();
    client_side_applied(&h);
    // x is 2 now, set by edit: the annotation's x: 1 does not explain a conflict on it.
    let config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: w\n  x: '3'\n";
    let r = apply_as(&h, "kubectl", config);
    assert_eq!(r.status, 409, "{}", r.message());
    assert_eq!(
        r.message(),
        "Apply failed with 1 conflict: conflict with \"edit\" using v1: .data.x"
    );
    let stored = h.call("GET", CM, Value::Null).json();
    assert_eq!(stored["data"], json!({"k": "v", "x": "2"}));

    // A dry run (kubectl diff --server-side) of an allowed change answers the merged
    // object, annotation included, and stores nothing.
    let config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: w\n";
    let r = h.send(
        "PATCH",
        &format!("{CM}?fieldManager=kubectl&dryRun=All"),
        &[("Content-Type", APPLY)],
        config,
    );
    assert_eq!(r.status, 200, "{}", r.message());
    assert_eq!(r.json()["data"], json!({"k": "w", "x": "2"}));
    assert!(r.json()["metadata"]["annotations"][LAST_APPLIED]
        .as_str()
        .unwrap()
        .contains("\"k\":\"w\""));
    assert_eq!(h.call("GET", CM, Value::Null).json(), stored);
}

#[test]
fn an_apply_through_status_keeps_its_managed_fields() {
    let h = Harness::new();
    created_by_a_applied_by_b(&h);
    let config = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"status":{"replicas":1}}"#;
    let applied = send(&h, "PATCH", &format!("{DEPLOY}/status?fieldManager=ctl"), APPLY, config);
    assert_eq!(applied["status"]["replicas"], 1);
    let ctl = entry(&applied, "ctl").unwrap_or_else(|| panic!("no entry of ctl: {applied:#}"));
    assert_eq!(ctl["subresource"], "status");
    assert_eq!(ctl["fieldsV1"], json!({"f:status": {"f:replicas": {}}}));
    assert_eq!(managers(&applied), ["b/Apply", "ctl/Apply", "a/Update"]);
}
