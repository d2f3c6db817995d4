//! What an update may change in a pod's spec (upstream's `ValidatePodUpdate`):
//! images, `activeDeadlineSeconds` (set, or lowered), added tolerations (existing
//! ones only in their `tolerationSeconds`), and a negative grace period set to 1.

use super::{scheduling, validate, Context};
use crate::validation::value::{int, list, text};
use crate::validation::{FieldError, FieldPath};
use serde_json::{Map, Value};

/// The fields upstream names as changeable, in the words of its refusal.
const UPDATABLE: &str = "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

pub fn validate_pod_update(new: &Map<String, Value>, old: &Map<String, Value>) -> Vec<FieldError> {
    let null = Value::Null;
    let new_spec = new.get("spec").unwrap_or(&null);
    let old_spec = old.get("spec").unwrap_or(&null);
    let path = FieldPath::new("spec");
    let mut errs = validate(new_spec, &[], &path, Context::Pod);
    for key in ["containers", "initContainers"] {
        let (more, stop) = container_updates(list(new_spec, key), list(old_spec, key), &path.child(key));
        errs.extend(more);
        if stop {
            return errs;
        }
    }
    let deadline_path = path.child("activeDeadlineSeconds");
    match (new_spec.get("activeDeadlineSeconds").filter(|v| !v.is_null()), int(old_spec, "activeDeadlineSeconds")) {
        (Some(v), old) => {
            let seconds = v.as_i64().unwrap_or(0);
            if !(0..=i64::from(i32::MAX)).contains(&seconds) {
                errs.push(crate::validation::value::invalid_int(&deadline_path, seconds, "must be between 0 and 2147483647, inclusive"));
                return errs;
            }
            if old.is_some_and(|old| old < seconds) {
                errs.push(crate::validation::value::invalid_int(&deadline_path, seconds, "must be less than or equal to previous value"));
                return errs;
            }
        }
        (None, Some(_)) => {
            errs.push(FieldError::invalid_unquoted(deadline_path.as_str(), "null", "must not update from a positive integer to nil value"));
        }
        (None, None) => {}
    }
    errs.extend(only_added_tolerations(list(new_spec, "tolerations"), list(old_spec, "tolerations"), &path.child("tolerations")));
    let before = normalized(old_spec);
    if normalized(new_spec) != before && normalized(&munged(new_spec, old_spec)) != before {
        // Upstream appends a diff of its internal Go types, which this does not reproduce.
        errs.push(FieldError::forbidden(path.as_str(), UPDATABLE));
    }
    errs
}

/// Containers may not come or go; an image may change but not to nothing.
fn container_updates(new: &[Value], old: &[Value], path: &FieldPath) -> (Vec<FieldError>, bool) {
    if new.len() != old.len() {
        return (vec![FieldError::forbidden(path.as_str(), "pod updates may not add or remove containers")], true);
    }
    let mut errs = Vec::new();
    for (i, ctr) in new.iter().enumerate() {
        let image = text(ctr, "image");
        if image.is_empty() {
            errs.push(FieldError::required(path.index(i).child("image").as_str(), ""));
        }
        if image.trim() != image {
            errs.push(FieldError::invalid(path.index(i).child("image").as_str(), image, "must not have leading or trailing whitespace"));
        }
    }
    (errs, false)
}

/// The new spec with what may change taken from the old one: if they then differ,
/// something else changed.
fn munged(new: &Value, old: &Value) -> Value {
    let mut spec = new.clone();
    let Some(map) = spec.as_object_mut() else { return spec };
    for key in ["containers", "initContainers"] {
        if let Some(Value::Array(containers)) = map.get_mut(key) {
            for (ctr, before) in containers.iter_mut().zip(list(old, key)) {
                if let Some(ctr) = ctr.as_object_mut() {
                    ctr.insert("image".into(), before.get("image").cloned().unwrap_or(Value::Null));
                }
            }
        }
    }
    for key in ["activeDeadlineSeconds", "tolerations", "schedulingGates"] {
        restore(map, old, key);
    }
    let old_grace = int(old, "terminationGracePeriodSeconds");
    if old_grace.is_some_and(|g| g < 0) && int(new, "terminationGracePeriodSeconds") == Some(1) {
        restore(map, old, "terminationGracePeriodSeconds");
    }
    spec
}

fn restore(map: &mut Map<String, Value>, old: &Value, key: &str) {
    match old.get(key) {
        Some(v) => map.insert(key.to_owned(), v.clone()),
        None => map.remove(key),
    };
}

/// A value as Go compares the decoded types semantically: absent, null, empty
/// strings, lists and maps are all the zero value.
pub(super) fn normalized(v: &Value) -> Value {
    crate::validation::value::without_zero_values(v, is_zero)
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

/// Every old toleration must still be there, changed at most in its seconds.
fn only_added_tolerations(new: &[Value], old: &[Value], path: &FieldPath) -> Vec<FieldError> {
    let without_seconds = |t: &Value| {
        let mut t = normalized(t);
        if let Some(map) = t.as_object_mut() {
            map.remove("tolerationSeconds");
        }
        t
    };
    for before in old {
        if !new.iter().any(|after| without_seconds(after) == without_seconds(before)) {
            return vec![FieldError::forbidden(path.as_str(), "existing toleration can not be modified except its tolerationSeconds")];
        }
    }
    scheduling::validate_tolerations(new, path)
}
