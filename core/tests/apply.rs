//! Server-side apply and managed fields through the core: apply creates and updates,
//! records Apply and Update entries, conflicts with other managers, honours force,
//! dryRun and the apply options.
mod support;

use serde_json::{json, Value};
use support::{managers, Harness};

const CMS: &str = "/api/v1/namespaces/default/configmaps";
const CM: &str = "/api/v1/namespaces/default/configmaps/a";
const YAML: &str = "application/apply-patch+yaml";

fn apply(h: &Harness, query: &str, body: &str) -> support::Reply {
    h.send(
        "PATCH",
        &format!("{CM}?{query}"),
        &[("Content-Type", YAML)],
        body,
    )
}


const CONFIG: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n";

#[test]
fn apply_creates_then_updates_and_records_its_fields() {
    let h = Harness::new();
    let r = apply(&h, "fieldManager=tool", CONFIG);
    assert_eq!(r.status, 201, "{}", r.message());
    let created = r.json();
    assert_eq!(created["data"], json!({"k": "v"}));
    assert_eq!(managers(&created), ["tool/Apply"]);
    let entry = &created["metadata"]["managedFields"][0];
    assert_eq!(entry["apiVersion"], "v1");
    assert_eq!(entry["fieldsType"], "FieldsV1");
    assert_eq!(entry["fieldsV1"], json!({"f:data": {"f:k": {}}}));
    assert!(created["metadata"]["uid"].is_string());

    let r = apply(
        &h,
        "fieldManager=tool",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: w\n  n: '1'\n",
    );
    assert_eq!(r.status, 200, "{}", r.message());
    assert_eq!(r.json()["data"], json!({"k": "w", "n": "1"}));
    assert_eq!(r.json()["metadata"]["uid"], created["metadata"]["uid"]);
    // The same configuration again changes nothing: same resourceVersion.
    let rv = r.json()["metadata"]["resourceVersion"].clone();
    let again = apply(
        &h,
        "fieldManager=tool",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: w\n  n: '1'\n",
    );
    assert_eq!(again.json()["metadata"]["resourceVersion"], rv);
}

#[test]
fn writes_record_update_entries_and_apply_conflicts_with_them() {
    let h = Harness::new();
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}});
    let r = h.send(
        "POST",
        &format!("{CMS}?fieldManager=creator"),
        &[("Content-Type", "application/json")],
        &cm.to_string(),
    );
    assert_eq!(r.status, 201, "{}", r.message());
    assert_eq!(managers(&r.json()), ["creator/Update"]);

    let conflict = apply(
        &h,
        "fieldManager=tool",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: other\n",
    );
    assert_eq!(conflict.status, 409);
    let status = conflict.json();
    assert_eq!(status["reason"], "Conflict");
    assert_eq!(
        status["message"],
        "Apply failed with 1 conflict: conflict with \"creator\" using v1: .data.k"
    );
    assert_eq!(
        status["details"]["causes"][0],
        json!({"reason": "FieldManagerConflict", "message": "conflict with \"creator\" using v1", "field": ".data.k"})
    );
    assert_eq!(
        h.call("GET", CM, Value::Null).json()["data"],
        json!({"k": "v"}),
        "nothing written"
    );

    let forced = apply(
        &h,
        "fieldManager=tool&force=true",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: other\n",
    );
    assert_eq!(forced.status, 200, "{}", forced.message());
    assert_eq!(forced.json()["data"], json!({"k": "other"}));
    // The creator lost .data.k; it still owns the map it added.
    let forced = forced.json();
    assert_eq!(managers(&forced), ["tool/Apply", "creator/Update"]);
    assert_eq!(
        forced["metadata"]["managedFields"][1]["fieldsV1"],
        json!({"f:data": {}})
    );

    // A merge patch by someone else takes the field back, recorded as an Update.
    let r = h.send(
        "PATCH",
        &format!("{CM}?fieldManager=patcher"),
        &[("Content-Type", "application/merge-patch+json")],
        r#"{"data":{"k":"patched"}}"#,
    );
    assert_eq!(r.status, 200, "{}", r.message());
    // The applier lost its only field, so its entry is gone.
    assert_eq!(managers(&r.json()), ["creator/Update", "patcher/Update"]);
}

#[test]
fn the_user_agent_names_the_manager_when_the_request_does_not() {
    let h = Harness::new();
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}});
    let r = h.send(
        "POST",
        CMS,
        &[
            ("Content-Type", "application/json"),
            ("User-Agent", "my-controller/v2 (linux)"),
        ],
        &cm.to_string(),
    );
    assert_eq!(managers(&r.json()), ["my-controller/Update"]);
}

#[test]
fn bad_applies_are_refused() {
    let h = Harness::new();
    // No fieldManager.
    let r = apply(&h, "", CONFIG);
    assert_eq!(r.status, 422);
    assert_eq!(r.message(), "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch");
    // The wrong kind, or no apiVersion.
    let r = apply(
        &h,
        "fieldManager=t",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: a\n",
    );
    assert_eq!(
        (r.status, r.message().as_str()),
        (400, "invalid object type: /v1, Kind=Secret")
    );
    let r = apply(
        &h,
        "fieldManager=t",
        "kind: ConfigMap\nmetadata:\n  name: a\n",
    );
    assert_eq!(
        (r.status, r.message().as_str()),
        (400, "invalid object type: /, Kind=ConfigMap")
    );
    // Not YAML, another name, managed fields in the configuration.
    assert_eq!(apply(&h, "fieldManager=t", "a: [").status, 400);
    let r = apply(
        &h,
        "fieldManager=t",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
    );
    assert_eq!(r.status, 400, "{}", r.message());
    let r = apply(
        &h,
        "fieldManager=t",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  managedFields: []\n",
    );
    assert_eq!(
        (r.status, r.message().as_str()),
        (400, "metadata.managedFields must be nil")
    );
    // A fieldManager too long.
    let long = "m".repeat(129);
    let r = apply(&h, &format!("fieldManager={long}"), CONFIG);
    assert_eq!(r.status, 422, "{}", r.message());
    // Strict field validation reports an unknown field.
    let r = apply(
        &h,
        "fieldManager=t&fieldValidation=Strict",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\nbogus: 1\n",
    );
    assert_eq!(r.status, 400, "{}", r.message());
    assert!(
        r.message().contains("unknown field \"bogus\""),
        "{}",
        r.message()
    );
    // Nothing was created by any of these.
    assert_eq!(h.call("GET", CM, Value::Null).status, 404);
}

#[test]
fn a_dry_run_apply_answers_without_storing() {
    let h = Harness::new();
    let r = apply(&h, "fieldManager=t&dryRun=All", CONFIG);
    assert_eq!(r.status, 201, "{}", r.message());
    assert_eq!(r.json()["data"], json!({"k": "v"}));
    assert_eq!(h.call("GET", CM, Value::Null).status, 404);
}
