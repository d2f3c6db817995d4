//! Server-side apply of custom resources over the whole server, by their CRD's schema:
//! created (201) and updated (200) with managed fields per manager, list maps merged
//! by key and sets as unions across managers, atomic lists replaced, conflicts as
//! upstream words them (409), `force` taking fields over, dryRun writing nothing; and
//! strategic merge patch refused (415) as upstream refuses it for custom resources.

use apiary_core::harness::{single_reply, Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const WIDGETS: &str = "/apis/example.com/v1/namespaces/default/widgets";
const W1: &str = "/apis/example.com/v1/namespaces/default/widgets/w1";
const APPLY: &str = "application/apply-patch+yaml";

fn send(h: &Harness<MemoryStore>, method: &str, path: &str, content_type: &str, body: &str) -> Reply {
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: apiary\r\nAccept: application/json\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    single_reply(&h.send(request.as_bytes()))
}

fn text(reply: &Reply) -> String {
    String::from_utf8_lossy(&reply.body).into_owned()
}

/// A server serving `widgets.example.com`, whose spec has a list map (`ports`, keyed
/// by `port`), a set (`tags`) and an unmarked, so atomic, list (`args`).
fn serving_widgets() -> Harness<MemoryStore> {
    let h = Harness::new(Config::default(), MemoryStore::new());
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                     "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                         "spec": {"type": "object", "properties": {
                             "ports": {"type": "array", "x-kubernetes-list-type": "map",
                                       "x-kubernetes-list-map-keys": ["port"],
                                       "items": {"type": "object", "required": ["port"], "properties": {
                                           "port": {"type": "integer"}, "name": {"type": "string"}}}},
                             "tags": {"type": "array", "x-kubernetes-list-type": "set",
                                      "items": {"type": "string"}},
                             "args": {"type": "array", "items": {"type": "string"}}}}}}}}]}});
    let r = send(&h, "POST", CRDS, "application/json", &crd.to_string());
    assert_eq!(r.status, 201, "{}", text(&r));
    h
}

fn apply(h: &Harness<MemoryStore>, query: &str, spec: Value) -> Reply {
    let config = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": spec});
    send(h, "PATCH", &format!("{W1}?{query}"), APPLY, &config.to_string())
}

fn get(h: &Harness<MemoryStore>) -> Value {
    let r = send(h, "GET", W1, "application/json", "");
    assert_eq!(r.status, 200, "{}", text(&r));
    r.json()
}

/// `manager/operation` of each managed fields entry, in order.
fn managers(object: &Value) -> Vec<String> {
    object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| format!("{}/{}", e["manager"].as_str().unwrap(), e["operation"].as_str().unwrap()))
        .collect()
}

fn fields_of(object: &Value, manager: &str) -> Value {
    object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["manager"] == manager)
        .map(|e| e["fieldsV1"].clone())
        .unwrap_or(Value::Null)
}

#[test]
fn apply_creates_and_updates_merging_a_list_map_by_key_across_managers() {
    let h = serving_widgets();
    let r = apply(&h, "fieldManager=alice", json!({"ports": [{"port": 80, "name": "http"}], "tags": ["a"]}));
    assert_eq!(r.status, 201, "{}", text(&r));
    let created = r.json();
    assert_eq!(managers(&created), ["alice/Apply"]);
    assert_eq!(
        fields_of(&created, "alice"),
        json!({"f:spec": {"f:ports": {"k:{\"port\":80}": {".": {}, "f:name": {}, "f:port": {}}},
                          "f:tags": {"v:\"a\"": {}}}})
    );
    assert_eq!(created["metadata"]["managedFields"][0]["apiVersion"], "example.com/v1");

    let r = apply(&h, "fieldManager=bob", json!({"ports": [{"port": 443, "name": "https"}], "tags": ["b"]}));
    assert_eq!(r.status, 200, "{}", text(&r));
    let merged = get(&h);
    assert_eq!(merged["spec"]["ports"], json!([{"port": 80, "name": "http"}, {"port": 443, "name": "https"}]));
    assert_eq!(merged["spec"]["tags"], json!(["a", "b"]));
    assert_eq!(managers(&merged), ["alice/Apply", "bob/Apply"]);
    assert_eq!(merged["metadata"]["uid"], created["metadata"]["uid"]);

    // Bob stops applying his port: it goes, alice's stays.
    let r = apply(&h, "fieldManager=bob", json!({"tags": ["b"]}));
    assert_eq!(r.status, 200, "{}", text(&r));
    assert_eq!(get(&h)["spec"]["ports"], json!([{"port": 80, "name": "http"}]));
}

