//! The objects of a CustomResourceDefinition's served version: the strategy a custom
//! resource's registry entry carries, made from the version's part of the CRD (its
//! schema, subresources, printer columns and selectable fields), as upstream's
//! apiextensions server builds a `customResourceStrategy` per served version.
//!
//! Everything the version declares is read once, when the CRD joins the registry; a
//! request only borrows it. Its schema is compiled then ([`StructuralSchema`]), and
//! validates creates and updates as upstream's `customResourceStrategy` does: the
//! schema's checks (ratcheted on updates), the scale subresource's replicas and
//! selector, the embedded resources' metadata, then the uniqueness of `set` and `map`
//! lists (on an update, only when the stored object had no duplicates).

use super::{Handler, Strategy};
use crate::gofmt::{self, GoType};
use crate::rest::object::{meta_mut, spec_changed, Object};
use crate::schema::compiled::StructuralSchema;
use crate::validation::{ErrorKind, FieldError};
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// The rules of one served version of a CRD.
#[derive(Debug)]
pub struct CustomResources {
    /// The version as the CRD declares it (`spec.versions[i]`): two strategies made
    /// from equal declarations are the same strategy.
    definition: Value,
    /// Whether the version serves `status` (`subresources.status`).
    status: bool,
    /// The version's `subresources.scale`, when it serves one.
    scale: Option<ScalePaths>,
    /// The version's `schema.openAPIV3Schema`, compiled.
    schema: Arc<StructuralSchema>,
}

/// Where the `scale` subresource of a custom resource reads and writes its object
/// (`subresources.scale`): JSON paths such as `.spec.replicas`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScalePaths {
    pub spec_replicas: String,
    pub status_replicas: String,
    pub label_selector: Option<String>,
}

impl CustomResources {
    /// The strategy of `version`, one entry of a CRD's `spec.versions`.
    pub fn new(version: &Value) -> CustomResources {
        let subresources = version.get("subresources");
        let scale = subresources.and_then(|s| s.get("scale")).map(|scale| {
            let path = |key: &str| scale.get(key).and_then(Value::as_str).map(str::to_owned);
            ScalePaths {
                spec_replicas: path("specReplicasPath").unwrap_or_default(),
                status_replicas: path("statusReplicasPath").unwrap_or_default(),
                label_selector: path("labelSelectorPath"),
            }
        });
        let schema = StructuralSchema::compile(&Self::openapi_v3(version));
        CustomResources {
            definition: version.clone(),
            status: subresources.and_then(|s| s.get("status")).is_some(),
            scale,
            schema: Arc::new(schema),
        }
    }

    /// The schema a version declares (`schema.openAPIV3Schema`), or an object of
    /// anything for one that declares none.
    pub fn openapi_v3(version: &Value) -> Value {
        version.pointer("/schema/openAPIV3Schema").cloned().unwrap_or_else(|| json!({"type": "object"}))
    }

    /// Whether the version serves the `status` subresource.
    pub fn serves_status(&self) -> bool {
        self.status
    }

    /// The version's schema, compiled.
    pub fn schema(&self) -> &Arc<StructuralSchema> {
        &self.schema
    }

    /// Upstream's `ValidateScaleSpec` and `ValidateScaleStatus`: the replicas the scale
    /// subresource reads are non-negative int32s, its selector a string.
    fn scale_errors(&self, obj: &Object, spec: bool) -> Vec<FieldError> {
        let Some(scale) = &self.scale else {
            return Vec::new();
        };
        let mut errors = Vec::new();
        if spec {
            replicas_errors(obj, &scale.spec_replicas, &mut errors);
        }
        replicas_errors(obj, &scale.status_replicas, &mut errors);
        if let Some(path) = &scale.label_selector {
            if let Err(e) = nested(obj, path, GoType::String, "string") {
                errors.push(FieldError::shown(path, ErrorKind::Invalid, Some("\"\""), &e));
            }
        }
        errors
    }

    /// The list-type errors of `new`, unless `old` already had some (upstream ratchets
    /// them whole).
    fn list_errors(&self, new: &Object, old: Option<&Object>) -> Vec<FieldError> {
        if !self.schema.has_keyed_lists() || old.is_some_and(|old| !self.schema.validate_lists(old).is_empty()) {
            return Vec::new();
        }
        self.schema.validate_lists(new)
    }
}

