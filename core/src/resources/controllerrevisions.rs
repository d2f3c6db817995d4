//! ControllerRevisions (apps/v1): a snapshot of a workload's template that its
//! controller keeps to roll back to. Its revision is not negative and its data is a
//! JSON object, which never changes (upstream's `ValidateControllerRevision*`).

use super::Strategy;
use crate::rest::object::Object;
use crate::validation::value::non_negative;
use crate::validation::{FieldError, FieldPath};
use serde_json::Value;

pub struct ControllerRevisions;

impl Strategy for ControllerRevisions {
    fn name(&self) -> &'static str {
        "controllerrevisions"
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let mut errs = validate(new);
        let data = |o: &Object| o.get("data").cloned().unwrap_or(Value::Null);
        if data(new) != data(old) {
            errs.push(FieldError::immutable("data", &data(new)));
        }
        errs
    }
}

fn validate(revision: &Object) -> Vec<FieldError> {
    // The recorded server reports the revision before the data.
    let mut errs = non_negative(&FieldPath::new("revision"), revision.get("revision").and_then(Value::as_i64));
    match revision.get("data") {
        None | Some(Value::Null) => errs.push(FieldError::required("data", "data is mandatory")),
        Some(Value::Object(_)) => {}
        Some(_) => errs.push(FieldError::required("data", "data must be a valid JSON object")),
    }
    errs
}
