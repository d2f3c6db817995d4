//! Graceful deletion of pods over the whole server, as kube-apiserver v1.33 answers it
//! without a kubelet (`responses/delete-pod-*.json`): a pod bound to a node is marked
//! with its grace period and stays Terminating; one never scheduled goes at once; a
//! later DELETE may only shorten the period, and `gracePeriodSeconds=0` forces it.

use apiary_core::harness::{Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};
use std::time::Duration;

const PODS: &str = "/api/v1/namespaces/default/pods";

fn send(h: &Harness<MemoryStore>, method: &str, path: &str, body: Option<&Value>) -> Reply {
    h.json_call(method, path, "application/json", body)
}

fn pod(h: &Harness<MemoryStore>, name: &str, spec: Value) -> Value {
    let mut spec = spec;
    spec["containers"] = json!([{"name": "app", "image": "nginx"}]);
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec});
    let created = send(h, "POST", PODS, Some(&pod));
    assert_eq!(created.status, 201, "{}", created.json());
    created.json()
}

fn seconds(timestamp: &Value) -> i64 {
    let (secs, _) = apiary_core::time::parse_go_rfc3339(timestamp.as_str().unwrap()).unwrap();
    secs
}

#[test]
fn a_pod_never_scheduled_goes_at_once_and_answers_itself_marked() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    let created = pod(&h, "unscheduled", json!({}));
    let deleted = send(&h, "DELETE", &format!("{PODS}/unscheduled"), None);
    assert_eq!(deleted.status, 200);
    let meta = &deleted.json()["metadata"];
    assert_eq!(meta["deletionGracePeriodSeconds"], 0);
    assert!(meta["deletionTimestamp"].is_string());
    assert_eq!(meta["generation"], created["metadata"]["generation"].as_i64().unwrap() + 1);
    assert_eq!(send(&h, "GET", &format!("{PODS}/unscheduled"), None).status, 404);
}

#[test]
fn a_scheduled_pod_gets_its_grace_period_and_a_forced_delete_ends_it() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    pod(&h, "bound", json!({"nodeName": "n1"}));
    h.advance(Duration::from_secs(100));
    let first = send(&h, "DELETE", &format!("{PODS}/bound"), None).json();
    let meta = first["metadata"].clone();
    assert_eq!(meta["deletionGracePeriodSeconds"], 30, "the spec's default period");
    let still = send(&h, "GET", &format!("{PODS}/bound"), None);
    assert_eq!(still.status, 200, "Terminating, waiting for a kubelet");
    assert_eq!(still.json()["metadata"]["deletionTimestamp"], meta["deletionTimestamp"]);

    // Again without options: nothing changes. A longer period cannot be asked for.
    assert_eq!(send(&h, "DELETE", &format!("{PODS}/bound"), None).json()["metadata"], meta);
    let longer = send(&h, "DELETE", &format!("{PODS}/bound?gracePeriodSeconds=60"), None).json();
    assert_eq!(longer["metadata"]["deletionGracePeriodSeconds"], 30);

    // A shorter one moves the deadline by the difference.
    let shorter = send(&h, "DELETE", &format!("{PODS}/bound?gracePeriodSeconds=10"), None).json();
    assert_eq!(shorter["metadata"]["deletionGracePeriodSeconds"], 10);
    assert_eq!(seconds(&shorter["metadata"]["deletionTimestamp"]), seconds(&meta["deletionTimestamp"]) - 20);

    let forced = send(&h, "DELETE", &format!("{PODS}/bound?gracePeriodSeconds=0"), None);
    assert_eq!(forced.status, 200);
    assert_eq!(forced.json()["metadata"]["deletionGracePeriodSeconds"], 0);
    assert_eq!(send(&h, "GET", &format!("{PODS}/bound"), None).status, 404);
}

#[test]
fn the_spec_and_the_options_set_the_period() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    pod(&h, "short", json!({"nodeName": "n1", "terminationGracePeriodSeconds": 5}));
    let marked = send(&h, "DELETE", &format!("{PODS}/short"), None).json();
    assert_eq!(marked["metadata"]["deletionGracePeriodSeconds"], 5);

    pod(&h, "body", json!({"nodeName": "n1"}));
    let options = json!({"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0});
    assert_eq!(send(&h, "DELETE", &format!("{PODS}/body"), Some(&options)).status, 200);
    assert_eq!(send(&h, "GET", &format!("{PODS}/body"), None).status, 404, "a zero period in the body deletes at once");

    pod(&h, "done", json!({"nodeName": "n1"}));
    let status = json!({"status": {"phase": "Succeeded"}});
    let request = format!(
        "PATCH {PODS}/done/status HTTP/1.1\r\nHost: apiary\r\nContent-Type: application/merge-patch+json\r\nContent-Length: {}\r\n\r\n{status}",
        status.to_string().len()
    );
    h.send(request.as_bytes());
    send(&h, "DELETE", &format!("{PODS}/done"), None);
    assert_eq!(send(&h, "GET", &format!("{PODS}/done"), None).status, 404, "a finished pod goes at once");
}
