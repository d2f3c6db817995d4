//! Binding pods to nodes through the whole server over the memory backend: the
//! `pods/{name}/binding` subresource and the `bindings` collection, as kube-apiserver's
//! BindingREST serves them.
mod support;

use apiary_core::storage::{StorageOp, StorageOutput};
use serde_json::{json, Value};
use support::Harness;

const PODS: &str = "/api/v1/namespaces/default/pods";
const BINDINGS: &str = "/api/v1/namespaces/default/bindings";

fn binding_uri(pod: &str) -> String {
    format!("{PODS}/{pod}/binding")
}

fn binding(pod: &str, node: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": pod},
           "target": {"apiVersion": "v1", "kind": "Node", "name": node}})
}

fn setup(name: &str) -> (Harness, Value) {
    let h = Harness::new();
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "annotations": {"kept": "yes", "replaced": "old"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    let created = h.call("POST", PODS, pod);
    assert_eq!(created.status, 201, "{}", created.message());
    (h, created.json())
}

fn get_pod(h: &Harness, name: &str) -> Value {
    let r = h.call("GET", &format!("{PODS}/{name}"), Value::Null);
    assert_eq!(r.status, 200, "{}", r.message());
    r.json()
}

fn success() -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
}

#[test]
fn binding_sets_the_node_and_answers_a_success_status() {
    let (h, created) = setup("web");
    let r = h.call("POST", &binding_uri("web"), binding("web", "node-1"));
    assert_eq!(r.status, 201, "{}", r.message());
    assert_eq!(r.json(), success());
    let pod = get_pod(&h, "web");
    assert_eq!(pod["spec"]["nodeName"], "node-1");
    assert_eq!(pod["metadata"]["uid"], created["metadata"]["uid"]);
    assert_ne!(
        pod["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );
    // The rest of the spec is as it was.
    assert_eq!(pod["spec"]["containers"], created["spec"]["containers"]);
}

#[test]
fn the_pod_scheduled_condition_becomes_true() {
    let (h, _) = setup("web");
    h.clock.set(h.clock.get() + 30);
    let r = h.call("POST", &binding_uri("web"), binding("web", "node-1"));
    assert_eq!(r.status, 201, "{}", r.message());
    let pod = get_pod(&h, "web");
    let conditions = pod["status"]["conditions"].as_array().unwrap();
    let scheduled: Vec<&Value> = conditions
        .iter()
        .filter(|c| c["type"] == "PodScheduled")
        .collect();
    assert_eq!(scheduled.len(), 1, "{conditions:?}");
    let now = apiary_core::time::rfc3339(
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(h.clock.get()),
    );
    assert_eq!(
        *scheduled[0],
        json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": now})
    );
}

#[test]
fn a_false_pod_scheduled_condition_is_replaced() {
    let (h, _) = setup("web");
    let status = json!({"status": {"conditions": [{"type": "PodScheduled", "status": "False",
        "reason": "Unschedulable", "message": "0/1 nodes are available",
        "lastTransitionTime": "2026-01-01T00:00:00Z", "lastProbeTime": null}]}});
    let r = h.send(
        "PATCH",
        &format!("{PODS}/web/status"),
        &[("Content-Type", "application/merge-patch+json")],
        &status.to_string(),
    );
    assert_eq!(r.status, 200, "{}", r.message());
    let r = h.call("POST", &binding_uri("web"), binding("web", "node-1"));
    assert_eq!(r.status, 201, "{}", r.message());
    let pod = get_pod(&h, "web");
    let conditions = pod["status"]["conditions"].as_array().unwrap();
    assert_eq!(conditions.len(), 1);
    assert_eq!(conditions[0]["status"], "True");
    assert!(conditions[0].get("reason").is_none());
    assert!(conditions[0].get("message").is_none());
    assert_ne!(conditions[0]["lastTransitionTime"], "2026-01-01T00:00:00Z");
}

#[test]
fn annotations_of_the_binding_are_merged_into_the_pods() {
    let (h, _) = setup("web");
    let mut b = binding("web", "node-1");
    b["metadata"]["annotations"] = json!({"replaced": "new", "added": "1"});
    let r = h.call("POST", &binding_uri("web"), b);
    assert_eq!(r.status, 201, "{}", r.message());
    let pod = get_pod(&h, "web");
    assert_eq!(
        pod["metadata"]["annotations"],
        json!({"kept": "yes", "replaced": "new", "added": "1"})
    );
}

#[test]
fn a_pod_already_assigned_conflicts() {
    let (h, _) = setup("web");
    let r = h.call("POST", &binding_uri("web"), binding("web", "node-1"));
    assert_eq!(r.status, 201, "{}", r.message());
    let r = h.call("POST", &binding_uri("web"), binding("web", "node-2"));
    assert_eq!(r.status, 409);
    let body = r.json();
    assert_eq!(body["reason"], "Conflict");
    assert_eq!(
        body["message"],
        "Operation cannot be fulfilled on pods/binding \"web\": pod web is already assigned to node \"node-1\""
    );
    assert_eq!(
        body["details"],
        json!({"name": "web", "kind": "pods/binding"})
    );
    assert_eq!(get_pod(&h, "web")["spec"]["nodeName"], "node-1");
}

#[test]
fn a_pod_created_with_a_node_conflicts() {
    let h = Harness::new();
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "placed"},
        "spec": {"nodeName": "node-0", "containers": [{"name": "c", "image": "nginx"}]}});
    assert_eq!(h.call("POST", PODS, pod).status, 201);
    let r = h.call("POST", &binding_uri("placed"), binding("placed", "node-1"));
    assert_eq!(r.status, 409);
    assert!(
        r.message()
            .ends_with("pod placed is already assigned to node \"node-0\""),
        "{}",
        r.message()
    );
}

