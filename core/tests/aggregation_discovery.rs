//! What the aggregator serves of its extension servers' documents, over the
//! deterministic harness: aggregated discovery (`apidiscovery.k8s.io`) lists a
//! service-backed group version with the resources its backend listed at the last
//! passing availability check (`Current`), in upstream's group and version order, and
//! `Stale` without resources while the APIService is not Available; the OpenAPI v3
//! index names the backend's document of that group version, which is proxied.

use apiary_core::effect::{CallError, CallOutcome, Outbound};
use apiary_core::harness::{parse_responses, Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};

const APISERVICES: &str = "/apis/apiregistration.k8s.io/v1/apiservices";
const V2: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
const V2BETA1: &str = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
/// The backend's hash of its wardle document, as its OpenAPI v3 index names it.
const WARDLE_HASH: &str = "0A1B2C";

fn get(h: &Harness<MemoryStore>, path: &str, accept: &str) -> Reply {
    let request = format!("GET {path} HTTP/1.1\r\nHost: apiary\r\nAccept: {accept}\r\n\r\n");
    parse_responses(&h.send(request.as_bytes())).expect("well-formed HTTP/1.1").remove(0)
}

fn created(h: &Harness<MemoryStore>, path: &str, body: Value) {
    let reply = h.json_call("POST", path, "application/json", Some(&body));
    assert_eq!(reply.status, 201, "{}", String::from_utf8_lossy(&reply.body));
    h.reflect();
}

/// The wardle server behind a Service with endpoints, and an APIService for each of
/// `versions` (version, versionPriority) with `group_priority`.
fn wardle(h: &Harness<MemoryStore>, group: &str, group_priority: i64, versions: &[(&str, i64)]) {
    if h.json_call("GET", "/api/v1/namespaces/default/services/wardle", "application/json", None).status == 404 {
        created(h, "/api/v1/namespaces/default/services", json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "wardle"}, "spec": {"ports": [{"name": "https", "port": 443, "targetPort": 8443}]}}));
        created(h, "/api/v1/namespaces/default/endpoints", json!({"apiVersion": "v1", "kind": "Endpoints",
            "metadata": {"name": "wardle"}, "subsets": [{"addresses": [{"ip": "10.0.0.7"}], "ports": [{"name": "https", "port": 8443}]}]}));
    }
    for (version, version_priority) in versions {
        created(h, APISERVICES, json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": format!("{version}.{group}")},
            "spec": {"group": group, "version": version, "groupPriorityMinimum": group_priority, "versionPriority": version_priority,
                     "insecureSkipTLSVerify": true, "service": {"namespace": "default", "name": "wardle"}}}));
    }
}

/// The backend: each group version's legacy discovery document (a namespaced resource
/// with a status subresource, and a cluster-scoped one with short names and
/// categories), its OpenAPI v3 index and documents; it serves no aggregated discovery.
fn backend(out: &Outbound) -> CallOutcome {
    let path = out.request.uri().path();
    let body = if let Some(gv) = path.strip_prefix("/apis/") {
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": [
            {"name": "flunders", "singularName": "flunder", "namespaced": true, "kind": "Flunder", "verbs": ["create", "get", "list", "watch"], "storageVersionHash": "x"},
            {"name": "flunders/status", "singularName": "", "namespaced": true, "kind": "Flunder", "verbs": ["get", "patch", "update"]},
            {"name": "fischers", "singularName": "fischer", "namespaced": false, "kind": "Fischer", "verbs": ["get", "list"], "shortNames": ["fi"], "categories": ["all"]},
        ]})
    } else if path == "/openapi/v3" {
        let url = |gv: &str| json!({"serverRelativeURL": format!("/openapi/v3/{gv}?hash={WARDLE_HASH}")});
        json!({"paths": {"apis/wardle.example.com/v1alpha1": url("apis/wardle.example.com/v1alpha1"), "version": url("version")}})
    } else if path.starts_with("/openapi/v3/apis/") {
        json!({"openapi": "3.0.0", "info": {"title": "wardle"}, "asked": out.request.uri().to_string(),
               "user": out.request.headers()["x-remote-user"].to_str().unwrap()})
    } else {
        return Ok(http::Response::builder().status(404).body(bytes::Bytes::new()).unwrap());
    };
    Ok(http::Response::builder().status(200).header("content-type", "application/json").body(bytes::Bytes::from(body.to_string())).unwrap())
}

fn unreachable(_: &Outbound) -> CallOutcome {
    Err(CallError::Unreachable("dial tcp 10.0.0.7:8443: connect: connection refused".into()))
}

