//! Field validation through the whole server over the memory backend: decoding against
//! the kinds' schemas on create and update, `fieldValidation=Strict|Warn|Ignore`, the exact
//! Status messages, the `Warning` headers, and that unknown fields are never stored.

mod support;

use serde_json::{json, Value};
use support::Harness;

/// Send a body of `content_type`.
fn send(h: &Harness, method: &str, uri: &str, content_type: &str, body: &str) -> support::Reply {
    h.send(method, uri, &[("content-type", content_type)], body)
}

/// Send a JSON body.
fn send_json(h: &Harness, method: &str, uri: &str, body: &str) -> support::Reply {
    send(h, method, uri, "application/json", body)
}

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

/// kube-apiserver's field validation test body: unknown fields, a field both unknown and
/// duplicated, duplicated known fields, at two depths.
fn invalid_deployment(name: &str) -> String {
    format!(
        r#"{{
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {{"name": "{name}", "labels": {{"app": "nginx"}}}},
        "spec": {{
            "unknown1": "val1",
            "unknownDupe": "valDupe",
            "unknownDupe": "valDupe2",
            "paused": true,
            "paused": false,
            "selector": {{"matchLabels": {{"app": "nginx"}}}},
            "template": {{
                "metadata": {{"labels": {{"app": "nginx"}}}},
                "spec": {{"containers": [{{
                    "name": "nginx",
                    "image": "nginx:latest",
                    "unknownNested": "val1",
                    "imagePullPolicy": "Always",
                    "imagePullPolicy": "Never"
                }}]}}
            }}
        }}
    }}"#
    )
}

fn valid_deployment(name: &str) -> String {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": "nginx"}},
        "spec": {"selector": {"matchLabels": {"app": "nginx"}}, "template": {
            "metadata": {"labels": {"app": "nginx"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]}}}
    })
    .to_string()
}

const PROBLEMS: [&str; 5] = [
    r#"unknown field "spec.unknown1""#,
    r#"unknown field "spec.unknownDupe""#,
    r#"duplicate field "spec.paused""#,
    r#"unknown field "spec.template.spec.containers[0].unknownNested""#,
    r#"duplicate field "spec.template.spec.containers[0].imagePullPolicy""#,
];

fn headers_for(texts: &[&str]) -> Vec<String> {
    texts
        .iter()
        .map(|t| format!("299 - \"{}\"", t.replace('\\', "\\\\").replace('"', "\\\"")))
        .collect()
}

fn assert_clean(obj: &Value) {
    let spec = &obj["spec"];
    assert!(
        spec.get("unknown1").is_none() && spec.get("unknownDupe").is_none(),
        "{spec}"
    );
    let container = &spec["template"]["spec"]["containers"][0];
    assert!(container.get("unknownNested").is_none(), "{container}");
    assert_eq!(container["imagePullPolicy"], "Never");
    // Sent as `false`: Go's `omitempty` leaves it out of what is stored and answered.
    assert_eq!(spec.get("paused"), None);
}

#[test]
fn strict_create_fails_listing_every_unknown_and_duplicate_field() {
    let h = Harness::new();
    let reply = send_json(
        &h,
        "POST",
        &format!("{DEPLOYMENTS}?fieldValidation=Strict"),
        &invalid_deployment("d"),
    );
    assert_eq!(reply.status, 400);
    let status = reply.json();
    assert_eq!(status["reason"], "BadRequest");
    assert_eq!(status["code"], 400);
    assert_eq!(
        status["message"],
        format!(
            "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: {}",
            PROBLEMS.join(", ")
        )
    );
    assert!(reply.warnings.is_empty());
    assert_eq!(
        send_json(&h, "GET", &format!("{DEPLOYMENTS}/d"), "").status,
        404
    );
}

