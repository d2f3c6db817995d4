//! The aggregation layer over the deterministic harness: autoregistered APIServices,
//! the availability check of a service-backed one, the proxy and discovery.

use apiary_core::effect::{CallError, CallOutcome, Outbound};
use apiary_core::harness::{parse_responses, Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};

const APISERVICES: &str = "/apis/apiregistration.k8s.io/v1/apiservices";
const WARDLE: &str = "v1alpha1.wardle.example.com";

fn harness() -> Harness<MemoryStore> {
    Harness::new(Config::default(), MemoryStore::new())
}

fn one(bytes: &[u8]) -> Reply {
    let mut replies = parse_responses(bytes).expect("well-formed HTTP/1.1");
    assert_eq!(replies.len(), 1, "{}", String::from_utf8_lossy(bytes));
    replies.remove(0)
}

fn get(h: &Harness<MemoryStore>, path: &str, headers: &str) -> Reply {
    one(&h.send(format!("GET {path} HTTP/1.1\r\nHost: apiary\r\nAccept: application/json\r\n{headers}\r\n").as_bytes()))
}

fn create(h: &Harness<MemoryStore>, path: &str, body: Value) {
    let reply = h.json_call("POST", path, "application/json", Some(&body));
    assert_eq!(reply.status, 201, "{}", String::from_utf8_lossy(&reply.body));
    h.reflect();
}

fn available(h: &Harness<MemoryStore>, name: &str) -> Value {
    let api = get(h, &format!("{APISERVICES}/{name}"), "").json();
    let conditions = api["status"]["conditions"].as_array().cloned().unwrap_or_default();
    let c = conditions.into_iter().find(|c| c["type"] == "Available").unwrap_or(Value::Null);
    json!([c["status"], c["reason"], c["message"]])
}

/// A Service and its endpoints for the wardle server, and its APIService.
fn register_wardle(h: &Harness<MemoryStore>, service: bool, endpoints: bool) {
    register_backend(h, service, endpoints);
    register_apiservice(h);
}

fn register_backend(h: &Harness<MemoryStore>, service: bool, endpoints: bool) {
    if service {
        create(h, "/api/v1/namespaces/default/services", json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "wardle"}, "spec": {"ports": [{"name": "https", "port": 443, "targetPort": 8443}]}}));
    }
    if endpoints {
        create(h, "/api/v1/namespaces/default/endpoints", json!({"apiVersion": "v1", "kind": "Endpoints",
            "metadata": {"name": "wardle"}, "subsets": [{"addresses": [{"ip": "10.0.0.7"}], "ports": [{"name": "https", "port": 8443}]}]}));
    }
}

fn register_apiservice(h: &Harness<MemoryStore>) {
    create(h, APISERVICES, json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": WARDLE},
        "spec": {"group": "wardle.example.com", "version": "v1alpha1", "groupPriorityMinimum": 17900, "versionPriority": 15,
                 "insecureSkipTLSVerify": true, "service": {"namespace": "default", "name": "wardle"}}}));
}

fn discovery_answer(out: &Outbound) -> CallOutcome {
    let body = match out.request.uri().path() {
        "/apis/wardle.example.com/v1alpha1" => json!({"kind": "APIResourceList", "groupVersion": "wardle.example.com/v1alpha1", "resources": []}),
        _ => json!({"kind": "FlunderList", "items": [], "headers": headers_of(out)}),
    };
    Ok(http::Response::builder().status(200).header("content-type", "application/json").body(bytes::Bytes::from(body.to_string())).unwrap())
}

/// The request's headers, as the backend saw them (repeated ones in order).
fn headers_of(out: &Outbound) -> Value {
    let pairs: Vec<Value> = out.request.headers().iter().map(|(k, v)| json!([k.as_str(), v.to_str().unwrap()])).collect();
    json!(pairs)
}

#[test]
fn built_in_group_versions_are_registered_with_upstreams_priorities() {
    let h = harness();
    let list = get(&h, APISERVICES, "").json();
    let recorded: Value = serde_json::from_str(include_str!("../../../shared/upstream/bootstrap/other-startup-objects.json")).unwrap();
    for want in recorded["apiServices"].as_array().unwrap() {
        let name = want["metadata"]["name"].as_str().unwrap();
        let got = list["items"].as_array().unwrap().iter().find(|a| a["metadata"]["name"] == name);
        let got = got.unwrap_or_else(|| panic!("{name} is not registered"));
        assert_eq!(got["spec"], want["spec"], "{name}");
        assert_eq!(got["metadata"]["labels"], want["metadata"]["labels"], "{name}");
        let c = &got["status"]["conditions"][0];
        assert_eq!((&c["type"], &c["status"], &c["reason"], &c["message"]), (&json!("Available"), &json!("True"), &json!("Local"), &json!("Local APIServices are always available")));
    }
}

