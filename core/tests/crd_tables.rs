//! Custom resources' Tables and field selectors over the whole server: the printer
//! columns a CRD declares (compared with a real kube-apiserver's recorded Tables), and
//! its selectable fields in lists, watches and deletecollection.

use apiary_core::harness::{parse_responses, Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};
use std::time::Duration;

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";
const JSON: &str = "application/json";

fn send(h: &Harness<MemoryStore>, method: &str, path: &str, accept: &str, body: Option<&Value>) -> Reply {
    let body = body.map(Value::to_string).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: apiary\r\nAccept: {accept}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    parse_responses(&h.send(request.as_bytes())).unwrap().remove(0)
}

fn created(h: &Harness<MemoryStore>, path: &str, body: Value) {
    let reply = send(h, "POST", path, JSON, Some(&body));
    assert_eq!(reply.status, 201, "{}", String::from_utf8_lossy(&reply.body));
}

/// A CRD of `refb.example.com` for `plural`, whose one version declares `version`'s
/// fields (columns, selectable fields, a schema: by default one that keeps whatever
/// its objects hold).
fn crd(plural: &str, kind: &str, scope: &str, version: Value) -> Value {
    let mut v1 = json!({"name": "v1", "served": true, "storage": true,
        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}});
    v1.as_object_mut().unwrap().extend(version.as_object().cloned().unwrap_or_default());
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": format!("{plural}.refb.example.com")},
           "spec": {"group": "refb.example.com", "scope": scope,
                    "names": {"plural": plural, "kind": kind}, "versions": [v1]}})
}

