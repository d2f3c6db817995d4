//! PATCH through the core: JSON merge patch and JSON patch applied to the stored
//! object, decoded against the schema, stored as a guaranteed update.
mod support;

use serde_json::{json, Value};
use support::Harness;

const CM: &str = "/api/v1/namespaces/default/configmaps/a";

fn setup() -> Harness {
    let h = Harness::new();
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "labels": {"x": "1"}}, "data": {"k": "v", "gone": "soon"}});
    assert_eq!(h.call("POST", "/api/v1/namespaces/default/configmaps", cm).status, 201);
    h
}

fn patch(h: &Harness, content_type: &str, body: &Value) -> support::Reply {
    h.send("PATCH", CM, &[("Content-Type", content_type)], &body.to_string())
}

#[test]
fn a_merge_patch_merges_removes_and_bumps_the_resource_version() {
    let h = setup();
    let before = h.call("GET", CM, Value::Null).json();
    let r = patch(&h, "application/merge-patch+json", &json!({"data": {"k": "w", "gone": null, "new": "n"}}));
    assert_eq!(r.status, 200, "{}", r.message());
    let after = r.json();
    assert_eq!(after["data"], json!({"k": "w", "new": "n"}));
    assert_eq!(after["metadata"]["labels"], json!({"x": "1"}));
    assert_eq!(after["metadata"]["uid"], before["metadata"]["uid"]);
    assert_ne!(after["metadata"]["resourceVersion"], before["metadata"]["resourceVersion"]);
    assert_eq!(h.call("GET", CM, Value::Null).json()["data"], json!({"k": "w", "new": "n"}));
}

#[test]
fn a_json_patch_applies_in_order_or_not_at_all() {
    let h = setup();
    let ops = json!([
        {"op": "test", "path": "/data/k", "value": "v"},
        {"op": "replace", "path": "/data/k", "value": "w"},
        {"op": "remove", "path": "/data/gone"},
        {"op": "add", "path": "/metadata/labels/y", "value": "2"}
    ]);
    let r = patch(&h, "application/json-patch+json", &ops);
    assert_eq!(r.status, 200, "{}", r.message());
    assert_eq!(r.json()["data"], json!({"k": "w"}));
    assert_eq!(r.json()["metadata"]["labels"], json!({"x": "1", "y": "2"}));
    // A failed test changes nothing: 422.
    let failing = json!([
        {"op": "replace", "path": "/data/k", "value": "z"},
        {"op": "test", "path": "/data/k", "value": "nope"}
    ]);
    let r = patch(&h, "application/json-patch+json", &failing);
    assert_eq!(r.status, 422, "{}", r.message());
    assert_eq!(r.json()["kind"], "Status");
    assert_eq!(h.call("GET", CM, Value::Null).json()["data"], json!({"k": "w"}));
}

#[test]
fn bad_patches_are_refused_with_the_right_code() {
    let h = setup();
    // Not JSON; a JSON patch that is not a list; an unknown operation.
    assert_eq!(h.send("PATCH", CM, &[("Content-Type", "application/merge-patch+json")], "{").status, 400);
    assert_eq!(patch(&h, "application/json-patch+json", &json!({"op": "add"})).status, 400);
    assert_eq!(patch(&h, "application/json-patch+json", &json!([{"op": "frob", "path": "/a"}])).status, 400);
    // A type error in the result, as a PUT body would get it.
    assert_eq!(patch(&h, "application/merge-patch+json", &json!({"data": {"k": 5}})).status, 400);
    // Renaming through a patch.
    assert_eq!(patch(&h, "application/merge-patch+json", &json!({"metadata": {"name": "b"}})).status, 400);
    // Not a patch type at all: the route refuses it before the handler, as go-restful
    // words it (recorded: error-415-patch-json).
    let r = patch(&h, "application/json", &json!({"data": {"k": "x"}}));
    assert_eq!(r.status, 415, "{}", r.message());
    assert_eq!(
        (r.json()["reason"].clone(), r.message(), r.json()["details"].clone()),
        (json!("UnsupportedMediaType"), "415: Unsupported Media Type".to_owned(), json!({}))
    );
    // Nothing to patch.
    let r = h.send("PATCH", "/api/v1/namespaces/default/configmaps/none", &[("Content-Type", "application/merge-patch+json")], "{}");
    assert_eq!(r.status, 404);
    assert_eq!(h.call("GET", CM, Value::Null).json()["data"], json!({"k": "v", "gone": "soon"}));
}

#[test]
fn a_patch_that_pins_a_stale_resource_version_conflicts() {
    let h = setup();
    let rv = h.call("GET", CM, Value::Null).json()["metadata"]["resourceVersion"].clone();
    let pinned = json!({"metadata": {"resourceVersion": rv}, "data": {"k": "1"}});
    assert_eq!(patch(&h, "application/merge-patch+json", &pinned).status, 200);
    // The same resourceVersion again is stale now.
    let r = patch(&h, "application/merge-patch+json", &pinned);
    assert_eq!(r.status, 409, "{}", r.message());
    assert_eq!(r.json()["reason"], "Conflict");
}

#[test]
fn the_status_subresource_takes_patches_of_status_only() {
    let h = Harness::new();
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "p"}});
    assert_eq!(h.call("POST", "/api/v1/namespaces", ns).status, 201);
    let r = h.send(
        "PATCH",
        "/api/v1/namespaces/p/status",
        &[("Content-Type", "application/merge-patch+json")],
        r#"{"metadata":{"labels":{"ignored":"yes"}},"status":{"phase":"Terminating"}}"#,
    );
    assert_eq!(r.status, 200, "{}", r.message());
    assert_eq!(r.json()["status"]["phase"], "Terminating");
    assert!(r.json()["metadata"]["labels"].get("ignored").is_none());
}

#[test]
fn unknown_fields_in_a_patch_follow_field_validation() {
    let h = setup();
    let unknown = json!({"data": {"k": "w"}, "bogus": 1});
    let strict = h.send(
        "PATCH",
        &format!("{CM}?fieldValidation=Strict"),
        &[("Content-Type", "application/merge-patch+json")],
        &unknown.to_string(),
    );
    assert_eq!(strict.status, 400, "{}", strict.message());
    assert!(strict.message().contains("bogus"), "{}", strict.message());
    let warn = h.send(
        "PATCH",
        &format!("{CM}?fieldValidation=Warn"),
        &[("Content-Type", "application/merge-patch+json")],
        &unknown.to_string(),
    );
    assert_eq!(warn.status, 200, "{}", warn.message());
    assert_eq!(warn.warnings.len(), 1, "{:?}", warn.warnings);
    assert!(warn.warnings[0].contains("bogus"), "{:?}", warn.warnings);
    let stored = h.call("GET", CM, Value::Null).json();
    assert!(stored.get("bogus").is_none());
    assert_eq!(stored["data"]["k"], "w");
}
