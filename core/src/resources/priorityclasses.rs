//! PriorityClasses (scheduling.k8s.io/v1). Defaults: pods of the class preempt lower
//! priorities.

use super::defaults::or_insert;
use super::Strategy;
use crate::rest::object::Object;
use serde_json::json;

pub struct PriorityClasses;

impl Strategy for PriorityClasses {
    fn name(&self) -> &'static str {
        "priorityclasses"
    }

    /// Upstream's strategy starts the generation at 1 and counts spec changes.
    fn tracks_generation(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Object) {
        or_insert(obj, "preemptionPolicy", || json!("PreemptLowerPriority"));
    }
}
