//! Strategic merge patch (`application/strategic-merge-patch+json`), applied as
//! kube-apiserver applies it to a stored object of a built-in kind.
//!
//! It is JSON merge patch (objects merged key by key, `null` deletes a key) with the
//! kind's schema deciding how lists merge: a list whose patch strategy is `merge` is
//! merged item by item (objects matched by the field's merge key, scalars as a union);
//! any other list is replaced. Directives in the patch say more:
//!
//! - `$patch: replace | delete` in an object replaces or empties it; in an item of a
//!   merged list, `$patch: delete` removes the items with that merge key and
//!   `$patch: replace` makes the patch's items the whole list;
//! - `$retainKeys: [..]` keeps only the listed fields of the object it sits in;
//! - `$setElementOrder/<field>: [..]` orders the merged list `<field>`;
//! - `$deleteFromPrimitiveList/<field>: [..]` removes those scalars from `<field>`.
//!
//! The walk follows upstream's (`k8s.io/apimachinery/pkg/util/strategicpatch`, with
//! the server's options: parallel lists merged, unmatched nulls dropped) closely
//! enough to give the same objects, the same list orders and the same errors, including
//! its quirks: new items of a merged list come first unless `$setElementOrder` places
//! them, and merging two objects where the schema has no struct (inside a map's values
//! or a `RawExtension`) is an error rather than a plain merge.

use super::PatchError;
use crate::schema::{go_quote, NodeKind, SchemaNode};
use crate::gofmt::{self, GoType};
use serde_json::{Map, Value};

mod added;
mod directives;
mod lists;
#[cfg(test)]
mod tests;

type Object = Map<String, Value>;

const PATCH: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER: &str = "$setElementOrder";

/// Apply a strategic merge patch to `original`, an object of the kind `schema` is the
/// root of. A `null` patch changes nothing.
pub fn strategic_merge_patch(
    original: &Value,
    patch: &Value,
    schema: SchemaNode<'static>,
) -> Result<Value, PatchError> {
    let Value::Object(original) = original else {
        return Err(bad_document());
    };
    let patch = match patch {
        Value::Object(patch) => patch.clone(),
        Value::Null => Object::new(),
        _ => return Err(bad_document()),
    };
    merge_map(original.clone(), patch, schema).map(Value::Object)
}

/// Merge `patch` into `original`, an object described by `schema`.
fn merge_map(
    mut original: Object,
    mut patch: Object,
    schema: SchemaNode<'static>,
) -> Result<Object, PatchError> {
    if let Some(directive) = patch.get(PATCH) {
        let directive = directive.clone();
        return directives::map_directive(&directive, patch);
    }
    directives::retain_keys(&mut original, &mut patch)?;
    // Lists with an order to follow are merged and ordered first, and leave the patch.
    directives::set_element_orders(&mut original, &mut patch, schema)?;
    for (key, value) in patch {
        merge_field(&mut original, key, value, schema)?;
    }
    Ok(original)
}

/// Merge one key of a patch into `original`.
fn merge_field(
    original: &mut Object,
    key: String,
    value: Value,
    schema: SchemaNode<'static>,
) -> Result<(), PatchError> {
    // `$deleteFromPrimitiveList/<field>` works on `<field>`.
    let delete_list = key.starts_with(DELETE_FROM_PRIMITIVE_LIST);
    let key = match delete_list {
        true => match directives::field_of(&key, DELETE_FROM_PRIMITIVE_LIST)? {
            "" => key,
            field => field.to_owned(),
        },
        false => key,
    };
    if value.is_null() {
        original.remove(&key);
        return Ok(());
    }
    let same_type = match original.get(&key) {
        Some(current) => GoType::of(current) == GoType::of(&value),
        None => false,
    };
    if !same_type {
        // Absent or of another type: the patch's value (directives and nulls taken out)
        // replaces it. A deletion list never adds anything.
        if !delete_list {
            match added::value(value) {
                Some(value) => original.insert(key, value),
                None => original.remove(&key),
            };
        }
        return Ok(());
    }
    let current = original.get_mut(&key).expect("checked above");
    match (current, value) {
        (Value::Object(current), Value::Object(patch)) => {
            let field = lookup(schema, &key)?;
            let old = std::mem::take(current);
            *current = if field.replaces() {
                patch
            } else {
                merge_map(old, patch, field)?
            };
        }
        (Value::Array(current), Value::Array(patch)) => {
            let list = lookup_list(schema, &key)?;
            let old = std::mem::take(current);
            *current = if list.merges || delete_list {
                lists::merge_list(old, patch, &list, delete_list)?
            } else {
                patch
            };
        }
        (current, value) => *current = value,
    }
    Ok(())
}

