//! Finalizers over the whole server: a DELETE of an object with finalizers marks it
//! as being deleted; the write that takes its last finalizer away deletes it; nothing
//! may add a finalizer meanwhile.

use apiary_core::harness::{Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};

fn send(h: &Harness<MemoryStore>, method: &str, path: &str, content_type: &str, body: Option<&Value>) -> Reply {
    h.json_call(method, path, content_type, body)
}

const CM: &str = "/api/v1/namespaces/default/configmaps";

#[test]
fn an_object_with_finalizers_waits_for_them_and_goes_with_the_last() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    let cm = json!({"metadata": {"name": "held", "finalizers": ["example.com/a", "example.com/b"]}, "data": {"k": "v"}});
    assert_eq!(send(&h, "POST", CM, "application/json", Some(&cm)).status, 201);

    let deleted = send(&h, "DELETE", &format!("{CM}/held"), "application/json", None);
    assert_eq!(deleted.status, 200);
    let marked = deleted.json();
    assert_eq!(marked["kind"], "ConfigMap", "the object, not a Status: {marked}");
    assert!(marked["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(marked["metadata"]["deletionGracePeriodSeconds"], 0);
    let again = send(&h, "DELETE", &format!("{CM}/held"), "application/json", None).json();
    assert_eq!(again["metadata"]["deletionTimestamp"], marked["metadata"]["deletionTimestamp"]);

    let add = json!({"metadata": {"finalizers": ["example.com/a", "example.com/b", "example.com/c"]}});
    let refused = send(&h, "PATCH", &format!("{CM}/held"), "application/merge-patch+json", Some(&add));
    assert_eq!(refused.status, 422);
    let message = refused.json()["message"].as_str().unwrap().to_owned();
    assert!(message.contains("metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"example.com/c\"}"), "{message}");

    let one_left = json!({"metadata": {"finalizers": ["example.com/b"]}});
    assert_eq!(send(&h, "PATCH", &format!("{CM}/held"), "application/merge-patch+json", Some(&one_left)).status, 200);
    assert_eq!(send(&h, "GET", &format!("{CM}/held"), "application/json", None).status, 200);
    let none_left = json!({"metadata": {"finalizers": []}});
    let last = send(&h, "PATCH", &format!("{CM}/held"), "application/merge-patch+json", Some(&none_left));
    assert_eq!(last.status, 200);
    assert_eq!(send(&h, "GET", &format!("{CM}/held"), "application/json", None).status, 404);
}

/// Finalizer names are qualified names, and the garbage collector's two cannot be set
/// together (upstream's `ValidateFinalizers`).
#[test]
fn finalizer_names_are_validated_as_upstream() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    let cm = |name: &str, finalizers: Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "finalizers": finalizers}});
    let bad = send(&h, "POST", CM, "application/json", Some(&cm("bad", json!(["a/b/c"]))));
    assert_eq!(bad.status, 422);
    let message = bad.json()["message"].as_str().unwrap().to_owned();
    assert!(
        message.starts_with("ConfigMap \"bad\" is invalid: metadata.finalizers: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters"),
        "{message}"
    );
    let both = send(&h, "POST", CM, "application/json", Some(&cm("both", json!(["orphan", "foregroundDeletion"]))));
    assert_eq!(both.status, 422);
    assert!(both.json()["message"].as_str().unwrap().ends_with("finalizer orphan and foregroundDeletion cannot be both set"));
    assert_eq!(send(&h, "POST", CM, "application/json", Some(&cm("good", json!(["example.com/hold"])))).status, 201);
}
