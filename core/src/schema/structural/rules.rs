//! The rules a structural schema keeps (upstream's `ValidateStructural`): every node
//! says its type, junctors only restate what the structure declares, `metadata` at the
//! root may only constrain `name` and `generateName`, embedded resources and
//! int-or-string nodes have their fixed shapes, patterns compile.

use super::{Extensions, Nested, Structural, ValueValidation};
use crate::validation::{FieldError, FieldPath};

/// Where a node sits: the root, the items of a list, or a field of an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// Every violation in `s`, sorted by their text as upstream sorts them (its maps have
/// no order of their own).
pub(crate) fn validate(path: &FieldPath, s: &Structural) -> Vec<FieldError> {
    let mut errors = invariants(s, Level::Root, path);
    errors.extend(completeness(&s.value_validation, s, path, path));
    errors.sort_by_key(|e| e.to_string());
    errors
}

fn invariants(s: &Structural, level: Level, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if s.generic.ty == "array" && s.items.is_none() {
        errors.push(FieldError::required(path.child("items").as_str(), "must be specified"));
    }
    if let Some(items) = &s.items {
        errors.extend(invariants(items, Level::Item, &path.child("items")));
    }
    for (name, property) in &s.properties {
        errors.extend(invariants(property, Level::Field, &path.child("properties").key(name)));
    }
    if let Some(additional) = &s.additional_properties {
        if level == Level::Root {
            errors.push(FieldError::forbidden(path.child("additionalProperties").as_str(), "must not be used at the root"));
        }
        if let Some(schema) = &additional.schema {
            errors.extend(invariants(schema, Level::Field, &path.child("additionalProperties")));
        }
    }
    errors.extend(extension_conflicts(&s.extensions, path));
    let skip_any_of = int_or_string_any_of(&s.value_validation.any_of);
    let skip_first_all_of = s.value_validation.all_of.first().is_some_and(|a| int_or_string_any_of(&a.value_validation.any_of));
    errors.extend(value_validation(&s.value_validation, skip_any_of, skip_first_all_of, path));

    let ty = s.generic.ty.as_str();
    let type_path = path.child("type");
    if s.extensions.embedded_resource && ty != "object" {
        let detail = "must be object if x-kubernetes-embedded-resource is true";
        errors.push(match ty {
            "" => FieldError::required(type_path.as_str(), detail),
            _ => FieldError::invalid(type_path.as_str(), ty, detail),
        });
    } else if ty.is_empty() && !s.extensions.int_or_string && !s.extensions.preserve_unknown_fields {
        let detail = match level {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errors.push(FieldError::required(type_path.as_str(), detail));
    }
    if s.extensions.embedded_resource && s.additional_properties.is_some() {
        errors.push(FieldError::forbidden(
            path.child("additionalProperties").as_str(),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if level == Level::Root && !ty.is_empty() && ty != "object" {
        errors.push(FieldError::invalid(type_path.as_str(), ty, "must be object at the root"));
    }

    let check_metadata = level == Level::Root || s.extensions.embedded_resource;
    for name in ["kind", "apiVersion"] {
        match s.properties.get(name) {
            Some(field) if check_metadata && field.generic.ty != "string" => errors.push(FieldError::invalid(
                path.child("properties").key(name).child("type").as_str(),
                &field.generic.ty,
                "must be string",
            )),
            _ => {}
        }
    }
    if let Some(metadata) = s.properties.get("metadata") {
        errors.extend(metadata_invariants(metadata, check_metadata, level, &path.child("properties").key("metadata")));
    }
    if s.extensions.embedded_resource && !s.extensions.preserve_unknown_fields && s.properties.is_empty() {
        errors.push(FieldError::required(
            path.child("properties").as_str(),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
    errors
}

/// `metadata` is an object; at the root it may restrict only `name` and `generateName`.
fn metadata_invariants(s: &Structural, check_metadata: bool, level: Level, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if check_metadata && s.generic.ty != "object" {
        errors.push(FieldError::invalid(path.child("type").as_str(), &s.generic.ty, "must be object"));
    }
    if level == Level::Root {
        let mut rest = s.clone();
        let names_only = rest.properties.keys().all(|k| k == "name" || k == "generateName");
        if names_only {
            rest.properties.clear();
        }
        rest.generic.ty.clear();
        rest.generic.default = None;
        if rest != Structural::default() {
            errors.push(FieldError::forbidden(
                path.as_str(),
                "must not specify anything other than name and generateName, but metadata is implicitly specified",
            ));
        }
    }
    errors
}

fn extension_conflicts(x: &Extensions, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if x.int_or_string && x.preserve_unknown_fields {
        errors.push(FieldError::invalid_unquoted(
            path.child("x-kubernetes-preserve-unknown-fields").as_str(),
            "true",
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if x.int_or_string && x.embedded_resource {
        errors.push(FieldError::invalid_unquoted(
            path.child("x-kubernetes-embedded-resource").as_str(),
            "true",
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    errors
}

/// `anyOf: [{type: integer}, {type: string}]` exactly: the shape that may stand for
/// int-or-string without a type of its own.
fn int_or_string_any_of(any_of: &[Nested]) -> bool {
    let only_type = |ty: &str| Nested {
        forbidden_generics: super::Generic { ty: ty.to_owned(), ..Default::default() },
        ..Nested::default()
    };
    any_of.len() == 2 && any_of[0] == only_type("integer") && any_of[1] == only_type("string")
}

fn value_validation(v: &ValueValidation, skip_any_of: bool, skip_first_all_of: bool, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if !skip_any_of {
        for (i, n) in v.any_of.iter().enumerate() {
            errors.extend(nested(n, false, &path.child("anyOf").index(i)));
        }
    }
    for (i, n) in v.all_of.iter().enumerate() {
        errors.extend(nested(n, skip_first_all_of && i == 0, &path.child("allOf").index(i)));
    }
    for (i, n) in v.one_of.iter().enumerate() {
        errors.extend(nested(n, false, &path.child("oneOf").index(i)));
    }
    if let Some(n) = &v.not {
        errors.extend(nested(n, false, &path.child("not")));
    }
    if !v.pattern.is_empty() {
        if let Err(reason) = crate::regexp::check(&v.pattern) {
            errors.push(FieldError::invalid(
                path.child("pattern").as_str(),
                &v.pattern,
                format!("must be a valid regular expression, but isn't: {reason}"),
            ));
        }
    }
    errors
}

/// A junctor's node may not add structure: no type, no defaults, no extensions.
fn nested(n: &Nested, skip_any_of: bool, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = value_validation(&n.value_validation, skip_any_of, false, path);
    if let Some(items) = &n.items {
        errors.extend(nested(items, false, &path.child("items")));
    }
    for (name, property) in n.properties.iter().flatten() {
        errors.extend(nested(property, false, &path.child("properties").key(name)));
    }
    let forbid = |errors: &mut Vec<FieldError>, field: &str, detail: &str| {
        errors.push(FieldError::forbidden(path.child(field).as_str(), detail));
    };
    let g = &n.forbidden_generics;
    if !g.ty.is_empty() {
        forbid(&mut errors, "type", "must be empty to be structural");
    }
    if n.additional_properties.is_some() {
        forbid(&mut errors, "additionalProperties", "must be undefined to be structural");
    }
    if g.default.is_some() {
        forbid(&mut errors, "default", "must be undefined to be structural");
    }
    if !g.title.is_empty() {
        forbid(&mut errors, "title", "must be empty to be structural");
    }
    if !g.description.is_empty() {
        forbid(&mut errors, "description", "must be empty to be structural");
    }
    if g.nullable {
        forbid(&mut errors, "nullable", "must be false to be structural");
    }
    let x = &n.forbidden_extensions;
    if x.preserve_unknown_fields {
        forbid(&mut errors, "x-kubernetes-preserve-unknown-fields", "must be false to be structural");
    }
    if x.embedded_resource {
        forbid(&mut errors, "x-kubernetes-embedded-resource", "must be false to be structural");
    }
    if x.int_or_string {
        forbid(&mut errors, "x-kubernetes-int-or-string", "must be false to be structural");
    }
    if x.list_map_keys.as_ref().is_some_and(|k| !k.is_empty()) {
        forbid(&mut errors, "x-kubernetes-list-map-keys", "must be empty to be structural");
    }
    if x.list_type.is_some() {
        forbid(&mut errors, "x-kubernetes-list-type", "must be undefined to be structural");
    }
    if x.map_type.is_some() {
        forbid(&mut errors, "x-kubernetes-map-type", "must be undefined to be structural");
    }
    if n.x_validations.as_ref().is_some_and(|v| !v.is_empty()) {
        forbid(&mut errors, "x-kubernetes-validations", "must be empty to be structural");
    }
    if n.properties.as_ref().is_some_and(|p| p.contains_key("metadata")) {
        forbid(&mut errors, "properties[metadata]", "must not be specified in a nested context");
    }
    errors
}

/// What the junctors of the root restate must exist in the structure (upstream checks
/// the root's junctors only).
fn completeness(v: &ValueValidation, s: &Structural, s_path: &FieldPath, v_path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(n) = &v.not {
        errors.extend(nested_completeness(n, Some(s), s_path, &v_path.child("not")));
    }
    for (junctor, list) in [("allOf", &v.all_of), ("anyOf", &v.any_of), ("oneOf", &v.one_of)] {
        for (i, n) in list.iter().enumerate() {
            errors.extend(nested_completeness(n, Some(s), s_path, &v_path.child(junctor).index(i)));
        }
    }
    errors
}

fn nested_completeness(n: &Nested, s: Option<&Structural>, s_path: &FieldPath, v_path: &FieldPath) -> Vec<FieldError> {
    let Some(s) = s else {
        return vec![FieldError::required(s_path.as_str(), format!("because it is defined in {v_path}"))];
    };
    let mut errors = completeness(&n.value_validation, s, s_path, v_path);
    if let Some(items) = &n.items {
        errors.extend(nested_completeness(items, s.items.as_deref(), &s_path.child("items"), &v_path.child("items")));
    }
    for (name, property) in n.properties.iter().flatten() {
        let s_field = s_path.child("properties").key(name);
        let v_field = v_path.child("properties").key(name);
        match s.properties.get(name) {
            Some(field) => errors.extend(nested_completeness(property, Some(field), &s_field, &v_field)),
            None => errors.push(FieldError::required(s_field.as_str(), format!("because it is defined in {v_field}"))),
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(schema: serde_json::Value) -> Vec<String> {
        let s = Structural::from_json(&schema).unwrap();
        validate(&FieldPath::new("schema"), &s).iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn every_node_needs_a_type() {
        assert_eq!(
            errors(json!({"properties": {"spec": {"properties": {"a": {"type": "string"}}}}})),
            [
                "schema.properties[spec].type: Required value: must not be empty for specified object fields",
                "schema.type: Required value: must not be empty at the root",
            ]
        );
        assert!(errors(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})).is_empty());
    }

    #[test]
    fn int_or_string_may_say_so_with_any_of() {
        let ok = json!({"type": "object", "properties": {"port": {
            "x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]}}});
        assert!(errors(ok).is_empty());
        let bad = json!({"type": "object", "properties": {"port": {
            "x-kubernetes-int-or-string": true, "anyOf": [{"type": "string"}, {"type": "integer"}]}}});
        assert_eq!(
            errors(bad),
            [
                "schema.properties[port].anyOf[0].type: Forbidden: must be empty to be structural",
                "schema.properties[port].anyOf[1].type: Forbidden: must be empty to be structural",
            ]
        );
    }

    #[test]
    fn root_metadata_may_only_restrict_names() {
        let names = json!({"type": "object", "properties": {"metadata": {"type": "object", "properties": {
            "name": {"type": "string", "maxLength": 10}}}}});
        assert!(errors(names).is_empty());
        let labels = json!({"type": "object", "properties": {"metadata": {"type": "object", "properties": {
            "labels": {"type": "object"}}}}});
        assert_eq!(
            errors(labels),
            ["schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"]
        );
    }

    #[test]
    fn junctors_restate_only_what_exists() {
        let s = json!({"type": "object", "properties": {"a": {"type": "string"}},
                       "anyOf": [{"properties": {"b": {"minLength": 1}}}]});
        assert_eq!(
            errors(s),
            ["schema.properties[b]: Required value: because it is defined in schema.anyOf[0].properties[b]"]
        );
    }
}
