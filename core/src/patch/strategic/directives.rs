//! The `$` directives of a strategic merge patch that act on an object: `$patch`,
//! `$retainKeys` and `$setElementOrder/<field>`.

use crate::gofmt;
use super::{added, lists};
use super::{
    bad_arg_type, bad_patch_type, failed, go_eq, hashable, lookup_list, no_merge_key, Object,
    PatchError, DELETE_FROM_PRIMITIVE_LIST, MAP_TYPE, PATCH, RETAIN_KEYS, SET_ELEMENT_ORDER,
    SLICE_TYPE,
};
use crate::schema::SchemaNode;
use serde_json::Value;

const BAD_PRIMITIVE_LIST: &str = "invalid patch format of primitive list";
const BAD_RETAIN_KEYS: &str = "invalid patch format of retainKeys";
const BAD_SET_ELEMENT_ORDER: &str = "invalid patch format of setElementOrder list";

/// `$patch` in an object: `replace` takes the patch as the whole object, `delete`
/// empties it; nothing else is allowed there.
pub(super) fn map_directive(directive: &Value, mut patch: Object) -> Result<Object, PatchError> {
    match directive.as_str() {
        Some("replace") => {
            patch.remove(PATCH);
            Ok(patch)
        }
        Some("delete") => Ok(Object::new()),
        _ => Err(bad_patch_type(directive, &Value::Object(patch))),
    }
}

/// The field a `<prefix>/<field>` directive names.
pub(super) fn field_of<'a>(key: &'a str, prefix: &str) -> Result<&'a str, PatchError> {
    match key.split_once('/') {
        Some((head, field)) if head == prefix => Ok(field),
        _ if prefix == SET_ELEMENT_ORDER => {
            Err(PatchError::Malformed(BAD_SET_ELEMENT_ORDER.into()))
        }
        _ => Err(PatchError::Malformed(BAD_PRIMITIVE_LIST.into())),
    }
}

/// `$retainKeys`: every field the patch sets must be listed, and the original keeps
/// only the listed fields (so fields of a union the patch switched away from go).
pub(super) fn retain_keys(original: &mut Object, patch: &mut Object) -> Result<(), PatchError> {
    let Some(retained) = patch.remove(RETAIN_KEYS) else {
        return Ok(());
    };
    let Value::Array(retained) = retained else {
        return Err(PatchError::Malformed(BAD_RETAIN_KEYS.into()));
    };
    // Upstream puts the names in a Go set: they must be hashable.
    for name in &retained {
        hashable(name)?;
    }
    let listed = |key: &str| retained.iter().any(|name| name.as_str() == Some(key));
    for (key, value) in patch.iter() {
        let directive =
            key.starts_with(DELETE_FROM_PRIMITIVE_LIST) || key.starts_with(SET_ELEMENT_ORDER);
        if !value.is_null() && !directive && !listed(key) {
            return Err(PatchError::Malformed(BAD_RETAIN_KEYS.into()));
        }
    }
    original.retain(|key, _| listed(key));
    Ok(())
}

/// Every `$setElementOrder/<field>` of the patch: `<field>` is merged (or taken from
/// the original or the patch alone), then ordered: the listed items in the listed
/// order, the original's other items kept among them where they were. The field leaves
/// the patch.
pub(super) fn set_element_orders(
    original: &mut Object,
    patch: &mut Object,
    schema: SchemaNode<'static>,
) -> Result<(), PatchError> {
    let keys: Vec<String> = patch
        .keys()
        .filter(|key| key.starts_with(SET_ELEMENT_ORDER))
        .cloned()
        .collect();
    for key in keys {
        let order = patch.remove(&key).expect("a key of the patch");
        let Value::Array(order) = order else {
            return Err(bad_arg_type(SLICE_TYPE, &order));
        };
        let field = field_of(&key, SET_ELEMENT_ORDER)?.to_owned();
        let ours = take_list(original, &field)?;
        let theirs = take_list(patch, &field)?;
        let meta = lookup_list(schema, &field)?;
        let patch_items = theirs.as_deref().unwrap_or(&[]);
        check_order(patch_items, &order, meta.merge_key)?;
        // What the original and the patch held decides how items are compared.
        let element = lists::element_type(&[ours.as_deref().unwrap_or(&[]), patch_items]);
        let mut before = ours.clone().unwrap_or_default();
        let merged = match (ours, theirs) {
            (Some(ours), None) => ours,
            (None, Some(theirs)) => added::list(theirs),
            (Some(ours), Some(theirs)) if meta.merges => {
                let (merged, seen) = lists::merge_list_seen(ours, theirs, &meta, false)?;
                before = seen.unwrap_or(before);
                merged
            }
            (Some(_), Some(theirs)) => theirs,
            (None, None) => continue,
        };
        let (listed, others) = lists::partition(merged, &order, meta.merge_key)?;
        let element = element?;
        let ordered = lists::normalize(listed, others, &order, &before, meta.merge_key, element)?;
        original.insert(field, Value::Array(ordered));
    }
    Ok(())
}

/// Take `field`, which must be a list if present, out of `object`.
fn take_list(object: &mut Object, field: &str) -> Result<Option<Vec<Value>>, PatchError> {
    match object.remove(field) {
        None => Ok(None),
        Some(Value::Array(items)) => Ok(Some(items)),
        Some(other) => Err(bad_arg_type(SLICE_TYPE, &other)),
    }
}

/// The patch's items (those not deleted) must appear in `$setElementOrder` in the same
/// relative order.
fn check_order(patch: &[Value], order: &[Value], merge_key: &str) -> Result<(), PatchError> {
    if patch.is_empty() || order.is_empty() {
        return Ok(());
    }
    let kept: Vec<&Value> = if merge_key.is_empty() {
        patch.iter().collect()
    } else {
        let mut kept = Vec::new();
        for item in patch {
            let Value::Object(map) = item else {
                return Err(bad_arg_type(MAP_TYPE, item));
            };
            if map.get(PATCH).and_then(Value::as_str) != Some("delete") {
                kept.push(item);
            }
        }
        kept
    };
    let (mut p, mut o) = (0, 0);
    while p < kept.len() && o < order.len() {
        if kept[p].get(PATCH).is_some() {
            p += 1;
            continue;
        }
        if same_item(kept[p], &order[o], merge_key)? {
            p += 1;
        }
        o += 1;
    }
    if p < kept.len() && o >= order.len() {
        return Err(failed(format!(
            "The order in patch list:\n{}\n doesn't match {SET_ELEMENT_ORDER} list:\n{}\n",
            gofmt::v(&Value::Array(patch.to_vec())),
            gofmt::v(&Value::Array(order.to_vec()))
        )));
    }
    Ok(())
}

/// Whether two items are the same: equal scalars, or objects with equal merge keys.
fn same_item(a: &Value, b: &Value, merge_key: &str) -> Result<bool, PatchError> {
    if merge_key.is_empty() {
        return go_eq(a, b);
    }
    for item in [a, b] {
        if !item.is_object() {
            return Err(bad_arg_type(MAP_TYPE, item));
        }
    }
    let ka = a.get(merge_key).ok_or_else(|| no_merge_key(a, merge_key))?;
    let kb = b.get(merge_key).ok_or_else(|| no_merge_key(b, merge_key))?;
    go_eq(ka, kb)
}
