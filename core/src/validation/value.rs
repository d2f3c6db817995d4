//! Reading the fields of unstructured objects for validation: a field of the wrong
//! JSON type reads as absent (the schema step reports it), so checks never panic.

use super::{FieldError, FieldPath};
use serde_json::{Map, Value};

/// The string at `key`, or `""` (Go's zero value) when absent.
pub fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The list at `key`, or an empty one.
pub fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// The map at `key`, when there is one.
pub fn map<'a>(v: &'a Value, key: &str) -> Option<&'a Map<String, Value>> {
    v.get(key).and_then(Value::as_object)
}

/// The whole number at `key`, when there is one.
pub fn int(v: &Value, key: &str) -> Option<i64> {
    v.get(key).and_then(Value::as_i64)
}

/// Whether `key` holds something (upstream's non-nil pointer): not absent, not null.
pub fn present(v: &Value, key: &str) -> bool {
    v.get(key).is_some_and(|x| !x.is_null())
}

/// An Invalid error about a number, printed bare as Go prints an int.
pub fn invalid_int(path: &FieldPath, value: i64, detail: &str) -> FieldError {
    FieldError::invalid_unquoted(path.as_str(), &value.to_string(), detail)
}

/// Upstream's `ValidateNonnegativeField`, for a field that may be absent.
pub fn non_negative(path: &FieldPath, value: Option<i64>) -> Vec<FieldError> {
    match value {
        Some(n) if n < 0 => vec![invalid_int(path, n, "must be greater than or equal to 0")],
        _ => Vec::new(),
    }
}

/// `v` with every field `is_zero` calls a zero value left out, at every depth: a value
/// as Go's semantic equality compares decoded types, for callers to compare.
pub fn without_zero_values(v: &Value, is_zero: fn(&Value) -> bool) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), without_zero_values(v, is_zero)))
                .filter(|(_, v)| !is_zero(v))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|i| without_zero_values(i, is_zero)).collect()),
        other => other.clone(),
    }
}
