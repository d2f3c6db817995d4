//! A two-version CRD converted by its webhook, over the whole server: objects are
//! stored in the storage version and served in the one asked for, on every verb and on
//! watches; a webhook that fails or answers wrongly gets upstream's error, and nothing
//! is written.

use apiary_core::effect::{CallError, Outbound};
use apiary_core::harness::{conversion_answer, rename_spec_field, Harness, Reply};
use apiary_core::storage::{StorageOp, StorageOutput};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const V1: &str = "/apis/example.com/v1/namespaces/default/widgets";
const V2: &str = "/apis/example.com/v2/namespaces/default/widgets";

fn send(h: &Harness<MemoryStore>, method: &str, path: &str, content_type: &str, body: Option<&Value>) -> Reply {
    h.json_call(method, path, content_type, body)
}

fn json_send(h: &Harness<MemoryStore>, method: &str, path: &str, body: Option<&Value>) -> Reply {
    send(h, method, path, "application/json", body)
}

/// Widgets call their colour `spec.colour` in v1 and `spec.color` in v2 (stored).
fn crd() -> Value {
    let schema = |field: &str| json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {field: {"type": "string"}}}}}});
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "kind": "Widget"},
                    "conversion": {"strategy": "Webhook", "webhook": {
                        "conversionReviewVersions": ["v1"],
                        "clientConfig": {"url": "https://converter.example:9443/convert"}}},
                    "versions": [
                        {"name": "v1", "served": true, "storage": false, "schema": schema("colour")},
                        {"name": "v2", "served": true, "storage": true, "schema": schema("color")}]}})
}

/// The webhook: renames the colour field each way, as a real converter would.
fn convert(review: &Value) -> Value {
    conversion_answer(review, |object, desired| {
        let (from, to) = if desired.ends_with("/v2") { ("colour", "color") } else { ("color", "colour") };
        rename_spec_field(object, from, to);
    })
}

/// How the webhook behaves now.
#[derive(Clone, Copy, PartialEq)]
enum Webhook {
    Converts,
    Down,
    KeepsTheVersion,
}

struct Server {
    h: Harness<MemoryStore>,
    calls: Rc<Cell<usize>>,
    webhook: Rc<Cell<Webhook>>,
    asked: Rc<RefCell<Vec<Value>>>,
}

fn server() -> Server {
    let h = Harness::new(Config::default(), MemoryStore::new());
    let (calls, webhook, asked) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(Webhook::Converts)), Rc::new(RefCell::new(Vec::new())));
    let (count, mode, log) = (calls.clone(), webhook.clone(), asked.clone());
    h.answer_calls(move |call: &Outbound| {
        assert_eq!(call.request.uri(), "https://converter.example:9443/convert");
        count.set(count.get() + 1);
        let review: Value = serde_json::from_slice(call.request.body()).unwrap();
        log.borrow_mut().push(review.clone());
        let answer = match mode.get() {
            Webhook::Down => return Err(CallError::Unreachable("dial tcp: connection refused".into())),
            Webhook::Converts => convert(&review),
            Webhook::KeepsTheVersion => {
                let mut answer = convert(&review);
                for o in answer["response"]["convertedObjects"].as_array_mut().unwrap() {
                    o["apiVersion"] = json!("example.com/v3");
                }
                answer
            }
        };
        Ok(http::Response::builder().status(200).body(bytes::Bytes::from(answer.to_string())).unwrap())
    });
    assert_eq!(json_send(&h, "POST", CRDS, Some(&crd())).status, 201);
    Server { h, calls, webhook, asked }
}

fn stored(h: &Harness<MemoryStore>, name: &str) -> Option<Value> {
    let key = format!("/registry/example.com/widgets/default/{name}");
    match h.store.apply(StorageOp::Get { key }) {
        Ok(StorageOutput::Got { kv, .. }) => kv.map(|kv| serde_json::from_slice(&kv.value).unwrap()),
        other => panic!("a get answers: {other:?}"),
    }
}

fn widget(colour: &str) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"colour": colour}})
}

