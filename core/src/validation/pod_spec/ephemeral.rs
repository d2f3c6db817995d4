//! What a write to `pods/ephemeralcontainers` may do (upstream's
//! `ValidatePodEphemeralContainersUpdate`): the whole spec is checked as any pod's, a
//! static pod takes none, and ephemeral containers once added stay as they are.

use super::update::normalized;
use super::{validate, Context};
use crate::validation::value::{list, text};
use crate::validation::{FieldError, FieldPath};
use serde_json::{Map, Value};

/// The annotation the kubelet marks a static pod's mirror with.
pub(super) const MIRROR_POD: &str = "kubernetes.io/config.mirror";

pub fn validate_ephemeral_containers_update(new: &Map<String, Value>, old: &Map<String, Value>) -> Vec<FieldError> {
    let null = Value::Null;
    let new_spec = new.get("spec").unwrap_or(&null);
    let mut errs = validate(new_spec, &[], &FieldPath::new("spec"), Context::Pod);
    if is_mirror(old) {
        // Upstream answers this alone.
        return vec![FieldError::forbidden("[]", "static pods do not support ephemeral containers")];
    }
    let path = FieldPath::new("spec").child("ephemeralContainers");
    let written = list(new_spec, "ephemeralContainers");
    let old_spec = old.get("spec").unwrap_or(&null);
    for before in list(old_spec, "ephemeralContainers") {
        let name = text(before, "name");
        match written.iter().find(|c| text(c, "name") == name) {
            None => errs.push(FieldError::forbidden(
                path.as_str(),
                format!("existing ephemeral containers {name:?} may not be removed\n"),
            )),
            // Upstream appends a diff of its internal Go types, which this does not reproduce.
            Some(after) if normalized(after) != normalized(before) => errs.push(FieldError::forbidden(
                path.as_str(),
                format!("existing ephemeral containers {name:?} may not be changed\n"),
            )),
            Some(_) => {}
        }
    }
    errs
}

/// Whether `pod` is the mirror of a static pod.
pub(super) fn is_mirror(pod: &Map<String, Value>) -> bool {
    pod.get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(MIRROR_POD))
        .is_some()
}
