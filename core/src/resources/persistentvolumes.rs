//! PersistentVolumes (core/v1): a DELETE answers with the deleted object. Defaults:
//! volumes are retained when released, in Filesystem mode, their sources defaulted as
//! a pod's; a new volume is Pending since its creation, as upstream's strategy starts
//! it.
//!
//! A volume has access modes, a storage capacity, exactly one source (a local one
//! pinned to nodes), known policies and modes, and mount options only for sources that
//! take them (upstream's `ValidatePersistentVolume`). Its source, volume mode and node
//! affinity, once set, do not change.

use super::columns::{self as cols, Column};
use super::defaults::{object, object_or_new, or_insert, or_insert_str};
use super::Strategy;
use crate::rest::object::{meta_str, Object};
use crate::validation::names::dns1123_subdomain;
use crate::validation::pod_spec::node_selector;
use crate::validation::pv_sources::{source_errors, MOUNT_OPTION_SOURCES, SOURCES};
use crate::validation::quantity::Quantity;
use crate::validation::value::{list, map, present, text};
use crate::validation::{go_json, ErrorKind, FieldError, FieldPath};
use serde_json::{json, Map, Value};

pub struct PersistentVolumes;

impl Strategy for PersistentVolumes {
    fn name(&self) -> &'static str {
        "persistentvolumes"
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::Builtin(COLUMNS)
    }

    fn default(&self, obj: &mut Object) {
        if let Some(spec) = object(obj, "spec") {
            or_insert_str(spec, "persistentVolumeReclaimPolicy", "Retain");
            or_insert(spec, "volumeMode", || json!("Filesystem"));
            super::pod_spec::volumes::default_source(spec);
        }
        if let Some(status) = object_or_new(obj, "status") {
            or_insert_str(status, "phase", "Pending");
        }
    }

    fn prepare_for_create(&self, new: &mut Object, has_status: bool) {
        if has_status {
            super::reset_status(new);
        }
        let since = Value::String(meta_str(new, "creationTimestamp").to_owned());
        if let Some(status) = object_or_new(new, "status") {
            status.insert("phase".into(), json!("Pending"));
            status.insert("lastPhaseTransitionTime".into(), since);
        }
    }

    fn delete_returns_object(&self) -> bool {
        true
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        let mut errs = validate(new);
        errs.extend(mount_options(new));
        errs
    }

    /// Upstream's update checks the spec twice (its strategy, then its update rules):
    /// causes list each error twice, the message once.
    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let mut errs = validate(new);
        errs.extend(mount_options(new));
        errs.extend(validate(new));
        let (new_spec, old_spec) = (spec_of(new), spec_of(old));
        if sources(new_spec) != sources(old_spec) {
            // Upstream appends a diff of its internal source types, not reproduced here.
            errs.push(FieldError::forbidden("spec.persistentvolumesource", "spec.persistentvolumesource is immutable after creation"));
        }
        let mode = |s: &Value| s.get("volumeMode").cloned().unwrap_or(Value::Null);
        if mode(new_spec) != mode(old_spec) {
            errs.push(FieldError::immutable("volumeMode", &mode(new_spec)));
        }
        let affinity = |s: &Value| s.get("nodeAffinity").filter(|a| !a.is_null()).cloned();
        if let Some(old_affinity) = affinity(old_spec) {
            let new_affinity = affinity(new_spec).unwrap_or(Value::Null);
            if new_affinity != old_affinity {
                errs.push(FieldError::immutable("nodeAffinity", &new_affinity));
            }
        }
        errs
    }
}

const ACCESS_MODES: [&str; 4] = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"];
const RECLAIM_POLICIES: [&str; 3] = ["Delete", "Recycle", "Retain"];
const VOLUME_MODES: [&str; 2] = ["Block", "Filesystem"];
const MOUNT_OPTIONS: &str = "volume.beta.kubernetes.io/mount-options";

fn spec_of(pv: &Object) -> &Value {
    pv.get("spec").unwrap_or(&Value::Null)
}

/// The sources a spec names, with their settings.
fn sources(spec: &Value) -> Map<String, Value> {
    SOURCES.iter().filter(|(k, _)| present(spec, k)).map(|(k, _)| ((*k).to_owned(), spec[*k].clone())).collect()
}

