//! The errors CRD validation reports about rules, as upstream words and places them.

use crate::cel::compile_schema;
use crate::validation::ErrorKind;
use serde_json::{json, Value as Json};

const ROOT: &str = "spec.validation.openAPIV3Schema";

fn errors(schema: Json) -> Vec<String> {
    match compile_schema(&schema, ROOT) {
        Ok(_) => Vec::new(),
        Err(errs) => errs.iter().map(|e| e.to_string()).collect(),
    }
}

fn with_rules(property: Json) -> Json {
    json!({"type": "object", "properties": {"f": property}})
}

#[test]
fn valid_rules_compile() {
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "x-kubernetes-validations": [
            {"rule": "self.min <= self.max", "message": "min must not exceed max"},
            {"rule": "self.max < 100", "messageExpression": "'max is too large'", "reason": "FieldValueForbidden", "fieldPath": ".max"}
        ], "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}}}
    }});
    let compiled = compile_schema(&schema, ROOT).expect("compiles");
    assert!(!compiled.is_empty());
    let none = compile_schema(&json!({"type": "object", "properties": {"a": {"type": "string"}}}), ROOT).unwrap();
    assert!(none.is_empty());
}

#[test]
fn compilation_errors_name_the_rule() {
    assert_eq!(
        errors(with_rules(json!({"type": "string", "x-kubernetes-validations": [{"rule": "self.foo == 1"}]}))),
        vec![format!(
            "{ROOT}.properties[f].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{{Rule:\"self.foo == 1\", Message:\"\", MessageExpression:\"\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}}: compilation failed: ERROR: <input>:1:5: type 'string' does not support field selection\n | self.foo == 1\n | ....^"
        )]
    );
    let errs = errors(with_rules(json!({"type": "string", "x-kubernetes-validations": [{"rule": "self"}]})));
    assert_eq!(errs.len(), 1);
    assert!(errs[0].ends_with(": cel expression must evaluate to a bool"), "{}", errs[0]);
    let errs = errors(with_rules(
        json!({"type": "string", "x-kubernetes-validations": [{"rule": "self == 'a'", "messageExpression": "1"}]}),
    ));
    assert_eq!(errs.len(), 1);
    assert!(errs[0].starts_with(&format!("{ROOT}.properties[f].x-kubernetes-validations[0].messageExpression: Invalid value: apiextensions.ValidationRule{{")));
    assert!(errs[0].ends_with(": messageExpression must evaluate to a string"), "{}", errs[0]);
    let errs = errors(with_rules(
        json!({"type": "string", "x-kubernetes-validations": [{"rule": "self == 'a'", "messageExpression": "self +"}]}),
    ));
    assert!(errs[0].contains(": messageExpression compilation failed: ERROR: <input>:1:7: Syntax error:"), "{}", errs[0]);
}

#[test]
fn malformed_entries() {
    let errs = errors(with_rules(json!({"type": "string", "x-kubernetes-validations": [
        {"rule": " "},
        {"rule": "self == 'a'", "message": " "},
        {"rule": "self == 'a'", "message": "two\nlines"},
        {"rule": "self == 'a' ||\nself == 'b'"},
        {"rule": "self == 'a'", "messageExpression": "  "},
        {"rule": "self == 'a'", "reason": "Sometimes"},
        {"rule": "self == 'a'", "fieldPath": ".nope"}
    ]})));
    let at = |i: usize, f: &str| format!("{ROOT}.properties[f].x-kubernetes-validations[{i}].{f}");
    assert_eq!(
        errs,
        vec![
            format!("{}: Required value: rule is not specified", at(0, "rule")),
            format!("{}: Invalid value: \" \": message must be non-empty if specified", at(1, "message")),
            format!("{}: Invalid value: \"two\\nlines\": message must not contain line breaks", at(2, "message")),
            format!("{}: Required value: message must be specified if rule contains line breaks", at(3, "message")),
            format!("{}: Required value: messageExpression must be non-empty if specified", at(4, "messageExpression")),
            format!(
                "{}: Unsupported value: \"Sometimes\": supported values: \"FieldValueDuplicate\", \"FieldValueForbidden\", \"FieldValueInvalid\", \"FieldValueRequired\"",
                at(5, "reason")
            ),
            format!("{}: Invalid value: \".nope\": fieldPath must be a valid path", at(6, "fieldPath")),
        ]
    );
}

