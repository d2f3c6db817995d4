//! PersistentVolumeClaims (core/v1): a DELETE answers with the deleted object.
//! Defaults: a Filesystem volume mode, and a new claim is Pending. As upstream's
//! strategy does, a claim naming only one of `dataSource` and `dataSourceRef` gets the
//! other equal to it.

use super::defaults::{object, object_or_new, or_insert, or_insert_str};
use super::Strategy;
use crate::rest::object::Object;
use serde_json::{json, Map, Value};

pub struct PersistentVolumeClaims;

impl Strategy for PersistentVolumeClaims {
    fn name(&self) -> &'static str {
        "persistentvolumeclaims"
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
