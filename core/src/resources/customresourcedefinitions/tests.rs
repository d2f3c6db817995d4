//! Cases of upstream's `validation_test.go`, in our words: each CRD goes through the
//! kind's defaults and create (or update) checks, as the REST handlers run them.

use super::{defaults, validation};
use crate::rest::object::Object;
use crate::schema::structural;
use serde_json::{json, Value};

fn object(v: Value) -> Object {
    v.as_object().cloned().expect("an object")
}

/// A CRD that passes: one version, a schema, a status subresource.
fn good() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                   "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}},
                               "subresources": {"status": {}}}]}
    })
}

/// The errors of creating `crd`, as `field: message` lines.
fn create(crd: Value) -> Vec<String> {
    let mut crd = object(crd);
    defaults::apply(&mut crd);
    defaults::prepare_for_create(&mut crd);
    validation::validate_create(&crd).iter().map(|e| e.to_string()).collect()
}

/// The fields of the errors of creating `crd`, with their cause types.
fn create_fields(crd: Value) -> Vec<(String, &'static str)> {
    let mut crd = object(crd);
    defaults::apply(&mut crd);
    defaults::prepare_for_create(&mut crd);
    validation::validate_create(&crd).iter().map(|e| (e.field.clone(), e.kind.cause_type())).collect()
}

/// `good()` with the first version's schema replaced.
fn with_schema(schema: Value) -> Value {
    let mut crd = good();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = schema;
    crd
}

/// The stored form of `crd`, established, as an update finds it.
fn stored(crd: Value) -> Object {
    let mut crd = object(crd);
    defaults::apply(&mut crd);
    defaults::prepare_for_create(&mut crd);
    crd["status"]["conditions"] = json!([{"type": "Established", "status": "True"}]);
    crd
}

fn update(new: Value, old: &Object) -> Vec<String> {
    let mut new = object(new);
    defaults::apply(&mut new);
    defaults::prepare_for_update(&mut new, old);
    validation::validate_update(&new, old).iter().map(|e| e.to_string()).collect()
}

#[test]
fn a_good_crd_passes() {
    assert_eq!(create(good()), Vec::<String>::new());
}

#[test]
fn bad_names_are_refused_each_once() {
    let mut crd = good();
    crd["metadata"]["name"] = json!("plural.group");
    crd["spec"]["group"] = json!("group");
    crd["spec"]["scope"] = json!("foo");
    crd["spec"]["names"] = json!({"plural": "pl()*ural", "singular": "value()*a", "kind": "value()*a", "listKind": "value()*a"});
    let fields: Vec<(String, &str)> = create_fields(crd);
    let expected = [
        ("metadata.name", "FieldValueInvalid"),
        ("spec.group", "FieldValueInvalid"),
        ("spec.scope", "FieldValueNotSupported"),
        ("spec.names.plural", "FieldValueInvalid"),
        ("spec.names.singular", "FieldValueInvalid"),
        ("spec.names.kind", "FieldValueInvalid"),
        ("spec.names.listKind", "FieldValueInvalid"),
        ("spec.names.listKind", "FieldValueInvalid"),
    ];
    let expected: Vec<(String, &str)> = expected.iter().map(|(f, t)| (f.to_string(), *t)).collect();
    assert_eq!(fields, expected);
}

#[test]
fn group_scope_and_names_read_like_upstream() {
    let mut crd = good();
    crd["metadata"]["name"] = json!("widgets.example");
    crd["spec"]["group"] = json!("example");
    crd["spec"]["scope"] = json!("");
    crd["spec"]["names"]["kind"] = json!("Wid get");
    crd["spec"]["names"]["shortNames"] = json!(["w_d"]);
    assert_eq!(
        create(crd),
        [
            "spec.group: Invalid value: \"example\": should be a domain with at least one dot",
            "spec.scope: Required value",
            "spec.names.singular: Invalid value: \"wid get\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
            "spec.names.kind: Invalid value: \"Wid get\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
            "spec.names.listKind: Invalid value: \"Wid getList\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
            "spec.names.shortNames[0]: Invalid value: \"w_d\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        ]
    );
}

#[test]
fn versions_need_unique_names_and_one_storage_version() {
    let mut crd = good();
    let v1 = crd["spec"]["versions"][0].clone();
    crd["spec"]["versions"] = json!([v1.clone(), v1]);
    let errors = create(crd);
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].starts_with("spec.versions: Invalid value: [{\"Name\":\"v1\""), "{}", errors[0]);
    assert!(errors[0].ends_with(": must contain unique version names"), "{}", errors[0]);
    assert!(errors[1].ends_with(": must have exactly one version marked as storage version"), "{}", errors[1]);
}

