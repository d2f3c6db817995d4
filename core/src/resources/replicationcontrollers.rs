//! ReplicationControllers (core/v1): spec changes count in `metadata.generation`; a
//! `scale` subresource over a plain label-set selector, whose missing parent upstream
//! reports as `replicationcontrollers/scale` in autoscaling; selectable by
//! `status.replicas`. Deleted without a propagation policy, they orphan their pods, as
//! core/v1 always did (upstream's `DefaultGarbageCollectionPolicy`).

use super::{status_and_scale, Handler, ScaleRules, SelectorShape, Strategy};
use crate::rest::finalizers::GcPolicy;
use crate::selection::table::{FieldLabels, Rejection, SelectableFields, NAME, NAMESPACE};

static SELECTABLE_FIELDS: SelectableFields = SelectableFields {
    rejection: Rejection::NotSupported,
    fields: &[NAME, NAMESPACE, ("status.replicas", "status.replicas")],
};

pub struct ReplicationControllers;

impl Strategy for ReplicationControllers {
    fn name(&self) -> &'static str {
        "replicationcontrollers"
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn default_gc_policy(&self) -> GcPolicy {
        GcPolicy::OrphanDependents
    }

    fn subresource(&self, name: &str) -> Option<Handler> {
        status_and_scale(name, SCALE)
    }

    fn selectable_fields(&self) -> FieldLabels<'_> {
        FieldLabels::Builtin(&SELECTABLE_FIELDS)
    }
}

const SCALE: ScaleRules = ScaleRules {
    selector: SelectorShape::LabelSet,
    not_found_as: Some(("autoscaling", "replicationcontrollers/scale")),
};
