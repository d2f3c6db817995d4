//! admissionregistration.k8s.io/v1 over the whole server: webhook configurations and
//! policies count their changes in `metadata.generation` as upstream's strategies do,
//! a policy's status is written only through `/status` (which changes nothing else),
//! an update is held only to what the stored webhooks already met, and the kinds are
//! served as protobuf too.

use apiary_core::harness::{Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};

const GROUP: &str = "/apis/admissionregistration.k8s.io/v1";
const JSON: &str = "application/json";

fn call(h: &Harness<MemoryStore>, method: &str, path: &str, body: Option<&Value>) -> Reply {
    h.json_call(method, path, JSON, body)
}

fn server() -> Harness<MemoryStore> {
    let h = Harness::new(Config::default(), MemoryStore::new());
    h.act_as(Some("admin"), &["system:masters"]);
    h
}

fn webhook(name: &str, side_effects: &str) -> Value {
    json!({"name": name, "sideEffects": side_effects, "admissionReviewVersions": ["v1"], "clientConfig": {"url": "https://hook.example.com/v"}})
}

#[test]
fn webhook_changes_count_as_generations_and_updates_keep_what_was_stored() {
    let h = server();
    let path = format!("{GROUP}/validatingwebhookconfigurations");
    let config = json!({"metadata": {"name": "c"}, "webhooks": [webhook("a.example.com", "None")]});
    let created = call(&h, "POST", &path, Some(&config));
    assert_eq!(created.status, 201, "{}", created.json());
    let mut stored = created.json();
    assert_eq!(stored["metadata"]["generation"], 1);
    assert_eq!(stored["webhooks"][0]["timeoutSeconds"], 10);

    // A label alone is no new generation; a webhook changed is.
    stored["metadata"]["labels"] = json!({"a": "b"});
    let labelled = call(&h, "PUT", &format!("{path}/c"), Some(&stored)).json();
    assert_eq!(labelled["metadata"]["generation"], 1);
    let mut changed = labelled.clone();
    changed["webhooks"][0]["timeoutSeconds"] = json!(5);
    let changed = call(&h, "PUT", &format!("{path}/c"), Some(&changed));
    assert_eq!(changed.status, 200, "{}", changed.json());
    assert_eq!(changed.json()["metadata"]["generation"], 2);

    // Side effects `Some` are refused while every stored webhook has none.
    let mut some = changed.json();
    some["webhooks"][0]["sideEffects"] = json!("Some");
    let refused = call(&h, "PUT", &format!("{path}/c"), Some(&some));
    assert_eq!(refused.status, 422, "{}", refused.json());
    assert!(refused.json()["message"].as_str().unwrap().contains(r#"webhooks[0].sideEffects: Unsupported value: "Some""#));
}

#[test]
fn a_policy_status_is_written_only_through_status() {
    let h = server();
    let path = format!("{GROUP}/validatingadmissionpolicies");
    let policy = json!({
        "metadata": {"name": "p"},
        "spec": {
            "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["deployments"]}]},
            "validations": [{"expression": "object.spec.replicas <= 5"}],
        },
        "status": {"observedGeneration": 7},
    });
    let created = call(&h, "POST", &path, Some(&policy));
    assert_eq!(created.status, 201, "{}", created.json());
    let stored = created.json();
    assert_eq!(stored["status"], json!({}));
    assert_eq!(stored["spec"]["failurePolicy"], "Fail");

    let mut status = stored.clone();
    status["status"] = json!({"observedGeneration": 1, "typeChecking": {}});
    status["spec"]["failurePolicy"] = json!("Ignore");
    let written = call(&h, "PUT", &format!("{path}/p/status"), Some(&status));
    assert_eq!(written.status, 200, "{}", written.json());
    let written = written.json();
    assert_eq!(written["status"], json!({"observedGeneration": 1, "typeChecking": {}}));
    assert_eq!(written["spec"]["failurePolicy"], "Fail", "/status changes no spec");
    assert_eq!(written["metadata"]["generation"], 1);

    let mut spec = written.clone();
    spec["status"] = json!({});
    spec["spec"]["failurePolicy"] = json!("Ignore");
    let updated = call(&h, "PUT", &format!("{path}/p"), Some(&spec)).json();
    assert_eq!(updated["status"]["observedGeneration"], 1, "a PUT keeps the status");
    assert_eq!(updated["metadata"]["generation"], 2);

    let mut bad = updated.clone();
    bad["status"]["conditions"] = json!([{"type": "Ready", "status": "Maybe", "reason": "R", "lastTransitionTime": "2026-01-01T00:00:00Z"}]);
    let refused = call(&h, "PUT", &format!("{path}/p/status"), Some(&bad));
    assert_eq!(refused.status, 422, "{}", refused.json());
}

#[test]
fn bindings_are_served_as_protobuf_too() {
    let h = server();
    let path = format!("{GROUP}/validatingadmissionpolicybindings");
    let binding = json!({"metadata": {"name": "b"}, "spec": {"policyName": "p", "validationActions": ["Deny"], "matchResources": {}}});
    let created = call(&h, "POST", &path, Some(&binding));
    assert_eq!(created.status, 201, "{}", created.json());
    assert_eq!(created.json()["spec"]["matchResources"], json!({"matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {}}));
    let request = format!("GET {path}/b HTTP/1.1\r\nHost: a\r\nAccept: application/vnd.kubernetes.protobuf\r\n\r\n");
    let got = h.send(request.as_bytes());
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(text.contains("application/vnd.kubernetes.protobuf"), "{text}");
}
