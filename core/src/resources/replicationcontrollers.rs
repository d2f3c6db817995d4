//! ReplicationControllers (core/v1): spec changes count in `metadata.generation`; a
//! `scale` subresource over a plain label-set selector, whose missing parent upstream
//! reports as `replicationcontrollers/scale` in autoscaling; selectable by
//! `status.replicas`. Deleted without a propagation policy, they orphan their pods, as
//! core/v1 always did (upstream's `DefaultGarbageCollectionPolicy`). Defaults: one
//! replica, and the template's labels as selector and labels when those are empty.

use super::columns::{self as cols, Column};
use super::defaults::{is_empty, labels_at, object, or_insert};
use super::{status_and_scale, Handler, ScaleRules, SelectorShape, Strategy};
use crate::rest::object::{meta_mut, Object};
use serde_json::{json, Value};
use crate::rest::finalizers::GcPolicy;
use crate::validation::pod_template::{replicated_template, Selector};
use crate::validation::value::{int, non_negative};
use crate::validation::{FieldError, FieldPath};
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

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::Builtin(COLUMNS)
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

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate_spec(new.get("spec").unwrap_or(&Value::Null))
    }

    fn validate_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        validate_spec(new.get("spec").unwrap_or(&Value::Null))
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

/// Upstream's `ValidateReplicationControllerSpec`. The selector is a plain label set;
/// absent, defaulting takes the template's labels.
fn validate_spec(spec: &Value) -> Vec<FieldError> {
    let path = FieldPath::new("spec");
    let template = spec.get("template").filter(|t| !t.is_null());
    let template_labels = template.and_then(|t| t.get("metadata")).and_then(|m| m.get("labels"));
    let labels = spec.get("selector").filter(|s| !s.is_null()).or(template_labels).cloned().unwrap_or(Value::Null);
    let mut errs = non_negative(&path.child("minReadySeconds"), int(spec, "minReadySeconds"));
    if labels.as_object().is_none_or(|l| l.is_empty()) {
        errs.push(FieldError::required(path.child("selector").as_str(), ""));
    }
    errs.extend(non_negative(&path.child("replicas"), int(spec, "replicas")));
    let selector = Selector::of(Some(&json!({ "matchLabels": labels })));
    errs.extend(replicated_template(template, &selector, &path.child("template"), "ReplicationController"));
    errs
}

pub(crate) const COLUMNS: &[Column] = &[
    Column { name: "Desired", kind: "integer", description: "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller", format: "", priority: 0, cell: |o| json!(cols::int_at(o, &["spec", "replicas"])) },
    Column { name: "Current", kind: "integer", description: "Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller", format: "", priority: 0, cell: |o| json!(cols::int_at(o, &["status", "replicas"])) },
    Column { name: "Ready", kind: "integer", description: "The number of ready replicas for this replication controller.", format: "", priority: 0, cell: |o| json!(cols::int_at(o, &["status", "readyReplicas"])) },
    Column { name: "Containers", kind: "string", description: "Names of each container in the template.", format: "", priority: 1, cell: |o| cols::container_names(o, cols::TEMPLATE) },
    Column { name: "Images", kind: "string", description: "Images referenced by each container in the template.", format: "", priority: 1, cell: |o| cols::container_images(o, cols::TEMPLATE) },
    Column { name: "Selector", kind: "string", description: "Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys and values that must match in order to be controlled by this replication controller, if empty defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors", format: "", priority: 1, cell: |o| cols::label_map_at(o, &["spec", "selector"]) },
];
