//! CustomResourceDefinitions served over the whole server: a CRD written through the
//! API is established and its resources served within the same reflection; deleting
//! it takes them away.

use apiary_core::harness::{parse_responses, Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};

fn send(h: &Harness<MemoryStore>, method: &str, path: &str, body: Option<&Value>) -> Reply {
    let body = body.map(Value::to_string).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: apiary\r\nAccept: application/json\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    parse_responses(&h.send(request.as_bytes())).unwrap().remove(0)
}

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const WIDGETS: &str = "/apis/example.com/v1/namespaces/default/widgets";

fn crd() -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
                    "versions": [{"name": "v1", "served": true, "storage": true,
                                  "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                      "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}}}]}})
}

#[test]
fn a_crd_is_established_and_its_resources_served_until_it_is_deleted() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    assert_eq!(send(&h, "GET", WIDGETS, None).status, 404);
    assert_eq!(send(&h, "POST", CRDS, Some(&crd())).status, 201);
    let status = send(&h, "GET", &format!("{CRDS}/widgets.example.com"), None).json()["status"].clone();
    let established = status["conditions"].as_array().unwrap().iter().find(|c| c["type"] == "Established").cloned();
    assert_eq!(established.map(|c| c["status"].clone()), Some(json!("True")));
    assert_eq!(status["acceptedNames"]["singular"], "widget");
    assert_eq!(status["storedVersions"], json!(["v1"]));

    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 3}});
    assert_eq!(send(&h, "POST", WIDGETS, Some(&widget)).status, 201);
    let list = send(&h, "GET", WIDGETS, None).json();
    assert_eq!(list["kind"], "WidgetList");
    assert_eq!(list["items"][0]["spec"]["size"], 3);
    let discovery = send(&h, "GET", "/apis/example.com/v1", None).json();
    assert_eq!(discovery["resources"][0]["name"], "widgets");

    assert_eq!(send(&h, "DELETE", &format!("{CRDS}/widgets.example.com"), None).status, 200);
    assert_eq!(send(&h, "GET", WIDGETS, None).status, 404);
}
