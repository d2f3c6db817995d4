//! The whole server driven synchronously over the memory backend: every REST verb and
//! every error path a client can see, with the exact Status bodies.

mod support;

use bytes::Bytes;
use serde_json::{json, Value};
use support::Harness;

fn cm(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}})
}

#[test]
fn create_get_list_delete_round_trip() {
    let h = Harness::new();
    let created = h.call("POST", "/api/v1/namespaces/default/configmaps", cm("a"));
    assert_eq!(created.status, 201);
    assert_eq!(created.content_type, "application/json");
    let obj = created.json();
    assert_eq!(obj["metadata"]["namespace"], "default");
    assert_eq!(obj["metadata"]["creationTimestamp"], "2026-11-18T11:06:40Z");
    assert_eq!(obj["metadata"]["uid"].as_str().unwrap().len(), 36);
    assert!(obj["metadata"].get("generation").is_none());
    let rv: u64 = obj["metadata"]["resourceVersion"].as_str().unwrap().parse().unwrap();
    assert!(rv > 4, "bootstrap namespaces came first");

    let got = h.call("GET", "/api/v1/namespaces/default/configmaps/a", Value::Null);
    assert_eq!(got.status, 200);
    assert_eq!(got.json(), obj);

    let list = h.call("GET", "/api/v1/namespaces/default/configmaps", Value::Null).json();
    assert_eq!(list["kind"], "ConfigMapList");
    assert_eq!(list["apiVersion"], "v1");
    assert_eq!(list["items"][0]["metadata"]["name"], "a");
    assert!(list["items"][0].get("kind").is_none());
    let all = h.call("GET", "/api/v1/configmaps", Value::Null).json();
    assert_eq!(all["items"].as_array().unwrap().len(), 1);

    let deleted = h.call("DELETE", "/api/v1/namespaces/default/configmaps/a", Value::Null);
    assert_eq!(deleted.status, 200);
    let status = deleted.json();
    assert_eq!(status["status"], "Success");
    assert_eq!(status["details"]["name"], "a");
    assert_eq!(status["details"]["kind"], "configmaps");
    assert_eq!(status["details"]["uid"], obj["metadata"]["uid"]);
    assert_eq!(h.call("GET", "/api/v1/namespaces/default/configmaps/a", Value::Null).status, 404);
}

#[test]
fn not_found_is_a_status() {
    let h = Harness::new();
    let r = h.call("GET", "/apis/apps/v1/namespaces/default/deployments/nope", Value::Null);
    assert_eq!(r.status, 404);
    assert_eq!(
        r.json(),
        json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
               "message":"deployments.apps \"nope\" not found","reason":"NotFound",
               "details":{"name":"nope","group":"apps","kind":"deployments"},"code":404})
    );
    let r = h.call("GET", "/api/v1/namespaces/default/widgets", Value::Null);
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["message"], "the server could not find the requested resource");
    assert_eq!(h.call("DELETE", "/api/v1/namespaces/default/configmaps/nope", Value::Null).status, 404);
    assert_eq!(h.call("PUT", "/api/v1/namespaces/default/configmaps/nope", cm("nope")).status, 404);
}

#[test]
fn already_exists_is_409() {
    let h = Harness::new();
    assert_eq!(h.call("POST", "/api/v1/namespaces/default/configmaps", cm("a")).status, 201);
    let r = h.call("POST", "/api/v1/namespaces/default/configmaps", cm("a"));
    assert_eq!(r.status, 409);
    let s = r.json();
    assert_eq!(s["reason"], "AlreadyExists");
    assert_eq!(s["message"], "configmaps \"a\" already exists");
}

#[test]
fn missing_namespace_is_404_for_the_namespace() {
    let h = Harness::new();
    let r = h.call("POST", "/api/v1/namespaces/nowhere/configmaps", cm("a"));
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["message"], "namespaces \"nowhere\" not found");
    assert_eq!(r.json()["details"], json!({"name": "nowhere", "kind": "namespaces"}));
}

#[test]
fn invalid_names_are_422_with_causes() {
    let h = Harness::new();
    let r = h.call("POST", "/api/v1/namespaces/default/configmaps", cm("Bad_Name"));
    assert_eq!(r.status, 422);
    let s = r.json();
    assert_eq!(s["reason"], "Invalid");
    assert!(s["message"].as_str().unwrap().starts_with("ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain"));
    assert_eq!(s["details"]["kind"], "ConfigMap");
    assert_eq!(s["details"]["name"], "Bad_Name");
    assert_eq!(s["details"]["causes"][0]["reason"], "FieldValueInvalid");
    assert_eq!(s["details"]["causes"][0]["field"], "metadata.name");

    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a.b"}});
    let r = h.call("POST", "/api/v1/namespaces", ns);
    assert_eq!(r.status, 422, "namespaces are labels, not subdomains");

    let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "1svc"}});
    assert_eq!(h.call("POST", "/api/v1/namespaces/default/services", svc).status, 422);

    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "system:Weird Name"}});
    assert_eq!(h.call("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", role).status, 201);

    let nameless = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}});
    let r = h.call("POST", "/api/v1/namespaces/default/configmaps", nameless);
    assert_eq!(r.status, 422);
    assert_eq!(r.json()["details"]["causes"][0]["reason"], "FieldValueRequired");
}

