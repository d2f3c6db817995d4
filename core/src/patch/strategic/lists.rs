//! Merging the lists whose patch strategy is `merge`, and the order of the result.
//!
//! Objects are matched by their merge key: `$patch: delete` items remove their match,
//! `$patch: replace` makes the patch's items the list, others merge into their match
//! or are added. Scalars merge as a union, or are removed by a
//! `$deleteFromPrimitiveList`. The result then takes upstream's order: the patch's
//! items in the patch's order, the original's other items in theirs, each of those
//! placed before the first patch item it preceded in the original — so an added item
//! comes before the original's items unless `$setElementOrder` says otherwise.

use crate::gofmt::{self, GoType};
use super::{
    bad_arg_type, bad_patch_type, failed, go_eq, go_kind, hashable, merge_map, no_merge_key,
    ListMeta, PatchError, MAP_TYPE, PATCH,
};
use serde_json::Value;

mod stable_sort;

/// Merge `patch` into `original`, a list `meta` describes; `delete_list` when `patch`
/// is a `$deleteFromPrimitiveList`.
pub(super) fn merge_list(
    original: Vec<Value>,
    patch: Vec<Value>,
    meta: &ListMeta,
    delete_list: bool,
) -> Result<Vec<Value>, PatchError> {
    merge_list_seen(original, patch, meta, delete_list).map(|(merged, _)| merged)
}

/// [`merge_list`], and the original as upstream's caller sees it afterwards when the
/// merge wrote over it (see [`Seen`]).
pub(super) fn merge_list_seen(
    original: Vec<Value>,
    patch: Vec<Value>,
    meta: &ListMeta,
    delete_list: bool,
) -> Result<(Vec<Value>, Option<Vec<Value>>), PatchError> {
    if original.is_empty() && patch.is_empty() {
        return Ok((original, None));
    }
    let element = element_type(&[&original, &patch])?;
    let key = meta.merge_key;
    if element != GoType::Map {
        if delete_list {
            let kept = original
                .into_iter()
                .filter(|item| !patch.contains(item))
                .collect();
            return Ok((kept, None));
        }
        let (merged, seen) = union(&original, &patch);
        let (ours, theirs) = partition(merged, &patch, key)?;
        let order = seen.as_deref().unwrap_or(&original);
        let merged = normalize(ours, theirs, &patch, order, key, element)?;
        return Ok((merged, seen));
    }
    if key.is_empty() {
        return Err(failed(format!(
            "cannot merge lists without merge key for {}",
            go_kind(meta.item.kind())
        )));
    }
    let (original, patch, mut seen) = special_items(original, patch, key)?;
    let merged = merge_items(original.clone(), patch.clone(), key, meta, seen.as_mut())?;
    let (ours, theirs) = partition(merged, &patch, key)?;
    let merged = normalize(ours, theirs, &patch, &original, key, element)?;
    Ok((merged, seen.map(|seen| seen.array)))
}

/// The original list as upstream's caller still sees it after a merge wrote into it.
///
/// Go lists share their storage, and a list in an object fresh from the store has no
/// room to spare. Deleting an item shifts the later ones down in place (the last slot
/// keeps its value); items added next fill the freed slots until the storage is full,
/// when Go moves the list elsewhere. `$setElementOrder` then orders by what is there.
struct Seen {
    array: Vec<Value>,
    len: usize,
    moved: bool,
}

impl Seen {
    fn delete(seen: &mut Option<Seen>, list: &[Value], i: usize) {
        let seen = seen.get_or_insert_with(|| Seen {
            array: list.to_vec(),
            len: list.len(),
            moved: false,
        });
        for m in i..seen.len - 1 {
            seen.array[m] = seen.array[m + 1].clone();
        }
        seen.len -= 1;
    }

    fn push(&mut self, item: &Value) {
        if self.moved || self.len == self.array.len() {
            self.moved = true;
            return;
        }
        self.array[self.len] = item.clone();
        self.len += 1;
    }
}

/// The scalars of `original` and `patch` without duplicates, as upstream makes them:
/// appended into one list, then each duplicate overwritten with the last item. With no
/// patch items the union is the original list itself (see [`Seen`]), and the
/// overwrites change the original upstream goes on to order the result by: the second
/// value returned is that original, when it happens.
fn union(original: &[Value], patch: &[Value]) -> (Vec<Value>, Option<Vec<Value>>) {
    let mut items: Vec<Value> = original.iter().chain(patch).cloned().collect();
    let mut last = items.len() - 1;
    let mut i = 0;
    while i < last {
        let mut j = i + 1;
        while j <= last {
            if items[i] == items[j] {
                items[j] = items[last].clone();
                last -= 1;
            } else {
                j += 1;
            }
        }
        i += 1;
    }
    let n = original.len();
    let seen = (patch.is_empty() && n > 0).then(|| items[..n].to_vec());
    items.truncate(last + 1);
    (items, seen)
}

