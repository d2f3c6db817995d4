//! Volumes and the containers' mounts of them (upstream's `ValidateVolumes`,
//! `ValidateVolumeMounts`).

use crate::validation::names::dns1123_label;
use crate::validation::value::text;
use crate::validation::{FieldError, FieldPath};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// The volumes mounts may name: those that passed their checks, by name.
pub(super) type Volumes = HashMap<String, Value>;

/// Every volume source, in the order upstream looks for them: with two, the second
/// found is the one reported.
const SOURCES: &[&str] = &[
    "emptyDir",
    "hostPath",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "flocker",
    "persistentVolumeClaim",
    "rbd",
    "cinder",
    "cephfs",
    "quobyte",
    "downwardAPI",
    "fc",
    "flexVolume",
    "configMap",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "storageos",
    "projected",
    "scaleIO",
    "csi",
    "ephemeral",
    "image",
];

/// The fields a source cannot do without.
fn required_fields(source: &str) -> &'static [&'static str] {
    match source {
        "hostPath" => &["path"],
        "secret" => &["secretName"],
        "configMap" => &["name"],
        "persistentVolumeClaim" => &["claimName"],
        "nfs" => &["server", "path"],
        _ => &[],
    }
}

pub(super) fn validate_volumes(volumes: &[Value], path: &FieldPath) -> (Volumes, Vec<FieldError>) {
    let mut known = Volumes::new();
    let mut errs = Vec::new();
    for (i, volume) in volumes.iter().enumerate() {
        let at = path.index(i);
        let name_path = at.child("name");
        let mut own = source_errors(volume, &at);
        let name = text(volume, "name");
        if name.is_empty() {
            own.push(FieldError::required(name_path.as_str(), ""));
        } else {
            own.extend(dns1123_label(name).into_iter().map(|m| FieldError::invalid(name_path.as_str(), name, m)));
        }
        if known.contains_key(name) {
            own.push(FieldError::duplicate(name_path.as_str(), name));
        }
        // Only a volume without errors counts: a later one of its name is no duplicate.
        if own.is_empty() {
            known.insert(name.to_owned(), volume.clone());
        }
        errs.extend(own);
    }
    (known, errs)
}

fn source_errors(volume: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut found = false;
    for source in SOURCES {
        let Some(spec) = volume.get(*source).filter(|v| !v.is_null()) else { continue };
        if found {
            errs.push(FieldError::forbidden(path.child(source).as_str(), "may not specify more than 1 volume type"));
            continue;
        }
        found = true;
        for field in required_fields(source) {
            if text(spec, field).is_empty() {
                errs.push(FieldError::required(path.child(source).child(field).as_str(), ""));
            }
        }
    }
    if !found {
        errs.push(FieldError::required(path.as_str(), "must specify a volume type"));
    }
    errs
}

pub(super) fn validate_mounts(mounts: &[Value], volumes: &Volumes, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut mount_points = HashSet::new();
    for (i, mount) in mounts.iter().enumerate() {
        let at = path.index(i);
        let name = text(mount, "name");
        if name.is_empty() {
            errs.push(FieldError::required(at.child("name").as_str(), ""));
        }
        if !volumes.contains_key(name) {
            errs.push(FieldError::not_found(at.child("name").as_str(), name));
        }
        let mount_path = text(mount, "mountPath");
        if mount_path.is_empty() {
            errs.push(FieldError::required(at.child("mountPath").as_str(), ""));
        }
        if !mount_points.insert(mount_path) {
            errs.push(FieldError::invalid(at.child("mountPath").as_str(), mount_path, "must be unique"));
        }
        let image = volumes.get(name).is_some_and(|v| v.get("image").is_some_and(|i| !i.is_null()));
        for key in ["subPath", "subPathExpr"] {
            let sub_path = text(mount, key);
            if image && !sub_path.is_empty() {
                errs.push(FieldError::invalid(at.child(key).as_str(), sub_path, "not allowed in image volume sources"));
            }
        }
        let sub_path = text(mount, "subPath");
        let sub_path_expr = text(mount, "subPathExpr");
        // Upstream reports these on the list's path, not the mount's.
        if !sub_path.is_empty() {
            errs.extend(descending_path(sub_path, &path.child("subPath")));
        }
        if !sub_path_expr.is_empty() {
            if !sub_path.is_empty() {
                errs.push(FieldError::invalid(at.child("subPathExpr").as_str(), sub_path_expr, "subPathExpr and subPath are mutually exclusive"));
            }
            errs.extend(descending_path(sub_path_expr, &path.child("subPathExpr")));
        }
    }
    errs
}

/// A path that stays below where it starts: relative, without `..`.
fn descending_path(target: &str, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if target.starts_with('/') {
        errs.push(FieldError::invalid(path.as_str(), target, "must be a relative path"));
    }
    if target.split(['/', '\\']).any(|part| part == "..") {
        errs.push(FieldError::invalid(path.as_str(), target, "must not contain '..'"));
    }
    errs
}
