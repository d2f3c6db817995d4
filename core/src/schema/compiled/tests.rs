//! The compiled schema against upstream's wording: cases taken from apiextensions'
//! `validation_test.go`, `ratcheting_test.go`, `listtype` and `objectmeta` tests and
//! kube-openapi's validators, written here in our own words.

use super::StructuralSchema;
use serde_json::{json, Map, Value};

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

/// The errors of `obj` against `schema`, as `field: message` lines.
fn errors(schema: Value, obj: Value) -> Vec<String> {
    let schema = StructuralSchema::compile(&schema);
    schema.validate(&object(obj), None).iter().map(ToString::to_string).collect()
}

fn update_errors(schema: Value, new: Value, old: Value) -> Vec<String> {
    let schema = StructuralSchema::compile(&schema);
    schema.validate(&object(new), Some(&object(old))).iter().map(ToString::to_string).collect()
}

fn spec(properties: Value) -> Value {
    json!({"type": "object", "properties": {"spec": {"type": "object", "properties": properties}}})
}

#[test]
fn types_are_reported_with_the_type_found() {
    let schema = spec(json!({"size": {"type": "integer"}, "name": {"type": "string"}, "on": {"type": "boolean"}}));
    assert_eq!(
        errors(schema.clone(), json!({"spec": {"size": "string", "name": 5, "on": 1.5}})),
        [
            r#"spec.name: Invalid value: "integer": spec.name in body must be of type string: "integer""#,
            r#"spec.on: Invalid value: "number": spec.on in body must be of type boolean: "number""#,
            r#"spec.size: Invalid value: "string": spec.size in body must be of type integer: "string""#,
        ]
    );
    assert_eq!(
        errors(schema, json!({"spec": {"size": null}})),
        [r#"spec.size: Invalid value: "null": spec.size in body must be of type integer: "null""#]
    );
    // An integral float is an integer; an integer is a number.
    let numbers = spec(json!({"i": {"type": "integer"}, "n": {"type": "number"}}));
    assert!(errors(numbers, json!({"spec": {"i": 3.0, "n": 3}})).is_empty());
}

#[test]
fn the_cause_types_follow_upstreams_conversion() {
    let schema = StructuralSchema::compile(&spec(json!({
        "size": {"type": "integer", "maximum": 3},
        "name": {"type": "string", "maxLength": 2},
        "tags": {"type": "array", "maxItems": 1, "items": {"type": "string", "enum": ["a"]}},
        "kind": {"type": "boolean"},
    })));
    let obj = object(json!({"spec": {"size": 9, "name": "abc", "tags": ["b", "a"], "kind": "x"}}));
    let kinds: Vec<(String, &str)> =
        schema.validate(&obj, None).iter().map(|e| (e.field.clone(), e.kind.cause_type())).collect();
    assert_eq!(
        kinds,
        [
            ("spec.kind".to_owned(), "FieldValueTypeInvalid"),
            ("spec.name".to_owned(), "FieldValueTooLong"),
            ("spec.size".to_owned(), "FieldValueInvalid"),
            ("spec.tags[0]".to_owned(), "FieldValueNotSupported"),
            ("spec.tags".to_owned(), "FieldValueTooMany"),
        ]
    );
}

#[test]
fn value_checks_in_kube_openapis_words() {
    let schema = spec(json!({
        "name": {"type": "string", "minLength": 3, "maxLength": 5, "pattern": "^a+$"},
        "color": {"type": "string", "enum": ["red", "blue"]},
        "count": {"type": "integer", "enum": [1, 2]},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
        "ratio": {"type": "number", "exclusiveMinimum": true, "minimum": 0.5, "multipleOf": 0.25},
        "step": {"type": "integer", "multipleOf": 3},
        "items": {"type": "array", "minItems": 2, "maxItems": 3, "items": {"type": "string"}},
        "labels": {"type": "object", "maxProperties": 2, "minProperties": 1, "additionalProperties": {"type": "string"}},
    }));
    let cases: &[(Value, &str)] = &[
        (json!({"name": "ab"}), r#"spec.name: Invalid value: "ab": spec.name in body should be at least 3 chars long"#),
        (json!({"name": "aaaaaa"}), "spec.name: Too long: may not be more than 5 bytes"),
        (json!({"name": "abc"}), r#"spec.name: Invalid value: "abc": spec.name in body should match '^a+$'"#),
        (json!({"name": "ääää"}), r#"spec.name: Invalid value: "ääää": spec.name in body should match '^a+$'"#),
        (json!({"color": "green"}), r#"spec.color: Unsupported value: "green": supported values: "red", "blue""#),
        (json!({"count": 3}), r#"spec.count: Unsupported value: 3: supported values: "1", "2""#),
        (json!({"replicas": 0}), "spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1"),
        (json!({"replicas": 11}), "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"),
        (json!({"ratio": 0.5}), "spec.ratio: Invalid value: 0.5: spec.ratio in body should be greater than 0.5"),
        (json!({"ratio": 0.6}), "spec.ratio: Invalid value: 0.6: spec.ratio in body should be a multiple of 0.25"),
        (json!({"step": 4}), "spec.step: Invalid value: 4: spec.step in body should be a multiple of 3"),
        (json!({"items": ["a"]}), "spec.items: Invalid value: 1: spec.items in body should have at least 2 items"),
        (json!({"items": ["a", "b", "c", "d", "e"]}), "spec.items: Too many: 5: must have at most 3 items"),
        (json!({"labels": {}}), "spec.labels: Invalid value: 0: spec.labels in body should have at least 1 properties"),
        (json!({"labels": {"a": "1", "b": "2", "c": "3"}}), "spec.labels: Too many: 3: must have at most 2 items"),
        (json!({"labels": {"a": 1}}), r#"spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer""#),
    ];
    for (spec, want) in cases {
        assert_eq!(errors(schema.clone(), json!({ "spec": spec })), [*want], "{spec}");
    }
}

#[test]
fn the_first_failing_string_check_is_the_only_one() {
    let schema = spec(json!({"name": {"type": "string", "maxLength": 2, "pattern": "^x$"}}));
    assert_eq!(errors(schema, json!({"spec": {"name": "abc"}})), ["spec.name: Too long: may not be more than 2 bytes"]);
}

#[test]
fn required_properties_at_the_root_and_below() {
    let schema = json!({"type": "object", "required": ["spec"], "properties": {
        "spec": {"type": "object", "required": ["name", "size"], "properties": {"name": {"type": "string"}, "size": {"type": "integer"}}}}});
    assert_eq!(errors(schema.clone(), json!({})), ["spec: Required value"]);
    assert_eq!(errors(schema, json!({"spec": {}})), ["spec.name: Required value", "spec.size: Required value"]);
}

#[test]
fn formats_upstream_validates_and_those_it_ignores() {
    let schema = spec(json!({
        "at": {"type": "string", "format": "date-time"},
        "day": {"type": "string", "format": "date"},
        "id": {"type": "string", "format": "uuid"},
        "n": {"type": "integer", "format": "int32"},
        "f": {"type": "number", "format": "double"},
        "host": {"type": "string", "format": "hostname"},
    }));
    assert_eq!(
        errors(schema.clone(), json!({"spec": {"at": "yesterday", "day": "2024-02-30", "id": "x", "host": "-bad"}})),
        [
            r#"spec.at: Invalid value: "yesterday": spec.at in body must be of type date-time: "yesterday""#,
            r#"spec.day: Invalid value: "2024-02-30": spec.day in body must be of type date: "2024-02-30""#,
            r#"spec.host: Invalid value: "-bad": spec.host in body must be of type hostname: "-bad""#,
            r#"spec.id: Invalid value: "x": spec.id in body must be of type uuid: "x""#,
        ]
    );
    // int32 is not checked: upstream drops formats it does not support.
    assert!(errors(schema.clone(), json!({"spec": {"n": 9_999_999_999i64, "f": 1.5}})).is_empty());
    // A format on a value of another type names the format.
    assert_eq!(
        errors(spec(json!({"day": {"type": "string", "format": "date"}})), json!({"spec": {"day": 5}})),
        [r#"spec.day: Invalid value: "int64": spec.day in body must be of type date: "int64""#]
    );
}

#[test]
fn int_or_string_and_nullable() {
    let schema = spec(json!({
        "port": {"x-kubernetes-int-or-string": true},
        "note": {"type": "string", "nullable": true},
    }));
    assert!(errors(schema.clone(), json!({"spec": {"port": 80, "note": null}})).is_empty());
    assert!(errors(schema.clone(), json!({"spec": {"port": "http"}})).is_empty());
    assert_eq!(
        errors(schema, json!({"spec": {"port": true}})),
        [r#"spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean""#]
    );
}

#[test]
fn junctors_report_as_kube_openapi() {
    let field = |extra: Value| {
        let mut f = json!({"nullable": true, "x-kubernetes-int-or-string": true});
        f.as_object_mut().unwrap().extend(object(extra));
        json!({"type": "object", "properties": {"field": f}})
    };
    let any_of = field(json!({"anyOf": [{"type": "integer"}, {"type": "string"}]}));
    assert!(errors(any_of.clone(), json!({"field": 42})).is_empty());
    assert_eq!(
        errors(any_of, json!({"field": true})),
        [
            r#"field: Invalid value: "boolean": field in body must be of type integer,string: "boolean""#,
            r#"<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)"#,
            r#"field: Invalid value: "boolean": field in body must be of type integer: "boolean""#,
        ]
    );
    let all_of = field(json!({"allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}]}));
    assert_eq!(
        errors(all_of, json!({"field": 1.2})),
        [
            r#"field: Invalid value: "number": field in body must be of type integer,string: "number""#,
            r#"<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)"#,
            r#"field: Invalid value: "number": field in body must be of type integer: "number""#,
            r#"<nil>: Invalid value: "": "field" must validate all the schemas (allOf). None validated"#,
        ]
    );
    let one_of = spec(json!({"x": {"type": "integer", "oneOf": [{"minimum": 0}, {"maximum": 10}]}}));
    assert!(errors(one_of.clone(), json!({"spec": {"x": -5}})).is_empty());
    assert_eq!(
        errors(one_of, json!({"spec": {"x": 5}})),
        [r#"<nil>: Invalid value: "": "spec.x" must validate one and only one schema (oneOf). Found 2 valid alternatives"#]
    );
    let not = spec(json!({"x": {"type": "string", "not": {"enum": ["forbidden"]}}}));
    assert_eq!(
        errors(not, json!({"spec": {"x": "forbidden"}})),
        [r#"<nil>: Invalid value: "": "spec.x" must not validate the schema (not)"#]
    );
}

#[test]
fn invalid_patterns_are_reported_on_use() {
    let schema = json!({"type": "object", "properties": {"field": {"type": "string", "pattern": "+"}}});
    let got = errors(schema, json!({"field": "foo"}));
    assert_eq!(got.len(), 1);
    assert!(got[0].starts_with(r#"field: Invalid value: "foo": field in body should match '+, but pattern is invalid: "#), "{got:?}");
}

#[test]
fn additional_properties_false_forbids_other_fields() {
    let schema = spec(json!({"a": {"type": "string"}}));
    let mut schema = schema;
    schema["properties"]["spec"]["additionalProperties"] = json!(false);
    assert_eq!(
        errors(schema, json!({"spec": {"a": "x", "b": 1}})),
        [r#"spec: Invalid value: "b": spec.b in body is a forbidden property"#]
    );
}

#[test]
fn ratcheting_keeps_unchanged_invalid_values() {
    let schema = spec(json!({
        "name": {"type": "string", "maxLength": 3},
        "size": {"type": "integer", "minimum": 10},
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer", "maximum": 100}}}},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 2}},
    }));
    let old = json!({"spec": {"name": "toolong", "size": 1, "ports": [{"name": "a", "port": 500}, {"name": "b", "port": 1}], "tags": ["abc"]}});
    // The same invalid values, another field changed, the map list reordered: fine.
    let mut new = old.clone();
    new["spec"]["ports"] = json!([{"name": "b", "port": 2}, {"name": "a", "port": 500}]);
    assert_eq!(update_errors(schema.clone(), new, old.clone()), Vec::<String>::new());
    // Changing an invalid value to another invalid one fails, and only there.
    let mut changed = old.clone();
    changed["spec"]["name"] = json!("stilltoolong");
    changed["spec"]["ports"] = json!([{"name": "a", "port": 501}, {"name": "b", "port": 1}]);
    assert_eq!(
        update_errors(schema.clone(), changed, old.clone()),
        [
            "spec.name: Too long: may not be more than 3 bytes",
            "spec.ports[0].port: Invalid value: 501: spec.ports[0].port in body should be less than or equal to 100",
        ]
    );
    // An atomic list is compared whole: any change re-validates every item.
    let mut tags = old.clone();
    tags["spec"]["tags"] = json!(["abc", "x"]);
    assert_eq!(
        update_errors(schema.clone(), tags, old.clone()),
        ["spec.tags[0]: Too long: may not be more than 2 bytes"]
    );
    // A create validates everything.
    assert_eq!(errors(schema, old).len(), 4);
}

#[test]
fn status_is_validated_by_its_own_schema_under_status() {
    let schema = StructuralSchema::compile(&json!({"type": "object", "properties": {
        "status": {"type": "object", "properties": {"replicas": {"type": "integer", "minimum": 0}}}}}));
    let new = object(json!({"status": {"replicas": -1}}));
    let old = object(json!({"status": {"replicas": 1}}));
    let got: Vec<String> = schema.validate_status(&new, &old).iter().map(ToString::to_string).collect();
    assert_eq!(got, ["status.replicas: Invalid value: -1: replicas in body should be greater than or equal to 0"]);
    assert!(schema.validate_status(&new, &new).is_empty(), "an unchanged status ratchets");
}

#[test]
fn set_and_map_lists_report_duplicates() {
    let schema = StructuralSchema::compile(&spec(json!({
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
        "pairs": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["a", "b"],
                  "items": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}},
    })));
    let obj = object(json!({"spec": {
        "tags": ["x", "y", "x", "x"],
        "ports": [{"name": "http"}, {"name": "http"}, {}, {}],
        "pairs": [{"a": "x", "b": 1}, {"a": "x", "b": 1}],
    }}));
    let got: Vec<String> = schema.validate_lists(&obj).iter().map(ToString::to_string).collect();
    assert_eq!(
        got,
        [
            r#"spec.pairs[1]: Duplicate value: map[string]interface {}{"a":"x", "b":1}"#,
            r#"spec.ports[1]: Duplicate value: map[string]interface {}{"name":"http"}"#,
            r#"spec.ports[3]: Duplicate value: map[string]interface {}{}"#,
            r#"spec.tags[2]: Duplicate value: "x""#,
        ]
    );
    let not_objects = object(json!({"spec": {"ports": [{"name": "a"}, "b"]}}));
    let got: Vec<String> = schema.validate_lists(&not_objects).iter().map(ToString::to_string).collect();
    assert_eq!(got, [r#"spec.ports[1]: Invalid value: "b": must be an object for an array of list-type map"#]);
}

#[test]
fn embedded_resources_need_type_meta_and_valid_metadata() {
    let schema = StructuralSchema::compile(&spec(json!({
        "template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
    })));
    let check = |template: Value| -> Vec<String> {
        schema.validate_embedded(&object(json!({"spec": {"template": template}}))).iter().map(ToString::to_string).collect()
    };
    assert!(check(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}})).is_empty());
    assert_eq!(check(json!({})), ["spec.template.apiVersion: Required value: must not be empty", "spec.template.kind: Required value: must not be empty"]);
    assert_eq!(
        check(json!({"apiVersion": "a/b/c", "kind": "Bad_Kind", "metadata": {"name": "a/b", "namespace": "Not_A_Label"}})),
        [
            r#"spec.template.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c"#,
            r#"spec.template.kind: Invalid value: "Bad_Kind": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#,
            r#"spec.template.metadata.name: Invalid value: "a/b": may not contain '/'"#,
            r#"spec.template.metadata.namespace: Invalid value: "Not_A_Label": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"#,
        ]
    );
    assert_eq!(
        check(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": "x"}})),
        [r#"spec.template.metadata: Invalid value: map[string]interface {}{"labels":"x"}: json: cannot unmarshal string into Go struct field ObjectMeta.labels of type map[string]string"#]
    );
}

fn shaped(schema: Value, obj: Value) -> (Value, Vec<String>) {
    let schema = StructuralSchema::compile(&schema);
    let mut obj = object(obj);
    let found = schema.shape_request(&mut obj, true).expect("shapes");
    (Value::Object(obj), found.unknown)
}

#[test]
fn unknown_fields_are_pruned_and_named() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "integer"},
        "items": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"known": {"type": "object", "properties": {}}}},
        "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {"v": {"type": "string"}}}},
    }}}});
    let (obj, unknown) = shaped(
        schema,
        json!({"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": "w"}, "extra": 1,
               "spec": {"size": 1, "bogus": true, "items": [{"a": "x", "b": "y"}],
                        "free": {"anything": {"goes": 1}, "known": {"dropped": 1}},
                        "map": {"k": {"v": "1", "w": "2"}}}}),
    );
    assert_eq!(
        obj,
        json!({"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": "w"},
               "spec": {"size": 1, "items": [{"a": "x"}], "free": {"anything": {"goes": 1}, "known": {}}, "map": {"k": {"v": "1"}}}})
    );
    assert_eq!(
        unknown,
        [
            r#"unknown field "extra""#,
            r#"unknown field "spec.bogus""#,
            r#"unknown field "spec.free.known.dropped""#,
            r#"unknown field "spec.items[0].b""#,
            r#"unknown field "spec.map.k.w""#,
        ]
    );
}

#[test]
fn defaults_fill_absent_and_disallowed_null_fields_nested_ones_too() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "default": {}, "properties": {
        "replicas": {"type": "integer", "default": 1},
        "mode": {"type": "string", "default": "fast"},
        "note": {"type": "string", "nullable": true, "default": "n"},
        "gone": {"type": "string"},
        "kept": {"type": "string", "nullable": true},
        "opts": {"type": "object", "default": {"level": 2, "unknown": true}, "properties": {
            "level": {"type": "integer"}, "verbose": {"type": "boolean", "default": false}}},
        "list": {"type": "array", "items": {"type": "object", "default": {"x": 1}, "properties": {"x": {"type": "integer"}}}},
    }}}});
    let (obj, unknown) = shaped(schema.clone(), json!({"spec": {"mode": null, "note": null, "gone": null, "kept": null, "list": [null, {}]}}));
    assert!(unknown.is_empty(), "{unknown:?}");
    assert_eq!(
        obj,
        json!({"spec": {"replicas": 1, "mode": "fast", "note": null, "kept": null,
                        "opts": {"level": 2, "verbose": false}, "list": [{"x": 1}, {}]}})
    );
    let (empty, _) = shaped(schema, json!({}));
    assert_eq!(empty["spec"]["replicas"], 1, "a defaulted object gets its own defaults: {empty}");
}

