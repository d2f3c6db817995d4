//! PersistentVolumeClaims (core/v1): a DELETE answers with the deleted object. The spec
//! is checked as upstream's `ValidatePersistentVolumeClaimSpec` checks it (access
//! modes, a positive storage request, class name, volume mode), and does not change
//! after creation but for binding it to a volume and, once bound, its requests.

use super::Strategy;
use crate::rest::object::Object;
use crate::validation::{label_selector, names, FieldError};
use serde_json::Value;

pub struct PersistentVolumeClaims;

impl Strategy for PersistentVolumeClaims {
    fn name(&self) -> &'static str {
        "persistentvolumeclaims"
    }

    fn delete_returns_object(&self) -> bool {
        true
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let mut errs = validate(new);
        if comparable_spec(new, old) != comparable_spec(old, old) {
            // Upstream appends a diff of its internal spec types, not reproduced here.
            errs.push(FieldError::forbidden(
                "spec",
                "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims",
            ));
        }
        errs
    }
}

const ACCESS_MODES: [&str; 4] = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"];
const VOLUME_MODES: [&str; 2] = ["Block", "Filesystem"];

fn validate(pvc: &Object) -> Vec<FieldError> {
    let null = Value::Null;
    let spec = pvc.get("spec").unwrap_or(&null);
    let mut errs = Vec::new();
    let modes: Vec<&str> = spec.get("accessModes").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    if modes.is_empty() {
        errs.push(FieldError::required("spec.accessModes", "at least 1 access mode is required"));
    }
    if let Some(selector) = spec.get("selector").filter(|s| !s.is_null()) {
        errs.extend(label_selector::validate("spec.selector", selector, false));
    }
    for mode in modes.iter().filter(|m| !ACCESS_MODES.contains(m)) {
        errs.push(FieldError::not_supported("spec.accessModes", mode, &ACCESS_MODES));
    }
    const STORAGE: &str = "spec.resources[storage]";
    match spec.pointer("/resources/requests/storage") {
        None | Some(Value::Null) => errs.push(FieldError::required(STORAGE, "")),
        Some(q) => {
            let text = match q {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            if super::pods::quantity_nanos(&text).is_none_or(|n| n <= 0) {
                errs.push(FieldError::invalid(STORAGE, &text, "must be greater than zero"));
            }
        }
    }
    if let Some(class) = spec.get("storageClassName").and_then(Value::as_str).filter(|c| !c.is_empty()) {
        errs.extend(names::dns1123_subdomain(class).into_iter().map(|m| FieldError::invalid("spec.storageClassName", class, m)));
    }
    if let Some(mode) = spec.get("volumeMode").and_then(Value::as_str) {
        if !VOLUME_MODES.contains(&mode) {
            errs.push(FieldError::not_supported("spec.volumeMode", mode, &VOLUME_MODES));
        }
    }
    errs
}

/// `claim`'s spec with what an update may change taken from `old`: the volume it is
/// bound to when `old` has none, and the requests when `old` is bound; the volume mode
/// defaulted as upstream defaults it.
fn comparable_spec(claim: &Object, old: &Object) -> Value {
    let mut spec = claim.get("spec").cloned().unwrap_or(Value::Null);
    let Some(map) = spec.as_object_mut() else { return spec };
    let old_spec = old.get("spec");
    let old_volume = old_spec.and_then(|s| s.get("volumeName")).and_then(Value::as_str).unwrap_or("");
    if old_volume.is_empty() {
        map.remove("volumeName");
    }
    let bound = old.get("status").and_then(|s| s.get("phase")).and_then(Value::as_str) == Some("Bound");
    if bound {
        if let Some(resources) = map.get_mut("resources").and_then(Value::as_object_mut) {
            resources.remove("requests");
        }
    }
    map.entry("volumeMode").or_insert_with(|| Value::from("Filesystem"));
    map.remove("volumeAttributesClassName");
    spec
}