#[test]
fn versions_with_their_own_schemas_print_them_in_errors() {
    let mut crd = good();
    let mut v2 = crd["spec"]["versions"][0].clone();
    v2["name"] = json!("v2");
    v2["schema"]["openAPIV3Schema"] = json!({"type": "object"});
    crd["spec"]["versions"].as_array_mut().unwrap().push(v2);
    // Both are marked storage: the first one is the one stored.
    let errors = create(crd);
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(
        errors[0].contains(r#""Schema":{"OpenAPIV3Schema":{"ID":"","Schema":"","Ref":null,"Description":"","Type":"object","#),
        "{}",
        errors[0]
    );
    assert!(errors[0].ends_with("must have exactly one version marked as storage version"), "{}", errors[0]);
    assert_eq!(errors[1], r#"status.storedVersions: Invalid value: ["v1"]: must have the storage version v2"#);
}

#[test]
fn errors_in_a_schema_all_versions_share_are_reported_at_spec_validation() {
    let mut crd = with_schema(json!({"type": "object", "properties": {"a": {"type": "string", "uniqueItems": true}}}));
    let mut v2 = crd["spec"]["versions"][0].clone();
    v2["name"] = json!("v2");
    v2["storage"] = json!(false);
    crd["spec"]["versions"].as_array_mut().unwrap().push(v2);
    assert_eq!(
        create(crd),
        ["spec.validation.openAPIV3Schema.properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"]
    );
}

#[test]
fn a_conversion_webhook_is_checked() {
    let mut crd = good();
    crd["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {
        "clientConfig": {"service": {"name": "conv", "namespace": "default", "port": 0}},
        "conversionReviewVersions": ["v2", "v2", "V3"]}});
    assert_eq!(
        create(crd),
        [
            "spec.conversion.webhookClientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive",
            "spec.conversion.conversionReviewVersions[1]: Invalid value: \"v2\": duplicate version",
            "spec.conversion.conversionReviewVersions[2]: Invalid value: \"V3\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
            "spec.conversion.conversionReviewVersions: Invalid value: [\"v2\",\"v2\",\"V3\"]: must include at least one of v1, v1beta1",
        ]
    );
    let mut both = good();
    both["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {
        "clientConfig": {"url": "https://example.com", "service": {"name": "conv", "namespace": "default"}},
        "conversionReviewVersions": ["v1"]}});
    assert_eq!(create(both), ["spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required"]);
    let mut none = good();
    none["spec"]["conversion"] = json!({"strategy": "None", "webhook": {"conversionReviewVersions": ["v1"]}});
    assert_eq!(
        create(none),
        ["spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook"]
    );
    let mut missing = good();
    missing["spec"]["conversion"] = json!({"strategy": "Webhook"});
    assert_eq!(
        create(missing),
        [
            "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
            "spec.conversion.conversionReviewVersions: Required value",
        ]
    );
}

#[test]
fn scale_paths_point_into_spec_and_status() {
    let mut crd = good();
    crd["spec"]["versions"][0]["subresources"]["scale"] =
        json!({"specReplicasPath": "spec.replicas", "statusReplicasPath": ".spec.replicas", "labelSelectorPath": ".metadata.labels"});
    assert_eq!(
        create(crd),
        [
            "spec.subresources.scale.specReplicasPath: Invalid value: \"spec.replicas\": must be a simple json path starting with .",
            "spec.subresources.scale.statusReplicasPath: Invalid value: \".spec.replicas\": should be a json path under .status",
            "spec.subresources.scale.labelSelectorPath: Invalid value: \".metadata.labels\": should be a json path under either .spec or .status",
        ]
    );
}

