//! Built-in objects written as Go writes them: every recorded kube-apiserver answer in
//! `tests/upstream/responses/` whose body is a built-in object or list (compact JSON) is
//! read and written again by `typed_json`, and must come out byte for byte as upstream
//! wrote it (its trailing newline aside): key order, zero values, escaping.

use apiary_core::typed_json;
use base64::Engine as _;
use serde_json::Value;

fn recorded() -> Vec<(String, Vec<u8>)> {
    let dir = format!("{}/tests/upstream/responses", env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let record: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let body = base64::engine::general_purpose::STANDARD.decode(record["body_base64"].as_str().unwrap()).unwrap();
        out.push((path.file_name().unwrap().to_string_lossy().into_owned(), body));
    }
    out.sort();
    out
}

#[test]
fn recorded_built_in_objects_are_written_again_byte_for_byte() {
    let mut compared = 0;
    for (name, body) in recorded() {
        // Pretty-printed answers (`?pretty`, curl) are another writer's.
        if !body.ends_with(b"}\n") || body.starts_with(b"{\n") {
            continue;
        }
        let value: Value = serde_json::from_slice(&body).unwrap();
        let written = typed_json::encode(&value).unwrap_or_else(|| panic!("{name}: {} is a built-in kind", value["kind"]));
        assert_eq!(String::from_utf8_lossy(&written), String::from_utf8_lossy(&body[..body.len() - 1]), "{name}");
        compared += 1;
    }
    assert!(compared >= 30, "only {compared} recorded answers compared");
}

#[test]
fn recorded_pretty_answers_are_indented_as_go_indents() {
    let mut compared = 0;
    for (name, body) in recorded() {
        if !body.starts_with(b"{\n") {
            continue;
        }
        let value: Value = serde_json::from_slice(&body).unwrap();
        let written = typed_json::indent(&typed_json::encode(&value).unwrap());
        assert_eq!(String::from_utf8_lossy(&written), String::from_utf8_lossy(&body), "{name}");
        compared += 1;
    }
    assert!(compared >= 3, "only {compared} pretty answers compared");
}

#[test]
fn go_zero_values_and_escaping() {
    let role: Value = serde_json::json!({"kind": "ClusterRole", "apiVersion": "rbac.authorization.k8s.io/v1", "metadata": {"name": "a<b>&c"}});
    let written = String::from_utf8(typed_json::encode(&role).unwrap()).unwrap();
    assert_eq!(written, r#"{"kind":"ClusterRole","apiVersion":"rbac.authorization.k8s.io/v1","metadata":{"name":"a\u003cb\u003e\u0026c"},"rules":null}"#);
    let ds: Value = serde_json::json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d", "labels": {}}, "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}, "unknown": 1});
    let written: Value = serde_json::from_slice(&typed_json::encode(&ds).unwrap()).unwrap();
    assert_eq!(written["status"], serde_json::json!({"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0}));
    assert_eq!(written["metadata"], serde_json::json!({"name": "d"}), "empty labels are left out");
    assert_eq!(written["spec"]["template"]["spec"]["containers"][0]["resources"], serde_json::json!({}));
    assert_eq!(written.get("unknown"), None);
    assert_eq!(typed_json::encode(&serde_json::json!({"apiVersion": "example.com/v1", "kind": "Widget"})), None);
}
