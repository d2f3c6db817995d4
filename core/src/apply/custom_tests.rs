//! The field manager over a custom resource's own schema: lists and maps merge as the
//! schema's `x-kubernetes-*` extensions say, and what the schema leaves open merges as
//! plain JSON.

use super::tests::{entries, obj};
use super::*;
use serde_json::json;

const NOW: &str = "2026-11-22T10:00:00Z";

fn schema() -> Value {
    crate::schema::example_custom_schema()
}

/// The field manager of widgets, by `schema`.
fn widgets(schema: &Value) -> FieldManager<'_> {
    let node = SchemaNode::custom_root(schema);
    FieldManager::with_schema(node, "example.com", "v1", "Widget", "", false)
}

fn widget(spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget",
           "metadata": {"name": "w", "namespace": "default"}, "spec": spec})
}

fn apply(
    manager: &FieldManager<'_>,
    live: Option<&Map<String, Value>>,
    spec: Value,
    who: &str,
    force: bool,
) -> Result<Map<String, Value>, ApiError> {
    let live = live.map(|l| Value::Object(l.clone()));
    manager.apply(live.as_ref(), &widget(spec), who, force, NOW)
}

fn fields_of(object: &Map<String, Value>, manager: &str) -> Value {
    entries(object)
        .into_iter()
        .find(|e| e["manager"] == manager)
        .map(|e| e["fieldsV1"].clone())
        .unwrap_or(Value::Null)
}

#[test]
fn a_list_map_merges_by_its_keys_across_managers() {
    let schema = schema();
    let m = widgets(&schema);
    let one = apply(
        &m,
        None,
        json!({"ports": [{"port": 80, "name": "http"}]}),
        "alice",
        false,
    )
    .unwrap();
    // The key left out takes its schema default in the item's name.
    assert_eq!(
        fields_of(&one, "alice"),
        json!({"f:spec": {"f:ports": {"k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}, "f:name": {}, "f:port": {}}}}})
    );
    let both = apply(
        &m,
        Some(&one),
        json!({"ports": [{"port": 443, "name": "https"}]}),
        "bob",
        false,
    )
    .unwrap();
    assert_eq!(
        both["spec"]["ports"],
        json!([{"port": 80, "name": "http"}, {"port": 443, "name": "https"}])
    );

    // Renaming alice's item is a conflict named by the item's keys.
    let err = apply(
        &m,
        Some(&both),
        json!({"ports": [{"port": 80, "name": "web"}]}),
        "bob",
        false,
    )
    .unwrap_err();
    assert_eq!(err.code, 409);
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"alice\": .spec.ports[port=80,protocol=\"TCP\"].name"
    );
    // Forced, bob takes the field; alice keeps the item's keys.
    let forced = apply(
        &m,
        Some(&both),
        json!({"ports": [{"port": 80, "name": "web"}]}),
        "bob",
        true,
    )
    .unwrap();
    assert_eq!(forced["spec"]["ports"][0]["name"], "web");
    assert_eq!(
        fields_of(&forced, "alice"),
        json!({"f:spec": {"f:ports": {"k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}, "f:port": {}}}}})
    );
    // Bob no longer applying 443 removes it; the item alice shares stays.
    let dropped = apply(
        &m,
        Some(&forced),
        json!({"ports": [{"port": 80, "name": "web"}]}),
        "bob",
        false,
    )
    .unwrap();
    assert_eq!(
        dropped["spec"]["ports"],
        json!([{"port": 80, "name": "web"}])
    );
}

#[test]
fn sets_merge_and_atomic_lists_and_maps_are_replaced_whole() {
    let schema = schema();
    let m = widgets(&schema);
    let spec = json!({"tags": ["a"], "args": ["--x"], "selector": {"app": "w", "tier": "web"}});
    let one = apply(&m, None, spec, "alice", false).unwrap();
    assert_eq!(
        fields_of(&one, "alice"),
        json!({"f:spec": {"f:args": {}, "f:selector": {}, "f:tags": {"v:\"a\"": {}}}})
    );
    let two = apply(&m, Some(&one), json!({"tags": ["b"]}), "bob", false).unwrap();
    assert_eq!(two["spec"]["tags"], json!(["a", "b"]));

    // Another manager's list or map is one field: changing any of it conflicts.
    let err = apply(
        &m,
        Some(&two),
        json!({"args": ["--y"], "selector": {"app": "w"}}),
        "bob",
        false,
    )
    .unwrap_err();
    assert!(
        err.message
            .starts_with("Apply failed with 2 conflicts: conflicts with \"alice\":"),
        "{}",
        err.message
    );
    assert!(
        err.message.contains("- .spec.args\n- .spec.selector"),
        "{}",
        err.message
    );
    let forced = apply(
        &m,
        Some(&two),
        json!({"args": ["--y"], "selector": {"app": "w"}}),
        "bob",
        true,
    )
    .unwrap();
    assert_eq!(
        forced["spec"]["args"],
        json!(["--y"]),
        "replaced, not merged"
    );
    assert_eq!(
        forced["spec"]["selector"],
        json!({"app": "w"}),
        "replaced, not merged"
    );
}

#[test]
fn what_the_schema_leaves_open_merges_as_plain_json() {
    let schema = schema();
    let m = widgets(&schema);
    let one = apply(
        &m,
        None,
        json!({"extra": {"a": {"x": 1}, "list": [1]}}),
        "alice",
        false,
    )
    .unwrap();
    let two = apply(
        &m,
        Some(&one),
        json!({"extra": {"a": {"y": 2}, "list": [2]}}),
        "bob",
        true,
    )
    .unwrap();
    assert_eq!(
        two["spec"]["extra"],
        json!({"a": {"x": 1, "y": 2}, "list": [2]})
    );
    assert_eq!(
        fields_of(&two, "bob"),
        // Keys the schema does not declare are fields of their own, `a` too.
        json!({"f:spec": {"f:extra": {"f:a": {".": {}, "f:y": {}}, "f:list": {}}}})
    );
}

#[test]
fn updates_own_the_objects_they_add_and_labels_merge_as_object_meta() {
    let schema = schema();
    let m = widgets(&schema);
    let mut created = obj(widget(json!({"tags": ["a"]})));
    created["metadata"]["labels"] = json!({"app": "w"});
    m.record_update(None, &mut created, "creator", NOW);
    // Plain JSON objects: a custom object that appears is itself a field.
    assert_eq!(
        fields_of(&created, "creator"),
        json!({"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
               "f:spec": {".": {}, "f:tags": {".": {}, "v:\"a\"": {}}}})
    );
    let mut config = widget(json!({}));
    config["metadata"]["labels"] = json!({"team": "a"});
    let applied = m
        .apply(
            Some(&Value::Object(created)),
            &config,
            "labeler",
            false,
            NOW,
        )
        .unwrap();
    assert_eq!(
        applied["metadata"]["labels"],
        json!({"app": "w", "team": "a"})
    );
}

#[test]
fn an_item_without_its_keys_is_refused_as_upstream_refuses_it() {
    let schema = schema();
    let m = widgets(&schema);
    let err = apply(
        &m,
        None,
        json!({"ports": [{"name": "http"}]}),
        "alice",
        false,
    )
    .unwrap_err();
    assert_eq!((err.code, err.reason), (500, ""));
    assert_eq!(
        err.message,
        "failed to create typed patch object (default/w; example.com/v1, Kind=Widget): .spec.ports: element 0: associative list with keys has an element that omits key field \"port\" (and doesn't have default value)"
    );
}
