//! Walking an object together with its schema: which values are leaves (scalars,
//! atomic lists and maps), how list items are named, the set of paths an object
//! sets, and removing paths from an object.

use super::path::PathElement;
use super::set::FieldSet;
use crate::schema::{ListType, NodeKind, SchemaNode};
use serde_json::{Map, Value};

/// How a value is walked.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Walk {
    /// As one value: scalars, atomic lists and maps, mismatched types.
    Leaf,
    /// Item by item, each named by [`item_element`].
    List,
    /// Field by field (structs and granular maps).
    Fields,
}

/// How `value` at `node` is walked.
pub(super) fn walk_of(node: &SchemaNode<'_>, value: &Value) -> Walk {
    match (node.kind(), value) {
        (NodeKind::List, Value::Array(_)) if node.list_type() != ListType::Atomic => Walk::List,
        (NodeKind::Struct | NodeKind::Map, Value::Object(_)) if !node.is_atomic_map() => {
            Walk::Fields
        }
        // A value of no fixed type is walked as what it is, by the marks it has.
        (NodeKind::Untyped, Value::Object(_)) if !node.is_atomic_map() => Walk::Fields,
        (NodeKind::Untyped, Value::Array(_)) if node.list_type() != ListType::Atomic => Walk::List,
        _ => Walk::Leaf,
    }
}

/// How two values at one node are walked together: as a leaf when either side is
/// one, or when both are empty (which keeps "empty" distinct from "absent").
pub(super) fn walk_both(node: &SchemaNode<'_>, lhs: Option<&Value>, rhs: Option<&Value>) -> Walk {
    // On every node of every write: no allocation here.
    let empty = lhs.is_none_or(is_empty_container) && rhs.is_none_or(is_empty_container);
    match (lhs.map(|v| walk_of(node, v)), rhs.map(|v| walk_of(node, v))) {
        _ if empty => Walk::Leaf,
        (Some(w), None) | (None, Some(w)) => w,
        (Some(a), Some(b)) if a == b => a,
        _ => Walk::Leaf,
    }
}

fn is_empty_container(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Null => true,
        _ => false,
    }
}

/// The schema of a field of a struct or map; fields the schema lacks are untyped.
pub(super) fn field_node<'s>(node: &SchemaNode<'s>, name: &str) -> SchemaNode<'s> {
    node.field(name).unwrap_or_else(|| SchemaNode::untyped())
}

/// [`field_node`], and whether the field is a named field of a struct (not a key of a
/// map).
fn field_of<'s>(node: &SchemaNode<'s>, name: &str) -> (SchemaNode<'s>, bool) {
    node.member(name)
        .unwrap_or_else(|| (SchemaNode::untyped(), false))
}

/// The element naming item `index` of a list at `node`.
pub(super) fn item_element(
    node: &SchemaNode<'_>,
    item: &Value,
    index: usize,
) -> Result<PathElement, String> {
    match node.list_type() {
        ListType::Map(keys) => {
            let Value::Object(fields) = item else {
                return Err(format!(
                    "element {index}: expected a map, got {}",
                    kind_name(item)
                ));
            };
            let mut key = Vec::with_capacity(keys.len());
            for name in keys.iter() {
                let value = match fields.get(name) {
                    Some(v) if !v.is_null() => v.clone(),
                    _ => node.key_default(name).ok_or_else(|| {
                        format!(
                            "element {index}: associative list with keys has an element that omits key field {} (and doesn't have default value)",
                            crate::schema::go_quote(name)
                        )
                    })?,
                };
                key.push((name.to_owned(), value));
            }
            key.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(PathElement::Key(key.into()))
        }
        ListType::Set => match item {
            Value::Array(_) | Value::Object(_) => Err(format!(
                "element {index}: associative list without keys has an element that's a map type"
            )),
            scalar => Ok(PathElement::Value(scalar.clone())),
        },
        ListType::Atomic => Ok(PathElement::Index(index)),
    }
}

fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "map",
    }
}

/// Every path `value` sets: its leaves, each list item, each map key, and each empty
/// or null field.
pub(super) fn to_field_set(value: &Value, node: &SchemaNode<'_>) -> Result<FieldSet, String> {
    let mut set = FieldSet::new();
    collect(value, node, &mut Vec::new(), &mut set)?;
    Ok(set)
}

fn collect(
    value: &Value,
    node: &SchemaNode<'_>,
    path: &mut Vec<PathElement>,
    set: &mut FieldSet,
) -> Result<(), String> {
    match (walk_of(node, value), value) {
        (Walk::List, Value::Array(items)) => {
            let item_node = node.item();
            let elements = items
                .iter()
                .enumerate()
                .map(|(i, item)| item_element(node, item, i))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("{}: {e}", super::path::Path(path.clone())))?;
            for (i, (item, element)) in items.iter().zip(&elements).enumerate() {
                path.push(element.clone());
                let duplicated = elements
                    .iter()
                    .enumerate()
                    .any(|(j, e)| j != i && e == element);
                if !duplicated {
                    collect(item, &item_node, path, set)?;
                }
                set.insert(path);
                path.pop();
            }
        }
        (Walk::Fields, Value::Object(fields)) => {
            for (name, v) in fields {
                path.push(PathElement::field(name));
                let (child, named) = field_of(node, name);
                collect(v, &child, path, set)?;
                if is_empty_container(v) || !named {
                    set.insert(path);
                }
                path.pop();
            }
        }
        _ => set.insert(path),
    }
    Ok(())
}

/// `set` with every named struct field on its paths made a member too: "a.b.c" also
/// owns "a" and "a.b" when they are struct fields (not map keys).
pub(super) fn ensure_named_fields(set: &FieldSet, node: &SchemaNode<'_>) -> FieldSet {
    let mut out = FieldSet::new();
    for member in set.members() {
        out.insert_member(member.clone());
    }
    for (element, below) in set.children() {
        let child_node = match element {
            PathElement::Field(name) => {
                let (child, named) = field_of(node, name);
                if named {
                    out.insert_member(element.clone());
                }
                child
            }
            _ => node.item(),
        };
        out.set_child(element.clone(), ensure_named_fields(below, &child_node));
    }
    out
}

/// `value` without the paths in `remove` (an item or field that is a member goes
/// whole). `None` when nothing is left of a list or map that had something.
pub(super) fn remove_items(
    value: &Value,
    remove: &FieldSet,
    node: &SchemaNode<'_>,
) -> Option<Value> {
    match (walk_of(node, value), value) {
        (Walk::List, Value::Array(items)) if !items.is_empty() => {
            let item_node = node.item();
            let kept: Vec<Value> = items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| {
                    let Ok(element) = item_element(node, item, i) else {
                        return Some(item.clone());
                    };
                    if remove.has_member(&element) {
                        return None;
                    }
                    match remove.child(&element) {
                        Some(below) => remove_items(item, below, &item_node),
                        None => Some(item.clone()),
                    }
                })
                .collect();
            (!kept.is_empty()).then_some(Value::Array(kept))
        }
        (Walk::Fields, Value::Object(fields)) if !fields.is_empty() => {
            let mut kept = Map::new();
            for (name, v) in fields {
                let element = PathElement::field(name);
                if remove.has_member(&element) {
                    continue;
                }
                let v = match remove.child(&element) {
                    Some(below) => remove_items(v, below, &field_node(node, name)),
                    None => Some(v.clone()),
                };
                if let Some(v) = v {
                    kept.insert(name.clone(), v);
                }
            }
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
        _ => Some(value.clone()),
    }
}