#[test]
fn schema_errors_come_before_compilation_errors_and_stop_compiling_above_them() {
    let schema = json!({"type": "object", "properties": {
        "a": {"type": "string", "x-kubernetes-validations": [{"rule": "self.bad"}]},
        "b": {"type": "object", "x-kubernetes-validations": [{"rule": "self.bad"}], "properties": {
            "c": {"type": "string", "x-kubernetes-validations": [{"rule": ""}]}
        }}
    }});
    let errs = errors(schema);
    assert_eq!(errs.len(), 2, "{errs:#?}");
    assert!(errs[0].starts_with(&format!("{ROOT}.properties[b].properties[c].x-kubernetes-validations[0].rule: Required value")));
    // `b`'s own rule is not compiled: its subtree has a schema error.
    assert!(errs[1].starts_with(&format!("{ROOT}.properties[a].x-kubernetes-validations[0].rule: Invalid value")));
}

#[test]
fn transition_rules_need_correlatable_values() {
    let schema = json!({"type": "object", "properties": {
        "list": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 10, "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}},
        "value": {"type": "string", "x-kubernetes-validations": [{"rule": "self == 'a'", "optionalOldSelf": true}]}
    }});
    assert_eq!(
        errors(schema),
        vec![
            format!(
                "{ROOT}.properties[list].items.x-kubernetes-validations[0].rule: Invalid value: \"self == oldSelf\": oldSelf cannot be used on the uncorrelatable portion of the schema within {ROOT}.properties[list]"
            ),
            format!("{ROOT}.properties[value].x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule"),
        ]
    );
    let map_list = json!({"type": "object", "properties": {
        "list": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
            "items": {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}},
                "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}
    }});
    assert_eq!(errors(map_list), Vec::<String>::new());
}

#[test]
fn estimated_costs_past_the_limits() {
    let schema = json!({"type": "object", "properties": {
        "list": {"type": "array", "items": {"type": "string"},
            "x-kubernetes-validations": [{"rule": "self.all(x, self.all(y, x == y))"}]}
    }});
    let errs = compile_schema(&schema, ROOT).unwrap_err();
    let rule = format!("{ROOT}.properties[list].x-kubernetes-validations[0].rule");
    assert_eq!(errs.len(), 3, "{errs:#?}");
    assert_eq!(errs[0].field, rule);
    assert_eq!(errs[0].kind, ErrorKind::Forbidden);
    assert_eq!(
        errs[0].detail,
        "estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    );
    assert_eq!(errs[1].to_string(), format!("{rule}: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"));
    assert_eq!(
        errs[2].to_string(),
        format!("{ROOT}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)")
    );
    // Bounding the list brings it under the limit.
    let bounded = json!({"type": "object", "properties": {
        "list": {"type": "array", "maxItems": 100, "items": {"type": "string", "maxLength": 64},
            "x-kubernetes-validations": [{"rule": "self.all(x, self.all(y, x == y))"}]}
    }});
    assert!(compile_schema(&bounded, ROOT).is_ok());
}

#[test]
fn cost_factor_wording() {
    use crate::cel::schema::cost_error_message;
    assert!(cost_error_message("estimated rule cost", 12_000_000, 10_000_000).contains("factor of 1.200000x"));
    assert!(cost_error_message("estimated rule cost", 25_000_000, 10_000_000).contains("factor of 2.5x"));
    assert!(cost_error_message("estimated rule cost", 2_000_000_000, 10_000_000).contains("factor of more than 100x"));
}

#[test]
fn per_rule_cost_counts_how_often_the_rule_runs() {
    // A cheap rule under an unbounded list runs once per item that fits in a request.
    let schema = json!({"type": "object", "properties": {
        "list": {"type": "array", "items": {"type": "string",
            "x-kubernetes-validations": [{"rule": "self.contains('abc')"}]}}
    }});
    let errs = compile_schema(&schema, ROOT).unwrap_err();
    assert!(errs.iter().any(|e| e.kind == ErrorKind::Forbidden && e.field.ends_with("items.x-kubernetes-validations[0].rule")));
}

#[test]
fn constant_patterns_of_find_are_compiled_with_the_rule() {
    let errs = errors(with_rules(json!({"type": "string", "x-kubernetes-validations": [{"rule": "self.find('[') == ''"}]})));
    assert_eq!(errs.len(), 1);
    assert!(errs[0].contains(": program instantiation failed: error parsing regexp: "), "{}", errs[0]);
}
