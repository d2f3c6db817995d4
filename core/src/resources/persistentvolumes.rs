//! PersistentVolumes (core/v1): a DELETE answers with the deleted object. Defaults:
//! volumes are retained when released, in Filesystem mode, their sources defaulted as
//! a pod's; a new volume is Pending since its creation, as upstream's strategy starts
//! it.

use super::defaults::{object, object_or_new, or_insert, or_insert_str};
use super::Strategy;
use crate::rest::object::{meta_str, Object};
use serde_json::{json, Value};

pub struct PersistentVolumes;

impl Strategy for PersistentVolumes {
    fn name(&self) -> &'static str {
        "persistentvolumes"
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
}
