//! PodTemplates (core/v1): a DELETE answers with the deleted object; the template
//! gets pod spec defaults.

use super::defaults::object;
use super::Strategy;
use crate::rest::object::Object;

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

    fn delete_returns_object(&self) -> bool {
        true
    }
}
