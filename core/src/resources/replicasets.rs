//! ReplicaSets (apps/v1): spec changes count in `metadata.generation`; a `scale`
//! subresource, whose missing parent upstream reports as `replicasets/scale`.

use super::{status_and_scale, Handler, ScaleRules, SelectorShape, Strategy};

pub struct ReplicaSets;

impl Strategy for ReplicaSets {
    fn name(&self) -> &'static str {
        "replicasets"
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
    not_found_as: Some(("apps", "replicasets/scale")),
};
