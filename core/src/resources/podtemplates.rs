//! PodTemplates (core/v1): a DELETE answers with the deleted object.

use super::Strategy;

pub struct PodTemplates;

impl Strategy for PodTemplates {
    fn name(&self) -> &'static str {
        "podtemplates"
    }

    fn delete_returns_object(&self) -> bool {
        true
    }
}
