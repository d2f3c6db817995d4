//! `default`: what an absent property takes, as upstream's structural defaulting
//! (`defaulting.Default`) fills it in: a property with a default takes a copy of it when
//! absent, or when null and not nullable; a null item or `additionalProperties` member
//! that is not nullable takes its schema's default; then the values below are defaulted
//! in turn, those just filled in included.
//!
//! The shaping walk ([`super::shape`]) defaults the values it has pruned on its way back
//! up; this module defaults a value that needs nothing else (a default just copied in).

use super::node::Node;
use super::validate::MAX_VALUE_DEPTH;
use serde_json::{Map, Value};

/// Fill in the defaults of `value` and of everything below it.
pub(crate) fn default_value(node: &Node, value: &mut Value, depth: usize) {
    if depth > MAX_VALUE_DEPTH {
        return;
    }
    match value {
        Value::Object(map) => {
            fill_absent(node, map, depth);
            for (key, member) in map.iter_mut() {
                if let Some(property) = node.property(key) {
                    default_value(property, member, depth + 1);
                } else if let Some(extra) = node.additional_schema() {
                    take_default_if_null(extra, member, depth);
                    default_value(extra, member, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_node) = node.items.as_deref() {
                for item in items {
                    take_default_if_null(item_node, item, depth);
                    default_value(item_node, item, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// Give every absent property with a default its default (defaulted in turn).
pub(crate) fn fill_absent(node: &Node, map: &mut Map<String, Value>, depth: usize) {
    for &i in &node.defaulted {
        let (name, property) = &node.properties[i as usize];
        let Some(default) = &property.default else {
            continue;
        };
        let missing = match map.get(&**name) {
            None => true,
            Some(Value::Null) => !property.nullable,
            Some(_) => false,
        };
        if missing {
            let mut value = default.clone();
            default_value(property, &mut value, depth + 1);
            map.insert(name.to_string(), value);
        }
    }
}

/// A null that `node` does not allow becomes `node`'s default, when it has one.
/// Whether it did.
pub(crate) fn take_default_if_null(node: &Node, value: &mut Value, depth: usize) -> bool {
    if !value.is_null() || node.nullable {
        return false;
    }
    let Some(default) = &node.default else {
        return false;
    };
    *value = default.clone();
    default_value(node, value, depth + 1);
    true
}