#[test]
fn a_gated_pod_conflicts() {
    let h = Harness::new();
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gated"},
        "spec": {"schedulingGates": [{"name": "wait"}], "containers": [{"name": "c", "image": "nginx"}]}});
    assert_eq!(h.call("POST", PODS, pod).status, 201);
    let r = h.call("POST", &binding_uri("gated"), binding("gated", "node-1"));
    assert_eq!(r.status, 409);
    assert_eq!(
        r.message(),
        "Operation cannot be fulfilled on pods/binding \"gated\": pod gated has non-empty .spec.schedulingGates"
    );
}

#[test]
fn a_pod_being_deleted_conflicts() {
    let (h, _) = setup("web");
    let key = "/registry/pods/default/web";
    let Ok(StorageOutput::Got { kv: Some(kv), .. }) =
        h.store.apply(StorageOp::Get { key: key.into() })
    else {
        panic!("the pod is stored");
    };
    let mut stored: Value = serde_json::from_slice(&kv.value).unwrap();
    stored["metadata"]["deletionTimestamp"] = json!("2026-11-23T01:02:03Z");
    let op = StorageOp::Update {
        key: key.into(),
        value: serde_json::to_vec(&stored).unwrap().into(),
        expected_revision: kv.mod_revision,
    };
    assert!(h.store.apply(op).is_ok());
    let r = h.call("POST", &binding_uri("web"), binding("web", "node-1"));
    assert_eq!(r.status, 409);
    assert_eq!(
        r.message(),
        "Operation cannot be fulfilled on pods/binding \"web\": pod web is being deleted, cannot be assigned to a host"
    );
}

#[test]
fn the_name_in_the_body_must_be_the_urls() {
    let (h, _) = setup("web");
    let r = h.call("POST", &binding_uri("web"), binding("other", "node-1"));
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["reason"], "BadRequest");
    assert_eq!(
        r.message(),
        "name in URL does not match name in Binding object"
    );
    let mut nameless = binding("web", "node-1");
    nameless["metadata"] = json!({});
    let r = h.call("POST", &binding_uri("web"), nameless);
    assert_eq!(r.status, 400);
    assert!(get_pod(&h, "web")["spec"].get("nodeName").is_none());
}

#[test]
fn a_target_that_is_not_a_named_node_is_invalid() {
    let (h, _) = setup("web");
    let mut b = binding("web", "");
    b["target"]["kind"] = json!("Pod");
    let r = h.call("POST", &binding_uri("web"), b);
    assert_eq!(r.status, 422);
    let body = r.json();
    assert_eq!(body["reason"], "Invalid");
    assert_eq!(
        body["message"],
        "Binding \"web\" is invalid: [target.kind: Unsupported value: \"Pod\": supported values: \"Node\", \"<empty>\", target.name: Required value]"
    );
    assert_eq!(
        body["details"]["causes"],
        json!([
            {"reason": "FieldValueNotSupported", "message": "Unsupported value: \"Pod\": supported values: \"Node\", \"<empty>\"", "field": "target.kind"},
            {"reason": "FieldValueRequired", "message": "Required value", "field": "target.name"}
        ])
    );
    assert_eq!(body["details"]["kind"], "Binding");
    // No kind at all is a node.
    let mut b = binding("web", "node-1");
    b["target"] = json!({"name": "node-1"});
    let r = h.call("POST", &binding_uri("web"), b);
    assert_eq!(r.status, 201, "{}", r.message());
}

