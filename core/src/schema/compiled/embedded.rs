//! `x-kubernetes-embedded-resource`: objects inside a custom resource that are resources
//! themselves, as upstream's `schema/objectmeta` treats them.
//!
//! On decoding ([`coerce`]) their `apiVersion` and `kind` must be strings and their
//! `metadata` must read as an ObjectMeta, which it is then made (unknown fields
//! dropped); a request fails on the first that is not, a stored object drops it. On
//! validation ([`validate`]) `apiVersion` and `kind` are required and checked (a group
//! version; a kind that is a DNS-1035 label in lower case) and `metadata`'s name,
//! generateName and namespace follow the object-meta rules (a name that is a path
//! segment; none is fine). The resource's own root is not one of them: its metadata is
//! the resource's.

use super::node::Node;
use super::path::Path;
use super::validate::{shown, MAX_VALUE_DEPTH};
use crate::registry::NameRule;
use crate::schema::object_meta;
use crate::validation::names::{dns1035_label, validate_object_meta_at};
use crate::validation::{ErrorKind, FieldError};
use serde_json::{Map, Value};

/// Make the embedded resource `object` at `path` what decoding makes it.
pub(crate) fn coerce(
    object: &mut Map<String, Value>,
    path: &Path,
    lenient: bool,
    report_unknown: bool,
    unknown: &mut Vec<String>,
) -> Result<(), FieldError> {
    for key in ["apiVersion", "kind"] {
        match object.get(key) {
            Some(v) if !v.is_string() && lenient => {
                object.remove(key);
            }
            Some(v) if !v.is_string() => {
                return Err(invalid(&path.field(key), v, "must be a string"));
            }
            _ => {}
        }
    }
    let Some(metadata) = object.get("metadata") else {
        return Ok(());
    };
    let at = path.field("metadata");
    match decode_meta(metadata, &at.field_path(), report_unknown) {
        Ok((mut meta, found)) => {
            unknown.extend(found);
            if let Value::Object(m) = &mut meta {
                if m.get("creationTimestamp").is_some_and(Value::is_null) {
                    m.remove("creationTimestamp");
                }
            }
            object.insert("metadata".into(), meta);
            Ok(())
        }
        Err(_) if lenient => Ok(()),
        Err(e) => Err(invalid(&at, metadata, &e)),
    }
}

/// The metadata of an embedded resource as an ObjectMeta: null reads as empty.
fn decode_meta(metadata: &Value, path: &str, report_unknown: bool) -> Result<(Value, Vec<String>), String> {
    if metadata.is_null() {
        return Ok((Value::Object(Map::new()), Vec::new()));
    }
    object_meta::decode(metadata, path, report_unknown).map(|m| (m.value, m.unknown))
}

/// The errors of every embedded resource in `object`.
pub(crate) fn validate(root: &Node, object: &Map<String, Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if root.embeds {
        members(root, object, &Path::Root, &mut errors, 0);
    }
    errors
}

fn walk(node: &Node, value: &Value, path: &Path, errors: &mut Vec<FieldError>, depth: usize) {
    if depth > MAX_VALUE_DEPTH {
        return;
    }
    match value {
        Value::Object(object) => {
            if node.embedded {
                resource(object, path, errors);
            }
            members(node, object, path, errors, depth);
        }
        Value::Array(items) => {
            if let Some(item_node) = node.items.as_deref().filter(|n| n.embeds) {
                for (i, item) in items.iter().enumerate() {
                    walk(item_node, item, &path.index(i), errors, depth + 1);
                }
            }
        }
        _ => {}
    }
}

fn members(node: &Node, object: &Map<String, Value>, path: &Path, errors: &mut Vec<FieldError>, depth: usize) {
    for (key, value) in object {
        if let Some(property) = node.property(key) {
            if property.embeds {
                walk(property, value, &path.field(key), errors, depth + 1);
            }
        } else if let Some(extra) = node.additional_schema().filter(|n| n.embeds) {
            walk(extra, value, &path.key(key), errors, depth + 1);
        }
    }
}

/// Upstream's `validateEmbeddedResource`.
fn resource(object: &Map<String, Value>, path: &Path, errors: &mut Vec<FieldError>) {
    for key in ["apiVersion", "kind"] {
        if !object.contains_key(key) {
            errors.push(FieldError::required(&path.field(key).field_path(), "must not be empty"));
        }
    }
    if let Some(v) = object.get("apiVersion") {
        let at = path.field("apiVersion");
        match v.as_str() {
            None => errors.push(invalid(&at, v, "must be a string")),
            Some("") => errors.push(invalid(&at, v, "must not be empty")),
            Some(gv) if gv != "/" && gv.matches('/').count() > 1 => {
                errors.push(invalid(&at, v, &format!("unexpected GroupVersion string: {gv}")));
            }
            Some(_) => {}
        }
    }
    if let Some(v) = object.get("kind") {
        let at = path.field("kind");
        match v.as_str() {
            None => errors.push(invalid(&at, v, "must be a string")),
            Some("") => errors.push(invalid(&at, v, "must not be empty")),
            Some(kind) => {
                let problems = dns1035_label(&kind.to_lowercase());
                if !problems.is_empty() {
                    let detail = format!("may have mixed case, but should otherwise match: {}", problems.join(","));
                    errors.push(invalid(&at, v, &detail));
                }
            }
        }
    }
    if let Some(v) = object.get("metadata") {
        let at = path.field("metadata");
        match decode_meta(v, &at.field_path(), false) {
            Err(e) => errors.push(invalid(&at, v, &e)),
            Ok((meta, _)) => {
                let text = |key: &str| meta.get(key).and_then(Value::as_str).unwrap_or("");
                // Upstream checks a made-up name where there is none.
                let name = match text("name") {
                    "" => "fakename",
                    name => name,
                };
                let namespace = text("namespace");
                errors.extend(validate_object_meta_at(
                    &at.field_path(),
                    NameRule::PathSegment,
                    name,
                    text("generateName"),
                    Some(namespace),
                    !namespace.is_empty(),
                ));
            }
        }
    }
}

fn invalid(path: &Path, value: &Value, detail: &str) -> FieldError {
    FieldError::shown(&path.field_path(), ErrorKind::Invalid, Some(&shown(value)), detail)
}
