//! A resource joins the registry while the server runs and leaves it again, as a CRD's
//! will: its objects are served, discovery and OpenAPI show it, and once it is gone
//! its paths and documents are gone too. Driven over the deterministic harness.

use apiary_core::harness::{parse_responses, Harness, Reply};
use apiary_core::registry::{NameRule, Resource};
use apiary_core::resources::SharedStrategy;
use apiary_core::schema::ResourceSchema;
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};

const WIDGETS: &str = "/apis/example.com/v1/namespaces/default/widgets";
const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

fn widgets() -> Resource {
    let strings = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect();
    Resource {
        group: "example.com".into(),
        version: "v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
        singular: "widget".into(),
        namespaced: true,
        verbs: strings(&["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]),
        short_names: strings(&["wd"]),
        categories: vec![],
        subresources: vec![],
        name_rule: NameRule::Dns1123Subdomain,
        storage_version_hash: None,
        strategy: SharedStrategy::plain(),
        schema: ResourceSchema::custom(json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": { "size": { "type": "integer" } }
                }
            }
        })),
    }
}

fn request(method: &str, path: &str, accept: &str, body: &str) -> Vec<u8> {
    format!(
        "{method} {path} HTTP/1.1\r\nHost: apiary\r\nAccept: {accept}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn one(bytes: &[u8]) -> Reply {
    let mut replies = parse_responses(bytes).expect("well-formed HTTP/1.1");
    assert_eq!(replies.len(), 1, "{}", String::from_utf8_lossy(bytes));
    replies.remove(0)
}

fn get(h: &Harness<MemoryStore>, path: &str) -> Reply {
    one(&h.send(&request("GET", path, "application/json", "")))
}

fn get_as(h: &Harness<MemoryStore>, path: &str, accept: &str) -> Reply {
    one(&h.send(&request("GET", path, accept, "")))
}

fn post(h: &Harness<MemoryStore>, path: &str, body: Value) -> Reply {
    one(&h.send(&request("POST", path, "application/json", &body.to_string())))
}

fn widget(name: &str, spec: Value) -> Value {
    json!({ "apiVersion": "example.com/v1", "kind": "Widget", "metadata": { "name": name }, "spec": spec })
}

fn group_names(apis: &Value) -> Vec<String> {
    apis["groups"]
        .as_array()
        .map(|groups| groups.iter().map(|g| g["name"].as_str().unwrap_or("").to_owned()).collect())
        .unwrap_or_default()
}

fn aggregated_names(doc: &Value) -> Vec<String> {
    doc["items"]
        .as_array()
        .map(|groups| groups.iter().map(|g| g["metadata"]["name"].as_str().unwrap_or("").to_owned()).collect())
        .unwrap_or_default()
}

fn openapi_v3_paths(h: &Harness<MemoryStore>) -> Vec<String> {
    let root = get(h, "/openapi/v3");
    assert_eq!(root.status, 200);
    root.json()["paths"].as_object().map(|p| p.keys().cloned().collect()).unwrap_or_default()
}

#[test]
fn a_resource_added_while_serving_is_served_then_gone_once_removed() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    // Documents built before the change must not hide it afterwards.
    assert!(!openapi_v3_paths(&h).contains(&"apis/example.com/v1".to_owned()));
    assert_eq!(get(&h, WIDGETS).status, 404);

    assert!(h.server.add_resource(widgets()).is_none());
    // Its cache is new, and unsynced until a reflector fills it: reads go to storage.
    let cache = h.server.watch_cache("/registry/example.com/widgets/").expect("a cache for widgets");
    assert_eq!(cache.object_count(), None);

    // Create (undeclared fields pruned, with a warning), get, list, watch.
    let created = post(&h, WIDGETS, widget("a", json!({ "size": 3, "colour": "red" })));
    assert_eq!(created.status, 201, "{}", String::from_utf8_lossy(&created.body));
    assert_eq!(created.json()["spec"], json!({ "size": 3 }));
    assert_eq!(created.header("warning"), Some(r#"299 - "unknown field \"spec.colour\"""#));
    assert_eq!(post(&h, WIDGETS, widget("b", json!({ "size": 1 }))).status, 201);
    // The reflector saw the set of caches change and relisted: the new cache is filled.
    h.reflect();
    assert_eq!(cache.object_count(), Some(2));
    let got = get(&h, &format!("{WIDGETS}/a"));
    assert_eq!(got.status, 200);
    assert_eq!(got.json()["kind"], "Widget");
    assert_eq!(got.json()["spec"]["size"], 3);
    let listed = get(&h, WIDGETS).json();
    assert_eq!(listed["kind"], "WidgetList");
    let names: Vec<&str> = listed["items"].as_array().unwrap().iter().map(|i| i["metadata"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["a", "b"]);
    let watch = get(&h, &format!("{WIDGETS}?watch=1&resourceVersion=1"));
    assert_eq!(watch.status, 200);
    let events: Vec<Value> = watch
        .body
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| serde_json::from_slice(line).unwrap())
        .collect();
    let added: Vec<(&str, &str)> = events
        .iter()
        .map(|e| (e["type"].as_str().unwrap(), e["object"]["metadata"]["name"].as_str().unwrap()))
        .collect();
    assert_eq!(added, [("ADDED", "a"), ("ADDED", "b")]);

    // Discovery: /apis, the group, the group version, and aggregated.
    assert!(group_names(&get(&h, "/apis").json()).contains(&"example.com".to_owned()));
    assert_eq!(get(&h, "/apis/example.com").json()["preferredVersion"]["version"], "v1");
    let resources = get(&h, "/apis/example.com/v1").json();
    assert_eq!(resources["groupVersion"], "example.com/v1");
    assert_eq!(resources["resources"][0]["name"], "widgets");
    assert_eq!(resources["resources"][0]["shortNames"], json!(["wd"]));
    let aggregated = get_as(&h, "/apis", AGGREGATED);
    assert_eq!(aggregated.status, 200);
    assert!(aggregated_names(&aggregated.json()).contains(&"example.com".to_owned()));

    // OpenAPI v3: listed, and its group-version document carries its schema.
    assert!(openapi_v3_paths(&h).contains(&"apis/example.com/v1".to_owned()));
    let gv = get(&h, "/openapi/v3/apis/example.com/v1");
    assert_eq!(gv.status, 200);
    let schema = &gv.json()["components"]["schemas"]["com.example.v1.Widget"];
    assert_eq!(schema["properties"]["spec"]["properties"]["size"]["type"], "integer");
    assert!(gv.json()["paths"]
        .as_object()
        .unwrap()
        .contains_key("/apis/example.com/v1/namespaces/{namespace}/widgets"));

    // OpenAPI v2, as JSON and as the protobuf kubectl reads.
    let v2 = get(&h, "/openapi/v2").json();
    assert_eq!(v2["definitions"]["com.example.v1.WidgetList"]["properties"]["items"]["items"]["$ref"], "#/definitions/com.example.v1.Widget");
    assert!(v2["paths"].as_object().unwrap().contains_key("/apis/example.com/v1/widgets"));
    let protobuf = get_as(&h, "/openapi/v2", apiary_core::openapi::PROTOBUF_V2_CONTENT_TYPE);
    assert_eq!(protobuf.status, 200);

    // Removed: its paths and discovery documents are gone, and so is its cache.
    assert!(h.server.remove_resource("example.com", "v1", "widgets").is_some());
    assert!(h.server.watch_cache("/registry/example.com/widgets/").is_none());
    assert_eq!(get(&h, &format!("{WIDGETS}/a")).status, 404);
    assert_eq!(get(&h, WIDGETS).status, 404);
    assert_eq!(post(&h, WIDGETS, widget("c", json!({}))).status, 404);
    assert_eq!(get(&h, "/apis/example.com/v1").status, 404);
    assert_eq!(get(&h, "/apis/example.com").status, 404);
    assert!(!group_names(&get(&h, "/apis").json()).contains(&"example.com".to_owned()));
    assert!(!aggregated_names(&get_as(&h, "/apis", AGGREGATED).json()).contains(&"example.com".to_owned()));
    assert!(!openapi_v3_paths(&h).contains(&"apis/example.com/v1".to_owned()));
    assert_eq!(get(&h, "/openapi/v3/apis/example.com/v1").status, 404);
    // Back to the built-in registry: the built-in documents again.
    assert_eq!(*h.server.registry(), apiary_core::registry::Registry::builtin());
}

#[test]
fn strict_field_validation_refuses_fields_a_custom_schema_does_not_declare() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    h.server.add_resource(widgets());
    let refused = post(&h, &format!("{WIDGETS}?fieldValidation=Strict"), widget("a", json!({ "colour": "red" })));
    assert_eq!(refused.status, 400);
    let message = refused.json()["message"].as_str().unwrap().to_owned();
    assert!(message.contains(r#"strict decoding error: unknown field "spec.colour""#), "{message}");
}

#[test]
fn a_request_routed_before_a_removal_finishes_against_its_resource() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    h.server.add_resource(widgets());
    let mut answered = Vec::new();
    let held = h
        .start(&request("POST", WIDGETS, "application/json", &widget("a", json!({ "size": 1 })).to_string()), &mut answered)
        .expect("the create reaches storage");
    h.server.remove_resource("example.com", "v1", "widgets");
    let created = one(&h.finish(held));
    assert_eq!(created.status, 201, "{}", String::from_utf8_lossy(&created.body));
    assert_eq!(created.json()["kind"], "Widget");
}
