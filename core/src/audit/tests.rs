//! Audit records: events as upstream writes them, per level and stage.

use super::*;
use crate::authn::UserInfo;
use crate::request_info;
use bytes::Bytes;
use serde_json::{json, Value};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  resources: [{group: "", resources: [events]}]
- level: Metadata
  omitStages: [RequestReceived]
  resources: [{group: "", resources: [secrets]}]
- level: RequestResponse
  omitManagedFields: true
  resources: [{group: "", resources: [configmaps]}]
- level: Request
  verbs: [create, patch]
- level: Metadata
"#;

fn policy() -> Policy {
    Policy::parse(POLICY.as_bytes()).expect("valid policy")
}

fn at(micros: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_micros(micros)
}

fn admin() -> UserInfo {
    UserInfo::named(
        "admin",
        vec!["system:masters".to_owned(), "system:authenticated".to_owned()],
    )
}

fn record_for(
    request: &http::Request<Bytes>,
    user: Option<&UserInfo>,
    policy: &Policy,
) -> Option<Record> {
    let uri = request.uri();
    let info = request_info::resolve(request.method(), uri.path(), uri.query());
    Record::new(
        policy,
        Arrival {
            request,
            info: &info,
            user,
            remote_addr: Some("127.0.0.1:50000".parse().unwrap()),
            now: at(1_700_000_000_123_456),
            audit_id: "11111111-2222-4333-8444-555555555555".to_owned(),
        },
    )
}

fn parse(line: &str) -> Value {
    assert!(line.ends_with('\n') && !line[..line.len() - 1].contains('\n'));
    serde_json::from_str(line).expect("an event is JSON")
}

fn json_response(code: u16, body: &Value) -> http::Response<Bytes> {
    http::Response::builder()
        .status(code)
        .header("content-type", "application/json")
        .body(Bytes::from(body.to_string()))
        .unwrap()
}

#[test]
fn secret_create_at_metadata_logs_no_body() {
    let body = json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "s1", "namespace": "default"},
        "data": {"password": "aHVudGVyMg=="}, "stringData": {"k": "hunter2"}});
    let request =
        http::Request::post("/api/v1/namespaces/default/secrets?fieldManager=kubectl-create")
            .header("content-type", "application/json")
            .header("user-agent", "kubectl/v1.33.0")
            .body(Bytes::from(body.to_string()))
            .unwrap();
    let mut record = record_for(&request, Some(&admin()), &policy()).expect("audited");
    assert_eq!(record.level(), Level::Metadata);
    assert!(!record.is_long_running());
    // What the authorization stage writes into the record (system:masters: no reason).
    record.authorized("allow", String::new());
    // The rule leaves out RequestReceived.
    assert_eq!(record.request_received(at(1)), None);
    let response = json_response(201, &body);
    let line = record
        .response_complete(&response, at(1_700_000_000_200_000))
        .expect("ResponseComplete is logged");
    assert!(
        !line.contains("hunter2") && !line.contains("aHVudGVyMg"),
        "{line}"
    );
    assert_eq!(
        parse(&line),
        json!({
            "kind": "Event",
            "apiVersion": "audit.k8s.io/v1",
            "level": "Metadata",
            "auditID": "11111111-2222-4333-8444-555555555555",
            "stage": "ResponseComplete",
            "requestURI": "/api/v1/namespaces/default/secrets?fieldManager=kubectl-create",
            "verb": "create",
            "user": {"username": "admin", "groups": ["system:masters", "system:authenticated"]},
            "sourceIPs": ["127.0.0.1"],
            "userAgent": "kubectl/v1.33.0",
            "objectRef": {"resource": "secrets", "namespace": "default", "name": "s1", "apiVersion": "v1"},
            "responseStatus": {"metadata": {}, "code": 201},
            "requestReceivedTimestamp": "2023-11-14T22:13:20.123456Z",
            "stageTimestamp": "2023-11-14T22:13:20.200000Z",
            "annotations": {"authorization.k8s.io/decision": "allow", "authorization.k8s.io/reason": ""}
        })
    );
    // Field order as upstream's Event struct.
    let order = [
        "\"kind\"",
        "\"apiVersion\"",
        "\"level\"",
        "\"auditID\"",
        "\"stage\"",
        "\"requestURI\"",
        "\"verb\"",
        "\"user\"",
        "\"sourceIPs\"",
        "\"userAgent\"",
        "\"objectRef\"",
        "\"responseStatus\"",
        "\"requestReceivedTimestamp\"",
        "\"stageTimestamp\"",
        "\"annotations\"",
    ];
    let positions: Vec<usize> = order.iter().map(|k| line.find(k).unwrap()).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{line}");
}

