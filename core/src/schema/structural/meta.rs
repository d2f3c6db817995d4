//! `apiVersion`, `kind` and `metadata` of embedded resources (and of the resource root),
//! as upstream's `objectmeta` package checks them whatever the schema says: type meta
//! are strings, `metadata` decodes as an ObjectMeta and is valid as one.

use super::Structural;
use crate::registry::NameRule;
use crate::validation::object_meta;
use crate::validation::names::validate_object_meta;
use crate::validation::{go_json, FieldError, FieldPath};
use serde_json::Value;

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// The first type error in the type and object meta of the resources in `x`
/// (upstream's `objectmeta.Coerce`, without changing `x`).
pub(crate) fn coerce(path: &FieldPath, x: &Value, s: &Structural, resource_root: bool) -> Option<FieldError> {
    coerce_node(path, x, Some(s), resource_root || s.extensions.embedded_resource)
}

fn coerce_node(path: &FieldPath, x: &Value, s: Option<&Structural>, embedded: bool) -> Option<FieldError> {
    let s = s?;
    if let (true, Value::Object(map)) = (embedded, x) {
        for (k, v) in sorted(map) {
            match k {
                "apiVersion" | "kind" if !v.is_string() => {
                    return Some(FieldError::invalid_unquoted(path.child(k).as_str(), &go_json(v), "must be a string"))
                }
                "metadata" => {
                    if let Err(e) = crate::schema::decode_as(OBJECT_META, v) {
                        return Some(FieldError::invalid_json(path.child("metadata").as_str(), v, e));
                    }
                }
                _ => {}
            }
        }
    }
    children(path, x, s).into_iter().find_map(|c| coerce_node(&c.path, c.value, c.schema, c.embedded))
}

/// The errors in the type and object meta of the resources in `x` (upstream's
/// `objectmeta.Validate`).
pub(crate) fn validate(path: &FieldPath, x: &Value, s: &Structural, resource_root: bool) -> Vec<FieldError> {
    validate_node(path, x, Some(s), resource_root || s.extensions.embedded_resource)
}

fn validate_node(path: &FieldPath, x: &Value, s: Option<&Structural>, embedded: bool) -> Vec<FieldError> {
    let Some(s) = s else {
        return Vec::new();
    };
    let mut errors = Vec::new();
    if let (true, Value::Object(map)) = (embedded, x) {
        errors.extend(embedded_resource(path, map));
    }
    for c in children(path, x, s) {
        errors.extend(validate_node(&c.path, c.value, c.schema, c.embedded));
    }
    errors
}

/// A value inside another that the schema lets in.
struct Child<'v, 's> {
    path: FieldPath,
    value: &'v Value,
    /// Its schema (`None` under `additionalProperties: true`).
    schema: Option<&'s Structural>,
    /// Whether it is an embedded resource.
    embedded: bool,
}

/// The fields of `x` that `s` declares, by property or `additionalProperties` (keys
/// sorted), or its items.
fn children<'v, 's>(path: &FieldPath, x: &'v Value, s: &'s Structural) -> Vec<Child<'v, 's>> {
    let child = |path: FieldPath, value: &'v Value, schema: Option<&'s Structural>| Child {
        path,
        value,
        schema,
        embedded: schema.is_some_and(|f| f.extensions.embedded_resource),
    };
    match x {
        Value::Object(map) => sorted(map)
            .into_iter()
            .filter_map(|(k, v)| match s.properties.get(k) {
                Some(field) => Some(child(path.child(k), v, Some(field))),
                None => s.additional_properties.as_ref().map(|a| child(path.key(k), v, a.schema.as_deref())),
            })
            .collect(),
        Value::Array(items) => items.iter().enumerate().map(|(i, v)| child(path.index(i), v, s.items.as_deref())).collect(),
        _ => Vec::new(),
    }
}

/// An embedded resource names its `apiVersion` and `kind`, and its `metadata` is valid.
fn embedded_resource(path: &FieldPath, x: &serde_json::Map<String, Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for required in ["apiVersion", "kind"] {
        if !x.contains_key(required) {
            errors.push(FieldError::required(path.child(required).as_str(), "must not be empty"));
        }
    }
    for (k, v) in sorted(x) {
        let field = path.child(k);
        match (k, v) {
            ("apiVersion" | "kind", v) if !v.is_string() => {
                errors.push(FieldError::invalid_unquoted(field.as_str(), &go_json(v), "must be a string"))
            }
            ("apiVersion" | "kind", Value::String(s)) if s.is_empty() => {
                errors.push(FieldError::invalid(field.as_str(), s, "must not be empty"))
            }
            ("apiVersion", Value::String(s)) => {
                if let Err(e) = parse_group_version(s) {
                    errors.push(FieldError::invalid(field.as_str(), s, e));
                }
            }
            ("kind", Value::String(s)) => {
                let problems = crate::validation::names::dns1035_label(&s.to_lowercase());
                if !problems.is_empty() {
                    errors.push(FieldError::invalid(
                        field.as_str(),
                        s,
                        format!("may have mixed case, but should otherwise match: {}", problems.join(",")),
                    ));
                }
            }
            ("metadata", v) => match crate::schema::decode_as(OBJECT_META, v) {
                Err(e) => errors.push(FieldError::invalid_json(field.as_str(), v, e)),
                Ok(meta) => errors.extend(object_meta(&field, &meta)),
            },
            _ => {}
        }
    }
    errors
}

/// Upstream's `ValidateObjectMeta` of an embedded resource's metadata (names are path
/// segments, an empty name passes): names, namespace, labels and annotation keys.
fn object_meta(path: &FieldPath, meta: &Value) -> Vec<FieldError> {
    let text = |k: &str| meta.get(k).and_then(Value::as_str).unwrap_or("");
    let name = match text("name") {
        "" => "fakename",
        name => name,
    };
    let namespace = text("namespace");
    let mut errors: Vec<FieldError> =
        validate_object_meta(NameRule::PathSegment, name, text("generateName"), Some(namespace), !namespace.is_empty())
            .into_iter()
            .map(|mut e| {
                e.field = e.field.replacen("metadata", path.as_str(), 1);
                e
            })
            .collect();
    errors.extend(object_meta::labels(path.child("labels").as_str(), meta.get("labels")));
    errors.extend(object_meta::annotations(path.child("annotations").as_str(), meta.get("annotations")));
    errors
}

/// Upstream's `schema.ParseGroupVersion`.
fn parse_group_version(gv: &str) -> Result<(), String> {
    if gv == "/" || gv.matches('/').count() > 1 {
        return Err(format!("unexpected GroupVersion string: {gv}"));
    }
    Ok(())
}

fn sorted(map: &serde_json::Map<String, Value>) -> Vec<(&str, &Value)> {
    let mut entries: Vec<(&str, &Value)> = map.iter().map(|(k, v)| (k.as_str(), v)).collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries
}
