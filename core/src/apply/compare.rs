//! What changed between two versions of an object, as sets of paths: added, modified
//! and removed. Ownership moves along these sets.

use super::path::PathElement;
use super::set::FieldSet;
use super::typed::{field_node, item_element, walk_both, Walk};
use crate::schema::SchemaNode;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub struct Comparison {
    pub added: FieldSet,
    pub modified: FieldSet,
    pub removed: FieldSet,
}

/// Compare two objects' fields, key by key.
fn compare_fields(
    l: &Map<String, Value>,
    r: &Map<String, Value>,
    node: &SchemaNode<'_>,
    path: &mut Vec<PathElement>,
    out: &mut Comparison,
) -> Result<(), String> {
    // Both maps are sorted: walk them together.
    let (mut li, mut ri) = (l.iter().peekable(), r.iter().peekable());
    loop {
        let (name, a, b) = match (li.peek(), ri.peek()) {
            (None, None) => return Ok(()),
            (Some((ln, _)), Some((rn, _))) if ln == rn => {
                let ((name, a), (_, b)) = (li.next().expect("peeked"), ri.next().expect("peeked"));
                (name, Some(a), Some(b))
            }
            (Some((ln, _)), Some((rn, _))) if ln < rn => {
                let (name, a) = li.next().expect("peeked");
                (name, Some(a), None)
            }
            (Some(_), None) => {
                let (name, a) = li.next().expect("peeked");
                (name, Some(a), None)
            }
            _ => {
                let (name, b) = ri.next().expect("peeked");
                (name, None, Some(b))
            }
        };
        path.push(PathElement::field(name));
        compare_at(a, b, &field_node(node, name), path, out)?;
        path.pop();
    }
}

/// Compare two whole objects at `node`.
pub fn compare_objects(
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    node: &SchemaNode<'_>,
) -> Result<Comparison, String> {
    let mut out = Comparison::default();
    compare_fields(old, new, node, &mut Vec::new(), &mut out)?;
    Ok(out)
}

/// Compare `old` with `new` (whole objects) at `node`.
pub fn compare(old: &Value, new: &Value, node: &SchemaNode<'_>) -> Result<Comparison, String> {
    let mut out = Comparison::default();
    compare_at(Some(old), Some(new), node, &mut Vec::new(), &mut out)?;
    Ok(out)
}

fn compare_at(
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    node: &SchemaNode<'_>,
    path: &mut Vec<PathElement>,
    out: &mut Comparison,
) -> Result<(), String> {
    if let (None, Some(new)) = (lhs, rhs) {
        // All of it is added (every create): built as one subtree.
        let at_field = matches!(path.last(), Some(PathElement::Field(_)));
        let (member, below) = added(new, node, at_field)?;
        out.added.graft(path, member, below);
        return Ok(());
    }
    match walk_both(node, lhs, rhs) {
        Walk::Leaf => {
            match (lhs, rhs) {
                (None, Some(_)) => out.added.insert(path),
                (Some(_), None) => out.removed.insert(path),
                (Some(a), Some(b)) if a != b => out.modified.insert(path),
                _ => {}
            }
            return Ok(());
        }
        Walk::Fields => {
            let empty = Map::new();
            let l = lhs.and_then(Value::as_object).unwrap_or(&empty);
            let r = rhs.and_then(Value::as_object).unwrap_or(&empty);
            compare_fields(l, r, node, path, out)?;
        }
        Walk::List => compare_lists(lhs, rhs, node, path, out)?,
    }
    // A map or list item that appeared or went is itself added or removed. A struct
    // field of a built-in kind is not: upstream's objects always carry their
    // (non-pointer) structs.
    let struct_field = node.always_carried() && matches!(path.last(), Some(PathElement::Field(_)));
    if !struct_field {
        match (lhs, rhs) {
            (None, Some(_)) => out.added.insert(path),
            (Some(_), None) => out.removed.insert(path),
            _ => {}
        }
    }
    Ok(())
}