#[test]
fn configmap_create_at_request_response_logs_both_bodies() {
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c1", "managedFields": [{"manager": "x"}]}, "data": {"a": "b"}});
    let request = http::Request::post("/api/v1/namespaces/default/configmaps")
        .header("content-type", "application/json")
        .body(Bytes::from(body.to_string()))
        .unwrap();
    let record = record_for(&request, Some(&admin()), &policy()).unwrap();
    assert_eq!(record.level(), Level::RequestResponse);
    let mut stored = body.clone();
    stored["metadata"]["uid"] = json!("u1");
    let event = parse(
        &record
            .response_complete(&json_response(201, &stored), at(5))
            .unwrap(),
    );
    assert_eq!(event["requestObject"]["data"], json!({"a": "b"}));
    assert_eq!(event["responseObject"]["metadata"]["uid"], json!("u1"));
    // omitManagedFields
    assert!(event["requestObject"]["metadata"]
        .get("managedFields")
        .is_none());
    assert!(event["responseObject"]["metadata"]
        .get("managedFields")
        .is_none());
    assert_eq!(event["objectRef"]["name"], json!("c1"));
}

#[test]
fn request_level_logs_the_request_body_only_and_every_stage() {
    let request = http::Request::post("/apis/apps/v1/namespaces/ns/deployments")
        .header("content-type", "application/json")
        .body(Bytes::from_static(
            br#"{"metadata":{"name":"d"},"spec":{}}"#,
        ))
        .unwrap();
    let record = record_for(&request, Some(&admin()), &policy()).unwrap();
    assert_eq!(record.level(), Level::Request);
    let received = parse(
        &record
            .request_received(at(1))
            .expect("logged at every stage"),
    );
    assert_eq!(received["stage"], "RequestReceived");
    assert!(received.get("responseStatus").is_none());
    assert_eq!(received["requestObject"]["metadata"]["name"], "d");
    assert_eq!(
        received["objectRef"],
        json!({"resource": "deployments", "namespace": "ns", "name": "d", "apiGroup": "apps", "apiVersion": "v1"})
    );
    let done = parse(
        &record
            .response_complete(&json_response(201, &json!({"kind": "Deployment"})), at(2))
            .unwrap(),
    );
    assert!(done.get("responseObject").is_none());
}

#[test]
fn failures_carry_the_status_fields() {
    let request = http::Request::get("/api/v1/namespaces/default/secrets/nope")
        .body(Bytes::new())
        .unwrap();
    let record = record_for(&request, Some(&admin()), &policy()).unwrap();
    let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Failure", "message": "secrets \"nope\" not found", "reason": "NotFound",
        "details": {"name": "nope", "kind": "secrets"}, "code": 404});
    let event = parse(
        &record
            .response_complete(&json_response(404, &status), at(2))
            .unwrap(),
    );
    assert_eq!(
        event["responseStatus"],
        json!({"metadata": {}, "status": "Failure", "message": "secrets \"nope\" not found",
            "reason": "NotFound", "details": {"name": "nope", "kind": "secrets"}, "code": 404})
    );
    assert_eq!(event["verb"], "get");
    assert!(event.get("responseObject").is_none());
}