#[test]
fn generate_name_draws_a_suffix() {
    let h = Harness::new();
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "web-"}});
    let r = h.call("POST", "/api/v1/namespaces/default/configmaps", body);
    assert_eq!(r.status, 201);
    let name = r.json()["metadata"]["name"].as_str().unwrap().to_owned();
    assert!(name.starts_with("web-") && name.len() == 9, "{name}");
}

#[test]
fn body_must_match_the_url() {
    let h = Harness::new();
    let mut wrong_ns = cm("a");
    wrong_ns["metadata"]["namespace"] = json!("kube-system");
    let r = h.call("POST", "/api/v1/namespaces/default/configmaps", wrong_ns);
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["message"], "the namespace of the provided object does not match the namespace sent on the request");

    let mut wrong_version = cm("a");
    wrong_version["apiVersion"] = json!("apps/v1");
    let r = h.call("POST", "/api/v1/namespaces/default/configmaps", wrong_version);
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["message"], "the API version in the data (apps/v1) does not match the expected API version (v1)");

    let mut wrong_kind = cm("a");
    wrong_kind["kind"] = json!("Secret");
    let r = h.call("POST", "/api/v1/namespaces/default/configmaps", wrong_kind);
    assert_eq!(r.status, 400);
    assert!(r.json()["message"].as_str().unwrap().starts_with("Secret in version \"v1\" cannot be handled as a ConfigMap"));

    let r = h.send("POST", "/api/v1/namespaces/default/configmaps", &[("content-type", "application/json")], "{not json");
    assert_eq!(r.status, 400);
    assert!(r.json()["message"].as_str().unwrap().contains("the object provided is unrecognized (must be of type ConfigMap)"));

    assert_eq!(h.call("POST", "/api/v1/namespaces/default/configmaps", cm("a")).status, 201);
    let r = h.call("PUT", "/api/v1/namespaces/default/configmaps/a", cm("b"));
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["message"], "the name of the object (b) does not match the name on the URL (a)");
}

#[test]
fn stale_updates_conflict_and_fresh_ones_succeed() {
    let h = Harness::new();
    let created = h.call("POST", "/api/v1/namespaces/default/configmaps", cm("a")).json();
    let mut update = created.clone();
    update["data"]["k"] = json!("v2");
    let r = h.call("PUT", "/api/v1/namespaces/default/configmaps/a", update.clone());
    assert_eq!(r.status, 200);
    let updated = r.json();
    assert_eq!(updated["data"]["k"], "v2");
    assert_eq!(updated["metadata"]["uid"], created["metadata"]["uid"]);
    assert_ne!(updated["metadata"]["resourceVersion"], created["metadata"]["resourceVersion"]);

    // The same update again carries the old resourceVersion: a conflict.
    let r = h.call("PUT", "/api/v1/namespaces/default/configmaps/a", update);
    assert_eq!(r.status, 409);
    let s = r.json();
    assert_eq!(s["reason"], "Conflict");
    assert_eq!(s["message"], "Operation cannot be fulfilled on configmaps \"a\": the object has been modified; please apply your changes to the latest version and try again");

    // Without a resourceVersion the update is unconditional.
    let mut blind = cm("a");
    blind["data"]["k"] = json!("v3");
    assert_eq!(h.call("PUT", "/api/v1/namespaces/default/configmaps/a", blind).json()["data"]["k"], "v3");
}

#[test]
fn generation_counts_spec_changes_only() {
    let h = Harness::new();
    let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}},
        "status": {"replicas": 7}});
    let created = h.call("POST", "/apis/apps/v1/namespaces/default/deployments", deploy).json();
    assert_eq!(created["metadata"]["generation"], 1);
    assert_eq!(created["status"], json!({}), "status is not the client's to set on create");

    let mut relabel = created.clone();
    relabel["metadata"]["labels"] = json!({"x": "y"});
    let r = h.call("PUT", "/apis/apps/v1/namespaces/default/deployments/d", relabel).json();
    assert_eq!(r["metadata"]["generation"], 1);

    let mut scale = r.clone();
    scale["spec"]["replicas"] = json!(3);
    let r = h.call("PUT", "/apis/apps/v1/namespaces/default/deployments/d", scale).json();
    assert_eq!(r["metadata"]["generation"], 2);
    assert_eq!(r["spec"]["replicas"], 3);

    let mut status = r.clone();
    status["status"] = json!({"replicas": 3});
    status["spec"]["replicas"] = json!(9);
    let r = h.call("PUT", "/apis/apps/v1/namespaces/default/deployments/d/status", status).json();
    assert_eq!(r["status"]["replicas"], 3);
    assert_eq!(r["spec"]["replicas"], 3, "a status update leaves the spec alone");
    assert_eq!(r["metadata"]["generation"], 2);
}

