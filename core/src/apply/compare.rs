//! What changed between two versions of an object, as sets of paths: added, modified
//! and removed. Ownership moves along these sets.

use super::path::PathElement;
use super::set::FieldSet;
use super::typed::{field_node, item_element, walk_both, Walk};
use crate::schema::{NodeKind, SchemaNode};
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub struct Comparison {
    pub added: FieldSet,
    pub modified: FieldSet,
    pub removed: FieldSet,
}

/// Compare `old` with `new` (whole objects) at `node`.
pub fn compare(old: &Value, new: &Value, node: &SchemaNode) -> Result<Comparison, String> {
    let mut out = Comparison::default();
    compare_at(Some(old), Some(new), node, &mut Vec::new(), &mut out)?;
    Ok(out)
}

fn compare_at(
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    node: &SchemaNode,
    path: &mut Vec<PathElement>,
    out: &mut Comparison,
) -> Result<(), String> {
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
            let empty = serde_json::Map::new();
            let l = lhs.and_then(Value::as_object).unwrap_or(&empty);
            let r = rhs.and_then(Value::as_object).unwrap_or(&empty);
            let mut names: Vec<&String> = l.keys().chain(r.keys()).collect();
            names.sort();
            names.dedup();
            for name in names {
                path.push(PathElement::Field(name.clone()));
                compare_at(l.get(name), r.get(name), &field_node(node, name), path, out)?;
                path.pop();
            }
        }
        Walk::List => compare_lists(lhs, rhs, node, path, out)?,
    }
    // A map or list item that appeared or went is itself added or removed. A struct
    // field is not: upstream's objects always carry their (non-pointer) structs.
    let struct_field =
        node.kind() == NodeKind::Struct && matches!(path.last(), Some(PathElement::Field(_)));
    if !struct_field {
        match (lhs, rhs) {
            (None, Some(_)) => out.added.insert(path),
            (Some(_), None) => out.removed.insert(path),
            _ => {}
        }
    }
    Ok(())
}

/// Items grouped by the element naming them, in order of first appearance.
fn group<'a>(
    node: &SchemaNode,
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
    node: &SchemaNode,
    path: &mut Vec<PathElement>,
    out: &mut Comparison,
) -> Result<(), String> {
    let (left, right) = (group(node, lhs)?, group(node, rhs)?);
    let find = |groups: &[(PathElement, Vec<&Value>)], e: &PathElement| -> Vec<Value> {
        groups
            .iter()
            .find(|(g, _)| g == e)
            .map(|(_, items)| items.iter().map(|v| (*v).clone()).collect())
            .unwrap_or_default()
    };
    let mut elements: Vec<PathElement> = left.iter().map(|(e, _)| e.clone()).collect();
    for (e, _) in &right {
        if !elements.contains(e) {
            elements.push(e.clone());
        }
    }
    let item_node = node.item();
    for element in elements {
        let (l, r) = (find(&left, &element), find(&right, &element));
        path.push(element);
        match (l.len(), r.len()) {
            (a, b) if a <= 1 && b <= 1 => {
                compare_at(l.first(), r.first(), &item_node, path, out)?;
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