#[test]
fn stored_objects_are_shaped_by_the_schema_of_now() {
    let schema = StructuralSchema::compile(&spec(json!({"size": {"type": "integer", "default": 3}})));
    let mut stored = object(json!({"metadata": {"name": "w"}, "spec": {"old": 1}}));
    schema.shape_stored(&mut stored);
    assert_eq!(Value::Object(stored), json!({"metadata": {"name": "w"}, "spec": {"size": 3}}));
}

#[test]
fn embedded_resources_keep_their_type_meta_and_decode_their_metadata() {
    let schema = StructuralSchema::compile(&spec(json!({
        "template": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"spec": {"type": "object"}}},
    })));
    let mut obj = object(json!({"spec": {"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "bogus": 1}, "spec": {}, "other": 1}}}));
    let shaped = schema.shape_request(&mut obj, true).unwrap();
    assert_eq!(
        Value::Object(obj),
        json!({"spec": {"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}}}})
    );
    assert_eq!(shaped.unknown, [r#"unknown field "spec.template.other""#, r#"unknown field "spec.template.metadata.bogus""#]);
    let mut bad = object(json!({"spec": {"template": {"apiVersion": "v1", "kind": 5}}}));
    let e = schema.shape_request(&mut bad, true).unwrap_err();
    assert_eq!(e.to_string(), "spec.template.kind: Invalid value: 5: must be a string");
}

#[test]
fn deep_values_and_schemas_do_not_overflow() {
    let mut schema = json!({"type": "object"});
    for _ in 0..400 {
        schema = json!({"type": "object", "properties": {"a": schema}, "default": {}});
    }
    let schema = StructuralSchema::compile(&schema);
    let mut value = json!(1);
    for _ in 0..1000 {
        value = json!({ "a": value });
    }
    let mut obj = object(value);
    let _ = schema.validate(&obj, Some(&obj.clone()));
    let _ = schema.shape_request(&mut obj, true);
    let _ = schema.validate_lists(&obj);
    let _ = schema.validate_embedded(&obj);
    // serde_json drops deep values recursively; let go of it iteratively.
    let mut top = Value::Object(obj);
    while let Some(inner) = top.get_mut("a").map(Value::take) {
        top = inner;
    }
}
