//! Custom resources checked by their CRD's OpenAPI v3 schema over the whole server, as
//! kube-apiserver v1.33 checks them: invalid objects get 422 with upstream's Status
//! message and causes; unknown fields are pruned with warnings, and refused under
//! `fieldValidation=Strict`; defaults apply on create and to objects stored before the
//! default was added; an update may keep a value that was already invalid.

use apiary_core::harness::{parse_responses, Harness, Reply};
use apiary_core::Config;
use apiary_memory::MemoryStore;
use serde_json::{json, Value};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const WIDGETS: &str = "/apis/example.com/v1/namespaces/default/widgets";

fn send(h: &Harness<MemoryStore>, method: &str, path: &str, content_type: &str, body: &Value) -> Reply {
    let body = if body.is_null() { String::new() } else { body.to_string() };
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: apiary\r\nAccept: application/json\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    parse_responses(&h.send(request.as_bytes())).unwrap().remove(0)
}

fn call(h: &Harness<MemoryStore>, method: &str, path: &str, body: &Value) -> Reply {
    send(h, method, path, "application/json", body)
}

fn merge(h: &Harness<MemoryStore>, path: &str, patch: &Value) -> Reply {
    send(h, "PATCH", path, "application/merge-patch+json", patch)
}

fn crd(schema: Value) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "kind": "Widget"},
                    "versions": [{"name": "v1", "served": true, "storage": true,
                                  "subresources": {"status": {}},
                                  "schema": {"openAPIV3Schema": schema}}]}})
}

fn widget_schema() -> Value {
    json!({"type": "object", "properties": {
        "spec": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "minLength": 3, "maxLength": 10},
            "size": {"type": "integer", "minimum": 1, "maximum": 5},
            "color": {"type": "string", "enum": ["red", "blue"]},
            "tags": {"type": "array", "maxItems": 3, "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "since": {"type": "string", "format": "date-time"},
            "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                         "x-kubernetes-preserve-unknown-fields": true},
        }},
        "status": {"type": "object", "properties": {"ready": {"type": "integer", "minimum": 0}}},
    }})
}

fn server(schema: Value) -> Harness<MemoryStore> {
    let h = Harness::new(Config::default(), MemoryStore::new());
    let created = call(&h, "POST", CRDS, &crd(schema));
    assert_eq!(created.status, 201, "{}", String::from_utf8_lossy(&created.body));
    h
}

fn widget(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec})
}

fn causes(status: &Value) -> Vec<(String, String, String)> {
    status["details"]["causes"]
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .map(|c| (c["reason"].as_str().unwrap().to_owned(), c["field"].as_str().unwrap().to_owned(), c["message"].as_str().unwrap().to_owned()))
        .collect()
}

#[test]
fn invalid_custom_resources_get_422_with_upstreams_status() {
    let h = server(widget_schema());
    let bad = widget("w1", json!({"size": "big", "color": "green", "tags": ["a", "a"], "since": "yesterday"}));
    let reply = call(&h, "POST", WIDGETS, &bad);
    assert_eq!(reply.status, 422);
    let status = reply.json();
    assert_eq!(status["reason"], "Invalid");
    assert_eq!(status["details"]["kind"], "Widget");
    assert_eq!(status["details"]["group"], "example.com");
    assert_eq!(status["details"]["name"], "w1");
    assert_eq!(
        status["message"],
        "Widget.example.com \"w1\" is invalid: [\
         spec.color: Unsupported value: \"green\": supported values: \"red\", \"blue\", \
         spec.since: Invalid value: \"yesterday\": spec.since in body must be of type date-time: \"yesterday\", \
         spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\", \
         spec.name: Required value, \
         spec.tags[1]: Duplicate value: \"a\"]"
    );
    let s = |v: &str| v.to_owned();
    assert_eq!(
        causes(&status),
        [
            (s("FieldValueNotSupported"), s("spec.color"), s("Unsupported value: \"green\": supported values: \"red\", \"blue\"")),
            (s("FieldValueTypeInvalid"), s("spec.since"), s("Invalid value: \"yesterday\": spec.since in body must be of type date-time: \"yesterday\"")),
            (s("FieldValueTypeInvalid"), s("spec.size"), s("Invalid value: \"string\": spec.size in body must be of type integer: \"string\"")),
            (s("FieldValueRequired"), s("spec.name"), s("Required value")),
            (s("FieldValueDuplicate"), s("spec.tags[1]"), s("Duplicate value: \"a\"")),
        ]
    );

    let bounds = call(&h, "POST", WIDGETS, &widget("w2", json!({"name": "ab", "size": 9, "tags": ["a", "b", "c", "d"]})));
    assert_eq!(bounds.status, 422);
    assert_eq!(
        causes(&bounds.json()).into_iter().map(|(_, f, m)| format!("{f}: {m}")).collect::<Vec<_>>(),
        [
            "spec.name: Invalid value: \"ab\": spec.name in body should be at least 3 chars long",
            "spec.size: Invalid value: 9: spec.size in body should be less than or equal to 5",
            "spec.tags: Too many: 4: must have at most 3 items",
        ]
    );

    let embedded = call(&h, "POST", WIDGETS, &widget("w3", json!({"name": "abc", "template": {"kind": "Pod", "metadata": {"name": "a/b"}}})));
    assert_eq!(embedded.status, 422);
    assert_eq!(
        causes(&embedded.json()).into_iter().map(|(_, f, m)| format!("{f}: {m}")).collect::<Vec<_>>(),
        ["spec.template.apiVersion: Required value: must not be empty", "spec.template.metadata.name: Invalid value: \"a/b\": may not contain '/'"]
    );
    assert_eq!(call(&h, "GET", &format!("{WIDGETS}/w1"), &Value::Null).status, 404, "nothing invalid is stored");
}