#[test]
fn yaml_in_and_out_and_pretty_json() {
    let h = Harness::new();
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  k: v\n";
    let r = h.send(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        &[("content-type", "application/yaml"), ("accept", "application/yaml")],
        yaml,
    );
    assert_eq!(r.status, 201);
    assert_eq!(r.content_type, "application/yaml");
    let back: Value = serde_yaml::from_slice(&r.body).unwrap();
    assert_eq!(back["data"]["k"], "v");

    let r = h.send("GET", "/api/v1/namespaces/default/configmaps/y?pretty=true", &[], "");
    assert!(String::from_utf8_lossy(&r.body).contains("\n  \"kind\": \"ConfigMap\""));

    let r = h.send("GET", "/api/v1/namespaces/default/configmaps/y", &[("accept", "text/html")], "");
    assert_eq!(r.status, 406);
    assert_eq!(r.json()["reason"], "NotAcceptable");

    let r = h.send("POST", "/api/v1/namespaces/default/configmaps", &[("content-type", "text/plain")], "x");
    assert_eq!(r.status, 415);
    assert_eq!(r.json()["reason"], "UnsupportedMediaType");
}

#[test]
fn tables_for_kubectl_get() {
    let h = Harness::new();
    h.call("POST", "/api/v1/namespaces/default/configmaps", cm("a"));
    h.clock.set(h.clock.get() + 150);
    let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
    let r = h.send("GET", "/api/v1/namespaces/default/configmaps", &[("accept", accept)], "");
    assert_eq!(r.content_type, "application/json");
    let t = r.json();
    assert_eq!(t["kind"], "Table");
    let names: Vec<&str> = t["columnDefinitions"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Name", "Data", "Age"]);
    assert_eq!(t["rows"][0]["cells"], json!(["a", 1, "2m30s"]));
    assert_eq!(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");
}

#[test]
fn paging_with_limit_and_continue() {
    let h = Harness::new();
    for i in 0..5 {
        assert_eq!(h.call("POST", "/api/v1/namespaces/default/configmaps", cm(&format!("c{i}"))).status, 201);
    }
    let mut seen = Vec::new();
    let mut uri = "/api/v1/namespaces/default/configmaps?limit=2".to_owned();
    loop {
        let page = h.call("GET", &uri, Value::Null).json();
        for item in page["items"].as_array().unwrap() {
            seen.push(item["metadata"]["name"].as_str().unwrap().to_owned());
        }
        match page["metadata"]["continue"].as_str() {
            Some(token) => uri = format!("/api/v1/namespaces/default/configmaps?limit=2&continue={token}"),
            None => break,
        }
    }
    assert_eq!(seen, ["c0", "c1", "c2", "c3", "c4"]);
    let r = h.call("GET", "/api/v1/namespaces/default/configmaps?limit=2&continue=garbage", Value::Null);
    assert_eq!(r.status, 400);
}

/// The API's half of a namespace's deletion (the controller's is in namespaces.rs):
/// a DELETE makes it Terminating and answers it; it stays, with its content, until
/// its finalizers are gone.
#[test]
fn deleting_a_namespace_makes_it_terminating() {
    let h = Harness::new();
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}});
    let created = h.call("POST", "/api/v1/namespaces", ns).json();
    assert_eq!(created["status"]["phase"], "Active");
    assert_eq!(created["metadata"]["labels"]["kubernetes.io/metadata.name"], "x");
    assert_eq!(created["spec"]["finalizers"], json!(["kubernetes"]));
    h.call("POST", "/api/v1/namespaces/x/configmaps", cm("a"));
    let r = h.call("DELETE", "/api/v1/namespaces/x", Value::Null);
    assert_eq!(r.status, 200);
    let deleted = r.json();
    assert_eq!(deleted["kind"], "Namespace");
    assert_eq!(deleted["status"]["phase"], "Terminating");
    assert!(deleted["metadata"]["deletionTimestamp"].is_string(), "{deleted}");
    assert_eq!(deleted["metadata"].get("deletionGracePeriodSeconds"), None, "namespaces have no grace period");
    assert_eq!(h.call("GET", "/api/v1/namespaces/x/configmaps/a", Value::Null).status, 200);
    assert_eq!(h.call("GET", "/api/v1/namespaces/x", Value::Null).status, 200);
    assert_eq!(h.call("DELETE", "/api/v1/namespaces/x", Value::Null).json()["metadata"], deleted["metadata"], "a second DELETE changes nothing");
    let r = h.call("DELETE", "/api/v1/namespaces/default", Value::Null);
    assert_eq!(r.status, 403);
    assert_eq!(r.json()["message"], "namespaces \"default\" is forbidden: this namespace may not be deleted");
}