fn validate(pv: &Object) -> Vec<FieldError> {
    let spec = spec_of(pv);
    let path = FieldPath::new("spec");
    let at = |f: &str| path.child(f).as_str().to_owned();
    let mut errs = Vec::new();
    let modes: Vec<&str> = list(spec, "accessModes").iter().filter_map(Value::as_str).collect();
    if modes.is_empty() {
        errs.push(FieldError::required(&at("accessModes"), ""));
    }
    for mode in modes.iter().filter(|m| !ACCESS_MODES.contains(m)) {
        errs.push(FieldError::not_supported(&at("accessModes"), mode, &ACCESS_MODES));
    }
    let once_pod = modes.contains(&"ReadWriteOncePod");
    if once_pod && modes.iter().any(|m| *m != "ReadWriteOncePod" && ACCESS_MODES.contains(m)) {
        errs.push(FieldError::forbidden(&at("accessModes"), "may not use ReadWriteOncePod with other access modes"));
    }
    errs.extend(capacity(map(spec, "capacity"), &path.child("capacity")));
    let policy = text(spec, "persistentVolumeReclaimPolicy");
    if !policy.is_empty() && !RECLAIM_POLICIES.contains(&policy) {
        errs.push(FieldError::not_supported(&at("persistentVolumeReclaimPolicy"), policy, &RECLAIM_POLICIES));
    }
    let pinned = present(spec, "nodeAffinity");
    if pinned {
        match spec["nodeAffinity"].get("required").filter(|r| !r.is_null()) {
            Some(required) => errs.extend(node_selector(required, &path.child("nodeAffinity").child("required"))),
            None => errs.push(FieldError::required(
                path.child("nodeAffinity").child("required").as_str(),
                "must specify required node constraints",
            )),
        }
    }
    let mut count = 0;
    for (key, checked_at) in SOURCES {
        let Some(source) = spec.get(*key).filter(|v| !v.is_null()) else { continue };
        // A flexVolume counts as a source but is never the extra one.
        if count > 0 && *key != "flexVolume" {
            let shown = if *key == "cephfs" { "cephFS" } else { key };
            errs.push(FieldError::forbidden(&at(shown), "may not specify more than 1 volume type"));
            continue;
        }
        count += 1;
        errs.extend(source_errors(key, source, &path.child(checked_at), meta_str(pv, "name")));
        if *key == "local" && !pinned {
            errs.push(FieldError::required(&at("nodeAffinity"), "Local volume requires node affinity"));
        }
    }
    if count == 0 {
        errs.push(FieldError::required(path.as_str(), "must specify a volume type"));
    }
    let host_path = spec.get("hostPath").filter(|h| !h.is_null()).map(|h| text(h, "path"));
    if host_path.is_some_and(cleans_to_root) && policy == "Recycle" {
        errs.push(FieldError::forbidden(&at("persistentVolumeReclaimPolicy"), "may not be 'recycle' for a hostPath mount of '/'"));
    }
    let class = text(spec, "storageClassName");
    if !class.is_empty() {
        errs.extend(dns1123_subdomain(class).into_iter().map(|m| FieldError::invalid(&at("storageClassName"), class, m)));
    }
    if let Some(mode) = spec.get("volumeMode").and_then(Value::as_str).filter(|m| !VOLUME_MODES.contains(m)) {
        errs.push(FieldError::not_supported(&at("volumeMode"), mode, &VOLUME_MODES));
    }
    errs
}

/// The beta annotation's mount options, only for sources that take them.
fn mount_options(pv: &Object) -> Vec<FieldError> {
    let annotated = pv.get("metadata").and_then(|m| m.get("annotations")).is_some_and(|a| a.get(MOUNT_OPTIONS).is_some());
    if annotated && !MOUNT_OPTION_SOURCES.iter().any(|s| present(spec_of(pv), s)) {
        let field = format!("metadata.annotations.{MOUNT_OPTIONS}");
        return vec![FieldError::forbidden(&field, "may not specify mount options for this volume type")];
    }
    Vec::new()
}

/// The capacity: storage, and only storage, in an amount above zero.
fn capacity(capacity: Option<&Map<String, Value>>, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let entries = capacity.map_or(0, Map::len);
    if entries == 0 {
        errs.push(FieldError::required(path.as_str(), ""));
    }
    if !capacity.is_some_and(|c| c.contains_key("storage")) || entries > 1 {
        let shown = capacity.map_or("null".to_owned(), |c| go_json(&Value::Object(c.clone())));
        errs.push(FieldError::shown(path.as_str(), ErrorKind::NotSupported, Some(&shown), "supported values: \"storage\""));
    }
    for (name, amount) in capacity.into_iter().flatten() {
        let Some(q) = Quantity::from_json(amount) else { continue };
        let at = path.key(name);
        if q.units() < 0 {
            errs.push(FieldError::invalid_unquoted(at.as_str(), &q.units().to_string(), "must be a valid resource quantity"));
        }
        if !(q > Quantity::parse("0").expect("zero")) {
            errs.push(FieldError::invalid(at.as_str(), &q.canonical(), "must be greater than zero"));
        }
    }
    errs
}