#[test]
fn a_crds_group_version_is_registered_while_it_is_served() {
    let h = harness();
    create(&h, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object"}}}]}}));
    let api = get(&h, &format!("{APISERVICES}/v1.example.com"), "").json();
    assert_eq!(api["spec"], json!({"group": "example.com", "version": "v1", "groupPriorityMinimum": 1000, "versionPriority": 100}));
    assert_eq!(api["metadata"]["labels"]["kube-aggregator.kubernetes.io/automanaged"], "true");
    assert_eq!(available(&h, "v1.example.com"), json!(["True", "Local", "Local APIServices are always available"]));
    let deleted = h.json_call("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com", "application/json", None);
    assert_eq!(deleted.status, 200);
    h.reflect();
    assert_eq!(get(&h, &format!("{APISERVICES}/v1.example.com"), "").status, 404);
}

#[test]
fn availability_follows_the_service_its_endpoints_and_the_discovery_check() {
    let h = harness();
    register_wardle(&h, false, false);
    h.check_availability();
    assert_eq!(available(&h, WARDLE), json!(["False", "ServiceNotFound", "service/wardle in \"default\" is not present"]));
    register_backend(&h, true, false);
    h.check_availability();
    assert_eq!(available(&h, WARDLE), json!(["False", "EndpointsNotFound", "cannot find endpoints for service/wardle in \"default\""]));
    create(&h, "/api/v1/namespaces/default/endpoints", json!({"apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": "wardle"}, "subsets": [{"addresses": [{"ip": "10.0.0.7"}], "ports": [{"name": "other", "port": 8443}]}]}));
    h.check_availability();
    assert_eq!(available(&h, WARDLE), json!(["False", "MissingEndpoints", "endpoints for service/wardle in \"default\" have no addresses with port name \"https\""]));
    let fixed = h.json_call("PUT", "/api/v1/namespaces/default/endpoints/wardle", "application/json", Some(&json!({"apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": "wardle"}, "subsets": [{"addresses": [{"ip": "10.0.0.7"}], "ports": [{"name": "https", "port": 8443}]}]})));
    assert_eq!(fixed.status, 200);
    h.reflect();
    h.answer_calls(|_| Err(CallError::Unreachable("dial tcp 10.0.0.7:8443: connect: connection refused".into())));
    h.check_availability();
    assert_eq!(available(&h, WARDLE), json!(["False", "FailedDiscoveryCheck",
        "failing or missing response from https://10.0.0.7:8443/apis/wardle.example.com/v1alpha1: dial tcp 10.0.0.7:8443: connect: connection refused"]));
    h.answer_calls(|out| {
        assert_eq!(out.request.uri(), "https://10.0.0.7:8443/apis/wardle.example.com/v1alpha1");
        assert_eq!(out.request.headers()["x-remote-user"], "system:kube-aggregator");
        assert_eq!(out.tls.as_ref().unwrap().server_name.as_deref(), Some("wardle.default.svc"));
        Ok(http::Response::builder().status(404).body(bytes::Bytes::new()).unwrap())
    });
    h.check_availability();
    assert_eq!(available(&h, WARDLE)[2], "failing or missing response from https://10.0.0.7:8443/apis/wardle.example.com/v1alpha1: bad status from https://10.0.0.7:8443/apis/wardle.example.com/v1alpha1: 404");
    h.answer_calls(discovery_answer);
    h.check_availability();
    assert_eq!(available(&h, WARDLE), json!(["True", "Passed", "all checks passed"]));
    let table = get(&h, APISERVICES, "").json();
    assert!(table["items"].as_array().unwrap().len() > 20);
}

