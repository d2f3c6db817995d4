//! CustomResourceDefinitions served over the whole server: a CRD written through the
//! API is established and its resources served within the same reflection; deleting
//! it takes them away.

use apiary_core::harness::{Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};

fn send(h: &Harness<MemoryStore>, method: &str, path: &str, body: Option<&Value>) -> Reply {
    h.json_call(method, path, "application/json", body)
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

fn with_subresources() -> Value {
    let mut crd = crd();
    crd["spec"]["versions"][0]["subresources"] = json!({
        "status": {},
        "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
                  "labelSelectorPath": ".status.selector"}});
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"size": {"type": "integer"}, "replicas": {"type": "integer"}}},
        "status": {"type": "object", "properties": {"replicas": {"type": "integer"}, "selector": {"type": "string"}}}}});
    crd
}

#[test]
fn status_writes_change_only_status_and_spec_writes_count_generations() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    assert_eq!(send(&h, "POST", CRDS, Some(&with_subresources())).status, 201);
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
                        "spec": {"size": 3}, "status": {"replicas": 9}});
    let created = send(&h, "POST", WIDGETS, Some(&widget)).json();
    assert_eq!(created["metadata"]["generation"], 1);
    assert_eq!(created.get("status"), None, "the status subresource owns status: {created}");

    let status = json!({"status": {"replicas": 2, "selector": "app=w"}, "spec": {"size": 100}});
    let patched = send_patch(&h, &format!("{WIDGETS}/w1/status"), &status);
    assert_eq!(patched["status"]["replicas"], 2);
    assert_eq!(patched["spec"]["size"], 3, "a status write leaves spec alone");
    assert_eq!(patched["metadata"]["generation"], 1);

    let spec = send_patch(&h, &format!("{WIDGETS}/w1"), &json!({"spec": {"size": 4}, "status": {"replicas": 7}}));
    assert_eq!(spec["spec"]["size"], 4);
    assert_eq!(spec["status"]["replicas"], 2, "a main-resource write leaves status alone");
    assert_eq!(spec["metadata"]["generation"], 2);
    let labels = send_patch(&h, &format!("{WIDGETS}/w1"), &json!({"metadata": {"labels": {"a": "b"}}}));
    assert_eq!(labels["metadata"]["generation"], 2, "metadata changes are not counted");
}

#[test]
fn the_scale_subresource_reads_and_writes_the_declared_paths() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    assert_eq!(send(&h, "POST", CRDS, Some(&with_subresources())).status, 201);
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"replicas": 2}});
    assert_eq!(send(&h, "POST", WIDGETS, Some(&widget)).status, 201);
    send_patch(&h, &format!("{WIDGETS}/w1/status"), &json!({"status": {"replicas": 1, "selector": "app=w"}}));

    let scale = send(&h, "GET", &format!("{WIDGETS}/w1/scale"), None).json();
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["apiVersion"], "autoscaling/v1");
    assert_eq!(scale["spec"]["replicas"], 2);
    assert_eq!(scale["status"], json!({"replicas": 1, "selector": "app=w"}));

    let scaled = send_patch(&h, &format!("{WIDGETS}/w1/scale"), &json!({"spec": {"replicas": 5}}));
    assert_eq!(scaled["spec"]["replicas"], 5);
    let widget = send(&h, "GET", &format!("{WIDGETS}/w1"), None).json();
    assert_eq!(widget["spec"]["replicas"], 5);
    assert_eq!(widget["metadata"]["generation"], 2);

    let discovery = send(&h, "GET", "/apis/example.com/v1", None).json();
    let names: Vec<&str> = discovery["resources"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["widgets", "widgets/scale", "widgets/status"]);
    assert_eq!(send(&h, "GET", &format!("{WIDGETS}/w1/log"), None).status, 404);
}

fn send_patch(h: &Harness<MemoryStore>, path: &str, patch: &Value) -> Value {
    let reply = h.json_call("PATCH", path, "application/merge-patch+json", Some(patch));
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.body));
    reply.json()
}

