//! Validating objects: errors as upstream words and places them, `oldSelf` on
//! update, ratcheting, runtime errors and the cost budget.

use crate::cel::{compile_schema, CompiledSchema};
use serde_json::{json, Value as Json};

fn compiled(schema: Json) -> CompiledSchema {
    compile_schema(&schema, "spec.versions[0].schema.openAPIV3Schema").unwrap_or_else(|e| panic!("{e:#?}"))
}

fn errors(schema: &CompiledSchema, new: Json, old: Option<Json>) -> Vec<String> {
    schema.validate(&new, old.as_ref()).iter().map(|e| e.to_string()).collect()
}

fn replicas_schema() -> Json {
    json!({"type": "object", "properties": {
        "spec": {"type": "object",
            "x-kubernetes-validations": [{"rule": "self.minReplicas <= self.replicas"}],
            "properties": {
                "replicas": {"type": "integer"},
                "minReplicas": {"type": "integer"},
                "name": {"type": "string", "maxLength": 20, "x-kubernetes-validations": [
                    {"rule": "self.startsWith('app-')", "message": "must start with app-"},
                    {"rule": "self.size() < 10", "messageExpression": "'name ' + self + ' is too long'"},
                    {"rule": "self != 'app-forbidden'", "reason": "FieldValueForbidden", "message": "this name is reserved"}
                ]}
            }}
    }})
}

#[test]
fn failures_are_worded_as_upstream() {
    let s = compiled(replicas_schema());
    assert!(errors(&s, json!({"spec": {"replicas": 3, "minReplicas": 1, "name": "app-x"}}), None).is_empty());
    assert_eq!(
        errors(&s, json!({"spec": {"replicas": 1, "minReplicas": 3, "name": "web-server-one"}}), None),
        vec![
            "spec: Invalid value: \"object\": failed rule: self.minReplicas <= self.replicas",
            "spec.name: Invalid value: \"string\": must start with app-",
            "spec.name: Invalid value: \"string\": name web-server-one is too long",
        ]
    );
    assert_eq!(
        errors(&s, json!({"spec": {"replicas": 3, "minReplicas": 1, "name": "app-forbidden"}}), None),
        vec!["spec.name: Invalid value: \"string\": name app-forbidden is too long", "spec.name: Forbidden: this name is reserved"]
    );
}

#[test]
fn rules_at_the_root_report_at_nil_and_see_metadata() {
    let s = compiled(json!({"type": "object",
        "x-kubernetes-validations": [{"rule": "self.metadata.name.startsWith('x')"}],
        "properties": {"spec": {"type": "object"}}}));
    assert_eq!(
        errors(&s, json!({"metadata": {"name": "abc"}, "spec": {}}), None),
        vec!["<nil>: Invalid value: \"object\": failed rule: self.metadata.name.startsWith('x')"]
    );
}

#[test]
fn reasons_and_field_paths() {
    let s = compiled(json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "x-kubernetes-validations": [
            {"rule": "has(self.a)", "reason": "FieldValueRequired", "message": "a is required", "fieldPath": ".a"},
            {"rule": "self.b != 'dup'", "reason": "FieldValueDuplicate", "fieldPath": ".b"},
            {"rule": "self.b != 'bad'", "reason": "FieldValueInvalid", "message": "b is bad", "fieldPath": "['b']"}
        ]}}}));
    assert_eq!(
        errors(&s, json!({"spec": {"b": "dup"}}), None),
        vec!["spec.a: Required value: a is required", "spec.b: Duplicate value: \"object\""]
    );
    assert_eq!(errors(&s, json!({"spec": {"a": "x", "b": "bad"}}), None), vec!["spec.b: Invalid value: \"object\": b is bad"]);
}

#[test]
fn message_expressions_fall_back_to_the_message() {
    let s = compiled(json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"n": {"type": "integer"},
            "m": {"type": "object", "maxProperties": 5, "additionalProperties": {"type": "string", "maxLength": 10}}},
        "x-kubernetes-validations": [
            {"rule": "self.n > 0", "message": "n must be positive", "messageExpression": "self.m['missing']"},
            {"rule": "self.n > 1", "messageExpression": "''"}
        ]}}}));
    assert_eq!(
        errors(&s, json!({"spec": {"n": 0}}), None),
        vec!["spec: Invalid value: \"object\": n must be positive", "spec: Invalid value: \"object\": failed rule: self.n > 1"]
    );
}