#[test]
fn bad_metadata_and_embedded_type_meta_are_decoding_errors() {
    let h = server(widget_schema());
    let mut bad = widget("w1", json!({"name": "abc"}));
    bad["metadata"]["labels"] = json!("x");
    let reply = call(&h, "POST", WIDGETS, &bad);
    assert_eq!(reply.status, 400);
    assert_eq!(
        reply.json()["message"],
        "Widget in version \"v1\" cannot be handled as a Widget: json: cannot unmarshal string into Go struct field ObjectMeta.labels of type map[string]string"
    );
    let kind = call(&h, "POST", WIDGETS, &widget("w2", json!({"name": "abc", "template": {"apiVersion": "v1", "kind": 5}})));
    assert_eq!(kind.status, 400);
    assert_eq!(
        kind.json()["message"],
        "Widget in version \"v1\" cannot be handled as a Widget: spec.template.kind: Invalid value: 5: must be a string"
    );
}

#[test]
fn unknown_fields_are_pruned_with_warnings_and_refused_when_strict() {
    let h = server(widget_schema());
    let mut body = widget("w1", json!({"name": "abc", "bogus": 1, "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"x": 1}, "free": true}}));
    body["metadata"]["unknownMeta"] = json!(1);
    body["extra"] = json!(true);
    let created = call(&h, "POST", WIDGETS, &body);
    assert_eq!(created.status, 201, "{}", String::from_utf8_lossy(&created.body));
    let warnings: Vec<&str> = created.headers.iter().filter(|(n, _)| n == "warning").map(|(_, v)| v.as_str()).collect();
    assert_eq!(
        warnings,
        [
            r#"299 - "unknown field \"metadata.unknownMeta\"""#,
            r#"299 - "unknown field \"extra\"""#,
            r#"299 - "unknown field \"spec.bogus\"""#,
            r#"299 - "unknown field \"spec.template.metadata.x\"""#,
        ]
    );
    let stored = call(&h, "GET", &format!("{WIDGETS}/w1"), &Value::Null).json();
    assert_eq!(stored.get("extra"), None);
    assert_eq!(stored["spec"].get("bogus"), None);
    assert_eq!(stored["metadata"].get("unknownMeta"), None);
    assert_eq!(stored["spec"]["template"], json!({"apiVersion": "v1", "kind": "Pod", "metadata": {}, "free": true}));

    let strict = call(&h, "POST", &format!("{WIDGETS}?fieldValidation=Strict"), &widget("w2", json!({"name": "abc", "b": 1, "a": 2})));
    assert_eq!(strict.status, 400);
    assert_eq!(
        strict.json()["message"],
        "Widget in version \"v1\" cannot be handled as a Widget: strict decoding error: unknown field \"spec.a\", unknown field \"spec.b\""
    );
    let ignored = call(&h, "POST", &format!("{WIDGETS}?fieldValidation=Ignore"), &widget("w3", json!({"name": "abc", "b": 1})));
    assert_eq!(ignored.status, 201);
    assert!(!ignored.headers.iter().any(|(n, _)| n == "warning"));
}

#[test]
fn defaults_apply_on_create_and_to_objects_stored_before_the_default() {
    let h = server(widget_schema());
    assert_eq!(call(&h, "POST", WIDGETS, &widget("old", json!({"name": "abc"}))).status, 201);

    let mut schema = widget_schema();
    schema["properties"]["spec"]["properties"]["size"]["default"] = json!(2);
    schema["properties"]["spec"]["properties"]["mode"] = json!({"type": "object", "default": {}, "properties": {
        "level": {"type": "string", "default": "normal"}}});
    let patch = json!({"spec": {"versions": [{"name": "v1", "served": true, "storage": true,
                                             "subresources": {"status": {}}, "schema": {"openAPIV3Schema": schema}}]}});
    let changed = merge(&h, &format!("{CRDS}/widgets.example.com"), &patch);
    assert_eq!(changed.status, 200, "{}", String::from_utf8_lossy(&changed.body));

    let created = call(&h, "POST", WIDGETS, &widget("new", json!({"name": "abc", "mode": {}})));
    assert_eq!(created.status, 201);
    assert_eq!(created.json()["spec"], json!({"name": "abc", "size": 2, "mode": {"level": "normal"}}));

    let old = call(&h, "GET", &format!("{WIDGETS}/old"), &Value::Null).json();
    assert_eq!(old["spec"], json!({"name": "abc", "size": 2, "mode": {"level": "normal"}}), "read with today's defaults");
    let listed = call(&h, "GET", WIDGETS, &Value::Null).json();
    assert_eq!(listed["items"][1]["spec"]["size"], 2, "{listed}");
    let explicit = call(&h, "POST", WIDGETS, &widget("explicit", json!({"name": "abc", "size": 4, "mode": null})));
    assert_eq!(explicit.json()["spec"], json!({"name": "abc", "size": 4, "mode": {"level": "normal"}}));
}

#[test]
fn an_update_may_keep_an_invalid_value_but_not_change_it() {
    let mut loose = widget_schema();
    loose["properties"]["spec"]["properties"]["name"] = json!({"type": "string"});
    let h = server(loose);
    assert_eq!(call(&h, "POST", WIDGETS, &widget("w1", json!({"name": "far-too-long-a-name", "size": 1}))).status, 201);
    // The CRD tightens the rule the stored object breaks.
    let patch = json!({"spec": {"versions": [{"name": "v1", "served": true, "storage": true,
                                             "subresources": {"status": {}}, "schema": {"openAPIV3Schema": widget_schema()}}]}});
    assert_eq!(merge(&h, &format!("{CRDS}/widgets.example.com"), &patch).status, 200);

    let kept = merge(&h, &format!("{WIDGETS}/w1"), &json!({"spec": {"size": 2}}));
    assert_eq!(kept.status, 200, "{}", String::from_utf8_lossy(&kept.body));
    assert_eq!(kept.json()["spec"]["size"], 2);

    let changed = merge(&h, &format!("{WIDGETS}/w1"), &json!({"spec": {"name": "still-far-too-long"}}));
    assert_eq!(changed.status, 422);
    assert_eq!(changed.json()["message"], "Widget.example.com \"w1\" is invalid: spec.name: Too long: may not be more than 10 bytes");

    let mut put = call(&h, "GET", &format!("{WIDGETS}/w1"), &Value::Null).json();
    put["spec"]["size"] = json!(7);
    let replaced = call(&h, "PUT", &format!("{WIDGETS}/w1"), &put);
    assert_eq!(replaced.status, 422, "a new invalid value is checked");
    assert_eq!(
        replaced.json()["message"],
        "Widget.example.com \"w1\" is invalid: spec.size: Invalid value: 7: spec.size in body should be less than or equal to 5"
    );
}

#[test]
fn status_writes_are_checked_against_the_status_schema() {
    let h = server(widget_schema());
    assert_eq!(call(&h, "POST", WIDGETS, &widget("w1", json!({"name": "abc"}))).status, 201);
    let bad = merge(&h, &format!("{WIDGETS}/w1/status"), &json!({"status": {"ready": -1}}));
    assert_eq!(bad.status, 422);
    assert_eq!(
        bad.json()["message"],
        "Widget.example.com \"w1\" is invalid: status.ready: Invalid value: -1: ready in body should be greater than or equal to 0"
    );
    assert_eq!(merge(&h, &format!("{WIDGETS}/w1/status"), &json!({"status": {"ready": 1}})).status, 200);
}

#[test]
fn server_side_apply_gets_defaults_without_owning_them() {
    let mut schema = widget_schema();
    schema["properties"]["spec"]["properties"]["size"]["default"] = json!(2);
    let h = server(schema);
    let apply = |manager: &str, body: Value| {
        send(&h, "PATCH", &format!("{WIDGETS}/w1?fieldManager={manager}"), "application/apply-patch+yaml", &body)
    };
    let first = apply("first", widget("w1", json!({"name": "abc"})));
    assert_eq!(first.status, 201, "{}", String::from_utf8_lossy(&first.body));
    let created = first.json();
    assert_eq!(created["spec"]["size"], 2, "defaulted: {created}");
    let owned = created["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"].clone();
    assert!(owned.get("f:name").is_some() && owned.get("f:size").is_none(), "the applier owns what it applied, not the default: {owned}");

    // Another manager may set the defaulted field without a conflict.
    let second = apply("second", widget("w1", json!({"name": "abc", "size": 4})));
    assert_eq!(second.status, 200, "{}", String::from_utf8_lossy(&second.body));
    assert_eq!(second.json()["spec"]["size"], 4);
}
