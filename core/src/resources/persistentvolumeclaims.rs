//! PersistentVolumeClaims (core/v1): a DELETE answers with the deleted object.
//! Defaults: a Filesystem volume mode, and a new claim is Pending. As upstream's
//! strategy does, a claim naming only one of `dataSource` and `dataSourceRef` gets the
//! other equal to it.
//!
//! The spec is checked as upstream's `ValidatePersistentVolumeClaimSpec` checks it (access
//! modes, a positive storage request, class name, volume mode), and does not change
//! after creation but for binding it to a volume and, once bound, its requests.

use super::columns::{self as cols, Column};
use super::defaults::{object, object_or_new, or_insert, or_insert_str};
use super::Strategy;
use crate::rest::object::Object;
use crate::validation::{label_selector, names, FieldError};
use serde_json::{json, Map, Value};

pub struct PersistentVolumeClaims;

impl Strategy for PersistentVolumeClaims {
    fn name(&self) -> &'static str {
        "persistentvolumeclaims"
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::Builtin(COLUMNS)
    }

    fn default(&self, obj: &mut Object) {
        default_claim(obj);
    }

    fn prepare_for_create(&self, new: &mut Object, has_status: bool) {
        if has_status {
            super::reset_status(new);
        }
        // The status starts over, as Pending.
        default_claim(new);
        if let Some(spec) = object(new, "spec") {
            mirror_data_source(spec);
        }
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

/// A claim (or a StatefulSet's claim template): its spec's defaults, and Pending.
pub fn default_claim(claim: &mut Map<String, Value>) {
    if let Some(spec) = object(claim, "spec") {
        default_spec(spec);
    }
    if let Some(status) = object_or_new(claim, "status") {
        or_insert_str(status, "phase", "Pending");
    }
}

/// A claim's spec (also an ephemeral volume's claim template): Filesystem mode.
pub fn default_spec(spec: &mut Map<String, Value>) {
    or_insert(spec, "volumeMode", || json!("Filesystem"));
}

/// `dataSource` and `dataSourceRef` name the same thing when only one is given (a
/// reference into another namespace has no `dataSource` form).
fn mirror_data_source(spec: &mut Map<String, Value>) {
    let source = spec.get("dataSource").filter(|v| v.is_object()).cloned();
    let reference = spec.get("dataSourceRef").filter(|v| v.is_object()).cloned();
    match (source, reference) {
        (Some(source), None) => {
            spec.insert("dataSourceRef".into(), source);
        }
        (None, Some(mut reference)) => {
            let namespaced = reference.get("namespace").and_then(Value::as_str).is_some_and(|n| !n.is_empty());
            if !namespaced {
                if let Some(r) = reference.as_object_mut() {
                    r.remove("namespace");
                }
                spec.insert("dataSource".into(), reference);
            }
        }
        _ => {}
    }
}

pub(crate) const COLUMNS: &[Column] = &[
    Column { name: "Status", kind: "string", description: "phase represents the current phase of PersistentVolumeClaim.", format: "", priority: 0, cell: |o| cols::phase_or_terminating(o) },
    Column { name: "Volume", kind: "string", description: "volumeName is the binding reference to the PersistentVolume backing this claim.", format: "", priority: 0, cell: |o| cols::str_at(o, &["spec", "volumeName"]) },
    Column { name: "Capacity", kind: "string", description: "capacity represents the actual resources of the underlying volume.", format: "", priority: 0, cell: |o| if bound(o) { cols::quantity_at(o, &["status", "capacity", "storage"]) } else { serde_json::json!("") } },
    Column { name: "Access Modes", kind: "string", description: "accessModes contains the actual access modes the volume backing the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1", format: "", priority: 0, cell: |o| if bound(o) { cols::access_modes_at(o, &["status", "accessModes"]) } else { serde_json::json!("") } },
    Column { name: "StorageClass", kind: "string", description: "StorageClass of the pvc", format: "", priority: 0, cell: cols::storage_class },
    Column { name: "VolumeAttributesClass", kind: "string", description: "VolumeAttributesClass of the pvc", format: "", priority: 0, cell: |o| cols::unset_or(o, &["spec", "volumeAttributesClassName"]) },
    Column { name: "VolumeMode", kind: "string", description: "volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec.", format: "", priority: 1, cell: |o| cols::unset_or(o, &["spec", "volumeMode"]) },
];

/// Whether the claim names its volume: its capacity and modes are shown then.
fn bound(pvc: &Object) -> bool {
    cols::at(pvc, &["spec", "volumeName"]).and_then(Value::as_str).is_some_and(|v| !v.is_empty())
}
