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