fn recorded(file: &str) -> Value {
    let path = format!("{}/tests/fixtures/upstream_tables/{file}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A harness whose clock shows the time the recorded Tables were taken
/// (2026-11-24T06:08:36Z), so that ages read the same.
fn at_recording() -> Harness<MemoryStore> {
    let h = Harness::new(Config::default(), MemoryStore::new());
    h.advance(Duration::from_secs(1_795_500_516 - 1_795_000_000));
    h
}

/// Post the recorded objects of `file` under `collection` and compare the Tables of
/// the list and of one object with upstream's.
fn compare_with_recording(h: &Harness<MemoryStore>, file: &str, collection: &str) {
    let recording = recorded(file);
    for obj in recording["objects"].as_array().unwrap() {
        let mut obj = obj.clone();
        obj["metadata"] = json!({"name": obj["metadata"]["name"], "labels": obj["metadata"]["labels"]});
        created(h, collection, obj);
    }
    let table = send(h, "GET", &format!("{collection}?includeObject=None"), TABLE, None).json();
    let want = &recording["table"];
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["columnDefinitions"], want["columnDefinitions"], "{file}");
    assert_eq!(table["rows"], want["rows"], "{file}");

    let single = &recording["table_single_object"];
    let name = single["rows"][0]["cells"][0].as_str().unwrap();
    let one = send(h, "GET", &format!("{collection}/{name}?includeObject=Object"), TABLE, None).json();
    assert_eq!(one["columnDefinitions"], single["columnDefinitions"]);
    assert_eq!(one["rows"][0]["cells"], single["rows"][0]["cells"]);
    assert_eq!(one["rows"][0]["object"]["spec"], single["rows"][0]["object"]["spec"]);
}

#[test]
fn declared_columns_match_a_recorded_kube_apiserver() {
    let h = at_recording();
    let recording = recorded("customresource_refb.example.com_v1_refbwidgets.json");
    let columns = recording["crd_additionalPrinterColumns"].clone();
    created(&h, CRDS, crd("refbwidgets", "RefbWidget", "Namespaced", json!({"additionalPrinterColumns": columns})));
    created(&h, "/api/v1/namespaces", json!({"metadata": {"name": "refb-tables"}}));
    compare_with_recording(
        &h,
        "customresource_refb.example.com_v1_refbwidgets.json",
        "/apis/refb.example.com/v1/namespaces/refb-tables/refbwidgets",
    );
}

#[test]
fn without_declared_columns_a_table_has_name_and_age() {
    let h = at_recording();
    created(&h, CRDS, crd("refbgadgets", "RefbGadget", "Cluster", json!({})));
    compare_with_recording(&h, "customresource_refb.example.com_v1_refbgadgets.json", "/apis/refb.example.com/v1/refbgadgets");
}

const GIZMOS: &str = "/apis/refb.example.com/v1/namespaces/default/gizmos";

fn gizmos() -> Value {
    crd(
        "gizmos",
        "Gizmo",
        "Namespaced",
        json!({
            "additionalPrinterColumns": [
                {"name": "Color", "type": "string", "jsonPath": ".spec.color"},
                {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
                {"name": "Size", "type": "integer", "jsonPath": ".spec.size", "priority": 1},
                {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
            ],
            "selectableFields": [{"jsonPath": ".spec.color"}, {"jsonPath": ".spec.size"}, {"jsonPath": ".spec.shiny"}],
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {
                    "color": {"type": "string"}, "size": {"type": "integer"}, "shiny": {"type": "boolean"}}},
                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
        }),
    )
}

fn gizmo(name: &str, color: &str, size: i64, shiny: bool) -> Value {
    json!({"apiVersion": "refb.example.com/v1", "kind": "Gizmo", "metadata": {"name": name},
           "spec": {"color": color, "size": size, "shiny": shiny},
           "status": {"conditions": [{"type": "Scheduled", "status": "True"}, {"type": "Ready", "status": color == "red"}]}})
}

fn names(list: &Value) -> Vec<&str> {
    list["items"].as_array().unwrap().iter().map(|i| i["metadata"]["name"].as_str().unwrap()).collect()
}

#[test]
fn tables_show_declared_columns_with_their_priorities() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    created(&h, CRDS, gizmos());
    created(&h, GIZMOS, gizmo("g1", "red", 3, true));
    h.advance(Duration::from_secs(90));
    let table = send(&h, "GET", GIZMOS, TABLE, None).json();
    let columns: Vec<(&str, &str, i64)> = table["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["type"].as_str().unwrap(), c["priority"].as_i64().unwrap()))
        .collect();
    assert_eq!(
        columns,
        [("Name", "string", 0), ("Color", "string", 0), ("Ready", "string", 0), ("Size", "integer", 1), ("Age", "date", 0)]
    );
    // A boolean in a string column prints as Go prints it.
    assert_eq!(table["rows"][0]["cells"], json!(["g1", "red", "true", 3, "90s"]));
    assert_eq!(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");
}

#[test]
fn field_selectors_read_the_declared_fields() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    created(&h, CRDS, gizmos());
    let start = send(&h, "GET", GIZMOS, JSON, None).json()["metadata"]["resourceVersion"].clone();
    created(&h, GIZMOS, gizmo("g1", "red", 3, true));
    created(&h, GIZMOS, gizmo("g2", "blue", 3, false));
    created(&h, GIZMOS, gizmo("g3", "red", 5, false));
    let list = |selector: &str| send(&h, "GET", &format!("{GIZMOS}?fieldSelector={selector}"), JSON, None);

    assert_eq!(names(&list("spec.color=red").json()), ["g1", "g3"]);
    assert_eq!(names(&list("spec.color!=red").json()), ["g2"]);
    assert_eq!(names(&list("spec.size=3,spec.color=red").json()), ["g1"]);
    assert_eq!(names(&list("spec.shiny=false").json()), ["g2", "g3"]);
    assert_eq!(names(&list("metadata.name=g2").json()), ["g2"]);
    assert_eq!(names(&list("metadata.namespace=default,spec.color==blue").json()), ["g2"]);

    let undeclared = list("spec.weight=1");
    assert_eq!(undeclared.status, 400);
    let status = undeclared.json();
    assert_eq!(status["reason"], "BadRequest");
    assert_eq!(status["message"], "field label not supported: spec.weight");

    let table = send(&h, "GET", &format!("{GIZMOS}?fieldSelector=spec.color=blue"), TABLE, None).json();
    assert_eq!(table["rows"].as_array().unwrap().len(), 1);

    let start = start.as_str().unwrap();
    let watch = send(&h, "GET", &format!("{GIZMOS}?watch=true&resourceVersion={start}&fieldSelector=spec.color=red"), JSON, None);
    let frames: Vec<Value> =
        watch.body.split(|b| *b == b'\n').filter(|l| !l.is_empty()).map(|l| serde_json::from_slice(l).unwrap()).collect();
    let watched: Vec<&str> = frames.iter().map(|f| f["object"]["metadata"]["name"].as_str().unwrap()).collect();
    assert_eq!(watched, ["g1", "g3"]);

    let deleted = send(&h, "DELETE", &format!("{GIZMOS}?fieldSelector=spec.color=red"), JSON, None);
    assert_eq!(deleted.status, 200, "{}", String::from_utf8_lossy(&deleted.body));
    assert_eq!(names(&send(&h, "GET", GIZMOS, JSON, None).json()), ["g2"]);
}

#[test]
fn a_cluster_scoped_custom_resource_has_no_namespace_to_select() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    let knobs = json!({
        "selectableFields": [{"jsonPath": ".spec.turn"}],
        "schema": {"openAPIV3Schema": {"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"turn": {"type": "integer"}}}}}},
    });
    created(&h, CRDS, crd("knobs", "Knob", "Cluster", knobs));
    created(&h, "/apis/refb.example.com/v1/knobs", json!({"apiVersion": "refb.example.com/v1", "kind": "Knob",
                                                          "metadata": {"name": "k1"}, "spec": {"turn": 7}}));
    let list = |selector: &str| send(&h, "GET", &format!("/apis/refb.example.com/v1/knobs?fieldSelector={selector}"), JSON, None);
    assert_eq!(names(&list("spec.turn=7").json()), ["k1"]);
    assert_eq!(names(&list("spec.turn=8").json()), Vec::<&str>::new());
    let namespace = list("metadata.namespace=default");
    assert_eq!(namespace.status, 400);
    assert_eq!(namespace.json()["message"], "field label not supported: metadata.namespace");
}