#[test]
fn runtime_errors_are_reported_per_rule() {
    let s = compiled(json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"m": {"type": "object", "additionalProperties": {"type": "string"}}, "port": {"x-kubernetes-int-or-string": true}},
        "x-kubernetes-validations": [
            {"rule": "self.m['x'] == 'y'"},
            {"rule": "self.port > 1"},
            {"rule": "1 / size(self.m) > 0", "message": "m must not be empty"}
        ]}}}));
    assert_eq!(
        errors(&s, json!({"spec": {"m": {}, "port": "http"}}), None),
        vec![
            "spec: Invalid value: \"object\": no such key: x evaluating rule: self.m['x'] == 'y'",
            "spec: Invalid value: \"object\": 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: self.port > 1",
            "spec: Invalid value: \"object\": division by zero evaluating rule: m must not be empty",
        ]
    );
}

#[test]
fn transition_rules_see_old_values() {
    let s = compiled(json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "immutable": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "Value is immutable"}]},
        "counter": {"type": "integer", "x-kubernetes-validations": [
            {"rule": "self >= oldSelf"},
            {"rule": "oldSelf.hasValue() ? self >= oldSelf.value() : self == 0", "optionalOldSelf": true, "message": "starts at 0 and grows"}
        ]},
        "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": {
            "type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "v": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "self.v >= oldSelf.v", "message": "v may only grow"}]}}
    }}}}));
    // Creates: only the optional-oldSelf rule runs.
    assert_eq!(
        errors(&s, json!({"spec": {"immutable": "a", "counter": 5}}), None),
        vec!["spec.counter: Invalid value: \"integer\": starts at 0 and grows"]
    );
    let old = json!({"spec": {"immutable": "a", "counter": 1, "items": [{"name": "x", "v": 5}, {"name": "y", "v": 1}]}});
    assert!(errors(&s, old.clone(), Some(old.clone())).is_empty());
    assert_eq!(
        errors(
            &s,
            json!({"spec": {"immutable": "b", "counter": 0, "items": [{"name": "y", "v": 2}, {"name": "x", "v": 4}, {"name": "z", "v": 0}]}}),
            Some(old)
        ),
        vec![
            "spec.counter: Invalid value: \"integer\": failed rule: self >= oldSelf",
            "spec.counter: Invalid value: \"integer\": starts at 0 and grows",
            "spec.immutable: Invalid value: \"string\": Value is immutable",
            "spec.items[1]: Invalid value: \"object\": v may only grow",
        ]
    );
}

#[test]
fn unchanged_invalid_values_ratchet_to_warnings() {
    let s = compiled(json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "a": {"type": "string", "x-kubernetes-validations": [{"rule": "self.size() < 3"}]},
        "b": {"type": "string", "x-kubernetes-validations": [{"rule": "self.size() < 3"}]}
    }}}}));
    let old = json!({"spec": {"a": "long", "b": "ok"}});
    let new = json!({"spec": {"a": "long", "b": "longer"}});
    let v = s.validate_with_warnings(&new, Some(&old));
    assert_eq!(
        v.errors.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
        vec!["spec.b: Invalid value: \"string\": failed rule: self.size() < 3"]
    );
    assert_eq!(v.warnings, vec!["spec.a: Invalid value: \"string\": failed rule: self.size() < 3"]);
    // On create there is nothing to ratchet against.
    assert_eq!(s.validate(&new, None).len(), 2);
}