#[test]
fn conflicts_name_the_fields_and_force_takes_them() {
    let h = serving_widgets();
    assert_eq!(apply(&h, "fieldManager=alice", json!({"ports": [{"port": 80, "name": "http"}], "args": ["--a"]})).status, 201);

    let r = apply(&h, "fieldManager=bob", json!({"ports": [{"port": 80, "name": "web"}]}));
    assert_eq!(r.status, 409, "{}", text(&r));
    let status = r.json();
    assert_eq!(status["reason"], "Conflict");
    assert_eq!(status["message"], "Apply failed with 1 conflict: conflict with \"alice\": .spec.ports[port=80].name");
    assert_eq!(
        status["details"]["causes"],
        json!([{"reason": "FieldManagerConflict", "message": "conflict with \"alice\"", "field": ".spec.ports[port=80].name"}])
    );
    assert_eq!(get(&h)["spec"]["ports"][0]["name"], "http", "nothing was written");

    // An atomic list is one field: any change to it conflicts, and is replaced whole.
    let r = apply(&h, "fieldManager=bob", json!({"ports": [{"port": 80, "name": "web"}], "args": ["--b"]}));
    assert_eq!(
        r.json()["message"],
        "Apply failed with 2 conflicts: conflicts with \"alice\":\n- .spec.args\n- .spec.ports[port=80].name"
    );
    let r = apply(&h, "fieldManager=bob&force=true", json!({"ports": [{"port": 80, "name": "web"}], "args": ["--b"]}));
    assert_eq!(r.status, 200, "{}", text(&r));
    let forced = get(&h);
    assert_eq!(forced["spec"]["ports"], json!([{"port": 80, "name": "web"}]));
    assert_eq!(forced["spec"]["args"], json!(["--b"]));
    assert_eq!(fields_of(&forced, "alice"), json!({"f:spec": {"f:ports": {"k:{\"port\":80}": {".": {}, "f:port": {}}}}}));
    assert_eq!(
        fields_of(&forced, "bob"),
        json!({"f:spec": {"f:args": {}, "f:ports": {"k:{\"port\":80}": {".": {}, "f:name": {}, "f:port": {}}}}})
    );
}

#[test]
fn a_dry_run_apply_answers_without_storing() {
    let h = serving_widgets();
    let r = apply(&h, "fieldManager=alice&dryRun=All", json!({"tags": ["a"]}));
    assert_eq!(r.status, 201, "{}", text(&r));
    assert_eq!(r.json()["spec"]["tags"], json!(["a"]));
    assert_eq!(send(&h, "GET", W1, "application/json", "").status, 404);

    assert_eq!(apply(&h, "fieldManager=alice", json!({"tags": ["a"]})).status, 201);
    let r = apply(&h, "fieldManager=bob&dryRun=All", json!({"tags": ["b"]}));
    assert_eq!(r.status, 200, "{}", text(&r));
    assert_eq!(r.json()["spec"]["tags"], json!(["a", "b"]));
    let stored = get(&h);
    assert_eq!(stored["spec"]["tags"], json!(["a"]));
    assert_eq!(managers(&stored), ["alice/Apply"]);
}

#[test]
fn updates_record_their_fields_beside_appliers() {
    let h = serving_widgets();
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"tags": ["a"]}});
    let r = send(&h, "POST", &format!("{WIDGETS}?fieldManager=creator"), "application/json", &widget.to_string());
    assert_eq!(r.status, 201, "{}", text(&r));
    // A custom resource is plain JSON: the spec that appeared is itself a field.
    assert_eq!(
        fields_of(&r.json(), "creator"),
        json!({"f:spec": {".": {}, "f:tags": {".": {}, "v:\"a\"": {}}}})
    );
    let r = apply(&h, "fieldManager=alice", json!({"tags": ["b"]}));
    assert_eq!(r.status, 200, "{}", text(&r));
    assert_eq!(get(&h)["spec"]["tags"], json!(["a", "b"]));
    assert_eq!(managers(&get(&h)), ["alice/Apply", "creator/Update"]);
}

