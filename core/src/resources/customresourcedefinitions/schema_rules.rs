//! The schema of a CRD version checked as upstream checks it
//! (`validateCustomResourceDefinitionValidation` and
//! `ValidateCustomResourceDefinitionOpenAPISchema`): the root's limits under a status
//! subresource, structurality (`schema::structural`), defaults (`schema_defaults`), the
//! OpenAPI fields Kubernetes does not support, and the `x-kubernetes-*` extensions'
//! rules (list types and map keys, map types, preserve-unknown-fields, validation
//! rules' fields). CEL rules are compiled at one hook (`validation::cel_rule_errors`).

use super::validation::{cel_rule_errors, Options};
use super::{go_values, schema_defaults};
use crate::schema::structural::props::{Props, FIELDS};
use crate::schema::structural::{field_path, prune, rules, Structural};
use crate::validation::{go_json, FieldError, FieldPath};
use serde_json::Value;

const TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];
const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];
const RULE_REASONS: [&str; 4] = ["FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"];

/// The fields the root of a schema may set when a status subresource is enabled (so
/// that `properties.status` alone can validate a status).
const ROOT_FIELDS_WITH_STATUS: [&str; 22] = [
    "Description", "Type", "Format", "Title", "Maximum", "ExclusiveMaximum", "Minimum", "ExclusiveMinimum",
    "MaxLength", "MinLength", "Pattern", "MaxItems", "MinItems", "UniqueItems", "MultipleOf", "Required",
    "Items", "Properties", "ExternalDocs", "Example", "XPreserveUnknownFields", "XValidations",
];

/// A `CustomResourceValidation` (`{openAPIV3Schema}`) at `path` (`spec.validation`, or
/// `spec.versions[i].schema`).
pub(super) fn validate_validation(validation: Option<&Value>, status_enabled: bool, opts: &Options, path: &FieldPath) -> Vec<FieldError> {
    let Some(schema) = validation.and_then(|v| v.get("openAPIV3Schema")).filter(|s| !s.is_null()) else {
        return Vec::new();
    };
    let p = Props(schema);
    let schema_path = path.child("openAPIV3Schema");
    let mut errors = Vec::new();
    if status_enabled {
        errors.extend(root_with_status(p, path));
    }
    if p.bool("nullable") {
        errors.push(FieldError::forbidden(path.child("openAPIV3Schema.nullable").as_str(), "nullable cannot be true at the root"));
    }
    let mut structural_ok = false;
    let mut init_errors = Vec::new();
    if opts.require_structural_schema {
        match Structural::from_json(schema) {
            Err(reason) => init_errors.push(FieldError::invalid(schema_path.as_str(), "", reason)),
            Ok(s) => {
                let violations = rules::validate(&schema_path, &s);
                if !violations.is_empty() {
                    errors.extend(violations);
                } else {
                    let defaults = schema_defaults::validate(&schema_path, &s, opts.require_pruned_defaults);
                    structural_ok = defaults.is_empty();
                    errors.extend(defaults);
                }
            }
        }
    }
    let ssv = Context {
        allow_defaults: true,
        disallow_reason: String::new(),
        inside_meta: false,
        require_valid_type: opts.require_valid_property_type,
    };
    let schema_errors = openapi_schema(p, &schema_path, &ssv, true, opts);
    let clean = schema_errors.is_empty();
    errors.extend(schema_errors);
    if structural_ok && clean {
        errors.extend(cel_rule_errors(schema, &schema_path));
    }
    if errors.is_empty() {
        errors.extend(init_errors);
    }
    errors
}

/// Under a status subresource the root is an object and sets only some fields; the
/// first field that breaks this is reported.
fn root_with_status(p: Props<'_>, path: &FieldPath) -> Vec<FieldError> {
    for field in FIELDS.iter().filter(|f| p.is_set(f)) {
        if field.go == "Type" {
            if p.str("type") != "object" {
                return vec![FieldError::invalid(
                    path.child("openAPIV3Schema.type").as_str(),
                    p.str("type"),
                    "only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled",
                )];
            }
            continue;
        }
        if !ROOT_FIELDS_WITH_STATUS.contains(&field.go) {
            return vec![FieldError::invalid_unquoted(
                path.child("openAPIV3Schema").as_str(),
                &go_values::schema(p.0),
                &format!(
                    "only [{}] fields are allowed at the root of the schema if the status subresource is enabled",
                    ROOT_FIELDS_WITH_STATUS.join(" ")
                ),
            )];
        }
    }
    Vec::new()
}

