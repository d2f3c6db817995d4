//! The field manager on the cases upstream documents for server-side apply.

use super::*;
use serde_json::json;

const NOW: &str = "2026-11-22T10:00:00Z";
const LATER: &str = "2026-11-22T10:05:00Z";

fn deployments() -> FieldManager<'static> {
    FieldManager::new("apps", "v1", "Deployment", "", true)
}

fn configmaps() -> FieldManager<'static> {
    FieldManager::new("", "v1", "ConfigMap", "", false)
}

pub(super) fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

pub(super) fn entries(object: &Map<String, Value>) -> Vec<Value> {
    object["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn deployment(replicas: i64, image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": image}]}
            }
        }
    })
}

#[test]
fn fields_v1_round_trips_and_orders_members_before_children() {
    let fields = json!({
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
        "f:spec": {"f:template": {"f:spec": {"f:containers": {
            "k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {}}
        }}}, "f:finalizers": {"v:\"a\"": {}}}
    });
    let set = FieldSet::from_fields_v1(&fields).unwrap();
    assert_eq!(set.to_fields_v1(), fields);
    let paths: Vec<String> = set.paths().iter().map(|p| p.to_string()).collect();
    assert!(
        paths.contains(&".spec.template.spec.containers[name=\"web\"].image".to_string()),
        "{paths:?}"
    );
    assert!(
        paths.contains(&".spec.finalizers[=\"a\"]".to_string()),
        "{paths:?}"
    );
    assert!(
        FieldSet::from_fields_v1(&json!({"x:bad": {}})).is_ok(),
        "unknown kinds are skipped"
    );
    assert!(FieldSet::from_fields_v1(&json!({"k:notjson": {}})).is_err());
    assert!(FieldSet::from_fields_v1(&json!([1])).is_err());
}

#[test]
fn a_create_records_an_update_entry_of_what_it_set() {
    let mut created = obj(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "labels": {"a": "1"}}, "data": {"k": "v"}}));
    configmaps().record_update(None, &mut created, "kubectl-create", NOW);
    assert_eq!(
        entries(&created),
        vec![json!({
            "manager": "kubectl-create", "operation": "Update", "apiVersion": "v1",
            "time": NOW, "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {".": {}, "f:k": {}}, "f:metadata": {"f:labels": {".": {}, "f:a": {}}}}
        })]
    );
}

#[test]
fn an_update_takes_the_fields_it_changes_from_other_managers() {
    let m = configmaps();
    let mut v1 = obj(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}}),
    );
    m.record_update(None, &mut v1, "first", NOW);
    let mut v2 = v1.clone();
    v2["data"]["b"] = json!("3");
    m.record_update(Some(&v1), &mut v2, "second", LATER);
    let e = entries(&v2);
    assert_eq!(e.len(), 2, "{e:?}");
    let first = e.iter().find(|x| x["manager"] == "first").unwrap();
    let second = e.iter().find(|x| x["manager"] == "second").unwrap();
    assert_eq!(first["fieldsV1"], json!({"f:data": {".": {}, "f:a": {}}}));
    assert_eq!(second["fieldsV1"], json!({"f:data": {"f:b": {}}}));
    assert_eq!(second["time"], LATER);
    // An update that changes nothing records nothing new.
    let mut v3 = v2.clone();
    m.record_update(Some(&v2), &mut v3, "third", LATER);
    assert_eq!(entries(&v3).len(), 2);
    // `managedFields: []` clears them.
    let mut v4 = v3.clone();
    v4["metadata"]["managedFields"] = json!([]);
    m.record_update(Some(&v3), &mut v4, "fourth", LATER);
    assert!(v4["metadata"].get("managedFields").is_none(), "{v4:?}");
}