#[test]
fn deleting_a_crd_deletes_its_objects_first_and_refuses_new_ones_meanwhile() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    assert_eq!(send(&h, "POST", CRDS, Some(&crd())).status, 201);
    assert_eq!(send(&h, "POST", "/api/v1/namespaces", Some(&json!({"metadata": {"name": "other"}}))).status, 201);
    let widget = |ns: &str, name: &str, finalizers: Value| {
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
               "metadata": {"name": name, "namespace": ns, "finalizers": finalizers}})
    };
    assert_eq!(send(&h, "POST", WIDGETS, Some(&widget("default", "plain", json!([])))).status, 201);
    let held = widget("other", "held", json!(["example.com/hold"]));
    assert_eq!(send(&h, "POST", "/apis/example.com/v1/namespaces/other/widgets", Some(&held)).status, 201);

    let deleted = send(&h, "DELETE", &format!("{CRDS}/widgets.example.com"), None);
    assert_eq!(deleted.status, 200);
    let marked = deleted.json();
    assert!(marked["metadata"]["deletionTimestamp"].is_string(), "{marked}");
    assert_eq!(marked["metadata"]["finalizers"], json!(["customresourcecleanup.apiextensions.k8s.io"]));
    let terminating = |crd: &Value| {
        crd["status"]["conditions"].as_array().unwrap().iter().find(|c| c["type"] == "Terminating").cloned().unwrap()
    };
    assert_eq!(terminating(&marked)["reason"], "InstanceDeletionPending");

    // The controller has deleted what it could; the held object waits for its finalizer.
    let crd_now = send(&h, "GET", &format!("{CRDS}/widgets.example.com"), None).json();
    assert_eq!(terminating(&crd_now)["reason"], "InstanceDeletionInProgress");
    assert_eq!(send(&h, "GET", &format!("{WIDGETS}/plain"), None).status, 404);
    let still = send(&h, "GET", "/apis/example.com/v1/namespaces/other/widgets/held", None).json();
    assert!(still["metadata"]["deletionTimestamp"].is_string());
    let refused = send(&h, "POST", WIDGETS, Some(&widget("default", "late", json!([]))));
    assert_eq!(refused.status, 405);
    assert_eq!(refused.json()["message"], "create not allowed while custom resource definition is terminating");

    let release = json!({"metadata": {"finalizers": null}});
    let path = "/apis/example.com/v1/namespaces/other/widgets/held";
    assert_eq!(h.json_call("PATCH", path, "application/merge-patch+json", Some(&release)).status, 200);
    assert_eq!(send(&h, "GET", &format!("{CRDS}/widgets.example.com"), None).status, 404);
    assert_eq!(send(&h, "GET", WIDGETS, None).status, 404);
}

#[test]
fn a_second_crd_asking_for_names_already_held_is_not_established() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    assert_eq!(send(&h, "POST", CRDS, Some(&crd())).status, 201);
    let mut gadgets = crd();
    gadgets["metadata"]["name"] = json!("gadgets.example.com");
    gadgets["spec"]["names"] = json!({"plural": "gadgets", "kind": "Widget"});
    assert_eq!(send(&h, "POST", CRDS, Some(&gadgets)).status, 201);
    let status = send(&h, "GET", &format!("{CRDS}/gadgets.example.com"), None).json()["status"].clone();
    let condition = |kind: &str| status["conditions"].as_array().unwrap().iter().find(|c| c["type"] == kind).cloned().unwrap();
    // Both kinds conflict; upstream's condition names the last conflict found.
    assert_eq!(condition("NamesAccepted")["reason"], "ListKindConflict");
    assert_eq!(condition("NamesAccepted")["message"], "\"WidgetList\" is already in use");
    assert_eq!(condition("Established")["status"], "False");
    assert_eq!(send(&h, "GET", "/apis/example.com/v1/namespaces/default/gadgets", None).status, 404);
    assert_eq!(send(&h, "GET", WIDGETS, None).status, 200);
}

/// The CRD with a second version, v2, served and not stored.
fn two_versions() -> Value {
    let mut two = crd();
    let v1 = two["spec"]["versions"][0].clone();
    let mut v2 = v1.clone();
    v2["name"] = json!("v2");
    v2["storage"] = json!(false);
    two["spec"]["versions"] = json!([v1, v2]);
    two
}

#[test]
fn a_crd_with_two_versions_serves_each_object_in_the_version_asked_for() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    let two = two_versions();
    assert_eq!(send(&h, "POST", CRDS, Some(&two)).status, 201);

    let widget = json!({"apiVersion": "example.com/v2", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 1}});
    let created = send(&h, "POST", "/apis/example.com/v2/namespaces/default/widgets", Some(&widget));
    assert_eq!(created.status, 201);
    assert_eq!(created.json()["apiVersion"], "example.com/v2");
    assert_eq!(send(&h, "GET", &format!("{WIDGETS}/w"), None).json()["apiVersion"], "example.com/v1");
    let listed = send(&h, "GET", "/apis/example.com/v2/namespaces/default/widgets", None).json();
    assert_eq!(listed["apiVersion"], "example.com/v2");
    assert_eq!(listed["items"][0]["apiVersion"], "example.com/v2", "custom resources' list items keep their type");
    assert_eq!(listed["items"][0]["kind"], "Widget");
    let patched = send_patch(&h, "/apis/example.com/v2/namespaces/default/widgets/w", &json!({"spec": {"size": 2}}));
    assert_eq!(patched["apiVersion"], "example.com/v2");
    let status = send(&h, "GET", &format!("{CRDS}/widgets.example.com"), None).json()["status"].clone();
    assert_eq!(status["storedVersions"], json!(["v1"]));
}