/// What [`compare_at`] adds for a value that was absent, relative to its path:
/// whether the path itself is added, and the paths below it.
fn added(value: &Value, node: &SchemaNode<'_>, at_field: bool) -> Result<(bool, FieldSet), String> {
    // A struct field of a built-in kind is not itself added (see `compare_at`).
    let carried = node.always_carried() && at_field;
    match walk_both(node, None, Some(value)) {
        Walk::Leaf => Ok((true, FieldSet::new())),
        Walk::Fields => {
            let Value::Object(fields) = value else { return Ok((!carried, FieldSet::new())) };
            let mut level = Vec::with_capacity(fields.len());
            for (name, v) in fields {
                let (member, below) = added(v, &field_node(node, name), true)?;
                level.push((PathElement::field(name), member, below));
            }
            Ok((!carried, FieldSet::from_level(level)))
        }
        Walk::List => {
            let item_node = node.item();
            let mut level = Vec::new();
            for (element, items) in group(node, Some(value))? {
                // Duplicated items are added as one, nothing below.
                let below = match items.as_slice() {
                    [item] => added(item, &item_node, false)?.1,
                    _ => FieldSet::new(),
                };
                level.push((element, true, below));
            }
            Ok((!carried, FieldSet::from_level(level)))
        }
    }
}

/// Where each group's element is in `groups`.
fn index<'g>(groups: &'g [(PathElement, Vec<&Value>)]) -> BTreeMap<&'g PathElement, usize> {
    groups.iter().enumerate().map(|(i, (e, _))| (e, i)).collect()
}

/// Items grouped by the element naming them, in order of first appearance.
fn group<'a>(
    node: &SchemaNode<'_>,
    list: Option<&'a Value>,
) -> Result<Vec<(PathElement, Vec<&'a Value>)>, String> {
    let mut groups: Vec<(PathElement, Vec<&Value>)> = Vec::new();
    let mut index: BTreeMap<PathElement, usize> = BTreeMap::new();
    let items = list
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    for (i, item) in items.iter().enumerate() {
        let element = item_element(node, item, i)?;
        match index.get(&element) {
            Some(&at) => groups[at].1.push(item),
            None => {
                index.insert(element.clone(), groups.len());
                groups.push((element, vec![item]));
            }
        }
    }
    Ok(groups)
}

fn compare_lists(
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    node: &SchemaNode<'_>,
    path: &mut Vec<PathElement>,
    out: &mut Comparison,
) -> Result<(), String> {
    let (left, right) = (group(node, lhs)?, group(node, rhs)?);

    let (left_at, right_at) = (index(&left), index(&right));
    fn items<'v>(groups: &[(PathElement, Vec<&'v Value>)], at: Option<&usize>) -> Vec<&'v Value> {
        at.map(|&i| groups[i].1.clone()).unwrap_or_default()
    }
    // Every element, the old list's first, in order of appearance.
    let elements = left.iter().map(|(e, _)| e).chain(
        right
            .iter()
            .map(|(e, _)| e)
            .filter(|e| !left_at.contains_key(*e)),
    );
    let item_node = node.item();
    for element in elements {
        let l = items(&left, left_at.get(element));
        let r = items(&right, right_at.get(element));
        path.push(element.clone());
        match (l.len(), r.len()) {
            (a, b) if a <= 1 && b <= 1 => {
                compare_at(
                    l.first().copied(),
                    r.first().copied(),
                    &item_node,
                    path,
                    out,
                )?;
            }
            (a, b) if a >= 2 && b >= 2 => {
                if l != r {
                    out.modified.insert(path);
                }
            }
            (a, _) if a >= 2 => {
                if let Some(first) = r.first() {
                    compare_at(None, Some(first), &item_node, path, out)?;
                }
                out.removed.insert(path);
            }
            _ => {
                if let Some(first) = l.first() {
                    compare_at(Some(first), None, &item_node, path, out)?;
                }
                out.added.insert(path);
            }
        }
        path.pop();
    }
    Ok(())
}
