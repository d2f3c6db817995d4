//! PodTemplates (core/v1): a DELETE answers with the deleted object; the template
//! gets pod spec defaults and is checked as a pod's (at `template`).

use super::columns::{self as cols, Column};
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

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::Laid { columns: COLUMNS, age_at: None }
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

pub(crate) const COLUMNS: &[Column] = &[
    Column { name: "Containers", kind: "string", description: "Names of each container in the template.", format: "", priority: 0, cell: |o| cols::container_names(o, &["template", "spec"]) },
    Column { name: "Images", kind: "string", description: "Images referenced by each container in the template.", format: "", priority: 0, cell: |o| cols::container_images(o, &["template", "spec"]) },
    Column { name: "Pod Labels", kind: "string", description: "The labels for the pod template.", format: "", priority: 0, cell: |o| cols::label_map_at(o, &["template", "metadata", "labels"]) },
];