#[test]
fn a_missing_pod_is_not_found() {
    let h = Harness::new();
    let r = h.call("POST", &binding_uri("nope"), binding("nope", "node-1"));
    assert_eq!(r.status, 404);
    let body = r.json();
    assert_eq!(body["message"], "pods \"nope\" not found");
    assert_eq!(body["details"], json!({"name": "nope", "kind": "pods"}));
    let r = h.call("POST", BINDINGS, binding("nope", "node-1"));
    assert_eq!(r.status, 404);
    assert_eq!(r.message(), "pods \"nope\" not found");
}

#[test]
fn a_dry_run_checks_and_stores_nothing() {
    let (h, created) = setup("web");
    let r = h.call(
        "POST",
        &format!("{}?dryRun=All", binding_uri("web")),
        binding("web", "node-1"),
    );
    assert_eq!(r.status, 201, "{}", r.message());
    assert_eq!(r.json(), success());
    let pod = get_pod(&h, "web");
    assert!(pod["spec"].get("nodeName").is_none());
    assert_eq!(
        pod["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );
    // Still checked: a dry run against a missing pod fails as a real one.
    let r = h.call(
        "POST",
        &format!("{}?dryRun=All", binding_uri("nope")),
        binding("nope", "node-1"),
    );
    assert_eq!(r.status, 404);
    // And its options are checked as a create's.
    let r = h.call(
        "POST",
        &format!("{}?dryRun=yes", binding_uri("web")),
        binding("web", "node-1"),
    );
    assert_eq!(r.status, 422);
    assert_eq!(r.json()["details"]["kind"], "CreateOptions");
}

#[test]
fn the_bindings_collection_binds_the_named_pod() {
    let (h, _) = setup("web");
    let mut b = binding("web", "node-7");
    // The collection form wipes the body's uid as any create does: no precondition.
    b["metadata"]["uid"] = json!("not-the-pods");
    let r = h.call("POST", BINDINGS, b);
    assert_eq!(r.status, 201, "{}", r.message());
    assert_eq!(r.json(), success());
    assert_eq!(get_pod(&h, "web")["spec"]["nodeName"], "node-7");
    // Only create is served.
    let r = h.call("GET", BINDINGS, Value::Null);
    assert_eq!(r.status, 405);
    let r = h.call("GET", &binding_uri("web"), Value::Null);
    assert_eq!(r.status, 405);
    // A Binding without a name names no pod.
    let mut b = binding("", "node-7");
    b["metadata"] = json!({});
    let r = h.call("POST", BINDINGS, b);
    assert_eq!(r.status, 400);
    assert_eq!(r.message(), "Name parameter required.");
}

#[test]
fn the_namespace_in_the_body_must_be_the_requests() {
    let (h, _) = setup("web");
    let mut b = binding("web", "node-1");
    b["metadata"]["namespace"] = json!("kube-system");
    let r = h.call("POST", &binding_uri("web"), b);
    assert_eq!(r.status, 400);
    assert_eq!(
        r.message(),
        "the namespace of the provided object does not match the namespace sent on the request"
    );
}

#[test]
fn uid_and_resource_version_are_preconditions_on_the_pod() {
    let (h, created) = setup("web");
    let mut b = binding("web", "node-1");
    b["metadata"]["uid"] = json!("0000");
    let r = h.call("POST", &binding_uri("web"), b);
    assert_eq!(r.status, 409);
    let uid = created["metadata"]["uid"].as_str().unwrap();
    assert_eq!(
        r.message(),
        format!("Operation cannot be fulfilled on pods \"web\": StorageError: invalid object, Code: 4, Key: /registry/pods/default/web, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: 0000, UID in object meta: {uid}")
    );
    let mut b = binding("web", "node-1");
    b["metadata"]["resourceVersion"] = json!("1");
    let r = h.call("POST", &binding_uri("web"), b);
    assert_eq!(r.status, 409);
    assert!(r.message().contains("Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: "), "{}", r.message());
    // Both right: bound.
    let mut b = binding("web", "node-1");
    b["metadata"]["uid"] = created["metadata"]["uid"].clone();
    b["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"].clone();
    let r = h.call("POST", &binding_uri("web"), b);
    assert_eq!(r.status, 201, "{}", r.message());
}

#[test]
fn a_watch_on_the_pod_sees_one_modified_event() {
    let (h, created) = setup("web");
    let rv = created["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = h.call("POST", &binding_uri("web"), binding("web", "node-1"));
    assert_eq!(r.status, 201, "{}", r.message());
    let watch = h.call(
        "GET",
        &format!("{PODS}?watch=true&resourceVersion={rv}&fieldSelector=metadata.name%3Dweb"),
        Value::Null,
    );
    assert_eq!(watch.status, 200);
    let frames = Harness::frames(&watch);
    let types: Vec<&str> = frames.iter().map(|f| f["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["MODIFIED"]);
    assert_eq!(frames[0]["object"]["spec"]["nodeName"], "node-1");
}
