//! ReplicationControllers (core/v1): spec changes count in `metadata.generation`; a
//! `scale` subresource over a plain label-set selector, whose missing parent upstream
//! reports as `replicationcontrollers/scale` in autoscaling; selectable by
//! `status.replicas`. Deleted without a propagation policy, they orphan their pods, as
//! core/v1 always did (upstream's `DefaultGarbageCollectionPolicy`). Defaults: one
//! replica, and the template's labels as selector and labels when those are empty.

use super::defaults::{is_empty, labels_at, object, or_insert};
use super::{status_and_scale, Handler, ScaleRules, SelectorShape, Strategy};
use crate::rest::object::{meta_mut, Object};
use serde_json::json;
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

    fn default(&self, obj: &mut Object) {
        let unlabelled = obj.get("metadata").and_then(|m| m.as_object()).is_none_or(|m| is_empty(m, "labels"));
        let unselected = obj.get("spec").and_then(|s| s.as_object()).is_some_and(|s| is_empty(s, "selector"));
        // Copied only when one of them needs it.
        let labels = (unlabelled || unselected)
            .then(|| labels_at(obj, &["spec", "template", "metadata", "labels"]))
            .flatten();
        if let (true, Some(labels)) = (unlabelled, &labels) {
            meta_mut(obj).insert("labels".into(), labels.clone());
        }
        let Some(spec) = object(obj, "spec") else {
            return;
        };
        if let (true, Some(labels)) = (unselected, labels) {
            spec.insert("selector".into(), labels);
        }
        or_insert(spec, "replicas", || json!(1));
        if let Some(template) = object(spec, "template") {
            super::pod_spec::default_template(template);
        }
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
