//! How an update's new value is correlated with the stored one, for validation
//! ratcheting (upstream's `CorrelatedObject` in k8s.io/apiserver/pkg/cel/common).
//!
//! Object members correlate by name; items of a `map` list by their keys (the first old
//! item with the same keys); items of other lists not at all. A value is unchanged when
//! it equals its old value through that same correlation: objects member by member
//! (a member without a schema never correlates, so it counts as changed), `map` lists
//! item by item, other lists and scalars as wholes.

use super::node::{ListType, Node};
use super::validate::{Data, MAX_VALUE_DEPTH};
use serde_json::{Map, Value};

/// Whether `new` is unchanged from `old` at `node`, as upstream's `CachedDeepEqual`.
pub(crate) fn unchanged_data(node: &Node, old: Data<'_>, new: Data<'_>) -> bool {
    match (old, new) {
        (Data::Value(o), Data::Value(n)) => unchanged(node, o, n, 0),
        _ => match (old.object(), new.object()) {
            (Some(o), Some(n)) => unchanged_members(node, o, n, 0),
            _ => false,
        },
    }
}

fn unchanged(node: &Node, old: &Value, new: &Value, depth: usize) -> bool {
    if depth > MAX_VALUE_DEPTH {
        return false;
    }
    match (old, new) {
        (Value::Null, Value::Null) => true,
        (Value::Array(o), Value::Array(n)) => {
            if o.len() != n.len() {
                return false;
            }
            if !matches!(node.list, Some(ListType::Map(_))) {
                return o == n;
            }
            n.iter().all(|item| {
                let items = node.items.as_deref();
                match (items, correlated_item(node, old, item)) {
                    (Some(items), Some(was)) => unchanged(items, was, item, depth + 1),
                    _ => false,
                }
            })
        }
        (Value::Object(o), Value::Object(n)) => unchanged_members(node, o, n, depth),
        (Value::Null | Value::Array(_) | Value::Object(_), _) | (_, Value::Null | Value::Array(_) | Value::Object(_)) => false,
        (o, n) => o == n,
    }
}

/// Objects: every member correlates (same name, a schema for it) and is unchanged.
fn unchanged_members(node: &Node, o: &Map<String, Value>, n: &Map<String, Value>, depth: usize) -> bool {
    o.len() == n.len()
        && n.iter().all(|(key, value)| match (o.get(key), node.member(key)) {
            (Some(was), Some(member)) => unchanged(member, was, value, depth + 1),
            _ => false,
        })
}

/// The old item `item` (of a `map` list at `node`) correlates to: the first old item
/// with the same values of the list's keys. None for other lists.
pub(crate) fn correlated_item<'o>(node: &Node, old: &'o Value, item: &Value) -> Option<&'o Value> {
    let keys = node.map_keys()?;
    let olds = old.as_array()?;
    let item = item.as_object()?;
    let want = key_of(keys, item)?;
    olds.iter()
        .find(|o| o.as_object().and_then(|o| key_of(keys, o)).is_some_and(|k| same_key(keys.len(), &k, &want)))
}

/// The values of `keys` in `item`, when it has them all, as scalars.
fn key_of<'v>(keys: &[Box<str>], item: &'v Map<String, Value>) -> Option<Vec<&'v Value>> {
    keys.iter()
        .map(|k| item.get(&**k).filter(|v| matches!(v, Value::Bool(_) | Value::Number(_) | Value::String(_))))
        .collect()
}

/// Upstream compares one key by value and several by a text where floats are
/// written with six decimals (so near floats are the same key).
fn same_key(count: usize, a: &[&Value], b: &[&Value]) -> bool {
    if count == 1 {
        return a == b;
    }
    a.iter().zip(b).all(|(x, y)| match (x, y) {
        (Value::Number(p), Value::Number(q)) if p.as_i64().is_none() && q.as_i64().is_none() => {
            format!("{:.6}", p.as_f64().unwrap_or(0.0)) == format!("{:.6}", q.as_f64().unwrap_or(0.0))
        }
        _ => x == y,
    })
}