#[test]
fn printer_columns_need_a_name_a_type_and_a_path() {
    let mut crd = good();
    crd["spec"]["versions"][0]["additionalPrinterColumns"] =
        json!([{"type": "float", "format": "hex", "jsonPath": ""}, {"name": "Size", "type": "integer", "jsonPath": ".spec.size"}]);
    assert_eq!(
        create(crd),
        [
            "spec.additionalPrinterColumns[0].name: Required value",
            "spec.additionalPrinterColumns[0].type: Invalid value: \"float\": must be one of boolean,date,integer,number,string",
            "spec.additionalPrinterColumns[0].format: Invalid value: \"hex\": must be one of byte,date,date-time,double,float,int32,int64,password",
            "spec.additionalPrinterColumns[0].JSONPath: Required value",
        ]
    );
}

#[test]
fn selectable_fields_name_scalar_fields_outside_metadata() {
    let mut crd = with_schema(json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"size": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}}}}}));
    crd["spec"]["versions"][0]["selectableFields"] = json!([
        {"jsonPath": ".spec.size"}, {"jsonPath": ".spec.tags"}, {"jsonPath": ".spec.nope"},
        {"jsonPath": ".spec.size"}, {"jsonPath": ""}]);
    assert_eq!(
        create(crd),
        [
            "spec.selectableFields[1].jsonPath: Invalid value: \".spec.tags\": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.",
            "spec.selectableFields[2].jsonPath: Invalid value: \".spec.nope\": is an invalid path: does not refer to a valid field",
            "spec.selectableFields[3].jsonPath: Duplicate value: \".spec.size\"",
            "spec.selectableFields[4].jsonPath: Required value",
        ]
    );
}

#[test]
fn the_root_of_a_schema_with_status_is_a_plain_object() {
    let errors = create(with_schema(json!({"type": "object", "additionalProperties": {"type": "string"}})));
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].starts_with("spec.validation.openAPIV3Schema: Invalid value: {\"ID\":\"\""), "{}", errors[0]);
    assert!(errors[0].ends_with(": only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled"), "{}", errors[0]);
    assert_eq!(errors[1], "spec.validation.openAPIV3Schema.additionalProperties: Forbidden: must not be used at the root");
    assert_eq!(
        create(with_schema(json!({"type": "array", "items": {"type": "string"}}))),
        [
            "spec.validation.openAPIV3Schema.type: Invalid value: \"array\": only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled",
            "spec.validation.openAPIV3Schema.type: Invalid value: \"array\": must be object at the root",
        ]
    );
}

#[test]
fn unsupported_openapi_fields_are_forbidden() {
    let mut crd = with_schema(json!({"type": "object", "nullable": true, "properties": {
        "a": {"type": "null"},
        "b": {"$ref": "#/definitions/x", "type": "string"},
        "c": {"type": "object", "properties": {"d": {"type": "string"}}, "additionalProperties": {"type": "string"}},
        "e": {"type": "string", "x-kubernetes-preserve-unknown-fields": false}}}));
    crd["spec"]["versions"][0].as_object_mut().unwrap().remove("subresources");
    assert_eq!(
        create(crd),
        [
            "spec.validation.openAPIV3Schema.nullable: Forbidden: nullable cannot be true at the root",
            "spec.validation.openAPIV3Schema.properties[a].type: Unsupported value: \"null\": supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\"",
            "spec.validation.openAPIV3Schema.properties[a].type: Forbidden: type cannot be set to null, use nullable as an alternative",
            "spec.validation.openAPIV3Schema.properties[b].$ref: Forbidden: $ref is not supported",
            "spec.validation.openAPIV3Schema.properties[c].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
            "spec.validation.openAPIV3Schema.properties[e].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined",
        ]
    );
}

