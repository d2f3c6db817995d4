//! The small moves every kind's defaulting is made of, over unstructured JSON.
//!
//! Upstream defaults a typed Go object, where "unset" depends on the field's type: a
//! pointer is unset when nil, a plain string when `""`, a plain number when `0`. Here
//! an absent key and a JSON `null` are both "nil", and the helpers say which zero also
//! counts as unset. Each helper changes nothing (and allocates nothing) when the field
//! is already set, so defaulting an object that has its defaults is a read-only walk.

use serde_json::{Map, Value};

/// The object at `key`, when there is one.
pub fn object<'a>(map: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    map.get_mut(key).and_then(Value::as_object_mut)
}

/// The object at `key`, made `{}` when absent or `null` (a Go pointer to a struct that
/// defaulting allocates, or a plain struct); `None` when it holds something else.
pub fn object_or_new<'a>(map: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    if is_nil(map.get(key)) {
        map.insert(key.to_owned(), Value::Object(Map::new()));
    }
    object(map, key)
}

/// The objects in the list at `key` (nothing when there is no list).
pub fn objects<'a>(map: &'a mut Map<String, Value>, key: &str) -> impl Iterator<Item = &'a mut Map<String, Value>> {
    map.get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

/// The object found by following `path` from `map`.
pub fn object_at<'a>(map: &'a mut Map<String, Value>, path: &[&str]) -> Option<&'a mut Map<String, Value>> {
    path.iter().try_fold(map, |m, key| object(m, key))
}

/// The value found by following `path` from `map`.
pub fn value_at<'a>(map: &'a Map<String, Value>, path: &[&str]) -> Option<&'a Value> {
    let (last, init) = path.split_last()?;
    init.iter()
        .try_fold(map, |m, key| m.get(*key).and_then(Value::as_object))?
        .get(*last)
}

/// A non-empty map found by following `path`, copied: the labels a kind defaults its
/// own from (a copy is made only when one is needed).
pub fn labels_at(map: &Map<String, Value>, path: &[&str]) -> Option<Value> {
    value_at(map, path).filter(|v| v.as_object().is_some_and(|m| !m.is_empty())).cloned()
}

fn is_nil(v: Option<&Value>) -> bool {
    matches!(v, None | Some(Value::Null))
}

/// Set `key` when it is nil (a pointer field).
pub fn or_insert(map: &mut Map<String, Value>, key: &str, value: impl FnOnce() -> Value) {
    if is_nil(map.get(key)) {
        map.insert(key.to_owned(), value());
    }
}

/// Whether a plain string field is unset: nil or `""`.
pub fn unset_str(map: &Map<String, Value>, key: &str) -> bool {
    match map.get(key) {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(_) => false,
    }
}

/// Whether a plain integer field is unset: nil or `0`.
pub fn unset_int(map: &Map<String, Value>, key: &str) -> bool {
    match map.get(key) {
        None | Some(Value::Null) => true,
        Some(Value::Number(n)) => n.as_f64() == Some(0.0),
        Some(_) => false,
    }
}

/// Set a string `key` when it is nil or `""` (a plain string field).
pub fn or_insert_str(map: &mut Map<String, Value>, key: &str, value: &str) {
    if unset_str(map, key) {
        map.insert(key.to_owned(), Value::String(value.to_owned()));
    }
}

/// Set a number `key` when it is nil or `0` (a plain integer field).
pub fn or_insert_int(map: &mut Map<String, Value>, key: &str, value: i64) {
    if unset_int(map, key) {
        map.insert(key.to_owned(), Value::from(value));
    }
}

/// The string at `key` ("" when absent or not a string), as Go reads a plain string.
pub fn str_of<'a>(map: &'a Map<String, Value>, key: &str) -> &'a str {
    map.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Whether the list or map at `key` is empty or absent (Go's `len(x) == 0`).
pub fn is_empty(map: &Map<String, Value>, key: &str) -> bool {
    match map.get(key) {
        Some(Value::Array(a)) => a.is_empty(),
        Some(Value::Object(o)) => o.is_empty(),
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Null) | None => true,
        Some(_) => false,
    }
}

/// Ports in `map`'s list at `key` get protocol TCP when they name none (container,
/// network policy and EndpointSlice ports alike).
pub fn tcp_ports(map: &mut Map<String, Value>, key: &str) {
    for port in objects(map, key) {
        or_insert_str(port, "protocol", "TCP");
    }
}

/// Copy into `to` each entry of `from` it lacks (a ResourceList defaulted from another).
/// `to` is made only when something is copied, as an empty map is not written.
pub fn fill_missing(map: &mut Map<String, Value>, from: &str, to: &str) {
    let Some(source) = map.get(from).and_then(Value::as_object) else {
        return;
    };
    let target = map.get(to).and_then(Value::as_object);
    let missing: Vec<(String, Value)> = source
        .iter()
        .filter(|(k, _)| !target.is_some_and(|t| t.contains_key(*k)))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if missing.is_empty() {
        return;
    }
    if let Some(target) = object_or_new(map, to) {
        target.extend(missing);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn set_fields_are_kept_and_unset_ones_filled() {
        let mut m = map(json!({"a": "", "b": 0, "c": null, "d": "x", "e": 5}));
        or_insert_str(&mut m, "a", "A");
        or_insert_int(&mut m, "b", 1);
        or_insert(&mut m, "c", || json!(true));
        or_insert_str(&mut m, "d", "D");
        or_insert_int(&mut m, "e", 1);
        assert_eq!(Value::Object(m), json!({"a": "A", "b": 1, "c": true, "d": "x", "e": 5}));
    }

    #[test]
    fn missing_entries_are_copied_and_nothing_is_made_for_none() {
        let mut m = map(json!({"limits": {"cpu": "1", "memory": "1Mi"}, "requests": {"memory": "2Mi"}}));
        fill_missing(&mut m, "limits", "requests");
        assert_eq!(m["requests"], json!({"memory": "2Mi", "cpu": "1"}));
        let mut empty = map(json!({"limits": {}}));
        fill_missing(&mut empty, "limits", "requests");
        assert!(!empty.contains_key("requests"));
    }
}