/// The one Go type of every item of `lists`: lists of lists are refused (422), mixed
/// types fail.
pub(super) fn element_type(lists: &[&[Value]]) -> Result<GoType, PatchError> {
    let mut found: Option<GoType> = None;
    for item in lists.iter().flat_map(|list| list.iter()) {
        let ty = GoType::of(item);
        match found {
            // Upstream asks the first item's type for its kind: a null has none (panic).
            None if ty == GoType::Nil => {
                return Err(failed(
                    "runtime error: invalid memory address or nil pointer dereference",
                ))
            }
            None if ty == GoType::Slice => {
                return Err(PatchError::NotApplicable(
                    "lists of lists are not supported".into(),
                ))
            }
            None => found = Some(ty),
            Some(first) if first != ty => {
                return Err(failed(format!(
                    "list element types are not identical: {}",
                    gofmt::lists(lists)
                )))
            }
            Some(_) => {}
        }
    }
    found.ok_or_else(|| failed("no elements in any of the given slices"))
}

/// The original after `$patch` items, the plain items, and the original as seen.
type Specials = (Vec<Value>, Vec<Value>, Option<Seen>);

/// Apply the `$patch` items of a merged list of objects: the original without the
/// deleted items and the patch's plain items, or (with `$patch: replace`) the plain
/// items as the original and nothing to merge. With the original as upstream's caller
/// sees it when items were deleted, unless replaced.
fn special_items(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    key: &str,
) -> Result<Specials, PatchError> {
    let mut seen = None;
    let mut plain = Vec::with_capacity(patch.len());
    let mut replace = false;
    for item in patch {
        let Some(directive) = item.get(PATCH) else {
            plain.push(item);
            continue;
        };
        match directive.as_str() {
            Some("delete") => {
                let value = item.get(key).ok_or_else(|| no_merge_key(&item, key))?;
                while let Some(i) = find_by_key(&original, key, value)? {
                    Seen::delete(&mut seen, &original, i);
                    original.remove(i);
                }
            }
            // Later items are still looked at: a bad one fails the patch.
            Some("replace") => replace = true,
            Some("merge") => {
                return Err(failed("merging lists cannot yet be specified in the patch"))
            }
            _ => return Err(bad_patch_type(directive, &item)),
        }
    }
    Ok(match replace {
        // The merge then works on a new list: what was deleted stays as it is seen.
        true => (plain, Vec::new(), seen.map(|s| Seen { moved: true, ..s })),
        false => (original, plain, seen),
    })
}

/// Merge each patch item into the original item with its merge key, or add it.
fn merge_items(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    key: &str,
    meta: &ListMeta,
    mut seen: Option<&mut Seen>,
) -> Result<Vec<Value>, PatchError> {
    for item in patch {
        let Value::Object(item) = item else {
            unreachable!("every item is an object (element_type)")
        };
        let Some(value) = item.get(key) else {
            return Err(no_merge_key(&Value::Object(item), key));
        };
        match find_by_key(&original, key, value)? {
            Some(i) => {
                let Value::Object(current) = std::mem::take(&mut original[i]) else {
                    unreachable!("find_by_key matches objects only")
                };
                original[i] = Value::Object(merge_map(current, item, meta.item)?);
            }
            // Added as it is, directives and nulls included, as upstream adds it.
            None => {
                let item = Value::Object(item);
                if let Some(seen) = seen.as_deref_mut() {
                    seen.push(&item);
                }
                original.push(item);
            }
        }
    }
    Ok(original)
}

/// The first object of `list` whose `key` is `value`.
fn find_by_key(list: &[Value], key: &str, value: &Value) -> Result<Option<usize>, PatchError> {
    for (i, item) in list.iter().enumerate() {
        if !item.is_object() {
            return Err(failed(format!("value for key {i} is not a map")));
        }
        if let Some(found) = item.get(key) {
            if go_eq(found, value)? {
                return Ok(Some(i));
            }
        }
    }
    Ok(None)
}