#[test]
fn list_and_map_extensions_follow_their_rules() {
    let schema = json!({"type": "object", "properties": {
        "a": {"type": "object", "x-kubernetes-list-type": "map"},
        "b": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "name", "missing"],
              "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
        "c": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "object"}},
        "d": {"type": "string", "x-kubernetes-map-type": "fancy"}}});
    assert_eq!(
        create(with_schema(schema)),
        [
            "spec.validation.openAPIV3Schema.properties[a].type: Invalid value: \"object\": must be array if x-kubernetes-list-type is specified",
            "spec.validation.openAPIV3Schema.properties[a].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map",
            "spec.validation.openAPIV3Schema.properties[a].items: Required value: must have a schema if x-kubernetes-list-type is map",
            "spec.validation.openAPIV3Schema.properties[b].x-kubernetes-list-map-keys: Invalid value: [\"name\",\"name\",\"missing\"]: must not contain duplicate entries",
            "spec.validation.openAPIV3Schema.properties[b].x-kubernetes-list-map-keys: Invalid value: [\"name\",\"name\",\"missing\"]: entries must all be names of item properties",
            "spec.validation.openAPIV3Schema.properties[b].items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
            "spec.validation.openAPIV3Schema.properties[b].items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
            "spec.validation.openAPIV3Schema.properties[c].items.x-kubernetes-map-type: Invalid value: null: must be atomic as item of a list with x-kubernetes-list-type=set",
            "spec.validation.openAPIV3Schema.properties[d].type: Invalid value: \"string\": must be object if x-kubernetes-map-type is specified",
            "spec.validation.openAPIV3Schema.properties[d].x-kubernetes-map-type: Unsupported value: \"fancy\": supported values: \"atomic\", \"granular\"",
        ]
    );
}

#[test]
fn defaults_are_forbidden_in_top_level_metadata_and_must_be_pruned() {
    let schema = json!({"type": "object", "properties": {
        "metadata": {"type": "object", "properties": {"name": {"type": "string", "default": "x"}}},
        "spec": {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}, "default": {"c": 1}}}}}});
    assert_eq!(
        create(with_schema(schema)),
        [
            "spec.validation.openAPIV3Schema.properties[spec].properties[a].default: Invalid value: {\"c\":1}: must not have unknown fields",
            "spec.validation.openAPIV3Schema.properties[metadata].properties[name].default: Forbidden: must not be set in top-level metadata",
        ]
    );
}

#[test]
fn an_embedded_resource_is_an_object_with_type_meta() {
    let schema = json!({"type": "object", "properties": {
        "template": {"type": "object", "x-kubernetes-embedded-resource": true}}});
    assert_eq!(
        create(with_schema(schema)),
        ["spec.validation.openAPIV3Schema.properties[template].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"]
    );
}

#[test]
fn validation_rules_fields_are_checked_before_cel() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"a": {"type": "string"}},
        "x-kubernetes-validations": [
            {"rule": " "},
            {"rule": "self.a != ''", "reason": "FieldValueBogus", "fieldPath": ".b"}]}}});
    assert_eq!(
        create(with_schema(schema)),
        [
            "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Required value: rule is not specified",
            "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[1].reason: Unsupported value: \"FieldValueBogus\": supported values: \"FieldValueDuplicate\", \"FieldValueForbidden\", \"FieldValueInvalid\", \"FieldValueRequired\"",
            "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[1].fieldPath: Invalid value: \".b\": fieldPath must be a valid path",
        ]
    );
}

#[test]
fn a_pattern_must_compile() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a"}}});
    assert_eq!(
        create(with_schema(schema)),
        ["spec.validation.openAPIV3Schema.properties[a].pattern: Invalid value: \"^(a\": must be a valid regular expression, but isn't: error parsing regexp: missing closing ): `^(a`"]
    );
}

#[test]
fn protected_groups_need_an_approval() {
    let mut crd = good();
    crd["metadata"]["name"] = json!("widgets.apps.k8s.io");
    crd["spec"]["group"] = json!("apps.k8s.io");
    assert_eq!(
        create(crd.clone()),
        ["metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation \"api-approved.kubernetes.io\", see https://github.com/kubernetes/enhancements/pull/1111"]
    );
    crd["metadata"]["annotations"] = json!({"api-approved.kubernetes.io": "https://github.com/kubernetes/kubernetes/pull/1"});
    assert_eq!(create(crd.clone()), Vec::<String>::new());
    crd["metadata"]["annotations"] = json!({"api-approved.kubernetes.io": "unapproved, experimental"});
    assert_eq!(create(crd), Vec::<String>::new());
}