#[test]
fn openapi_v3_shows_the_subresources_and_schema_of_a_custom_resource() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    assert_eq!(send(&h, "POST", CRDS, Some(&with_subresources())).status, 201);
    let doc = send(&h, "GET", "/openapi/v3/apis/example.com/v1", None).json();
    let paths: Vec<&String> = doc["paths"].as_object().unwrap().keys().collect();
    for path in ["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/status", "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/scale"] {
        assert!(paths.iter().any(|p| p.as_str() == path), "{path} missing from {paths:?}");
    }
    let schema = &doc["components"]["schemas"]["com.example.v1.Widget"];
    assert_eq!(schema["properties"]["status"]["properties"]["replicas"]["type"], "integer");
}

fn with_rules(rules: Value) -> Value {
    let mut crd = crd();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"] = rules;
    crd
}

#[test]
fn cel_rules_of_the_schema_refuse_objects_that_break_them() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    let rules = json!([{"rule": "self.size < 10", "message": "size must stay under 10"},
                       {"rule": "self.size == oldSelf.size || self.size > oldSelf.size", "message": "size may only grow"}]);
    assert_eq!(send(&h, "POST", CRDS, Some(&with_rules(rules))).status, 201);
    let widget = |size: i64| json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": size}});
    let refused = send(&h, "POST", WIDGETS, Some(&widget(20)));
    assert_eq!(refused.status, 422);
    assert_eq!(refused.json()["message"], "Widget.example.com \"w\" is invalid: spec: Invalid value: \"object\": size must stay under 10");
    assert_eq!(refused.json()["details"]["causes"][0]["field"], "spec");
    assert_eq!(send(&h, "POST", WIDGETS, Some(&widget(5))).status, 201);
    let shrink = json!({"spec": {"size": 3}});
    let shrunk = h.json_call("PATCH", &format!("{WIDGETS}/w"), "application/merge-patch+json", Some(&shrink));
    assert_eq!(shrunk.status, 422);
    assert!(shrunk.json()["message"].as_str().unwrap().ends_with("spec: Invalid value: \"object\": size may only grow"), "{}", shrunk.json());
}

#[test]
fn a_crd_whose_rule_does_not_compile_is_refused() {
    let h = Harness::new(Config::default(), MemoryStore::new());
    let refused = send(&h, "POST", CRDS, Some(&with_rules(json!([{"rule": "self.colour == 'red'"}]))));
    assert_eq!(refused.status, 422, "{}", refused.json());
    let cause = &refused.json()["details"]["causes"][0];
    assert_eq!(cause["field"], "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule");
    assert!(cause["message"].as_str().unwrap().contains("compilation failed: ERROR: <input>:1:5: undefined field 'colour'"), "{cause}");
    assert_eq!(send(&h, "GET", &format!("{CRDS}/widgets.example.com"), None).status, 404);
}

/// A CRD stored by an older server with a schema that is not structural (apiextensions
/// v1 refuses to write one) gets upstream's `NonStructuralSchema` condition, naming
/// each violation; the condition goes once the schema is fixed.
#[test]
fn a_stored_crd_with_a_non_structural_schema_says_so() {
    use apiary_core::storage::{StorageOp, StorageOutput};
    let h = Harness::new(Config::default(), MemoryStore::new());
    assert_eq!(send(&h, "POST", CRDS, Some(&crd())).status, 201);
    let key = "/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.example.com";
    let rewrite = |schema: Value| {
        let Ok(StorageOutput::Got { kv: Some(kv), .. }) = h.store.apply(StorageOp::Get { key: key.into() }) else {
            panic!("the CRD is stored under {key}");
        };
        let mut stored: Value = serde_json::from_slice(&kv.value).unwrap();
        stored["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = schema;
        let op = StorageOp::Update { key: key.into(), value: stored.to_string().into(), expected_revision: kv.mod_revision };
        assert!(h.store.apply(op).is_ok());
        h.reflect();
    };
    let condition = || {
        let crd = send(&h, "GET", &format!("{CRDS}/widgets.example.com"), None).json();
        crd["status"]["conditions"].as_array().unwrap().iter().find(|c| c["type"] == "NonStructuralSchema").cloned()
    };
    assert_eq!(condition(), None);

    rewrite(json!({"type": "object", "properties": {"spec": {"properties": {"size": {"type": "integer"}}}, "status": {}}}));
    let c = condition().expect("the condition is set");
    assert_eq!(c["status"], "True");
    assert_eq!(c["reason"], "Violations");
    assert_eq!(
        c["message"],
        "[spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields, \
         spec.versions[0].schema.openAPIV3Schema.properties[status].type: Required value: must not be empty for specified object fields]"
    );

    rewrite(json!({"type": "object", "properties": {"spec": {"type": "object"}}}));
    assert_eq!(condition(), None);
}
