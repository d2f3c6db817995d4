//! PATCH with a JSON merge patch, a JSON patch or a strategic merge patch: the patch is
//! applied to the stored object, the result decoded against the kind's schema as a PUT
//! body would be (fieldValidation included), and stored as a guaranteed update —
//! re-applied to the newer object when a concurrent write wins, unless the patch pins a
//! resourceVersion. Strategic merge patch needs a built-in schema: custom resources get
//! 415, as upstream. Server-side apply (`application/apply-patch+yaml`) goes to
//! [`super::apply`].

use super::object::{meta_str, Object};
use super::update::{check_precondition, guaranteed_update, replace};
use super::scope::Scope;
use crate::negotiation::Format;
use crate::patch::{json_patch, merge_patch, strategic_merge_patch, PatchError};
use crate::schema::{ResourceSchema, SchemaNode};
use crate::effect::Step;
use crate::status::ApiError;
use crate::storage::KeyValue;
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// The patch types kube-apiserver takes for a custom resource, in its order: no
/// strategic merge patch, which needs the Go types of a built-in kind.
const CUSTOM_ACCEPTED: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    super::apply::APPLY_YAML,
];

#[derive(Clone, Copy)]
enum Kind {
    Merge,
    Json,
    /// With the schema of the (built-in) kind patched.
    Strategic(SchemaNode<'static>),
}

pub(super) fn patch(scope: Scope) -> Step {
    let media = scope
        .content_type
        .as_deref()
        .and_then(|ct| ct.split(';').next())
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let custom = matches!(scope.resource().schema, ResourceSchema::Custom(_));
    let kind = match media.as_str() {
        "application/merge-patch+json" => Kind::Merge,
        "application/json-patch+json" => Kind::Json,
        super::apply::APPLY_YAML => return super::apply::apply(scope),
        "application/strategic-merge-patch+json" if !custom => {
            let (group, version, kind) = scope.body_kind();
            match SchemaNode::of_kind(group, version, kind) {
                Some(schema) => Kind::Strategic(schema),
                None => return scope.fail(ApiError::unsupported_media_type_of_route()),
            }
        }
        // The custom resource handler's own check, naming what it takes.
        _ if custom => return scope.fail(ApiError::unsupported_media_type(CUSTOM_ACCEPTED)),
        // Built-in resources' routes refuse other types before their handler runs.
        _ => return scope.fail(ApiError::unsupported_media_type_of_route()),
    };
    if let Err(e) = super::dry_run::write_options(&scope, "PatchOptions") {
        return scope.fail(e);
    }
    let patch: Value = match serde_json::from_slice(&scope.body) {
        Ok(patch) => patch,
        Err(e) => return scope.fail(ApiError::bad_request(format!("error decoding patch: {e}"))),
    };
    if matches!(kind, Kind::Json) && !patch.is_array() {
        return scope.fail(ApiError::bad_request(
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch",
        ));
    }
    // Upstream decodes a strategic merge patch into a Go map (`null` leaves it empty).
    if matches!(kind, Kind::Strategic(_)) && !(patch.is_object() || patch.is_null()) {
        return scope.fail(ApiError::bad_request(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            json_type(&patch)
        )));
    }
    let patch = Arc::new(patch);
    let warnings = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&warnings);
    let step = guaranteed_update(
        scope,
        Arc::new(move |scope: &Scope, old: &Object, current: &KeyValue| {
            let (patched, found) = patched(scope, old, kind, &patch)?;
            if let Ok(mut latest) = sink.lock() {
                *latest = found;
            }
            // A resourceVersion the patch sets (or leaves as the stored one) must hold.
            let precondition = match meta_str(&patched, "resourceVersion") {
                "" => None,
                rv => Some(rv.parse::<u64>().map_err(|_| {
                    ApiError::bad_request(format!("invalid resource version: {rv}"))
                })?),
            };
            check_precondition(scope, precondition, current)?;
            replace(scope, old, patched)
        }),
    );
    super::response::warned_by(step, warnings)
}

/// The stored object with the patch applied, decoded as a body of its kind, and the
/// fieldValidation warnings the decoding gave.
fn patched(scope: &Scope, old: &Object, kind: Kind, patch: &Value) -> Result<(Object, Vec<String>), ApiError> {
    let mut doc = Value::Object(super::scale::view(scope, old.clone())?);
    match kind {
        Kind::Merge => merge_patch(&mut doc, patch),
        Kind::Json => {
            doc = json_patch(&doc, patch).map_err(|e| match e {
                PatchError::Malformed(why) => ApiError::bad_request(why),
                // 422 as upstream answers it; the message is the operation's own reason.
                PatchError::NotApplicable(why) => ApiError::unprocessable(why),
                PatchError::Internal(why) => ApiError::unclassified(why),
            })?
        }
        Kind::Strategic(schema) => {
            doc = strategic_merge_patch(&doc, patch, schema).map_err(|e| match e {
                PatchError::Malformed(why) => ApiError::bad_request(why),
                // Upstream's 422 for lists of lists carries a generic message.
                PatchError::NotApplicable(_) => ApiError::unprocessable(
                    "the server rejected our request due to an error in our request",
                ),
                PatchError::Internal(why) => ApiError::unclassified(why),
            })?
        }
    }
    if !doc.is_object() {
        return Err(ApiError::bad_request("the patch does not leave an object"));
    }
    let body = serde_json::to_vec(&doc).map_err(ApiError::internal)?;
    let (obj, warnings) = scope.decode_as(Format::Json, &body, "PatchOptions")?;
    let (given, url) = (meta_str(&obj, "name"), scope.name.as_str());
    if given != url {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({given}) does not match the name on the URL ({url})"
        )));
    }
    Ok((obj, warnings))
}

/// How Go's JSON decoder names the type of a JSON value in its errors.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Object(_) => "object",
        Value::Null => "null",
    }
}
