//! PodTemplates (core/v1): the template checked as a pod's (at `template`); a DELETE
//! answers with the deleted object.

use super::Strategy;
use crate::rest::object::Object;
use crate::validation::pod_template::validate_template;
use crate::validation::{FieldError, FieldPath};
use serde_json::Value;

fn validate(obj: &Object) -> Vec<FieldError> {
    validate_template(obj.get("template").unwrap_or(&Value::Null), &[], &FieldPath::new("template"))
}

pub struct PodTemplates;

impl Strategy for PodTemplates {
    fn name(&self) -> &'static str {
        "podtemplates"
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn delete_returns_object(&self) -> bool {
        true
    }
}
