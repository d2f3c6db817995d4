//! A strategic merge patch's values taken as they are, with no original to merge them
//! into: nulls and objects that carry a `$patch` directive left out. Other directives
//! (`$retainKeys`, ...) stay, as upstream leaves them.

use super::PATCH;
use serde_json::Value;

/// A patch value added as it is; `None` when the value itself carries `$patch`.
pub(super) fn value(mut value: Value) -> Option<Value> {
    discard_nulls(&mut value);
    remove_directives(value)
}

/// A list added as it is: its items that carry `$patch` left out (their nulls stay).
pub(super) fn list(items: Vec<Value>) -> Vec<Value> {
    items.into_iter().filter_map(remove_directives).collect()
}

/// Drop the object fields that are `null`, at any depth (items of lists stay).
fn discard_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(discard_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(discard_nulls),
        _ => {}
    }
}

/// Drop the objects that carry `$patch`, at any depth; `None` when `value` is one.
/// Other directives (`$retainKeys`, ...) stay, as upstream leaves them.
fn remove_directives(value: Value) -> Option<Value> {
    match value {
        Value::Object(map) if map.contains_key(PATCH) => None,
        Value::Object(map) => Some(Value::Object(
            map.into_iter()
                .filter_map(|(k, v)| remove_directives(v).map(|v| (k, v)))
                .collect(),
        )),
        Value::Array(items) => Some(Value::Array(
            items.into_iter().filter_map(remove_directives).collect(),
        )),
        other => Some(other),
    }
}