#[test]
fn watches_have_response_started_and_complete() {
    let request = http::Request::get("/api/v1/namespaces/default/pods?watch=true")
        .body(Bytes::new())
        .unwrap();
    let record = record_for(&request, Some(&admin()), &policy()).unwrap();
    assert!(record.is_long_running());
    let started = parse(&record.response_started(200, at(3)).unwrap());
    assert_eq!(started["stage"], "ResponseStarted");
    assert_eq!(started["verb"], "watch");
    assert_eq!(
        started["responseStatus"],
        json!({"metadata": {}, "code": 200})
    );
    let done = parse(&record.stream_complete(200, at(4)).unwrap());
    assert_eq!(done["stage"], "ResponseComplete");
}

#[test]
fn none_level_is_not_recorded() {
    let request = http::Request::get("/api/v1/namespaces/default/events")
        .body(Bytes::new())
        .unwrap();
    assert!(record_for(&request, Some(&admin()), &policy()).is_none());
}

#[test]
fn non_resource_requests_use_the_method_as_verb() {
    let request = http::Request::get("/healthz?verbose")
        .header("x-forwarded-for", "10.0.0.1, bogus, 10.0.0.2")
        .header("x-real-ip", "10.0.0.1")
        .body(Bytes::new())
        .unwrap();
    let record = record_for(&request, Some(&admin()), &policy()).unwrap();
    let event = parse(
        &record
            .response_complete(&json_response(200, &json!("ok")), at(2))
            .unwrap(),
    );
    assert_eq!(event["verb"], "get");
    assert!(event.get("objectRef").is_none());
    assert_eq!(event["requestURI"], "/healthz?verbose");
    assert_eq!(
        event["sourceIPs"],
        json!(["10.0.0.1", "10.0.0.2", "127.0.0.1"])
    );
}

#[test]
fn failed_authentication_is_one_response_started_event() {
    let request = http::Request::get("/api/v1/namespaces")
        .body(Bytes::new())
        .unwrap();
    let record = record_for(&request, None, &policy()).unwrap();
    assert_eq!(record.request_received(at(1)), None);
    let event = parse(
        &record
            .response_complete(&json_response(401, &json!({})), at(2))
            .unwrap(),
    );
    assert_eq!(event["stage"], "ResponseStarted");
    assert_eq!(event["user"], json!({}));
    assert_eq!(
        event["responseStatus"],
        json!({"metadata": {}, "code": 401})
    );
    assert!(event.get("annotations").is_none());
}

#[test]
fn panics_are_logged_as_internal_errors() {
    let request = http::Request::delete("/api/v1/namespaces/default/secrets/s")
        .body(Bytes::new())
        .unwrap();
    let record = record_for(&request, Some(&admin()), &policy()).unwrap();
    let event = parse(&record.panic("boom", at(2)).unwrap());
    assert_eq!(event["stage"], "Panic");
    assert_eq!(
        event["responseStatus"],
        json!({"metadata": {}, "status": "Failure", "message": "APIServer panic'd: boom",
            "reason": "InternalError", "code": 500})
    );
}

#[test]
fn audit_ids_honour_the_callers_header() {
    let mut headers = http::HeaderMap::new();
    assert_eq!(
        audit_id(&headers, [0; 16]),
        "00000000-0000-4000-8000-000000000000"
    );
    headers.insert(AUDIT_ID_HEADER, "my-id".parse().unwrap());
    assert_eq!(audit_id(&headers, [0; 16]), "my-id");
}

#[test]
fn long_user_agents_are_truncated() {
    let request = http::Request::get("/version")
        .header("user-agent", "a".repeat(2000))
        .body(Bytes::new())
        .unwrap();
    let record = record_for(&request, Some(&admin()), &policy()).unwrap();
    let event = parse(&record.stream_complete(200, at(2)).unwrap());
    let ua = event["userAgent"].as_str().unwrap();
    assert_eq!(ua, format!("{}...TRUNCATED", "a".repeat(1024)));
}