#[test]
fn apply_conflicts_with_a_field_another_manager_set_and_force_takes_it() {
    let m = deployments();
    let mut created = obj(deployment(1, "nginx:1"));
    m.record_update(None, &mut created, "kubectl-create", NOW);
    let live = Value::Object(created);

    let err = m
        .apply(
            Some(&live),
            &deployment(2, "nginx:1"),
            "kubectl",
            false,
            LATER,
        )
        .unwrap_err();
    assert_eq!(err.code, 409);
    assert_eq!(err.reason, "Conflict");
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"kubectl-create\" using apps/v1: .spec.replicas"
    );
    let causes = &err.details.as_ref().unwrap().causes;
    assert_eq!(causes.len(), 1);
    assert_eq!(causes[0].kind, "FieldManagerConflict");
    assert_eq!(causes[0].field, ".spec.replicas");
    assert_eq!(
        causes[0].message,
        "conflict with \"kubectl-create\" using apps/v1"
    );

    // The same values are no conflict: both own them.
    let shared = m
        .apply(
            Some(&live),
            &deployment(1, "nginx:1"),
            "kubectl",
            false,
            LATER,
        )
        .unwrap();
    let e = entries(&shared);
    assert_eq!(e.len(), 2);
    assert!(
        e[0]["operation"] == "Apply"
            && e[0]["manager"] == "kubectl"
            && e[0]["apiVersion"] == "apps/v1"
    );

    // Two conflicting fields, listed by manager.
    let err = m
        .apply(
            Some(&live),
            &deployment(3, "nginx:2"),
            "kubectl",
            false,
            LATER,
        )
        .unwrap_err();
    assert_eq!(
        err.message,
        "Apply failed with 2 conflicts: conflicts with \"kubectl-create\" using apps/v1:\n- .spec.replicas\n- .spec.template.spec.containers[name=\"web\"].image"
    );

    let forced = m
        .apply(
            Some(&live),
            &deployment(3, "nginx:2"),
            "kubectl",
            true,
            LATER,
        )
        .unwrap();
    assert_eq!(forced["spec"]["replicas"], 3);
    let create_entry = entries(&forced)
        .into_iter()
        .find(|e| e["manager"] == "kubectl-create")
        .unwrap();
    let owned = FieldSet::from_fields_v1(&create_entry["fieldsV1"]).unwrap();
    let spec =
        |p: &[&str]| -> Vec<PathElement> { p.iter().map(|s| PathElement::field(s)).collect() };
    assert!(!owned.has(&spec(&["spec", "replicas"])), "forced away");
    assert!(
        owned.has(&spec(&["spec", "selector"])),
        "untouched fields stay"
    );
}

#[test]
fn fields_a_manager_stops_applying_go_unless_someone_else_owns_them() {
    let m = configmaps();
    let config = |data: Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": data});
    let first = m
        .apply(
            None,
            &config(json!({"a": "1", "b": "2", "c": "3"})),
            "alice",
            false,
            NOW,
        )
        .unwrap();
    // Bob applies c with the same value: shared.
    let shared = m
        .apply(
            Some(&Value::Object(first)),
            &config(json!({"c": "3"})),
            "bob",
            false,
            NOW,
        )
        .unwrap();
    let next = m
        .apply(
            Some(&Value::Object(shared)),
            &config(json!({"a": "1"})),
            "alice",
            false,
            LATER,
        )
        .unwrap();
    assert_eq!(
        next["data"],
        json!({"a": "1", "c": "3"}),
        "b removed, c kept for bob"
    );
}

#[test]
fn associative_lists_merge_by_key_and_keep_other_managers_items() {
    let m = deployments();
    let with = |containers: Value| {
        let mut d = deployment(1, "x");
        d["spec"]["template"]["spec"]["containers"] = containers;
        d
    };
    let a = m
        .apply(
            None,
            &with(json!([{"name": "a", "image": "a:1"}])),
            "alice",
            false,
            NOW,
        )
        .unwrap();
    let ab = m
        .apply(
            Some(&Value::Object(a)),
            &with(json!([{"name": "b", "image": "b:1"}])),
            "bob",
            true,
            NOW,
        )
        .unwrap();
    let names: Vec<&str> = ab["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b"]);
    // Alice applies no containers of her own any more... but the list is Bob's too.
    let mut none = with(json!([]));
    none["spec"]["template"]["spec"]
        .as_object_mut()
        .unwrap()
        .remove("containers");
    let b = m
        .apply(Some(&Value::Object(ab)), &none, "alice", false, LATER)
        .unwrap();
    let left: Vec<&str> = b["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(left, ["b"]);
}

#[test]
fn list_order_follows_the_configuration_where_they_share_items() {
    let node = SchemaNode::of_kind("apps", "v1", "Deployment").unwrap();
    let list = |names: &[&str]| {
        let containers: Vec<Value> = names.iter().map(|n| json!({"name": n})).collect();
        json!({"spec": {"template": {"spec": {"containers": containers}}}})
    };
    let merged = merge::merge(&list(&["a", "b", "c"]), &list(&["c", "a"]), &node).unwrap();
    assert_eq!(merged, list(&["b", "c", "a"]));
    let merged = merge::merge(&list(&["a", "b"]), &list(&["a", "n", "b"]), &node).unwrap();
    assert_eq!(merged, list(&["a", "n", "b"]));
}