#[test]
fn warn_is_the_default_and_sends_one_warning_per_problem() {
    let h = Harness::new();
    for (name, query) in [("a", ""), ("b", "?fieldValidation=Warn")] {
        let reply = send_json(
            &h,
            "POST",
            &format!("{DEPLOYMENTS}{query}"),
            &invalid_deployment(name),
        );
        assert_eq!(
            reply.status,
            201,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        assert_eq!(reply.warnings, headers_for(&PROBLEMS));
        assert_clean(&reply.json());
        let stored = send_json(&h, "GET", &format!("{DEPLOYMENTS}/{name}"), "");
        assert!(stored.warnings.is_empty(), "a read never warns");
        assert_clean(&stored.json());
    }
}

#[test]
fn ignore_drops_unknown_fields_silently() {
    let h = Harness::new();
    let reply = send_json(
        &h,
        "POST",
        &format!("{DEPLOYMENTS}?fieldValidation=Ignore"),
        &invalid_deployment("d"),
    );
    assert_eq!(reply.status, 201);
    assert!(reply.warnings.is_empty());
    assert_clean(&send_json(&h, "GET", &format!("{DEPLOYMENTS}/d"), "").json());
}

#[test]
fn update_validates_as_create_does() {
    let h = Harness::new();
    assert_eq!(
        send_json(&h, "POST", DEPLOYMENTS, &valid_deployment("d")).status,
        201
    );
    let url = format!("{DEPLOYMENTS}/d");

    let strict = send_json(
        &h,
        "PUT",
        &format!("{url}?fieldValidation=Strict"),
        &invalid_deployment("d"),
    );
    assert_eq!(strict.status, 400);
    assert_eq!(
        strict.message(),
        format!("Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: {}", PROBLEMS.join(", "))
    );

    let warn = send_json(&h, "PUT", &url, &invalid_deployment("d"));
    assert_eq!(warn.status, 200, "{}", String::from_utf8_lossy(&warn.body));
    assert_eq!(warn.warnings, headers_for(&PROBLEMS));
    assert_clean(&warn.json());
    assert_eq!(
        warn.json()["metadata"]["generation"],
        2,
        "paused changed the spec"
    );

    // The same body again changes nothing; the warnings still come.
    let again = send_json(
        &h,
        "PUT",
        &format!("{url}?fieldValidation=Warn"),
        &invalid_deployment("d"),
    );
    assert_eq!(again.status, 200);
    assert_eq!(again.warnings, headers_for(&PROBLEMS));

    let ignore = send_json(
        &h,
        "PUT",
        &format!("{url}?fieldValidation=Ignore"),
        &invalid_deployment("d"),
    );
    assert_eq!(ignore.status, 200);
    assert!(ignore.warnings.is_empty());
    assert_clean(&send_json(&h, "GET", &url, "").json());
}

#[test]
fn warnings_come_with_a_failure_after_decoding() {
    let h = Harness::new();
    assert_eq!(
        send_json(&h, "POST", DEPLOYMENTS, &valid_deployment("d")).status,
        201
    );
    let reply = send_json(&h, "POST", DEPLOYMENTS, &invalid_deployment("d"));
    assert_eq!(reply.status, 409);
    assert_eq!(reply.warnings, headers_for(&PROBLEMS));
}

#[test]
fn unsupported_field_validation_values_are_invalid_options() {
    let h = Harness::new();
    let create = send_json(
        &h,
        "POST",
        &format!("{DEPLOYMENTS}?fieldValidation=strict"),
        &valid_deployment("d"),
    );
    assert_eq!(create.status, 422);
    let status = create.json();
    assert_eq!(status["reason"], "Invalid");
    assert_eq!(
        status["message"],
        r#"CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn""#
    );
    assert_eq!(status["details"]["group"], "meta.k8s.io");
    assert_eq!(status["details"]["kind"], "CreateOptions");
    assert_eq!(status["details"]["causes"][0]["field"], "fieldValidation");
    assert_eq!(
        status["details"]["causes"][0]["reason"],
        "FieldValueNotSupported"
    );

    assert_eq!(
        send_json(&h, "POST", DEPLOYMENTS, &valid_deployment("d")).status,
        201
    );
    let update = send_json(
        &h,
        "PUT",
        &format!("{DEPLOYMENTS}/d?fieldValidation=Bogus"),
        &valid_deployment("d"),
    );
    assert_eq!(update.status, 422);
    assert_eq!(
        update.message(),
        r#"UpdateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Bogus": supported values: "", "Ignore", "Strict", "Warn""#
    );
}

#[test]
fn wrong_types_are_bad_requests_naming_the_go_field() {
    let h = Harness::new();
    let mut body: Value = serde_json::from_str(&valid_deployment("d")).unwrap();
    body["spec"]["replicas"] = json!("3");
    for query in ["", "?fieldValidation=Ignore", "?fieldValidation=Strict"] {
        let reply = send_json(
            &h,
            "POST",
            &format!("{DEPLOYMENTS}{query}"),
            &body.to_string(),
        );
        assert_eq!(reply.status, 400);
        assert_eq!(
            reply.message(),
            "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
        );
    }
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": 1}});
    let reply = send_json(
        &h,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        &cm.to_string(),
    );
    assert_eq!(reply.status, 400);
    assert_eq!(
        reply.message(),
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
    );
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a", "image": "i", "resources": {"limits": {"cpu": "lots"}}}]}});
    let reply = send_json(
        &h,
        "POST",
        "/api/v1/namespaces/default/pods",
        &pod.to_string(),
    );
    assert_eq!(reply.status, 400);
    assert_eq!(
        reply.message(),
        "Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    );
    // A wrong apiVersion is reported before the body's types.
    body["apiVersion"] = json!("apps/v2");
    let reply = send_json(&h, "POST", DEPLOYMENTS, &body.to_string());
    assert_eq!(
        reply.message(),
        "the API version in the data (apps/v2) does not match the expected API version (apps/v1)"
    );
}

#[test]
fn yaml_bodies_warn_with_the_lines_of_duplicate_keys() {
    let h = Harness::new();
    let body = "apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  name: c
data:
  k: v
extra: 1
";
    let reply = send(
        &h,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "application/yaml",
        body,
    );
    assert_eq!(
        reply.status,
        201,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    assert_eq!(
        reply.warnings,
        headers_for(&[
            r#"line 5: key "name" already set in map"#,
            r#"unknown field "extra""#
        ])
    );
    let strict = send(
        &h,
        "POST",
        "/api/v1/namespaces/default/configmaps?fieldValidation=Strict",
        "application/yaml",
        body,
    );
    assert_eq!(strict.status, 400);
    assert_eq!(
        strict.message(),
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: yaml: unmarshal errors:\n  line 5: key \"name\" already set in map, unknown field \"extra\""
    );
}

#[test]
fn status_updates_and_every_kind_decode_against_their_schema() {
    let h = Harness::new();
    assert_eq!(
        send_json(&h, "POST", DEPLOYMENTS, &valid_deployment("d")).status,
        201
    );
    let status = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "status": {"replicas": 1, "readyReplica": 1}});
    let reply = send_json(
        &h,
        "PUT",
        &format!("{DEPLOYMENTS}/d/status"),
        &status.to_string(),
    );
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.warnings,
        headers_for(&[r#"unknown field "status.readyReplica""#])
    );
    assert_eq!(reply.json()["status"], json!({"replicas": 1}));

    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n", "colour": "red"}});
    let reply = send_json(&h, "POST", "/api/v1/namespaces", &ns.to_string());
    assert_eq!(reply.status, 201);
    assert_eq!(
        reply.warnings,
        headers_for(&[r#"unknown field "metadata.colour""#])
    );
}
