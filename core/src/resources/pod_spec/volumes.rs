//! Volume sources' defaults: a pod's volumes, and the same sources inlined in a
//! PersistentVolume's spec (whose defaults upstream keeps alike).

use crate::resources::defaults::{object, objects, or_insert, or_insert_str};
use crate::resources::persistentvolumeclaims;
use serde_json::{json, Map, Value};

/// File mode of secret, configMap, downwardAPI and projected volumes (0644).
const DEFAULT_MODE: i64 = 0o644;

/// One pod volume: a volume naming no source is an emptyDir; then its source's
/// defaults.
pub fn default_volume(volume: &mut Map<String, Value>) {
    let has_source = volume.iter().any(|(k, v)| k != "name" && !v.is_null());
    if !has_source {
        volume.insert("emptyDir".into(), json!({}));
    }
    for kind in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(source) = object(volume, kind) {
            or_insert(source, "defaultMode", || json!(DEFAULT_MODE));
        }
    }
    if let Some(downward) = object(volume, "downwardAPI") {
        field_refs(downward);
    }
    if let Some(projected) = object(volume, "projected") {
        for source in objects(projected, "sources") {
            if let Some(token) = object(source, "serviceAccountToken") {
                or_insert(token, "expirationSeconds", || json!(3600));
            }
            if let Some(downward) = object(source, "downwardAPI") {
                field_refs(downward);
            }
        }
    }
    if let Some(claim) = object(volume, "ephemeral").and_then(|e| object(e, "volumeClaimTemplate")) {
        if let Some(spec) = object(claim, "spec") {
            persistentvolumeclaims::default_spec(spec);
        }
    }
    default_source(volume);
}

/// Defaults of sources a pod volume and a PersistentVolume's spec share.
pub fn default_source(source: &mut Map<String, Value>) {
    if let Some(host_path) = object(source, "hostPath") {
        or_insert(host_path, "type", || json!(""));
    }
    if let Some(iscsi) = object(source, "iscsi") {
        or_insert_str(iscsi, "iscsiInterface", "default");
    }
    if let Some(rbd) = object(source, "rbd") {
        or_insert_str(rbd, "pool", "rbd");
        or_insert_str(rbd, "user", "admin");
        or_insert_str(rbd, "keyring", "/etc/ceph/keyring");
    }
    if let Some(disk) = object(source, "azureDisk") {
        or_insert(disk, "cachingMode", || json!("ReadWrite"));
        or_insert(disk, "kind", || json!("Shared"));
        or_insert(disk, "fsType", || json!("ext4"));
        or_insert(disk, "readOnly", || json!(false));
    }
    if let Some(scale_io) = object(source, "scaleIO") {
        or_insert_str(scale_io, "storageMode", "ThinProvisioned");
        or_insert_str(scale_io, "fsType", "xfs");
    }
}

/// The items of a downwardAPI source: a fieldRef names v1 unless it says otherwise.
fn field_refs(downward: &mut Map<String, Value>) {
    for item in objects(downward, "items") {
        if let Some(field_ref) = object(item, "fieldRef") {
            or_insert_str(field_ref, "apiVersion", "v1");
        }
    }
}
