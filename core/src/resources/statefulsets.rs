//! StatefulSets (apps/v1): spec changes count in `metadata.generation`; a `scale`
//! subresource.

use super::{status_and_scale, Handler, ScaleRules, SelectorShape, Strategy};

pub struct StatefulSets;

impl Strategy for StatefulSets {
    fn name(&self) -> &'static str {
        "statefulsets"
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn subresource(&self, name: &str) -> Option<Handler> {
        status_and_scale(name, SCALE)
    }
}

const SCALE: ScaleRules = ScaleRules {
    selector: SelectorShape::LabelSelector,
    not_found_as: None,
};
