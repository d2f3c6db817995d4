//! `x-kubernetes-list-type: set` and `map`: the items of a set are unique, the items of
//! a map list are objects unique by their `x-kubernetes-list-map-keys`, as upstream's
//! `listtype.ValidateListSetsAndMaps` checks them (`Duplicate value: …` at the second
//! occurrence of each repeated item).

use super::node::{ListType, Node};
use super::path::Path;
use super::validate::{shown, MAX_VALUE_DEPTH};
use crate::gofmt;
use crate::validation::{ErrorKind, FieldError};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The duplicates in every set and map list of `object`.
pub(crate) fn validate(root: &Node, object: &Map<String, Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if root.keyed_lists {
        members(root, object, &Path::Root, &mut errors, 0);
    }
    errors
}

fn members(node: &Node, object: &Map<String, Value>, path: &Path, errors: &mut Vec<FieldError>, depth: usize) {
    if let Some(extra) = node.additional_schema().filter(|n| n.keyed_lists) {
        for (key, value) in object {
            walk(extra, value, &path.key(key), errors, depth + 1);
        }
    }
    for (key, value) in object {
        if let Some(property) = node.property(key).filter(|n| n.keyed_lists) {
            walk(property, value, &path.field(key), errors, depth + 1);
        }
    }
}

fn walk(node: &Node, value: &Value, path: &Path, errors: &mut Vec<FieldError>, depth: usize) {
    if depth > MAX_VALUE_DEPTH {
        return;
    }
    match value {
        Value::Object(object) => members(node, object, path, errors, depth),
        Value::Array(items) => {
            match &node.list {
                Some(ListType::Set) => {
                    for i in repeated(items.iter().map(Some)) {
                        errors.push(duplicate(&path.index(i), &shown(&items[i])));
                    }
                }
                Some(ListType::Map(keys)) => map_list(keys, items, path, errors),
                _ => {}
            }
            if let Some(item_node) = node.items.as_deref().filter(|n| n.keyed_lists) {
                for (i, item) in items.iter().enumerate() {
                    walk(item_node, item, &path.index(i), errors, depth + 1);
                }
            }
        }
        _ => {}
    }
}

fn map_list(keys: &[Box<str>], items: &[Value], path: &Path, errors: &mut Vec<FieldError>) {
    if let Some(i) = items.iter().position(|x| !(x.is_null() || x.is_object())) {
        let error = FieldError::shown(
            &path.index(i).field_path(),
            ErrorKind::Invalid,
            Some(&shown(&items[i])),
            "must be an object for an array of list-type map",
        );
        errors.push(error);
        return;
    }
    if items.len() <= 1 {
        return;
    }
    // Each item's keys as upstream compares them; an item without the key of a
    // one-key list has an "unspecified" key, equal to every other unspecified one.
    let key_maps: Vec<Map<String, Value>> = items
        .iter()
        .map(|item| {
            let mut key = Map::new();
            if let Some(item) = item.as_object() {
                for k in keys {
                    if let Some(v) = item.get(&**k) {
                        key.insert(k.to_string(), v.clone());
                    }
                }
            }
            key
        })
        .collect();
    let repeated = if keys.len() == 1 {
        let k: &str = &keys[0];
        repeated(key_maps.iter().map(|m| m.get(k)))
    } else {
        let compounds: Vec<Value> = key_maps.iter().cloned().map(Value::Object).collect();
        repeated(compounds.iter().map(Some))
    };
    for i in repeated {
        errors.push(duplicate(&path.index(i), &gofmt::sharp_v(&Value::Object(key_maps[i].clone()))));
    }
}

fn duplicate(path: &Path, shown_value: &str) -> FieldError {
    FieldError::shown(&path.field_path(), ErrorKind::Duplicate, Some(shown_value), "")
}

/// The index of each value's second occurrence (`None`: an unspecified key).
/// Compound values compare by their JSON, scalars by value and Go type.
fn repeated<'v>(values: impl Iterator<Item = Option<&'v Value>>) -> Vec<usize> {
    let mut seen: HashMap<Key, usize> = HashMap::new();
    let mut indices = Vec::new();
    for (i, value) in values.enumerate() {
        let times = seen.entry(Key::of(value)).or_insert(0);
        *times += 1;
        if *times == 2 {
            indices.push(i);
        }
    }
    indices
}

#[derive(Hash, PartialEq, Eq)]
enum Key {
    Unspecified,
    Null,
    Bool(bool),
    Int(i64),
    Float(u64),
    Text(String),
    Compound(String),
}

impl Key {
    fn of(value: Option<&Value>) -> Key {
        match value {
            None => Key::Unspecified,
            Some(Value::Null) => Key::Null,
            Some(Value::Bool(b)) => Key::Bool(*b),
            Some(Value::Number(n)) => match n.as_i64() {
                Some(i) => Key::Int(i),
                None => Key::Float(n.as_f64().unwrap_or(0.0).to_bits()),
            },
            Some(Value::String(s)) => Key::Text(s.clone()),
            Some(compound) => Key::Compound(gofmt::json(compound)),
        }
    }
}
