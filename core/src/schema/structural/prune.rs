//! Pruning by a structural schema (upstream's `pruning.Prune`): fields the structure
//! does not declare are dropped, except under `x-kubernetes-preserve-unknown-fields`
//! and the type and object meta of (embedded) resources.

use super::Structural;
use serde_json::Value;

const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// Drop from `x` what `s` does not declare. `resource_root`: `x` is a whole resource,
/// whose `apiVersion`, `kind` and `metadata` are kept whatever the schema says.
pub(crate) fn prune(x: &mut Value, s: &Structural, resource_root: bool) {
    prune_node(x, Some(s), resource_root || s.extensions.embedded_resource);
}

/// `embedded`: the node is a resource (its meta fields are left alone).
fn prune_node(x: &mut Value, s: Option<&Structural>, embedded: bool) {
    if let Some(s) = s.filter(|s| s.extensions.preserve_unknown_fields) {
        return keep_unknown(x, s, embedded);
    }
    match x {
        Value::Object(map) => {
            let Some(s) = s else {
                map.clear();
                return;
            };
            map.retain(|k, v| {
                if embedded && META_FIELDS.contains(&k.as_str()) {
                    return true;
                }
                match declared(s, k) {
                    Some(field) => {
                        prune_node(v, field, field.is_some_and(|f| f.extensions.embedded_resource));
                        true
                    }
                    None => false,
                }
            });
        }
        Value::Array(items) => {
            let item = s.and_then(|s| s.items.as_deref());
            for v in items {
                prune_node(v, item, item.is_some_and(|i| i.extensions.embedded_resource));
            }
        }
        _ => {}
    }
}

/// Under `x-kubernetes-preserve-unknown-fields`: unknown fields stay, known ones are
/// pruned by their own schemas.
fn keep_unknown(x: &mut Value, s: &Structural, embedded: bool) {
    match x {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if embedded && META_FIELDS.contains(&k.as_str()) {
                    continue;
                }
                if let Some(field) = declared(s, k) {
                    prune_node(v, field, field.is_some_and(|f| f.extensions.embedded_resource));
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = s.items.as_deref() {
                for v in items {
                    keep_unknown(v, item, item.extensions.embedded_resource);
                }
            }
        }
        _ => {}
    }
}

/// The schema a field of an object of `s` has: `Some(None)` when `additionalProperties`
/// allows it without a schema, `None` when it is unknown.
fn declared<'s>(s: &'s Structural, name: &str) -> Option<Option<&'s Structural>> {
    match s.properties.get(name) {
        Some(field) => Some(Some(field)),
        None => s.additional_properties.as_ref().map(|a| a.schema.as_deref()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_fields_are_dropped_unless_preserved() {
        let s = Structural::from_json(&json!({"type": "object", "properties": {
            "a": {"type": "object", "properties": {"b": {"type": "string"}}},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}})).unwrap();
        let mut x = json!({"apiVersion": "v1", "a": {"b": "x", "c": 1}, "free": {"any": 1}, "gone": true});
        prune(&mut x, &s, true);
        assert_eq!(x, json!({"apiVersion": "v1", "a": {"b": "x"}, "free": {"any": 1}}));
    }
}