/// The group `name` of aggregated discovery answered for `accept`, and its place.
fn aggregated_group(h: &Harness<MemoryStore>, accept: &str, name: &str) -> Option<(usize, Value)> {
    let reply = get(h, "/apis", accept);
    assert_eq!(reply.status, 200);
    let list = reply.json();
    assert_eq!(list["kind"], "APIGroupDiscoveryList");
    let items = list["items"].as_array().unwrap();
    items.iter().position(|g| g["metadata"]["name"] == name).map(|at| (at, items[at].clone()))
}

/// Upstream's conversion of the backend's legacy document: resources in its order,
/// `flunders/status` a subresource of `flunders`, `storageVersionHash` dropped.
fn wardle_resources() -> Value {
    json!([
        {"resource": "flunders", "responseKind": {"group": "", "version": "", "kind": "Flunder"}, "scope": "Namespaced",
         "singularResource": "flunder", "verbs": ["create", "get", "list", "watch"],
         "subresources": [{"subresource": "status", "responseKind": {"group": "", "version": "", "kind": "Flunder"}, "verbs": ["get", "patch", "update"]}]},
        {"resource": "fischers", "responseKind": {"group": "", "version": "", "kind": "Fischer"}, "scope": "Cluster",
         "singularResource": "fischer", "verbs": ["get", "list"], "shortNames": ["fi"], "categories": ["all"]},
    ])
}

#[test]
fn aggregated_discovery_lists_the_backends_resources_once_a_check_passes() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    wardle(&h, "wardle.example.com", 17900, &[("v1alpha1", 15)]);
    // Not yet checked: listed, stale, no resources.
    let (at, group) = aggregated_group(&h, V2, "wardle.example.com").expect("listed before its check");
    assert_eq!(at, 1, "after apiregistration.k8s.io (its priority 17900 outranks apps' 17800)");
    assert_eq!(group["versions"], json!([{"version": "v1alpha1", "freshness": "Stale"}]));

    h.answer_calls(backend);
    h.check_availability();
    let (_, group) = aggregated_group(&h, V2, "wardle.example.com").unwrap();
    assert_eq!(group, json!({"metadata": {"name": "wardle.example.com", "creationTimestamp": null},
        "versions": [{"version": "v1alpha1", "resources": wardle_resources(), "freshness": "Current"}]}));
    // v2beta1 (kubectl 1.26 to 1.29) says the same.
    let reply = get(&h, "/apis", V2BETA1);
    assert_eq!(reply.header("content-type"), Some("application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"));
    assert_eq!(reply.json()["apiVersion"], "apidiscovery.k8s.io/v2beta1");
    assert_eq!(aggregated_group(&h, V2BETA1, "wardle.example.com").unwrap().1, group);
    // The local groups are as without it.
    let (_, apps) = aggregated_group(&h, V2, "apps").unwrap();
    assert_eq!(apps["versions"][0]["freshness"], "Current");
    assert!(apps["versions"][0]["resources"].as_array().unwrap().iter().any(|r| r["resource"] == "deployments"));
}

#[test]
fn aggregated_groups_and_versions_follow_the_apiservices_priorities() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    wardle(&h, "wardle.example.com", 17900, &[("v1alpha1", 15), ("v1beta1", 20), ("v1", 15)]);
    wardle(&h, "b.example.com", 100, &[("v1", 15)]);
    wardle(&h, "a.example.com", 100, &[("v1", 15)]);
    h.answer_calls(backend);
    h.check_availability();
    let list = get(&h, "/apis", V2).json();
    let names: Vec<&str> = list["items"].as_array().unwrap().iter().map(|g| g["metadata"]["name"].as_str().unwrap()).collect();
    assert_eq!(names[..3], ["apiregistration.k8s.io", "wardle.example.com", "apps"]);
    // Equal priorities: by name, after every built-in group.
    assert_eq!(names[names.len() - 2..], ["a.example.com", "b.example.com"]);
    // Versions by versionPriority, then kube version order; the same as /apis.
    let (_, group) = aggregated_group(&h, V2, "wardle.example.com").unwrap();
    let versions: Vec<&str> = group["versions"].as_array().unwrap().iter().map(|v| v["version"].as_str().unwrap()).collect();
    assert_eq!(versions, ["v1beta1", "v1", "v1alpha1"]);
    let legacy = h.json_call("GET", "/apis", "application/json", None).json();
    let legacy_names: Vec<&str> = legacy["groups"].as_array().unwrap().iter().map(|g| g["name"].as_str().unwrap()).collect();
    assert_eq!(legacy_names, names);
    assert!(group["versions"].as_array().unwrap().iter().all(|v| v["freshness"] == "Current" && v["resources"] == wardle_resources()));
}

