//! Server-side apply racing other writers, over the deterministic harness, one storage
//! operation at a time: an apply may create, so like upstream's it never answers
//! AlreadyExists or NotFound — a create that loses to another writer's create applies
//! to theirs, and an update whose object is deleted meanwhile creates it again. The
//! simulation (`apiary-sim`) found both answers when two appliers raced.

use apiary_core::harness::{parse_responses, Harness, Held, Reply, Stepped};
use apiary_core::storage::StorageOp;
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::json;

const PATH: &str = "/api/v1/namespaces/default/configmaps/raced";

fn apply(manager: &str, value: &str) -> Vec<u8> {
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "raced"}, "data": {"v": value}}).to_string();
    format!(
        "PATCH {PATH}?fieldManager={manager}&force=true HTTP/1.1\r\nHost: apiary\r\nAccept: application/json\r\nContent-Type: application/apply-patch+yaml\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn started(h: &Harness<MemoryStore>, bytes: &[u8]) -> Held {
    let mut answered = Vec::new();
    h.start(bytes, &mut answered).unwrap_or_else(|| panic!("answered at once: {}", String::from_utf8_lossy(&answered)))
}

/// Step `held` until it is at an operation `at` says yes to.
fn step_to(h: &Harness<MemoryStore>, mut held: Held, at: impl Fn(&StorageOp) -> bool) -> Held {
    for _ in 0..50 {
        if held.operation().is_some_and(&at) {
            return held;
        }
        held = match h.step(held) {
            Stepped::Held(next) => *next,
            Stepped::Answered(bytes) => panic!("answered before it got there: {}", String::from_utf8_lossy(&bytes)),
        };
    }
    panic!("never got there");
}

fn finish(h: &Harness<MemoryStore>, mut held: Held) -> Reply {
    for _ in 0..50 {
        held = match h.step(held) {
            Stepped::Held(next) => *next,
            Stepped::Answered(bytes) => return parse_responses(&bytes).expect("HTTP").remove(0),
        };
    }
    panic!("never answered");
}

fn is_create(op: &StorageOp) -> bool {
    matches!(op, StorageOp::Create { .. })
}

#[test]
fn two_appliers_that_both_found_nothing_both_succeed() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    // Both read the object missing, then both try to create it.
    let first = step_to(&h, started(&h, &apply("one", "1")), is_create);
    let second = step_to(&h, started(&h, &apply("two", "2")), is_create);
    let created = finish(&h, first);
    assert_eq!(created.status, 201, "{}", created.json());
    let applied = finish(&h, second);
    assert_eq!(applied.status, 200, "the loser applies to the winner's object: {}", applied.json());
    assert_eq!(applied.json()["data"]["v"], "2");
    let managers: Vec<String> = applied.json()["metadata"]["managedFields"].as_array().unwrap().iter().map(|m| m["manager"].as_str().unwrap().to_owned()).collect();
    assert_eq!(managers, ["two"], "forced, the second manager took the field: {managers:?}");
    let read = h.json_call("GET", PATH, "", None);
    assert_eq!(read.json()["data"]["v"], "2");
}

#[test]
fn an_apply_whose_object_is_deleted_under_it_creates_it_again() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    assert_eq!(parse_responses(&h.send(&apply("one", "1"))).unwrap()[0].status, 201);
    let updating = step_to(&h, started(&h, &apply("two", "2")), |op| matches!(op, StorageOp::Update { .. }));
    assert_eq!(h.json_call("DELETE", PATH, "", None).status, 200);
    let applied = finish(&h, updating);
    assert_eq!(applied.status, 201, "created again, not 404: {}", applied.json());
    assert_eq!(h.json_call("GET", PATH, "", None).json()["data"]["v"], "2");
}

const SERVICE: &str = "/api/v1/namespaces/default/services/raced";

fn apply_service(manager: &str, path: &str) -> Vec<u8> {
    let body = json!({
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "raced"},
        "spec": {"ports": [{"port": 80}]},
        "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}}
    })
    .to_string();
    format!(
        "PATCH {path}?fieldManager={manager}&force=true HTTP/1.1\r\nHost: apiary\r\nAccept: application/json\r\nContent-Type: application/apply-patch+yaml\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[test]
fn an_apply_to_the_status_of_an_object_deleted_under_it_is_not_found() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    let status = format!("{SERVICE}/status");
    // Nothing there: the status subresource does not create it, as upstream's does not.
    let missing = parse_responses(&h.send(&apply_service("one", &status))).unwrap().remove(0);
    assert_eq!(missing.status, 404, "{}", missing.json());
    assert_eq!(missing.json()["reason"], "NotFound");
    assert_eq!(parse_responses(&h.send(&apply_service("one", SERVICE))).unwrap()[0].status, 201);
    let updating = step_to(&h, started(&h, &apply_service("two", &status)), |op| matches!(op, StorageOp::Update { .. }));
    assert_eq!(h.json_call("DELETE", SERVICE, "", None).status, 200);
    let applied = finish(&h, updating);
    assert_eq!(applied.status, 404, "not made again through its status: {}", applied.json());
    assert_eq!(h.json_call("GET", SERVICE, "", None).status, 404);
}