/// Whether `p` is the root once cleaned (`/`, `//`, `/a/..`), as Go's `path.Clean` reads it.
fn cleans_to_root(p: &str) -> bool {
    let mut depth = 0usize;
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => depth = depth.saturating_sub(1),
            _ => depth += 1,
        }
    }
    p.starts_with('/') && depth == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(pv: Value) -> Vec<String> {
        PersistentVolumes.validate_create(pv.as_object().unwrap()).iter().map(ToString::to_string).collect()
    }

    fn pv(source: Value) -> Value {
        let mut spec = json!({"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}});
        spec.as_object_mut().unwrap().extend(source.as_object().unwrap().clone());
        json!({"metadata": {"name": "v"}, "spec": spec})
    }

    #[test]
    fn one_source_with_its_own_rules() {
        assert!(errors(pv(json!({"hostPath": {"path": "/a"}}))).is_empty());
        // A flexVolume is counted, never reported as the extra one.
        assert!(errors(pv(json!({"hostPath": {"path": "/a"}, "flexVolume": {"driver": "d"}}))).is_empty());
        assert_eq!(
            errors(pv(json!({"hostPath": {"path": "//"}, "persistentVolumeReclaimPolicy": "Recycle"}))),
            ["spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/'"]
        );
        assert_eq!(
            errors(pv(json!({"cephfs": {"monitors": ["m"]}, "rbd": {}}))),
            ["spec.rbd.monitors: Required value", "spec.rbd.image: Required value", "spec.cephFS: Forbidden: may not specify more than 1 volume type"]
        );
        assert_eq!(
            errors(pv(json!({"gcePersistentDisk": {"partition": 300}}))),
            ["spec.persistentDisk.pdName: Required value", "spec.persistentDisk.partition: Invalid value: 300: must be between 1 and 255, inclusive"]
        );
    }

    #[test]
    fn capacity_and_mount_options() {
        let mut bad = pv(json!({"csi": {"driver": "d.example.com", "volumeHandle": "h"}}));
        bad["spec"]["capacity"] = json!({"storage": "0", "cpu": "1"});
        bad["metadata"]["annotations"] = json!({MOUNT_OPTIONS: "ro"});
        assert_eq!(
            errors(bad),
            [
                "spec.capacity: Unsupported value: {\"cpu\":\"1\",\"storage\":\"0\"}: supported values: \"storage\"",
                "spec.capacity[storage]: Invalid value: \"0\": must be greater than zero",
                "metadata.annotations.volume.beta.kubernetes.io/mount-options: Forbidden: may not specify mount options for this volume type",
            ]
        );
    }
}

pub(crate) const COLUMNS: &[Column] = &[
    Column { name: "Capacity", kind: "string", description: "capacity is the description of the persistent volume's resources and capacity. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity", format: "", priority: 0, cell: |o| cols::quantity_at(o, &["spec", "capacity", "storage"]) },
    Column { name: "Access Modes", kind: "string", description: "accessModes contains all ways the volume can be mounted. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes", format: "", priority: 0, cell: |o| cols::access_modes_at(o, &["spec", "accessModes"]) },
    Column { name: "Reclaim Policy", kind: "string", description: "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim. Valid options are Retain (default for manually created PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), and Recycle (deprecated). Recycle must be supported by the volume plugin underlying this PersistentVolume. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming", format: "", priority: 0, cell: |o| cols::str_at(o, &["spec", "persistentVolumeReclaimPolicy"]) },
    Column { name: "Status", kind: "string", description: "phase indicates if a volume is available, bound to a claim, or released by a claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase", format: "", priority: 0, cell: |o| cols::phase_or_terminating(o) },
    Column { name: "Claim", kind: "string", description: "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the authoritative bind between PV and PVC. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding", format: "", priority: 0, cell: claim },
    Column { name: "StorageClass", kind: "string", description: "StorageClass of the pv", format: "", priority: 0, cell: cols::storage_class },
    Column { name: "VolumeAttributesClass", kind: "string", description: "VolumeAttributesClass of the pv", format: "", priority: 0, cell: |o| cols::unset_or(o, &["spec", "volumeAttributesClassName"]) },
    Column { name: "Reason", kind: "string", description: "reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.", format: "", priority: 0, cell: |o| cols::str_at(o, &["status", "reason"]) },
    Column { name: "VolumeMode", kind: "string", description: "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state. Value of Filesystem is implied when not included in spec.", format: "", priority: 1, cell: |o| cols::unset_or(o, &["spec", "volumeMode"]) },
];

/// CLAIM: the claimRef's namespace/name, "" without one.
fn claim(pv: &Object) -> Value {
    match cols::at(pv, &["spec", "claimRef"]).filter(|c| !c.is_null()) {
        Some(c) => serde_json::json!(format!(
            "{}/{}",
            c.get("namespace").and_then(Value::as_str).unwrap_or(""),
            c.get("name").and_then(Value::as_str).unwrap_or("")
        )),
        None => serde_json::json!(""),
    }
}