#[test]
fn a_group_version_is_stale_while_unavailable_and_gone_with_its_apiservice() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    wardle(&h, "wardle.example.com", 17900, &[("v1alpha1", 15)]);
    h.answer_calls(backend);
    h.check_availability();
    assert_eq!(aggregated_group(&h, V2, "wardle.example.com").unwrap().1["versions"][0]["freshness"], "Current");
    // The backend gone: unavailable, listed stale without its resources.
    h.answer_calls(unreachable);
    h.check_availability();
    let (_, group) = aggregated_group(&h, V2, "wardle.example.com").unwrap();
    assert_eq!(group["versions"], json!([{"version": "v1alpha1", "freshness": "Stale"}]));
    // A backend that answers 2xx with no resource list: available, but nothing to list.
    h.answer_calls(|_| Ok(http::Response::builder().status(200).body(bytes::Bytes::from_static(b"ok")).unwrap()));
    h.check_availability();
    assert_eq!(aggregated_group(&h, V2, "wardle.example.com").unwrap().1["versions"][0]["freshness"], "Stale");
    // Back, then deleted: the group leaves.
    h.answer_calls(backend);
    h.check_availability();
    assert_eq!(aggregated_group(&h, V2, "wardle.example.com").unwrap().1["versions"][0]["resources"], wardle_resources());
    assert_eq!(h.json_call("DELETE", &format!("{APISERVICES}/v1alpha1.wardle.example.com"), "application/json", None).status, 200);
    h.reflect();
    assert!(aggregated_group(&h, V2, "wardle.example.com").is_none());
}

#[test]
fn the_openapi_v3_index_names_the_backends_document_which_is_proxied() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    let own = get(&h, "/openapi/v3", "application/json");
    wardle(&h, "wardle.example.com", 17900, &[("v1alpha1", 15)]);
    let asked = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let seen = asked.clone();
    h.answer_calls(move |out| {
        seen.borrow_mut().push((out.request.uri().path().to_owned(), out.request.headers().get("x-remote-user").cloned()));
        backend(out)
    });
    // The first check makes it Available; the next reads the backend's index, as
    // upstream's OpenAPI controller does, as system:aggregator.
    h.check_availability();
    assert!(!get(&h, "/openapi/v3", "application/json").json()["paths"].as_object().unwrap().contains_key("apis/wardle.example.com/v1alpha1"));
    h.check_availability();
    let index_read = asked.borrow().iter().find(|(p, _)| p == "/openapi/v3").cloned();
    assert_eq!(index_read, Some(("/openapi/v3".to_owned(), Some(http::HeaderValue::from_static("system:aggregator")))));
    let index = get(&h, "/openapi/v3", "application/json");
    let paths = index.json()["paths"].clone();
    assert_eq!(paths["apis/wardle.example.com/v1alpha1"],
        json!({"serverRelativeURL": format!("/openapi/v3/apis/wardle.example.com/v1alpha1?hash={WARDLE_HASH}")}));
    // Only that group version: the server's own entries stay its own.
    let own_paths = own.json()["paths"].clone();
    assert_eq!(paths["version"], own_paths["version"]);
    assert_eq!(paths.as_object().unwrap().len(), own_paths.as_object().unwrap().len() + 1);
    assert_ne!(index.header("etag"), own.header("etag"));
    // Read again only a minute later.
    h.check_availability();
    assert_eq!(asked.borrow().iter().filter(|(p, _)| p == "/openapi/v3").count(), 1);

    // The document, by its URL: the backend answers it, for the caller.
    let doc = get(&h, &format!("/openapi/v3/apis/wardle.example.com/v1alpha1?hash={WARDLE_HASH}"), "application/json");
    assert_eq!(doc.status, 200, "{}", String::from_utf8_lossy(&doc.body));
    assert_eq!(doc.json()["asked"], format!("https://10.0.0.7:8443/openapi/v3/apis/wardle.example.com/v1alpha1?hash={WARDLE_HASH}"));
    assert_eq!(doc.json()["user"], "apiary-admin");

    // Unavailable: out of the index, and its document answers 503 as the group does.
    h.answer_calls(unreachable);
    h.check_availability();
    assert_eq!(get(&h, "/openapi/v3", "application/json").body, own.body);
    let refused = get(&h, "/openapi/v3/apis/wardle.example.com/v1alpha1", "application/json");
    assert_eq!(refused.status, 503);
}
