//! Deployments (apps/v1): spec changes count in `metadata.generation`; a `scale`
//! subresource; Ready, Up-to-date and Available columns. Defaults (apps/v1): one
//! replica, a 25%/25% rolling update, 10 revisions kept, a 600 s progress deadline.

use super::defaults::{object, object_or_new, or_insert, or_insert_str};
use super::{status_and_scale, Handler, ScaleRules, SelectorShape, Strategy};
use crate::rest::object::Object;
use super::columns::{at, container_images, container_names, int_at, label_selector_at, Column, Columns, TEMPLATE};
use serde_json::{json, Value};
use crate::validation::pod_template::{immutable_selector, replicated_template, required_selector, int_or_percent, int_or_percent_value, not_over_100_percent};
use crate::validation::value::{int, non_negative, invalid_int, text};
use crate::validation::{FieldError, FieldPath};

fn spec_of(obj: &Object) -> &Value {
    obj.get("spec").unwrap_or(&Value::Null)
}

const COLUMNS: &[Column] = &[
    Column { name: "Ready", kind: "string", description: "Number of the pod with ready state", format: "", priority: 0, cell: |o| json!(format!("{}/{}", int_at(o, &["status", "readyReplicas"]), at(o, &["spec", "replicas"]).and_then(Value::as_i64).unwrap_or(1))) },
    Column { name: "Up-to-date", kind: "string", description: "Total number of non-terminating pods targeted by this deployment that have the desired template spec.", format: "", priority: 0, cell: |o| json!(int_at(o, &["status", "updatedReplicas"])) },
    Column { name: "Available", kind: "string", description: "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment.", format: "", priority: 0, cell: |o| json!(int_at(o, &["status", "availableReplicas"])) },
    Column { name: "Containers", kind: "string", description: "Names of each container in the template.", format: "", priority: 1, cell: |o| container_names(o, TEMPLATE) },
    Column { name: "Images", kind: "string", description: "Images referenced by each container in the template.", format: "", priority: 1, cell: |o| container_images(o, TEMPLATE) },
    Column { name: "Selector", kind: "string", description: "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.", format: "", priority: 1, cell: |o| label_selector_at(o, &["spec", "selector"]) },
];

pub struct Deployments;

impl Strategy for Deployments {
    fn name(&self) -> &'static str {
        "deployments"
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Object) {
        let Some(spec) = object(obj, "spec") else {
            return;
        };
        or_insert(spec, "replicas", || json!(1));
        if let Some(strategy) = object_or_new(spec, "strategy") {
            or_insert_str(strategy, "type", "RollingUpdate");
            if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
                if let Some(rolling) = object_or_new(strategy, "rollingUpdate") {
                    or_insert(rolling, "maxUnavailable", || json!("25%"));
                    or_insert(rolling, "maxSurge", || json!("25%"));
                }
            }
        }
        or_insert(spec, "revisionHistoryLimit", || json!(10));
        or_insert(spec, "progressDeadlineSeconds", || json!(600));
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

    fn columns(&self) -> Columns<'_> {
        Columns::Builtin(COLUMNS)
    }
}

const SCALE: ScaleRules = ScaleRules {
    selector: SelectorShape::LabelSelector,
    not_found_as: None,
};

/// Upstream's `ValidateDeploymentSpec`.
fn validate_spec(spec: &Value) -> Vec<FieldError> {
    let path = FieldPath::new("spec");
    let mut errs = non_negative(&path.child("replicas"), int(spec, "replicas"));
    let (selector_errs, selector) = required_selector(spec, &path, "deployment");
    errs.extend(selector_errs);
    let template = spec.get("template").unwrap_or(&Value::Null);
    errs.extend(replicated_template(Some(template), &selector, &path.child("template"), "Deployment"));
    errs.extend(strategy(spec.get("strategy").unwrap_or(&Value::Null), &path.child("strategy")));
    let min_ready = int(spec, "minReadySeconds").unwrap_or(0);
    errs.extend(non_negative(&path.child("minReadySeconds"), Some(min_ready)));
    errs.extend(non_negative(&path.child("revisionHistoryLimit"), int(spec, "revisionHistoryLimit")));
    if let Some(deadline) = int(spec, "progressDeadlineSeconds") {
        let at = path.child("progressDeadlineSeconds");
        errs.extend(non_negative(&at, Some(deadline)));
        if deadline <= min_ready {
            errs.push(invalid_int(&at, deadline, "must be greater than minReadySeconds"));
        }
    }
    errs
}

/// Upstream's `ValidateDeploymentStrategy`: an absent type is defaulted to
/// RollingUpdate, and its absent parameters to 25%.
fn strategy(strategy: &Value, path: &FieldPath) -> Vec<FieldError> {
    let rolling = strategy.get("rollingUpdate").filter(|r| !r.is_null());
    match text(strategy, "type") {
        "Recreate" if rolling.is_some() => vec![FieldError::forbidden(
            path.child("rollingUpdate").as_str(),
            "may not be specified when strategy `type` is 'Recreate'",
        )],
        "Recreate" => Vec::new(),
        "" | "RollingUpdate" => rolling.map(|r| rolling_update(r, &path.child("rollingUpdate"))).unwrap_or_default(),
        other => vec![FieldError::not_supported(path.as_str(), other, &["Recreate", "RollingUpdate"])],
    }
}

fn rolling_update(rolling: &Value, path: &FieldPath) -> Vec<FieldError> {
    let quarter = Value::from("25%");
    let unavailable = rolling.get("maxUnavailable").filter(|v| !v.is_null()).unwrap_or(&quarter);
    let surge = rolling.get("maxSurge").filter(|v| !v.is_null()).unwrap_or(&quarter);
    let mut errs = int_or_percent(Some(unavailable), &path.child("maxUnavailable"));
    errs.extend(int_or_percent(Some(surge), &path.child("maxSurge")));
    if int_or_percent_value(Some(unavailable)).0 == 0 && int_or_percent_value(Some(surge)).0 == 0 {
        errs.push(FieldError::invalid_json(path.child("maxUnavailable").as_str(), unavailable, "may not be 0 when `maxSurge` is 0"));
    }
    errs.extend(not_over_100_percent(Some(unavailable), &path.child("maxUnavailable")));
    errs
}