#[test]
fn the_cost_budget_stops_validation() {
    let s = CompiledSchema::build(&json!({"type": "object", "properties": {"list": {
        "type": "array", "items": {"type": "string"},
        "x-kubernetes-validations": [{"rule": "self.all(x, self.all(y, x.size() >= 0))"}]}}}));
    let list: Vec<String> = (0..1500).map(|i| format!("item-{i}")).collect();
    let errs: Vec<String> = s.validate(&json!({"list": list}), None).iter().map(|e| e.to_string()).collect();
    assert_eq!(
        errs,
        vec!["list: Invalid value: \"array\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.all(x, self.all(y, x.size() >= 0))"]
    );
    // Rules under the per-call limit, over many items, run out of the shared budget.
    let s = CompiledSchema::build(&json!({"type": "object", "properties": {"lists": {
        "type": "array", "items": {"type": "array", "items": {"type": "string"},
            "x-kubernetes-validations": [{"rule": "self.all(x, self.all(y, true))"}]}}}}));
    let inner: Vec<String> = (0..300).map(|i| i.to_string()).collect();
    let lists: Vec<Vec<String>> = (0..60).map(|_| inner.clone()).collect();
    let errs: Vec<String> = s.validate(&json!({"lists": lists}), None).iter().map(|e| e.to_string()).collect();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].ends_with(": Invalid value: \"array\": validation failed due to running out of cost budget, no further validation rules will be run"),
        "{errs:?}"
    );
}

#[test]
fn rules_that_did_not_compile_report_at_validation() {
    let s = CompiledSchema::build(&json!({"type": "object", "properties": {"a": {"type": "string",
        "x-kubernetes-validations": [{"rule": "self.nope"}]}}}));
    let errs = errors(&s, json!({"a": "x"}), None);
    assert_eq!(errs.len(), 1);
    assert!(errs[0].starts_with("a: Invalid value: \"string\": rule compile error: compilation failed: ERROR: <input>:1:5:"), "{}", errs[0]);
}

#[test]
fn escaped_property_names_and_embedded_resources() {
    let s = compiled(json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "x-y": {"type": "string"},
        "template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true,
            "x-kubernetes-validations": [{"rule": "self.kind == 'Pod' && self.metadata.name != ''"}]}
    }, "x-kubernetes-validations": [{"rule": "self.x__dash__y == 'z'"}]}}}));
    assert_eq!(
        errors(&s, json!({"spec": {"x-y": "q", "template": {"apiVersion": "v1", "kind": "Job", "metadata": {"name": "n"}}}}), None),
        vec![
            "spec: Invalid value: \"object\": failed rule: self.x__dash__y == 'z'",
            "spec.template: Invalid value: \"object\": failed rule: self.kind == 'Pod' && self.metadata.name != ''",
        ]
    );
}

#[test]
fn nulls_are_not_validated() {
    let s = compiled(json!({"type": "object", "properties": {"a": {"type": "string", "nullable": true,
        "x-kubernetes-validations": [{"rule": "self.size() > 3"}]}}}));
    assert!(errors(&s, json!({"a": null}), None).is_empty());
}

#[test]
fn optional_old_self_must_be_unwrapped() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "string",
        "x-kubernetes-validations": [{"rule": "oldSelf == self", "optionalOldSelf": true}]}}});
    let errs = compile_schema(&schema, "spec.versions[0].schema.openAPIV3Schema").unwrap_err();
    assert!(
        errs[0].detail.ends_with(
            "compilation failed: ERROR: <input>:1:9: found no matching overload for '_==_' applied to '(optional_type(string), string)'\n | oldSelf == self\n | ........^"
        ),
        "{}",
        errs[0].detail
    );
}

#[test]
fn rules_under_unescapable_property_names_still_run() {
    let s = compiled(json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "a@b": {"type": "string", "x-kubernetes-validations": [{"rule": "self.size() < 3"}]}
    }}}}));
    assert_eq!(
        errors(&s, json!({"spec": {"a@b": "long"}}), None),
        vec!["spec.a@b: Invalid value: \"string\": failed rule: self.size() < 3"]
    );
}

#[test]
fn maps_and_lists_of_objects_report_their_keys_and_indexes() {
    let s = compiled(json!({"type": "object", "properties": {
        "m": {"type": "object", "maxProperties": 5, "additionalProperties": {"type": "string", "maxLength": 10,
            "x-kubernetes-validations": [{"rule": "self != 'bad'", "message": "no bad values"}]}},
        "l": {"type": "array", "maxItems": 5, "items": {"type": "integer", "x-kubernetes-validations": [{"rule": "self >= 0"}]}}
    }}));
    assert_eq!(
        errors(&s, json!({"m": {"ok": "x", "k": "bad"}, "l": [1, -1]}), None),
        vec![
            "l[1]: Invalid value: \"integer\": failed rule: self >= 0",
            "m[k]: Invalid value: \"string\": no bad values",
        ]
    );
}