/// The replicas at `path` (`.spec.replicas`), when present, must be an int64 within
/// 0..=2^31-1.
fn replicas_errors(obj: &Object, path: &str, errors: &mut Vec<FieldError>) {
    let invalid = |value: &str, detail: &str| FieldError::shown(path, ErrorKind::Invalid, Some(value), detail);
    match nested(obj, path, GoType::Int, "int64") {
        Err(e) => errors.push(invalid("0", &e)),
        Ok(Some(n)) => {
            let n = n.as_i64().unwrap_or(0);
            if n < 0 {
                errors.push(invalid(&n.to_string(), "should be a non-negative integer"));
            } else if n > i64::from(i32::MAX) {
                errors.push(invalid(&n.to_string(), &format!("should be less than or equal to {}", i32::MAX)));
            }
        }
        Ok(None) => {}
    }
}

/// The value at a scale path (`.spec.replicas`), as apimachinery's `NestedInt64` and
/// `NestedString` read it: absent is fine; a value of another Go type than `want`,
/// or a step through something other than an object, is their error.
fn nested<'o>(obj: &'o Object, path: &str, want: GoType, want_name: &str) -> Result<Option<&'o Value>, String> {
    let fields: Vec<&str> = path.strip_prefix('.').unwrap_or(path).split('.').collect();
    let json_path = |upto: usize| format!(".{}", fields[..upto].join("."));
    let mut map: &Map<String, Value> = obj;
    for (i, field) in fields.iter().enumerate() {
        let Some(value) = map.get(*field) else {
            return Ok(None);
        };
        if i + 1 == fields.len() {
            if GoType::of(value) != want {
                let ty = GoType::of(value).name();
                return Err(format!("{} accessor error: {} is of the type {ty}, expected {want_name}", json_path(fields.len()), gofmt::v(value)));
            }
            return Ok(Some(value));
        }
        match value {
            Value::Object(next) => map = next,
            Value::Null => return Ok(None),
            other => {
                let ty = GoType::of(other).name();
                return Err(format!(
                    "{} accessor error: {} is of the type {ty}, expected map[string]interface{{}}",
                    json_path(i + 2),
                    gofmt::v(other)
                ));
            }
        }
    }
    Ok(None)
}

impl Strategy for CustomResources {
    fn name(&self) -> &'static str {
        "customresources"
    }

    fn definition(&self) -> Option<&Value> {
        Some(&self.definition)
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        let mut errors = self.schema.validate(new, None);
        errors.extend(self.scale_errors(new, true));
        errors.extend(self.schema.validate_embedded(new));
        errors.extend(self.list_errors(new, None));
        errors
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let mut errors = self.schema.validate(new, Some(old));
        errors.extend(self.scale_errors(new, true));
        errors.extend(self.schema.validate_embedded(new));
        errors.extend(self.list_errors(new, Some(old)));
        errors
    }

    fn validate_status_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let mut errors = self.schema.validate_status(new, old);
        errors.extend(self.scale_errors(new, false));
        errors.extend(self.list_errors(new, Some(old)));
        errors
    }

    /// Upstream drops a new object's status when the status subresource owns it.
    fn prepare_for_create(&self, new: &mut Object, has_status: bool) {
        if has_status {
            new.remove("status");
        }
    }

    fn subresource(&self, name: &str) -> Option<Handler> {
        match name {
            "status" if self.status => Some(Handler::Status),
            "scale" if self.scale.is_some() => Some(Handler::CustomScale),
            _ => None,
        }
    }

    fn scale_paths(&self) -> Option<&ScalePaths> {
        self.scale.as_ref()
    }

    /// Upstream counts every change but metadata's in the generation, and status's
    /// too when no status subresource owns it.
    fn count_generation(&self, old: &Object, new: &mut Object) {
        let changed = spec_changed(old, new) || (!self.status && old.get("status") != new.get("status"));
        if changed {
            let generation = old
                .get("metadata")
                .and_then(|m| m.get("generation"))
                .and_then(Value::as_i64)
                .unwrap_or(0);
            meta_mut(new).insert("generation".into(), json!(generation + 1));
        }
    }
}