/// What a list field's schema says about merging it.
struct ListMeta {
    /// The schema of the items.
    item: SchemaNode<'static>,
    /// The patch strategy is `merge`.
    merges: bool,
    /// The merge key, `""` when there is none.
    merge_key: &'static str,
}

/// The schema of field `key` of the struct `schema` describes, found as upstream finds
/// it in the Go type: only structs have fields to look up.
fn lookup(schema: SchemaNode<'static>, key: &str) -> Result<SchemaNode<'static>, PatchError> {
    match schema.kind() {
        NodeKind::Struct => schema.field(key).ok_or_else(|| no_field(schema, key)),
        NodeKind::Untyped => Err(no_field(schema, key)),
        other => Err(failed(format!(
            "merging an object in json but data type is not struct, instead is: {}",
            go_kind(other)
        ))),
    }
}

fn lookup_list(schema: SchemaNode<'static>, key: &str) -> Result<ListMeta, PatchError> {
    let field = lookup(schema, key)?;
    if field.kind() != NodeKind::List {
        return Err(failed(format!(
            "expected slice or array type, but got: {}",
            go_kind(schema.kind())
        )));
    }
    Ok(ListMeta {
        item: field.item(),
        merges: field.merges(),
        merge_key: field.merge_key().unwrap_or(""),
    })
}

fn no_field(schema: SchemaNode<'static>, key: &str) -> PatchError {
    // The Go type's name: the last part of the definition's name.
    let name = schema
        .definition()
        .and_then(|d| d.rsplit('.').next())
        .unwrap_or("RawExtension");
    failed(format!(
        "unable to find api field in struct {name} for the json field {}",
        go_quote(key)
    ))
}

/// The `reflect.Kind` of the Go type behind a schema node.
fn go_kind(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Struct | NodeKind::Untyped => "struct",
        NodeKind::Map => "map",
        NodeKind::List => "slice",
        NodeKind::Scalar => "string",
    }
}

/// An error upstream returns untyped: kube-apiserver answers it with 500.
fn failed(message: impl Into<String>) -> PatchError {
    PatchError::Internal(message.into())
}

/// `$patch` with a value upstream does not know, in `item`.
fn bad_patch_type(directive: &Value, item: &Value) -> PatchError {
    failed(format!(
        "unknown patch type: {} in map: {}",
        gofmt::s(directive),
        gofmt::v(item)
    ))
}

fn bad_document() -> PatchError {
    PatchError::Malformed("invalid JSON document".into())
}

fn no_merge_key(item: &Value, key: &str) -> PatchError {
    failed(format!(
        "map: {} does not contain declared merge key: {key}",
        gofmt::v(item)
    ))
}

/// A value of the wrong type where upstream asserts one (`expected` as Go names it).
fn bad_arg_type(expected: &str, actual: &Value) -> PatchError {
    failed(format!(
        "expected a {expected}, but received a {}",
        GoType::of(actual).name()
    ))
}

const MAP_TYPE: &str = "map[string]interface {}";
const SLICE_TYPE: &str = "[]interface {}";

/// Go's `==` on two decoded values: unequal when their types differ, a runtime failure
/// (upstream panics, which kube-apiserver answers with 500) when both are maps or
/// slices.
fn go_eq(a: &Value, b: &Value) -> Result<bool, PatchError> {
    let (ta, tb) = (GoType::of(a), GoType::of(b));
    if ta != tb {
        return Ok(false);
    }
    if !ta.comparable() {
        return Err(failed(format!(
            "runtime error: comparing uncomparable type {}",
            ta.name()
        )));
    }
    Ok(a == b)
}

/// A value used as a key of a Go map must be hashable.
fn hashable(value: &Value) -> Result<(), PatchError> {
    match GoType::of(value).comparable() {
        true => Ok(()),
        false => Err(failed(format!(
            "runtime error: hash of unhashable type {}",
            GoType::of(value).name()
        ))),
    }
}