/// What the walk of the schema carries down (upstream's `specStandardValidatorV3`).
#[derive(Clone, Debug)]
struct Context {
    allow_defaults: bool,
    disallow_reason: String,
    /// Inside the `apiVersion`, `kind` or `metadata` of a resource.
    inside_meta: bool,
    require_valid_type: bool,
}

impl Context {
    fn without_defaults(&self, reason: &str) -> Context {
        Context { allow_defaults: false, disallow_reason: reason.to_owned(), ..self.clone() }
    }

    fn in_meta(&self) -> Context {
        Context { inside_meta: true, ..self.clone() }
    }

    /// The OpenAPI fields Kubernetes does not support, and defaults where none may be.
    fn unsupported(&self, p: Props<'_>, path: &FieldPath) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let ty = p.str("type");
        if self.require_valid_type && !ty.is_empty() && !TYPES.contains(&ty) {
            errors.push(FieldError::not_supported(path.child("type").as_str(), ty, &TYPES));
        }
        if p.get("default").is_some() && !self.allow_defaults {
            let mut detail = "must not be set".to_owned();
            if !self.disallow_reason.is_empty() {
                detail = format!("{detail} {}", self.disallow_reason);
            }
            errors.push(FieldError::forbidden(path.child("default").as_str(), detail));
        }
        let forbid = |errors: &mut Vec<FieldError>, field: &str, detail: &str| {
            errors.push(FieldError::forbidden(path.child(field).as_str(), detail));
        };
        if !p.str("id").is_empty() {
            forbid(&mut errors, "id", "id is not supported");
        }
        if p.get("additionalItems").is_some() {
            forbid(&mut errors, "additionalItems", "additionalItems is not supported");
        }
        if !p.entries("patternProperties").is_empty() {
            forbid(&mut errors, "patternProperties", "patternProperties is not supported");
        }
        if !p.entries("definitions").is_empty() {
            forbid(&mut errors, "definitions", "definitions is not supported");
        }
        if p.get("dependencies").is_some() {
            forbid(&mut errors, "dependencies", "dependencies is not supported");
        }
        if p.get("$ref").is_some() {
            forbid(&mut errors, "$ref", "$ref is not supported");
        }
        if ty == "null" {
            forbid(&mut errors, "type", "type cannot be set to null, use nullable as an alternative");
        }
        if p.get("items").and_then(Value::as_array).is_some_and(|a| !a.is_empty()) {
            forbid(&mut errors, "items", "items must be a schema object and not an array");
        }
        if self.inside_meta && p.bool("x-kubernetes-embedded-resource") {
            forbid(&mut errors, "x-kubernetes-embedded-resource", "must not be used inside of resource meta");
        }
        errors
    }
}