#[test]
fn objects_are_stored_in_the_storage_version_and_served_in_the_one_asked_for() {
    let s = server();
    let created = json_send(&s.h, "POST", V1, Some(&widget("red")));
    assert_eq!(created.status, 201, "{}", created.json());
    assert_eq!(created.json()["apiVersion"], "example.com/v1");
    assert_eq!(created.json()["spec"], json!({"colour": "red"}));
    let kept = stored(&s.h, "w1").expect("stored");
    assert_eq!((kept["apiVersion"].clone(), kept["spec"].clone()), (json!("example.com/v2"), json!({"color": "red"})));
    let review = s.asked.borrow()[0].clone();
    assert_eq!(review["apiVersion"], "apiextensions.k8s.io/v1");
    assert_eq!(review["request"]["desiredAPIVersion"], "example.com/v2");

    // The storage version needs no call.
    let before = s.calls.get();
    let v2 = json_send(&s.h, "GET", &format!("{V2}/w1"), None).json();
    assert_eq!((v2["apiVersion"].clone(), v2["spec"].clone()), (json!("example.com/v2"), json!({"color": "red"})));
    assert_eq!(s.calls.get(), before);

    let v1 = json_send(&s.h, "GET", &format!("{V1}/w1"), None).json();
    assert_eq!((v1["apiVersion"].clone(), v1["spec"].clone()), (json!("example.com/v1"), json!({"colour": "red"})));
    let list = json_send(&s.h, "GET", V1, None).json();
    assert_eq!(list["items"][0]["spec"], json!({"colour": "red"}));
    assert_eq!(list["items"][0]["apiVersion"], "example.com/v1");

    // A patch is applied in the version it is written for.
    let patched = send(&s.h, "PATCH", &format!("{V1}/w1"), "application/merge-patch+json", Some(&json!({"spec": {"colour": "blue"}})));
    assert_eq!(patched.status, 200, "{}", patched.json());
    assert_eq!(patched.json()["spec"], json!({"colour": "blue"}));
    assert_eq!(stored(&s.h, "w1").unwrap()["spec"], json!({"color": "blue"}));

    // Watches see every event in their own version.
    let watched = String::from_utf8(json_send(&s.h, "GET", &format!("{V1}?watch=true&resourceVersion=0"), None).body.to_vec()).unwrap();
    let frames: Vec<Value> = watched.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(frames.len(), 1, "{watched}");
    assert_eq!(frames[0]["type"], "ADDED");
    assert_eq!(frames[0]["object"]["spec"], json!({"colour": "blue"}));

    let deleted = json_send(&s.h, "DELETE", &format!("{V1}/w1"), None);
    assert_eq!(deleted.status, 200);
    assert_eq!(deleted.json()["status"], "Success", "{}", deleted.json());
    assert_eq!(stored(&s.h, "w1"), None);
}

#[test]
fn a_failing_webhook_is_a_500_in_upstreams_words_and_nothing_is_written() {
    let s = server();
    assert_eq!(json_send(&s.h, "POST", V1, Some(&widget("red"))).status, 201);
    s.webhook.set(Webhook::Down);
    let got = json_send(&s.h, "GET", &format!("{V1}/w1"), None);
    assert_eq!(got.status, 500);
    assert_eq!(
        got.json()["message"],
        "Internal error occurred: conversion webhook for example.com/v2, Kind=Widget failed: dial tcp: connection refused"
    );
    let mut second = widget("green");
    second["metadata"]["name"] = json!("w2");
    let refused = json_send(&s.h, "POST", V1, Some(&second));
    assert_eq!(refused.status, 500);
    assert_eq!(stored(&s.h, "w2"), None, "nothing is written when the object cannot be converted");

    s.webhook.set(Webhook::KeepsTheVersion);
    let wrong = json_send(&s.h, "GET", &format!("{V1}/w1"), None);
    assert_eq!(wrong.status, 500);
    assert_eq!(
        wrong.json()["message"],
        "Internal error occurred: conversion webhook for example.com/v2, Kind=Widget returned invalid object at index 0: invalid groupVersion (expected example.com/v1, received example.com/v3)"
    );
    // The storage version is served all along.
    assert_eq!(json_send(&s.h, "GET", &format!("{V2}/w1"), None).status, 200);
}

#[test]
fn a_webhook_behind_an_external_name_service_is_called_at_that_name_and_the_port_asked_for() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    let asked = Rc::new(RefCell::new(Vec::new()));
    let log = asked.clone();
    h.answer_calls(move |call: &Outbound| {
        log.borrow_mut().push(call.request.uri().to_string());
        let review: Value = serde_json::from_slice(call.request.body()).unwrap();
        Ok(http::Response::builder().status(200).body(bytes::Bytes::from(convert(&review).to_string())).unwrap())
    });
    let service = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "converter"},
                         "spec": {"type": "ExternalName", "externalName": "converter.example"}});
    assert_eq!(json_send(&h, "POST", "/api/v1/namespaces/default/services", Some(&service)).status, 201);
    let mut crd = crd();
    crd["spec"]["conversion"]["webhook"]["clientConfig"] =
        json!({"service": {"namespace": "default", "name": "converter", "path": "/convert", "port": 9443}});
    assert_eq!(json_send(&h, "POST", CRDS, Some(&crd)).status, 201);
    let r = json_send(&h, "POST", V1, Some(&widget("green")));
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!(asked.borrow().first().map(String::as_str), Some("https://converter.example:9443/convert"));
}