/// Split `merged` into the items found in `by` (by merge key, or as scalars when there
/// is no key) and the others, each in `merged`'s order.
pub(super) fn partition(
    merged: Vec<Value>,
    by: &[Value],
    key: &str,
) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let (mut found, mut others) = (Vec::new(), Vec::new());
    if key.is_empty() {
        // Upstream keeps `by` in a Go set: every value must be hashable.
        for item in by.iter().chain(merged.iter()) {
            hashable(item)?;
        }
        for item in merged {
            match by.contains(&item) {
                true => found.push(item),
                false => others.push(item),
            }
        }
        return Ok((found, others));
    }
    for item in merged {
        if !item.is_object() {
            return Err(bad_arg_type(MAP_TYPE, &item));
        }
        let value = item.get(key).ok_or_else(|| no_merge_key(&item, key))?;
        match find_by_key(by, key, value)?.is_some() {
            true => found.push(item),
            false => others.push(item),
        }
    }
    Ok((found, others))
}

/// Order a merged list: `ours` (the items the patch or its order lists) by
/// `our_order`, `theirs` (the original's other items) by `their_order`, then
/// interleaved so each of theirs precedes the first of ours it preceded originally.
pub(super) fn normalize(
    ours: Vec<Value>,
    theirs: Vec<Value>,
    our_order: &[Value],
    their_order: &[Value],
    key: &str,
    element: GoType,
) -> Result<Vec<Value>, PatchError> {
    let ours = sort_by(ours, our_order, key, element)?;
    let theirs = sort_by(theirs, their_order, key, element)?;
    let mut out = Vec::with_capacity(ours.len() + theirs.len());
    let (mut theirs, mut ours) = (theirs.into_iter().peekable(), ours.into_iter().peekable());
    while let (Some(t), Some(o)) = (theirs.peek(), ours.peek()) {
        let before = match (
            position(their_order, t, key, element)?,
            position(their_order, o, key, element)?,
        ) {
            (Some(ti), Some(oi)) => ti < oi,
            _ => false,
        };
        out.extend(if before { theirs.next() } else { ours.next() });
    }
    out.extend(theirs);
    out.extend(ours);
    Ok(out)
}

/// `items` in the order their positions in `order` give (Go's stable sort, with
/// upstream's comparison), deleted items last.
fn sort_by(
    items: Vec<Value>,
    order: &[Value],
    key: &str,
    element: GoType,
) -> Result<Vec<Value>, PatchError> {
    let mut deleted = Vec::new();
    let mut items = items;
    if element == GoType::Map {
        check_merge_keys(key, &items)?;
        check_merge_keys(key, order)?;
        let (kept, gone): (Vec<Value>, Vec<Value>) = items
            .into_iter()
            .partition(|item| item.get(PATCH).and_then(Value::as_str) != Some("delete"));
        items = kept;
        deleted = gone;
    }
    if items.len() > 1 {
        let mut keyed = Vec::with_capacity(items.len());
        for item in items {
            keyed.push((position(order, &item, key, element)?, item));
        }
        // Unlisted items compare as "less" against anything, as upstream's function does.
        stable_sort::sort(&mut keyed, |a, b| match (a.0, b.0) {
            (Some(a), Some(b)) => a < b,
            _ => true,
        });
        items = keyed.into_iter().map(|(_, item)| item).collect();
    }
    items.extend(deleted);
    Ok(items)
}

/// Where `item` first appears in `order`: by merge key for objects, by value otherwise.
fn position(
    order: &[Value],
    item: &Value,
    key: &str,
    element: GoType,
) -> Result<Option<usize>, PatchError> {
    // Objects compare by their merge key (a missing key reads as null, as in Go).
    fn of<'a>(v: &'a Value, key: &str, element: GoType) -> &'a Value {
        static NULL: Value = Value::Null;
        match element {
            GoType::Map => v.get(key).unwrap_or(&NULL),
            _ => v,
        }
    }
    let wanted = of(item, key, element);
    for (i, candidate) in order.iter().enumerate() {
        if go_eq(wanted, of(candidate, key, element))? {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

/// Every item is an object with the merge key.
fn check_merge_keys(key: &str, items: &[Value]) -> Result<(), PatchError> {
    for item in items {
        if !item.is_object() {
            return Err(bad_arg_type(MAP_TYPE, item));
        }
        if item.get(key).is_none() {
            return Err(no_merge_key(item, key));
        }
    }
    Ok(())
}