/// One node and everything under it (upstream's
/// `ValidateCustomResourceDefinitionOpenAPISchema`, its schema errors).
fn openapi_schema(p: Props<'_>, path: &FieldPath, ctx: &Context, is_root: bool, opts: &Options) -> Vec<FieldError> {
    let mut errors = ctx.unsupported(p, path);
    if p.bool("uniqueItems") {
        errors.push(FieldError::forbidden(
            path.child("uniqueItems").as_str(),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    // Properties are for structs, additionalProperties for maps: never both, which
    // would contradict ignoring unknown fields.
    if let Some(additional) = p.get("additionalProperties") {
        if !p.entries("properties").is_empty() && additional != &Value::Bool(true) {
            errors.push(FieldError::forbidden(
                path.child("additionalProperties").as_str(),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        if let Some(schema) = p.additional_schema() {
            let sub = if ctx.inside_meta {
                ctx.without_defaults("inside additionalProperties applying to object metadata")
            } else {
                ctx.clone()
            };
            errors.extend(openapi_schema(schema, &path.child("additionalProperties"), &sub, false, opts));
        }
    }
    let embedded = p.bool("x-kubernetes-embedded-resource");
    for (name, schema) in p.entries("properties") {
        let mut sub = ctx.clone();
        if (is_root || embedded) && META_FIELDS.contains(&name) {
            sub = sub.in_meta();
            if is_root {
                sub = sub.without_defaults(&format!("in top-level {name}"));
            }
        }
        errors.extend(openapi_schema(Props(schema), &path.child("properties").key(name), &sub, false, opts));
    }
    if let Some(not) = p.get("not") {
        errors.extend(openapi_schema(Props(not), &path.child("not"), ctx, false, opts));
    }
    for junctor in ["allOf", "oneOf", "anyOf"] {
        for (i, schema) in p.list(junctor).iter().enumerate() {
            errors.extend(openapi_schema(Props(schema), &path.child(junctor).index(i), ctx, false, opts));
        }
    }
    for (name, schema) in p.entries("definitions") {
        errors.extend(openapi_schema(Props(schema), &path.child("definitions").key(name), ctx, false, opts));
    }
    match p.get("items") {
        Some(Value::Array(list)) => {
            for (i, schema) in list.iter().enumerate() {
                errors.extend(openapi_schema(Props(schema), &path.child("items").index(i), ctx, false, opts));
            }
        }
        Some(schema) => errors.extend(openapi_schema(Props(schema), &path.child("items"), ctx, false, opts)),
        None => {}
    }
    for (name, dependency) in p.entries("dependencies") {
        if dependency.is_object() {
            errors.extend(openapi_schema(Props(dependency), &path.child("dependencies").key(name), ctx, false, opts));
        }
    }
    errors.extend(extension_rules(p, path, opts));
    if opts.require_map_list_keys_map_set_validation {
        errors.extend(map_list_keys_and_set_items(p, path));
    }
    errors.extend(validation_rule_fields(p, path));
    errors
}

/// `x-kubernetes-preserve-unknown-fields`, `-map-type`, `-list-type` and
/// `-list-map-keys`.
fn extension_rules(p: Props<'_>, path: &FieldPath, opts: &Options) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let ty = p.str("type");
    if p.opt_bool("x-kubernetes-preserve-unknown-fields") == Some(false) {
        errors.push(FieldError::invalid_unquoted(
            path.child("x-kubernetes-preserve-unknown-fields").as_str(),
            "false",
            "must be true or undefined",
        ));
    }
    let type_must_be = |errors: &mut Vec<FieldError>, detail: &str| {
        errors.push(match ty {
            "" => FieldError::required(path.child("type").as_str(), detail),
            _ => FieldError::invalid(path.child("type").as_str(), ty, detail),
        });
    };
    let map_type = p.opt_str("x-kubernetes-map-type");
    if map_type.is_some() && ty != "object" {
        type_must_be(&mut errors, "must be object if x-kubernetes-map-type is specified");
    }
    if let Some(m) = map_type.filter(|m| !matches!(*m, "atomic" | "granular")) {
        errors.push(FieldError::not_supported(path.child("x-kubernetes-map-type").as_str(), m, &["atomic", "granular"]));
    }
    let list_type = p.opt_str("x-kubernetes-list-type");
    let items = p.items_schema();
    if list_type.is_some() && ty != "array" {
        type_must_be(&mut errors, "must be array if x-kubernetes-list-type is specified");
    } else if opts.require_atomic_set_type && list_type == Some("set") {
        if let Some(items) = items {
            errors.extend(set_items_atomic(items, path));
        }
    }
    if let Some(l) = list_type.filter(|l| !matches!(*l, "atomic" | "set" | "map")) {
        errors.push(FieldError::not_supported(path.child("x-kubernetes-list-type").as_str(), l, &["atomic", "set", "map"]));
    }
    let keys = p.strings("x-kubernetes-list-map-keys");
    let keys_shown = || go_json(p.get("x-kubernetes-list-map-keys").unwrap_or(&Value::Null));
    if !keys.is_empty() {
        let detail = "must be map if x-kubernetes-list-map-keys is non-empty";
        match list_type {
            None => errors.push(FieldError::required(path.child("x-kubernetes-list-type").as_str(), detail)),
            Some("map") => {}
            Some(l) => errors.push(FieldError::invalid(path.child("x-kubernetes-list-type").as_str(), l, detail)),
        }
    }
    if list_type == Some("map") {
        if keys.is_empty() {
            errors.push(FieldError::required(
                path.child("x-kubernetes-list-map-keys").as_str(),
                "must not be empty if x-kubernetes-list-type is map",
            ));
        }
        match p.get("items") {
            None => errors.push(FieldError::required(path.child("items").as_str(), "must have a schema if x-kubernetes-list-type is map")),
            Some(list @ Value::Array(_)) => errors.push(FieldError::invalid_unquoted(
                path.child("items").as_str(),
                &go_values::items(list),
                "must only have a single schema if x-kubernetes-list-type is map",
            )),
            Some(_) => {}
        }
        if let Some(items) = items {
            let item_type = items.str("type");
            if item_type != "object" {
                errors.push(FieldError::invalid(
                    path.child("items").child("type").as_str(),
                    item_type,
                    "must be object if parent array's x-kubernetes-list-type is map",
                ));
            } else {
                let mut seen: Vec<&str> = Vec::new();
                for key in &keys {
                    match items.get("properties").and_then(|props| props.get(*key)) {
                        Some(key_schema) => {
                            if matches!(Props(key_schema).str("type"), "array" | "object") {
                                // Upstream shows the items' type here, not the key's.
                                errors.push(FieldError::invalid(
                                    path.child("items").child("properties").key(key).child("type").as_str(),
                                    item_type,
                                    "must be a scalar type if parent array's x-kubernetes-list-type is map",
                                ));
                            }
                        }
                        None => errors.push(FieldError::invalid_unquoted(
                            path.child("x-kubernetes-list-map-keys").as_str(),
                            &keys_shown(),
                            "entries must all be names of item properties",
                        )),
                    }
                    if seen.contains(key) {
                        errors.push(FieldError::invalid_unquoted(
                            path.child("x-kubernetes-list-map-keys").as_str(),
                            &keys_shown(),
                            "must not contain duplicate entries",
                        ));
                    }
                    seen.push(key);
                }
            }
        }
    }
    errors
}

/// The items of a set are atomic: a list of them says so, a map of them too.
fn set_items_atomic(items: Props<'_>, path: &FieldPath) -> Vec<FieldError> {
    let detail = "must be atomic as item of a list with x-kubernetes-list-type=set";
    let item_list_type = items.opt_str("x-kubernetes-list-type");
    match items.str("type") {
        "array" => match item_list_type {
            Some(l) if l != "atomic" => {
                vec![FieldError::invalid(path.child("items").child("x-kubernetes-list-type").as_str(), l, detail)]
            }
            _ => Vec::new(),
        },
        "object" if items.opt_str("x-kubernetes-map-type") != Some("atomic") => {
            // Upstream shows the items' list type here.
            let at = path.child("items").child("x-kubernetes-map-type");
            vec![match item_list_type {
                Some(l) => FieldError::invalid(at.as_str(), l, detail),
                None => FieldError::invalid_unquoted(at.as_str(), "null", detail),
            }]
        }
        _ => Vec::new(),
    }
}

/// Items of sets and maps are not nullable; the keys of a map are required or
/// defaulted, and not nullable.
fn map_list_keys_and_set_items(p: Props<'_>, path: &FieldPath) -> Vec<FieldError> {
    let (Some(items), Some(list_type)) = (p.items_schema(), p.opt_str("x-kubernetes-list-type")) else {
        return Vec::new();
    };
    if !matches!(list_type, "set" | "map") {
        return Vec::new();
    }
    let mut errors = Vec::new();
    if items.bool("nullable") {
        errors.push(FieldError::forbidden(
            path.child("items").child("nullable").as_str(),
            format!("cannot be nullable when x-kubernetes-list-type is {list_type}"),
        ));
    }
    if list_type == "map" {
        let required = items.strings("required");
        for key in p.strings("x-kubernetes-list-map-keys") {
            let Some(key_schema) = items.get("properties").and_then(|props| props.get(key)).map(Props) else {
                continue;
            };
            let key_path = path.child("items").child("properties").key(key);
            if !required.contains(&key) && key_schema.get("default").is_none() {
                errors.push(FieldError::required(
                    key_path.child("default").as_str(),
                    "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                ));
            }
            if key_schema.bool("nullable") {
                errors.push(FieldError::forbidden(
                    key_path.child("nullable").as_str(),
                    "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                ));
            }
        }
    }
    errors
}

/// The fields of each `x-kubernetes-validations` rule that need no CEL to check.
fn validation_rule_fields(p: Props<'_>, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let newline = |s: &str| s.contains(['\n', '\r']);
    for (i, rule) in p.list("x-kubernetes-validations").iter().enumerate() {
        let r = Props(rule);
        let at = path.child("x-kubernetes-validations").index(i);
        let (text, message, expression, field_path) = (r.str("rule"), r.str("message"), r.str("messageExpression"), r.str("fieldPath"));
        if text.trim().is_empty() {
            errors.push(FieldError::required(at.child("rule").as_str(), "rule is not specified"));
        } else if !message.is_empty() && message.trim().is_empty() {
            errors.push(FieldError::invalid(at.child("message").as_str(), message, "message must be non-empty if specified"));
        } else if newline(message.trim()) {
            errors.push(FieldError::invalid(at.child("message").as_str(), message, "message must not contain line breaks"));
        } else if newline(text.trim()) && message.trim().is_empty() {
            errors.push(FieldError::required(at.child("message").as_str(), "message must be specified if rule contains line breaks"));
        }
        if !expression.is_empty() && expression.trim().is_empty() {
            errors.push(FieldError::required(at.child("messageExpression").as_str(), "messageExpression must be non-empty if specified"));
        }
        if let Some(reason) = r.opt_str("reason").filter(|reason| !RULE_REASONS.contains(reason)) {
            errors.push(FieldError::not_supported(at.child("reason").as_str(), reason, &RULE_REASONS));
        }
        if !field_path.is_empty() && field_path.trim().is_empty() {
            errors.push(FieldError::invalid(at.child("fieldPath").as_str(), field_path, "fieldPath must be non-empty if specified"));
        }
        if newline(field_path) {
            errors.push(FieldError::invalid(at.child("fieldPath").as_str(), field_path, "fieldPath must not contain line breaks"));
        }
        if !field_path.is_empty() {
            // A schema that is not structural is reported elsewhere; its paths pass here.
            let valid = Structural::from_json(p.0).map(|s| field_path::resolve(field_path, Some(&s), true).is_ok()).unwrap_or(true);
            if !valid {
                errors.push(FieldError::invalid(at.child("fieldPath").as_str(), field_path, "fieldPath must be a valid path"));
            }
        }
    }
    errors
}

/// Whether any node of `schema` satisfies `test` (upstream's `SchemaHas`).
fn any_node(schema: &Value, test: &dyn Fn(Props<'_>) -> bool) -> bool {
    let p = Props(schema);
    if test(p) {
        return true;
    }
    let mut children: Vec<&Value> = Vec::new();
    match p.get("items") {
        Some(Value::Array(list)) => children.extend(list),
        Some(items) => children.push(items),
        None => {}
    }
    for junctor in ["allOf", "anyOf", "oneOf"] {
        children.extend(p.list(junctor));
    }
    children.extend(p.get("not"));
    for map in ["properties", "patternProperties", "definitions", "dependencies"] {
        children.extend(p.entries(map).into_iter().map(|(_, v)| v).filter(|v| v.is_object()));
    }
    for or_bool in ["additionalProperties", "additionalItems"] {
        children.extend(p.get(or_bool).filter(|v| v.is_object()));
    }
    children.into_iter().any(|child| any_node(child, test))
}

/// Whether `schema` declares a default anywhere.
pub(super) fn has_defaults(schema: &Value) -> bool {
    any_node(schema, &|p| p.get("default").is_some())
}

/// Whether `schema` uses a Kubernetes extension anywhere (they need structural schemas).
pub(super) fn has_kubernetes_extensions(schema: &Value) -> bool {
    any_node(schema, &|p| {
        p.bool("x-kubernetes-embedded-resource")
            || p.get("x-kubernetes-preserve-unknown-fields").is_some()
            || p.bool("x-kubernetes-int-or-string")
            || !p.list("x-kubernetes-list-map-keys").is_empty()
            || p.get("x-kubernetes-list-type").is_some()
            || !p.list("x-kubernetes-validations").is_empty()
    })
}

/// Whether `schema` names a type OpenAPI v3 does not have.
pub(super) fn has_invalid_types(schema: &Value) -> bool {
    any_node(schema, &|p| !p.str("type").is_empty() && !TYPES.contains(&p.str("type")))
}

/// Whether a set's items are lists or maps that are not atomic.
pub(super) fn has_non_atomic_set_items(schema: &Value) -> bool {
    any_node(schema, &|p| {
        p.opt_str("x-kubernetes-list-type") == Some("set")
            && p.items_schema().is_some_and(|items| !set_items_atomic(items, &FieldPath::default()).is_empty())
    })
}

/// Whether a set's or map's items, or a map's keys, break the rules above.
pub(super) fn has_invalid_map_list_keys(schema: &Value) -> bool {
    any_node(schema, &|p| !map_list_keys_and_set_items(p, &FieldPath::default()).is_empty())
}

/// Whether a default (of a structural `schema`) holds fields its schema would prune.
pub(super) fn has_unpruned_defaults(schema: &Value) -> bool {
    if !has_defaults(schema) {
        return false;
    }
    let Ok(s) = Structural::from_json(schema) else {
        return false;
    };
    if !rules::validate(&FieldPath::default(), &s).is_empty() {
        return false;
    }
    fn unpruned(s: &Structural) -> bool {
        let pruned_differs = s.generic.default.as_ref().is_some_and(|d| {
            let mut pruned = d.clone();
            prune::prune(&mut pruned, s, s.extensions.embedded_resource);
            &pruned != d
        });
        pruned_differs
            || s.items.as_deref().is_some_and(unpruned)
            || s.properties.values().any(unpruned)
            || s.additional_properties.as_ref().and_then(|a| a.schema.as_deref()).is_some_and(unpruned)
    }
    unpruned(&s)
}