#[test]
fn an_item_without_its_key_is_refused_as_upstream_refuses_it() {
    let h = serving_widgets();
    let r = apply(&h, "fieldManager=alice", json!({"ports": [{"name": "http"}]}));
    assert_eq!(r.status, 500, "{}", text(&r));
    assert_eq!(r.json()["reason"], Value::Null);
    assert_eq!(
        r.json()["message"],
        "failed to create typed patch object (/w1; example.com/v1, Kind=Widget): .spec.ports: element 0: associative list with keys has an element that omits key field \"port\" (and doesn't have default value)"
    );
    assert_eq!(send(&h, "GET", W1, "application/json", "").status, 404);
}

#[test]
fn strategic_merge_patch_and_other_types_are_refused_naming_what_is_taken() {
    let h = serving_widgets();
    assert_eq!(apply(&h, "fieldManager=alice", json!({"tags": ["a"]})).status, 201);
    for content_type in ["application/strategic-merge-patch+json", "application/json"] {
        let r = send(&h, "PATCH", W1, content_type, r#"{"spec":{"tags":["b"]}}"#);
        assert_eq!(r.status, 415, "{content_type}");
        assert_eq!(r.json()["reason"], "UnsupportedMediaType");
        assert_eq!(
            r.json()["message"],
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
        );
    }
    assert_eq!(get(&h)["spec"]["tags"], json!(["a"]));
}

#[test]
fn status_is_applied_through_its_subresource_only() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                     "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                         "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
                         "status": {"type": "object", "properties": {
                             "conditions": {"type": "array", "x-kubernetes-list-type": "map",
                                            "x-kubernetes-list-map-keys": ["type"],
                                            "items": {"type": "object", "required": ["type"], "properties": {
                                                "type": {"type": "string"}, "status": {"type": "string"}}}}}}}}}}]}});
    assert_eq!(send(&h, "POST", CRDS, "application/json", &crd.to_string()).status, 201);
    let widget = |spec: Value, status: Value| {
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": spec, "status": status})
            .to_string()
    };
    let r = send(&h, "PATCH", &format!("{W1}?fieldManager=user"), APPLY, &widget(json!({"size": 1}), json!({"conditions": [{"type": "A", "status": "True"}]})));
    assert_eq!(r.status, 201, "{}", text(&r));
    assert_eq!(r.json().get("status"), None, "the main resource does not write status");

    let path = format!("{W1}/status?fieldManager=ctl-a");
    let r = send(&h, "PATCH", &path, APPLY, &widget(json!({"size": 9}), json!({"conditions": [{"type": "A", "status": "True"}]})));
    assert_eq!(r.status, 200, "{}", text(&r));
    let path = format!("{W1}/status?fieldManager=ctl-b");
    let r = send(&h, "PATCH", &path, APPLY, &widget(json!({}), json!({"conditions": [{"type": "B", "status": "False"}]})));
    assert_eq!(r.status, 200, "{}", text(&r));
    let stored = get(&h);
    assert_eq!(stored["spec"], json!({"size": 1}), "the status subresource does not write spec");
    assert_eq!(
        stored["status"]["conditions"],
        json!([{"type": "A", "status": "True"}, {"type": "B", "status": "False"}]),
        "conditions merged by type"
    );
    let entry = stored["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "ctl-b")
        .cloned()
        .unwrap_or_else(|| panic!("{:#}", stored["metadata"]["managedFields"]));
    assert_eq!(entry["subresource"], "status");
    assert_eq!(
        entry["fieldsV1"],
        json!({"f:status": {"f:conditions": {"k:{\"type\":\"B\"}": {".": {}, "f:status": {}, "f:type": {}}}}})
    );
}
