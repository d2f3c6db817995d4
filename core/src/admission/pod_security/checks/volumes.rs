//! Restricted, v1.0+: volumes may only be of the types that expose nothing of the
//! node (this replaces the baseline hostPath check).

use super::{join_quote, pluralize, Violation};
use crate::admission::pod_security::pod::Pod;
use std::collections::BTreeSet;

const ALLOWED: &[&str] = &[
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "image",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

/// The restricted sources, in the order upstream names the first one a volume sets.
const RESTRICTED: &[&str] = &[
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "nfs",
    "iscsi",
    "glusterfs",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "fc",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "storageos",
];

pub(crate) fn restricted_volumes(pod: &Pod<'_>) -> Option<Violation> {
    let mut names = Vec::new();
    let mut kinds = BTreeSet::new();
    for volume in pod.volumes() {
        let set = |key: &&str| volume.get(*key).is_some_and(|v| !v.is_null());
        if ALLOWED.iter().any(set) {
            continue;
        }
        names.push(volume.get("name").and_then(|n| n.as_str()).unwrap_or(""));
        kinds.insert(RESTRICTED.iter().copied().find(set).unwrap_or("unknown"));
    }
    if names.is_empty() {
        return None;
    }
    let kinds: Vec<&str> = kinds.into_iter().collect();
    Violation::new(
        "restricted volume types",
        format!(
            "{} {} {} {} {}",
            pluralize("volume", "volumes", names.len()),
            join_quote(&names),
            pluralize("uses", "use", names.len()),
            pluralize("restricted volume type", "restricted volume types", kinds.len()),
            join_quote(&kinds)
        ),
    )
}