#[test]
fn sets_merge_as_unions() {
    let m = configmaps();
    let config = |f: Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "finalizers": f}});
    let one = m
        .apply(None, &config(json!(["x/a"])), "alice", false, NOW)
        .unwrap();
    let both = m
        .apply(
            Some(&Value::Object(one)),
            &config(json!(["x/b"])),
            "bob",
            false,
            NOW,
        )
        .unwrap();
    assert_eq!(both["metadata"]["finalizers"], json!(["x/a", "x/b"]));
}

#[test]
fn bad_applies_are_refused_with_upstreams_errors() {
    let m = deployments();
    let mut dup = deployment(1, "x");
    dup["spec"]["template"]["spec"]["containers"] = json!([{"name": "a"}, {"name": "a"}]);
    // Duplicates in a configuration are an error upstream at merge time, passed on
    // as a plain error (500, no reason).
    let err = m.apply(None, &dup, "k", false, NOW).unwrap_err();
    assert_eq!((err.code, err.reason), (500, ""), "{err:?}");
    assert!(
        err.message
            .contains("duplicate entries for key [name=\"a\"]"),
        "{}",
        err.message
    );

    let mut keyless = deployment(1, "x");
    keyless["spec"]["template"]["spec"]["containers"] = json!([{"image": "a"}]);
    let err = m.apply(None, &keyless, "k", false, NOW).unwrap_err();
    assert_eq!(
        err.message,
        "failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.template.spec.containers: element 0: associative list with keys has an element that omits key field \"name\" (and doesn't have default value)"
    );

    let mut managed = deployment(1, "x");
    managed["metadata"]["managedFields"] = json!([]);
    assert_eq!(
        m.apply(None, &managed, "k", false, NOW)
            .unwrap_err()
            .message,
        "metadata.managedFields must be nil"
    );

    let mut wrong = deployment(1, "x");
    wrong["apiVersion"] = json!("apps/v1beta1");
    assert_eq!(
        m.apply(None, &wrong, "k", false, NOW).unwrap_err().message,
        "invalid object type: apps/v1beta1, Kind=Deployment"
    );
}

#[test]
fn status_is_not_owned_through_the_main_resource() {
    let m = deployments();
    let mut d = deployment(1, "x");
    d["status"] = json!({"replicas": 1});
    let applied = m.apply(None, &d, "k", false, NOW).unwrap();
    let fields = &entries(&applied)[0]["fieldsV1"];
    assert!(fields.get("f:status").is_none(), "{fields}");
    assert!(fields["f:spec"].get("f:replicas").is_some(), "{fields}");
}

#[test]
fn the_manager_defaults_to_the_user_agents_first_part() {
    assert_eq!(
        manager_from_user_agent("kubectl/v1.33.0 (linux/amd64) kubernetes/abc"),
        "kubectl"
    );
    assert_eq!(manager_from_user_agent("kube-rs"), "kube-rs");
    assert_eq!(manager_from_user_agent(&"x".repeat(300)).len(), 128);
}

#[test]
fn past_ten_update_managers_the_oldest_merge_into_ancient_changes() {
    let m = configmaps();
    let mut object = obj(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {}}),
    );
    for i in 0..12 {
        let before = object.clone();
        object["data"][format!("k{i}")] = json!("v");
        let now = format!("2026-11-22T10:00:{i:02}Z");
        m.record_update(Some(&before), &mut object, &format!("writer-{i}"), &now);
    }
    let e = entries(&object);
    let names: Vec<&str> = e.iter().map(|x| x["manager"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 10, "{names:?}");
    // writer-0 became the bucket, writer-1 and writer-2 joined it (12 - 10 + 1 merged).
    assert_eq!(names[0], "ancient-changes", "{names:?}");
    assert!(
        !names.contains(&"writer-0") && !names.contains(&"writer-2"),
        "{names:?}"
    );
    assert!(
        names.contains(&"writer-3") && names.contains(&"writer-11"),
        "{names:?}"
    );
    let bucket = FieldSet::from_fields_v1(&e[0]["fieldsV1"]).unwrap();
    for k in ["k0", "k1", "k2"] {
        assert!(
            bucket.has(&[PathElement::field("data"), PathElement::field(k)]),
            "{k}"
        );
    }
    assert_eq!(e[0]["time"], "2026-11-22T10:00:02Z");
}
