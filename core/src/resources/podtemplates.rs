//! PodTemplates (core/v1): a DELETE answers with the deleted object; the template
//! gets pod spec defaults and is checked as a pod's (at `template`).

use super::defaults::object;
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

    /// Upstream's strategy starts the generation at 1 and counts spec changes.
    fn tracks_generation(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Object) {
        if let Some(template) = object(obj, "template") {
            super::pod_spec::default_template(template);
        }
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