#[test]
fn delete_collection_and_preconditions() {
    let h = Harness::new();
    let a = h.call("POST", "/api/v1/namespaces/default/configmaps", cm("a")).json();
    h.call("POST", "/api/v1/namespaces/default/configmaps", cm("b"));
    let wrong = json!({"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": "nope"}});
    let r = h.call("DELETE", "/api/v1/namespaces/default/configmaps/a", wrong);
    assert_eq!(r.status, 409);
    assert!(r.json()["message"].as_str().unwrap().contains("Precondition failed: UID in precondition: nope"));
    let right = json!({"preconditions": {"uid": a["metadata"]["uid"]}});
    assert_eq!(h.call("DELETE", "/api/v1/namespaces/default/configmaps/a", right).status, 200);
    let r = h.call("DELETE", "/api/v1/namespaces/default/configmaps", Value::Null).json();
    assert_eq!(r["kind"], "ConfigMapList");
    assert_eq!(r["items"].as_array().unwrap().len(), 1);
    let list = h.call("GET", "/api/v1/namespaces/default/configmaps", Value::Null).json();
    assert!(list["items"].as_array().unwrap().is_empty());
}

#[test]
fn discovery_documents_are_routed() {
    let h = Harness::new();
    let get = |uri: &str, accept: &str| h.send("GET", uri, &[("accept", accept)], "");
    let r = get("/api", "application/json");
    assert_eq!(r.json()["kind"], "APIVersions");
    let r = get("/apis", "application/json");
    assert_eq!(r.json()["kind"], "APIGroupList");
    let r = get("/apis/apps", "application/json");
    assert_eq!(r.json()["preferredVersion"]["groupVersion"], "apps/v1");
    let r = get("/api/v1", "application/json");
    let resources = r.json()["resources"].as_array().unwrap().clone();
    assert!(resources.iter().any(|r| r["name"] == "pods/status"));
    let r = get("/apis/nope/v1", "application/json");
    assert_eq!(r.status, 404);

    let aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    let r = get("/apis", aggregated);
    assert_eq!(r.content_type, "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
    let doc = r.json();
    assert_eq!(doc["kind"], "APIGroupDiscoveryList");
    assert!(doc["items"].as_array().unwrap().iter().any(|g| g["metadata"]["name"] == "apps"));
    let r = get("/api", "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList");
    assert_eq!(r.json()["apiVersion"], "apidiscovery.k8s.io/v2beta1");
}

/// A protobuf body as client-go 1.31+ typed clients send it: the `k8s\0` magic and a
/// runtime.Unknown envelope around the object's own message.
fn protobuf_namespace(name: &str) -> Vec<u8> {
    let field = |tag: u8, bytes: &[u8]| [&[tag, bytes.len() as u8][..], bytes].concat();
    let object_meta = field(0x0a, name.as_bytes());
    let namespace = field(0x0a, &object_meta);
    let type_meta = [field(0x0a, b"v1"), field(0x12, b"Namespace")].concat();
    let unknown = [field(0x0a, &type_meta), field(0x12, &namespace)].concat();
    [&b"k8s\x00"[..], &unknown].concat()
}

#[test]
fn protobuf_bodies_are_read_as_json() {
    let h = Harness::new();
    let req = http::Request::post("/api/v1/namespaces")
        .header("content-type", "application/vnd.kubernetes.protobuf")
        .header("accept", "application/vnd.kubernetes.protobuf,application/json")
        .body(Bytes::from(protobuf_namespace("pb")))
        .unwrap();
    let r = h.drive(h.server.handle_as_system(req, h.inputs()));
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    // Answered in protobuf, as client-go asks first.
    assert_eq!(r.content_type, "application/vnd.kubernetes.protobuf");
    let created = apiary_core::protobuf::decode(&r.body).unwrap();
    assert_eq!(created["metadata"]["name"], "pb");
    assert_eq!(created["status"]["phase"], "Active");

    let req = http::Request::post("/api/v1/namespaces")
        .header("content-type", "application/vnd.kubernetes.protobuf")
        .body(Bytes::from_static(b"k8s\x00\x0a\xff"))
        .unwrap();
    let r = h.drive(h.server.handle_as_system(req, h.inputs()));
    assert_eq!(r.status, 400);
    assert!(r.json()["message"].as_str().unwrap().contains("protobuf: "), "{}", r.json());
}