#[test]
fn a_proxied_request_carries_the_callers_identity_and_not_its_credentials() {
    let h = harness();
    register_wardle(&h, true, true);
    h.answer_calls(|_| Err(CallError::Unreachable("connection refused".into())));
    h.check_availability();
    // Not available: upstream's plain-text 503.
    let refused = get(&h, "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders", "");
    assert_eq!(refused.status, 503);
    assert_eq!(refused.header("content-type"), Some("text/plain; charset=utf-8"));
    assert_eq!(&refused.body[..], b"service unavailable\n");
    h.answer_calls(discovery_answer);
    h.check_availability();
    // alice may read anything here.
    create(&h, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "alice"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}]}));
    h.act_as(Some("alice"), &["devs"]);
    let forged = "Authorization: Bearer secret\r\nX-Remote-User: mallory\r\nX-Remote-Group: system:masters\r\nX-Remote-Extra-Scopes: all\r\n";
    let relayed = get(&h, "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders?limit=1", forged);
    assert_eq!(relayed.status, 200, "{}", String::from_utf8_lossy(&relayed.body));
    let body = relayed.json();
    assert_eq!(body["kind"], "FlunderList");
    let seen: Vec<(String, String)> = body["headers"].as_array().unwrap().iter()
        .map(|p| (p[0].as_str().unwrap().to_owned(), p[1].as_str().unwrap().to_owned()))
        .filter(|(k, _)| k.starts_with("x-remote") || k == "authorization")
        .collect();
    let pair = |k: &str, v: &str| (k.to_owned(), v.to_owned());
    assert_eq!(seen, [pair("x-remote-user", "alice"), pair("x-remote-group", "devs"), pair("x-remote-group", "system:authenticated")]);
    // The backend gone: 503 with the failure, as upstream's proxy writes it.
    h.answer_calls(|_| Err(CallError::Unreachable("dial tcp 10.0.0.7:8443: connect: connection refused".into())));
    let down = get(&h, "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders", "");
    assert_eq!(down.status, 503);
    assert_eq!(&down.body[..], b"dial tcp 10.0.0.7:8443: connect: connection refused\n");
}

#[test]
fn discovery_lists_aggregated_groups_by_priority() {
    let h = harness();
    let before = get(&h, "/apis", "").body;
    register_wardle(&h, true, true);
    let groups = get(&h, "/apis", "").json();
    let names: Vec<&str> = groups["groups"].as_array().unwrap().iter().map(|g| g["name"].as_str().unwrap()).collect();
    // 17900: after the aggregator's own group, before apps (17800).
    assert_eq!(names[..3], ["apiregistration.k8s.io", "wardle.example.com", "apps"]);
    let group = get(&h, "/apis/wardle.example.com", "").json();
    assert_eq!(group["preferredVersion"], json!({"groupVersion": "wardle.example.com/v1alpha1", "version": "v1alpha1"}));
    assert_eq!(group["kind"], "APIGroup");
    // Aggregated discovery lists it too, in the same place (its resources are in
    // core/tests/aggregation_discovery.rs).
    let v2 = one(&h.send(b"GET /apis HTTP/1.1\r\nHost: apiary\r\nAccept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json\r\n\r\n"));
    assert_eq!(v2.json()["kind"], "APIGroupDiscoveryList");
    assert_eq!(v2.json()["items"][1]["metadata"]["name"], "wardle.example.com");
    // Without it, the list is the built-in one.
    assert_eq!(h.json_call("DELETE", &format!("{APISERVICES}/{WARDLE}"), "application/json", None).status, 200);
    h.reflect();
    assert_eq!(get(&h, "/apis", "").body, before);
}

#[test]
fn a_watch_through_the_aggregator_is_streamed_as_the_backend_writes_it() {
    let h = harness();
    register_wardle(&h, true, true);
    h.answer_calls(discovery_answer);
    h.check_availability();
    let events = "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Flunder\",\"metadata\":{\"name\":\"a\"}}}\n\
                  {\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Flunder\",\"metadata\":{\"name\":\"a\"}}}\n";
    h.answer_calls(move |out| {
        if out.request.uri().query() != Some("watch=true") {
            return discovery_answer(out);
        }
        Ok(http::Response::builder()
            .status(200)
            .header("content-type", "application/json")
            .header("content-length", events.len())
            .header("connection", "keep-alive")
            .header("x-from-backend", "wardle")
            .body(bytes::Bytes::from_static(events.as_bytes()))
            .unwrap())
    });
    let watch = get(&h, "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders?watch=true", "");
    assert_eq!(watch.status, 200);
    assert_eq!(&watch.body[..], events.as_bytes());
    // Streamed in the client's framing; the backend's own framing and hop-by-hop
    // headers stay behind, its others come along.
    assert_eq!(watch.header("transfer-encoding"), Some("chunked"));
    assert_eq!(watch.header("content-length"), None);
    assert_eq!(watch.header("connection"), None);
    assert_eq!(watch.header("x-from-backend"), Some("wardle"));
    assert!(watch.header("audit-id").is_some());
    // A list is answered whole, with its length.
    let list = get(&h, "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders", "");
    assert_eq!(list.status, 200);
    assert!(list.header("content-length").is_some());
    assert_eq!(list.header("transfer-encoding"), None);
    // No head from the backend: the same 503 as any proxied request.
    h.answer_calls(|_| Err(CallError::Unreachable("dial tcp 10.0.0.7:8443: connect: connection refused".into())));
    let down = get(&h, "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders?watch=true", "");
    assert_eq!(down.status, 503);
    assert_eq!(&down.body[..], b"dial tcp 10.0.0.7:8443: connect: connection refused\n");
}