#[test]
fn preserve_unknown_fields_may_not_be_turned_on() {
    let mut crd = good();
    crd["spec"]["preserveUnknownFields"] = json!(true);
    assert_eq!(
        create(crd),
        ["spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"]
    );
}

#[test]
fn a_deprecation_warning_needs_a_deprecated_version() {
    let mut crd = good();
    crd["spec"]["versions"][0]["deprecationWarning"] = json!("old");
    assert_eq!(create(crd), ["spec.versions[0].deprecationWarning: Invalid value: \"old\": can only be set for deprecated versions"]);
}

#[test]
fn an_established_crd_keeps_its_group_scope_and_names() {
    let old = stored(good());
    let mut new = good();
    new["spec"]["group"] = json!("other.com");
    new["spec"]["scope"] = json!("Cluster");
    new["spec"]["names"] = json!({"plural": "gadgets", "kind": "Gadget"});
    assert_eq!(
        update(new, &old),
        [
            "spec.scope: Invalid value: \"Cluster\": field is immutable",
            "spec.names.kind: Invalid value: \"Gadget\": field is immutable",
            "spec.group: Invalid value: \"other.com\": field is immutable",
            "spec.names.plural: Invalid value: \"gadgets\": field is immutable",
        ]
    );
    // Before it is established, its kind and scope may still change.
    let mut unestablished = stored(good());
    unestablished["status"]["conditions"] = json!([]);
    let mut new = good();
    new["spec"]["scope"] = json!("Cluster");
    assert_eq!(update(new, &unestablished), Vec::<String>::new());
}

#[test]
fn a_stored_version_stays_listed_until_migrated() {
    let mut two = good();
    let mut v2 = two["spec"]["versions"][0].clone();
    v2["name"] = json!("v2");
    v2["storage"] = json!(false);
    two["spec"]["versions"].as_array_mut().unwrap().push(v2);
    let mut old = stored(two.clone());
    old["status"]["storedVersions"] = json!(["v1", "v2"]);
    let mut new = two;
    new["spec"]["versions"].as_array_mut().unwrap().remove(1);
    assert_eq!(
        update(new, &old),
        ["status.storedVersions[1]: Invalid value: \"v2\": missing from spec.versions; v2 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v2 and removes v2 from status.storedVersions"]
    );
}

#[test]
fn an_old_crd_keeps_what_it_was_let_through() {
    // A CRD that kept preserveUnknownFields (v1beta1's default) and a non-structural
    // schema may keep both; one with a structural schema may not lose it.
    let mut legacy = with_schema(json!({"properties": {"a": {"type": "string"}}}));
    legacy["spec"]["preserveUnknownFields"] = json!(true);
    legacy["spec"]["versions"][0].as_object_mut().unwrap().remove("subresources");
    assert_eq!(update(legacy.clone(), &stored(legacy.clone())), Vec::<String>::new());
    let mut structural = good();
    structural["spec"]["preserveUnknownFields"] = json!(true);
    structural["spec"]["versions"][0].as_object_mut().unwrap().remove("subresources");
    assert_eq!(
        update(legacy, &stored(structural)),
        ["spec.validation.openAPIV3Schema.type: Required value: must not be empty at the root"]
    );
}

#[test]
fn accepted_names_are_checked_on_status_writes() {
    let mut crd = stored(good());
    crd["status"]["acceptedNames"] = json!({"plural": "Widgets", "kind": "Widget", "listKind": "Widget"});
    let errors: Vec<String> = validation::validate_status_update(&crd).iter().map(|e| e.to_string()).collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].starts_with("status.acceptedNames.plural: Invalid value: \"Widgets\""));
    assert_eq!(errors[1], "status.acceptedNames.listKind: Invalid value: \"Widget\": kind and listKind may not be the same");
}

#[test]
fn structural_violations_are_listed_for_the_non_structural_condition() {
    assert!(structural::is_structural(&json!({"type": "object"})));
    let violations: Vec<String> = structural::violations(&json!({"properties": {"a": {}}})).iter().map(|e| e.to_string()).collect();
    assert_eq!(
        violations,
        [
            "properties[a].type: Required value: must not be empty for specified object fields",
            "type: Required value: must not be empty at the root",
        ]
    );
}
