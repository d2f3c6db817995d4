//! ReplicaSets (apps/v1): spec changes count in `metadata.generation`; a `scale`
//! subresource, whose missing parent upstream reports as `replicasets/scale`. Defaults:
//! one replica.

use super::columns::{self as cols, Column};
use crate::rest::object::Object;
use crate::validation::pod_template::{immutable_selector, replicated_template, required_selector};
use crate::validation::value::{int, non_negative};
use crate::validation::{FieldError, FieldPath};
use serde_json::{Value, json};

fn spec_of(obj: &Object) -> &Value {
    obj.get("spec").unwrap_or(&Value::Null)
}
use super::defaults::{object, or_insert};
use super::{status_and_scale, Handler, ScaleRules, SelectorShape, Strategy};

pub struct ReplicaSets;

impl Strategy for ReplicaSets {
    fn name(&self) -> &'static str {
        "replicasets"
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::Builtin(COLUMNS)
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

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate_spec(spec_of(new))
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let mut errs = validate_spec(spec_of(new));
        errs.extend(immutable_selector(spec_of(new), spec_of(old), &FieldPath::new("spec")));
        errs
    }

    fn subresource(&self, name: &str) -> Option<Handler> {
        status_and_scale(name, SCALE)
    }
}

const SCALE: ScaleRules = ScaleRules {
    selector: SelectorShape::LabelSelector,
    not_found_as: Some(("apps", "replicasets/scale")),
};

/// Upstream's `ValidateReplicaSetSpec`.
fn validate_spec(spec: &Value) -> Vec<FieldError> {
    let path = FieldPath::new("spec");
    let mut errs = non_negative(&path.child("replicas"), int(spec, "replicas"));
    errs.extend(non_negative(&path.child("minReadySeconds"), int(spec, "minReadySeconds")));
    // Upstream words an empty ReplicaSet selector as it does a Deployment's.
    let (selector_errs, selector) = required_selector(spec, &path, "deployment");
    errs.extend(selector_errs);
    // A missing template is the zero template: checked as one.
    let template = spec.get("template").unwrap_or(&Value::Null);
    errs.extend(replicated_template(Some(template), &selector, &path.child("template"), "ReplicaSet"));
    errs
}

pub(crate) const COLUMNS: &[Column] = &[
    Column { name: "Desired", kind: "integer", description: "Replicas is the number of desired pods. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset", format: "", priority: 0, cell: |o| json!(cols::int_at(o, &["spec", "replicas"])) },
    Column { name: "Current", kind: "integer", description: "Replicas is the most recently observed number of non-terminating pods. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset", format: "", priority: 0, cell: |o| json!(cols::int_at(o, &["status", "replicas"])) },
    Column { name: "Ready", kind: "integer", description: "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.", format: "", priority: 0, cell: |o| json!(cols::int_at(o, &["status", "readyReplicas"])) },
    Column { name: "Containers", kind: "string", description: "Names of each container in the template.", format: "", priority: 1, cell: |o| cols::container_names(o, cols::TEMPLATE) },
    Column { name: "Images", kind: "string", description: "Images referenced by each container in the template.", format: "", priority: 1, cell: |o| cols::container_images(o, cols::TEMPLATE) },
    Column { name: "Selector", kind: "string", description: "Selector is a label query over pods that should match the replica count. If the selector is empty, it is defaulted to the labels present on the pod template. Label keys and values that must match in order to be controlled by this replica set. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors", format: "", priority: 1, cell: |o| cols::label_selector_at(o, &["spec", "selector"]) },
];
