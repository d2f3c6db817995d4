//! ReplicaSets (apps/v1): spec changes count in `metadata.generation`; a `scale`
//! subresource, whose missing parent upstream reports as `replicasets/scale`. Defaults:
//! one replica.

use super::defaults::{object, or_insert};
use super::{status_and_scale, Handler, ScaleRules, SelectorShape, Strategy};
use crate::rest::object::Object;
use serde_json::json;

pub struct ReplicaSets;

impl Strategy for ReplicaSets {
    fn name(&self) -> &'static str {
        "replicasets"
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Object) {
        let Some(spec) = object(obj, "spec") else {
            return;
        };
        or_insert(spec, "replicas", || json!(1));
        if let Some(template) = object(spec, "template") {
            super::pod_spec::default_template(template);
        }
    }

    fn subresource(&self, name: &str) -> Option<Handler> {
        status_and_scale(name, SCALE)
    }
}

const SCALE: ScaleRules = ScaleRules {
    selector: SelectorShape::LabelSelector,
    not_found_as: Some(("apps", "replicasets/scale")),
};
