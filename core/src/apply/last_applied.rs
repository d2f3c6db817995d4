//! Upgrading from client-side apply, as upstream's field manager does for the
//! manager `kubectl` (what `kubectl apply --server-side` and `kubectl diff
//! --server-side` apply as): an apply's conflicts on fields the
//! `kubectl.kubernetes.io/last-applied-configuration` annotation sets, to the value the
//! object still has, are no conflicts (the same user applied them, client-side); and
//! an apply that succeeds rewrites that annotation, when the object has one, to the
//! configuration just applied. (apimachinery's lastAppliedManager and
//! lastAppliedUpdater.)

use super::compare::compare;
use super::set::FieldSet;
use super::typed::to_field_set;
use crate::schema::SchemaNode;
use serde_json::{Map, Value};

/// The annotation client-side apply keeps its configuration in.
pub(super) const ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The only manager whose applies upgrade from client-side apply; any other manager
/// opts out.
pub(super) const KUBECTL: &str = "kubectl";

/// Upstream's limit on the total size of an object's annotations.
const TOTAL_ANNOTATION_SIZE: usize = 256 * 1024;

fn annotation(metadata: Option<&Value>) -> Option<&str> {
    metadata?
        .get("annotations")?
        .get(ANNOTATION)?
        .as_str()
        .filter(|s| !s.is_empty())
}

/// The fields of `live`'s last applied configuration that `live` still holds as
/// applied: conflicts on these are allowed. `None` when there is no annotation, it is
/// not an object of `api_version`, or it does not fit the schema (upstream then keeps
/// the conflicts).
pub(super) fn allowed_conflicts(
    live: &Value,
    api_version: &str,
    node: &SchemaNode<'_>,
) -> Option<FieldSet> {
    let last: Value = serde_json::from_str(annotation(live.get("metadata"))?).ok()?;
    if !last.is_object() || last.get("apiVersion").and_then(Value::as_str) != Some(api_version) {
        return None;
    }
    let set = to_field_set(&last, node).ok()?;
    let c = compare(&last, live, node).ok()?;
    Some(
        set.difference(&c.modified)
            .difference(&c.added)
            .difference(&c.removed),
    )
}

/// After a successful apply by `kubectl`: when `object` carries a last applied
/// configuration, it becomes `config` (the applied configuration without that
/// annotation), unless the annotations would then outgrow upstream's limit, when the
/// annotation is dropped instead.
pub(super) fn sync(object: &mut Map<String, Value>, config: &Value) {
    if annotation(object.get("metadata")).is_none() {
        return;
    }
    let mut last = config.clone();
    if let Some(annotations) = last
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
        .and_then(Value::as_object_mut)
    {
        annotations.remove(ANNOTATION);
    }
    // As Go encodes the unstructured object: keys sorted, HTML characters escaped, a
    // newline at the end.
    let mut text = String::new();
    for c in serde_json::to_string(&last).unwrap_or_default().chars() {
        match c {
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                text.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => text.push(c),
        }
    }
    text.push('\n');
    let Some(annotations) = object
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    annotations.insert(ANNOTATION.into(), Value::String(text));
    let size: usize = annotations
        .iter()
        .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
        .sum();
    if size > TOTAL_ANNOTATION_SIZE {
        annotations.remove(ANNOTATION);
    }
}
