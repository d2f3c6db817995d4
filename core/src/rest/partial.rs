//! Metadata-only answers: `as=PartialObjectMetadata` and `as=PartialObjectMetadataList`
//! (`g=meta.k8s.io`, `v=v1` or `v1beta1`), made of the response as upstream's
//! `asPartialObjectMetadata` and `asPartialObjectMetadataList` make them: an object's
//! whole `metadata` under kind PartialObjectMetadata; a list's `resourceVersion`,
//! `continue` and `remainingItemCount` with each item so (each item carries its own
//! kind and apiVersion, as Go writes them). A Status passes through; asking for the one
//! of a list or the list of one object is refused, 406.

use crate::negotiation::Shape;
use crate::status::ApiError;
use serde_json::{json, Map, Value};

/// `value` as the metadata-only shape asked for; `None` when it stays as it is (not
/// asked for, or a Status).
pub(crate) fn transform(shape: Shape, value: &Value) -> Result<Option<Value>, ApiError> {
    let (list, version) = match shape {
        Shape::PartialObjectMetadata(v) => (false, v),
        Shape::PartialObjectMetadataList(v) => (true, v),
        Shape::Object | Shape::Table(_) => return Ok(None),
    };
    if value.get("kind").and_then(Value::as_str) == Some("Status") {
        return Ok(None);
    }
    let is_list = value.get("items").is_some_and(Value::is_array);
    match (list, is_list) {
        (false, false) => Ok(Some(object(version, value))),
        (true, true) => Ok(Some(list_of(version, value))),
        (false, true) => Err(ApiError::not_acceptable_because(format!(
            "you requested PartialObjectMetadata, but the requested object is a list ({})",
            go_type(value)
        ))),
        (true, false) => Err(ApiError::not_acceptable_because(format!(
            "you requested PartialObjectMetadataList, but the requested object is not a list ({})",
            go_type(value)
        ))),
    }
}

/// One object's metadata as a PartialObjectMetadata.
pub(crate) fn object(version: &str, value: &Value) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": value.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}

fn list_of(version: &str, value: &Value) -> Value {
    let mut meta = Map::new();
    if let Some(list_meta) = value.get("metadata").and_then(Value::as_object) {
        for key in ["resourceVersion", "continue", "remainingItemCount"] {
            if let Some(v) = list_meta.get(key) {
                meta.insert(key.to_owned(), v.clone());
            }
        }
    }
    let items: Vec<Value> = value
        .get("items")
        .and_then(Value::as_array)
        .map(|items| items.iter().map(|item| object(version, item)).collect())
        .unwrap_or_default();
    json!({
        "kind": "PartialObjectMetadataList",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": meta,
        "items": items,
    })
}

/// The Go type upstream names in its 406 (`%T` of the internal object): `*core.ConfigMapList`
/// for a built-in kind (the group's internal package: `core` for the core group and
/// events.k8s.io, else the group's first label), `*unstructured.UnstructuredList` for a
/// custom resource (any kind not built in).
fn go_type(value: &Value) -> String {
    let text = |k: &str| value.get(k).and_then(Value::as_str).unwrap_or("");
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    let is_list = value.get("items").is_some_and(Value::is_array);
    let item_kind = if is_list { kind.strip_suffix("List").unwrap_or(kind) } else { kind };
    if crate::go_types::message_for(api_version, item_kind).is_none() {
        return if is_list { "*unstructured.UnstructuredList" } else { "*unstructured.Unstructured" }.to_owned();
    }
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let package = match group {
        "" | "events.k8s.io" => "core",
        "internal.apiserver.k8s.io" => "apiserverinternal",
        g => g.split('.').next().unwrap_or(g),
    };
    format!("*{package}.{kind}")
}
