//! Merging an applied configuration into the live object: maps and structs key by
//! key, associative lists item by item (keeping the order both agree on), sets as
//! unions, and everything atomic taken from the configuration.

use super::path::PathElement;
use super::typed::{field_node, item_element, walk_both, walk_of, Walk};
use crate::schema::SchemaNode;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// `config` merged into `live` at `node`.
pub fn merge(live: &Value, config: &Value, node: &SchemaNode<'_>) -> Result<Value, String> {
    Ok(merge_at(Some(live), Some(config), node)?.unwrap_or(Value::Object(Map::new())))
}

fn merge_at(
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    node: &SchemaNode<'_>,
) -> Result<Option<Value>, String> {
    let (l, r) = match (lhs, rhs) {
        (None, None) => return Ok(None),
        (Some(one), None) => return Ok(Some(one.clone())),
        // Walked all the same: a configuration may not repeat a key anywhere.
        (None, Some(r)) => match walk_of(node, r) {
            Walk::Leaf => return Ok(Some(r.clone())),
            Walk::List => return merge_lists(&Value::Array(Vec::new()), r, node),
            Walk::Fields => {
                let mut out = Map::new();
                for (name, v) in r.as_object().into_iter().flatten() {
                    if let Some(v) = merge_at(None, Some(v), &field_node(node, name))? {
                        out.insert(name.clone(), v);
                    }
                }
                return Ok(Some(Value::Object(out)));
            }
        },
        (Some(l), Some(r)) => (l, r),
    };
    Ok(match walk_both(node, lhs, rhs) {
        Walk::Leaf => Some(r.clone()),
        Walk::Fields => {
            let (empty_l, empty_r) = (Map::new(), Map::new());
            let lm = l.as_object().unwrap_or(&empty_l);
            let rm = r.as_object().unwrap_or(&empty_r);
            let mut out = Map::new();
            let names: BTreeSet<&String> = lm.keys().chain(rm.keys()).collect();
            for name in names {
                if let Some(v) = merge_at(lm.get(name), rm.get(name), &field_node(node, name))? {
                    out.insert(name.clone(), v);
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        Walk::List => merge_lists(l, r, node)?,
    })
}

/// Merge two lists by item: items both have, in the configuration's order where the
/// two disagree; items only the live list has, where they were; new items after the
/// items they follow in the configuration.
fn merge_lists(l: &Value, r: &Value, node: &SchemaNode<'_>) -> Result<Option<Value>, String> {
    let none = Vec::new();
    let litems = l.as_array().unwrap_or(&none);
    let ritems = r.as_array().unwrap_or(&none);
    let item_node = node.item();

    let mut rpes = Vec::with_capacity(ritems.len());
    let mut robs: BTreeMap<PathElement, &Value> = BTreeMap::new();
    for (i, item) in ritems.iter().enumerate() {
        let pe = item_element(node, item, i)?;
        if robs.insert(pe.clone(), item).is_some() {
            return Err(format!(
                "duplicate entries for key {}",
                super::path::Path(vec![pe])
            ));
        }
        rpes.push(pe);
    }
    static NULL: Value = Value::Null;
    let mut lpes = Vec::with_capacity(litems.len());
    let mut lobs: BTreeMap<PathElement, &Value> = BTreeMap::new();
    for (i, item) in litems.iter().enumerate() {
        let pe = item_element(node, item, i)?;
        // A key the live list repeats matches nothing in particular.
        lobs.entry(pe.clone())
            .and_modify(|v| *v = &NULL)
            .or_insert(item);
        lpes.push(pe);
    }

    let mut shared = rpes.iter().filter(|pe| lobs.contains_key(*pe));
    let mut next_shared = shared.next();
    let mut merged_rhs: BTreeSet<&PathElement> = BTreeSet::new();
    let mut out = Vec::with_capacity(litems.len().max(ritems.len()));
    let (ln, rn) = (lpes.len(), rpes.len());
    let (mut li, mut ri) = (0, 0);
    while li < ln || ri < rn {
        if li < ln && ri < rn {
            let pe = &lpes[li];
            if *pe == rpes[ri] {
                merged_rhs.insert(pe);
                out.extend(merge_at(
                    lobs.get(pe).copied(),
                    robs.get(pe).copied(),
                    &item_node,
                )?);
                li += 1;
                ri += 1;
                next_shared = shared.next();
                continue;
            }
            // A shared item the configuration places later: wait for it there.
            if robs.contains_key(pe) && next_shared.is_some_and(|n| n != pe) {
                li += 1;
                continue;
            }
        }
        if li < ln {
            let pe = &lpes[li];
            if !robs.contains_key(pe) {
                out.extend(merge_at(Some(&litems[li]), None, &item_node)?);
                li += 1;
                continue;
            } else if merged_rhs.contains(pe) {
                li += 1;
            }
        }
        if ri < rn {
            let pe = &rpes[ri];
            merged_rhs.insert(pe);
            out.extend(merge_at(
                lobs.get(pe).copied(),
                robs.get(pe).copied(),
                &item_node,
            )?);
            ri += 1;
            if next_shared == Some(pe) {
                next_shared = shared.next();
            }
        }
    }
    Ok((!out.is_empty()).then_some(Value::Array(out)))
}
