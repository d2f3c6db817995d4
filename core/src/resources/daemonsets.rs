//! DaemonSets (apps/v1): spec changes count in `metadata.generation`. Defaults: a
//! rolling update of one pod at a time without surge, 10 revisions kept. Upstream's
//! strategy also counts template changes in the `deprecated.daemonset.template.generation`
//! annotation, which `kubectl rollout` reads. The template is checked as a pod's,
//! selected by the (immutable) selector, and updated by a valid strategy.

use super::columns::{self as cols, Column};
use super::defaults::{object, object_or_new, or_insert, or_insert_str};
use super::Strategy;
use crate::rest::object::{meta_mut, Object};
use crate::validation::pod_template::{
    immutable_selector, int_or_percent, int_or_percent_value, invalid_selector, not_over_100_percent, restart_always,
    selector_is_empty, selector_matches_template, validate_template, Selector,
};
use crate::validation::value::{int, non_negative, text};
use crate::validation::{FieldError, FieldPath};
use serde_json::{json, Value};

/// The annotation upstream keeps the template's generation in.
const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

pub struct DaemonSets;

impl Strategy for DaemonSets {
    fn name(&self) -> &'static str {
        "daemonsets"
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::Builtin(COLUMNS)
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Object) {
        // The v1 form of a template generation every DaemonSet has: upstream's
        // conversion always writes it ("0" until the strategy counts the first).
        let has_generation = obj
            .get("metadata")
            .and_then(|m| m.get("annotations"))
            .is_some_and(|a| a.get(TEMPLATE_GENERATION).is_some());
        if !has_generation {
            annotate_template_generation(obj, 0);
        }
        let Some(spec) = object(obj, "spec") else {
            return;
        };
        if let Some(strategy) = object_or_new(spec, "updateStrategy") {
            or_insert_str(strategy, "type", "RollingUpdate");
            if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
                if let Some(rolling) = object_or_new(strategy, "rollingUpdate") {
                    or_insert(rolling, "maxUnavailable", || json!(1));
                    or_insert(rolling, "maxSurge", || json!(0));
                }
            }
        }
        or_insert(spec, "revisionHistoryLimit", || json!(10));
        if let Some(template) = object(spec, "template") {
            super::pod_spec::default_template(template);
        }
    }

    fn prepare_for_create(&self, new: &mut Object, has_status: bool) {
        if has_status {
            super::reset_status(new);
        }
        annotate_template_generation(new, 1);
    }

    fn prepare_for_update(&self, new: &mut Object, old: &Object, has_status: bool) {
        if has_status {
            super::keep_status(new, old);
        }
        // A template change counts one more template generation; otherwise the stored
        // count stays.
        let kept = old
            .get("metadata")
            .and_then(|m| m.get("annotations"))
            .and_then(|a| a.get(TEMPLATE_GENERATION))
            .cloned();
        let changed = template(new) != template(old);
        if changed {
            let count = kept.as_ref().and_then(Value::as_str).and_then(|c| c.parse::<i64>().ok()).unwrap_or(0);
            annotate_template_generation(new, count + 1);
        } else if let Some(kept) = kept {
            annotations(new).insert(TEMPLATE_GENERATION.into(), kept);
        }
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate_spec(spec_of(new))
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let mut errs = immutable_selector(spec_of(new), spec_of(old), &FieldPath::new("spec"));
        errs.extend(validate_spec(spec_of(new)));
        errs
    }
}

fn spec_of(obj: &Object) -> &Value {
    obj.get("spec").unwrap_or(&Value::Null)
}

/// Upstream's `ValidateDaemonSetSpec`.
fn validate_spec(spec: &Value) -> Vec<FieldError> {
    let path = FieldPath::new("spec");
    let template = spec.get("template").unwrap_or(&Value::Null);
    let template_path = path.child("template");
    let given = spec.get("selector").filter(|s| !s.is_null());
    let mut errs = selector_matches_template(&Selector::of(given), template, &template_path);
    if given.is_some_and(selector_is_empty) {
        errs.push(invalid_selector(&path.child("selector"), given, "empty selector is invalid for daemonset"));
    }
    errs.extend(validate_template(template, &[], &template_path));
    errs.extend(restart_always(template, &template_path));
    if let Some(deadline) = template.get("spec").and_then(|s| s.get("activeDeadlineSeconds")).filter(|v| !v.is_null()) {
        let at = template_path.child("spec").child("activeDeadlineSeconds");
        errs.push(FieldError::invalid_json(at.as_str(), deadline, "activeDeadlineSeconds in DaemonSet is not Supported"));
    }
    errs.extend(non_negative(&path.child("minReadySeconds"), int(spec, "minReadySeconds")));
    errs.extend(non_negative(&path.child("templateGeneration"), int(spec, "templateGeneration")));
    errs.extend(update_strategy(spec.get("updateStrategy").unwrap_or(&Value::Null), &path.child("updateStrategy")));
    errs.extend(non_negative(&path.child("revisionHistoryLimit"), int(spec, "revisionHistoryLimit")));
    errs
}

/// Absent, the type is RollingUpdate with one pod unavailable and none surging.
fn update_strategy(strategy: &Value, path: &FieldPath) -> Vec<FieldError> {
    match text(strategy, "type") {
        "OnDelete" => Vec::new(),
        "" | "RollingUpdate" => {
            let rolling = strategy.get("rollingUpdate").filter(|r| !r.is_null()).unwrap_or(&Value::Null);
            rolling_update(rolling, &path.child("rollingUpdate"))
        }
        other => vec![FieldError::not_supported(path.as_str(), other, &["RollingUpdate", "OnDelete"])],
    }
}

fn rolling_update(rolling: &Value, path: &FieldPath) -> Vec<FieldError> {
    let (one, zero) = (Value::from(1), Value::from(0));
    let unavailable = rolling.get("maxUnavailable").filter(|v| !v.is_null()).unwrap_or(&one);
    let surge = rolling.get("maxSurge").filter(|v| !v.is_null()).unwrap_or(&zero);
    let mut errs = int_or_percent(Some(unavailable), &path.child("maxUnavailable"));
    errs.extend(int_or_percent(Some(surge), &path.child("maxSurge")));
    errs.extend(not_over_100_percent(Some(unavailable), &path.child("maxUnavailable")));
    errs.extend(not_over_100_percent(Some(surge), &path.child("maxSurge")));
    match (int_or_percent_value(Some(unavailable)).0 != 0, int_or_percent_value(Some(surge)).0 != 0) {
        (true, true) => {
            errs.push(FieldError::invalid_json(path.child("maxSurge").as_str(), surge, "may not be set when maxUnavailable is non-zero"))
        }
        (false, false) => errs.push(FieldError::required(path.child("maxUnavailable").as_str(), "cannot be 0 when maxSurge is 0")),
        _ => {}
    }
    errs
}

fn template(obj: &Object) -> Option<&Value> {
    obj.get("spec").and_then(|s| s.get("template"))
}

fn annotations(obj: &mut Object) -> &mut serde_json::Map<String, Value> {
    let meta = meta_mut(obj);
    if !meta.get("annotations").is_some_and(Value::is_object) {
        meta.insert("annotations".into(), json!({}));
    }
    meta.get_mut("annotations").and_then(Value::as_object_mut).expect("annotations were just made a map")
}

fn annotate_template_generation(obj: &mut Object, generation: i64) {
    annotations(obj).insert(TEMPLATE_GENERATION.into(), Value::String(generation.to_string()));
}

pub(crate) const COLUMNS: &[Column] = &[
    Column { name: "Desired", kind: "integer", description: "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod). More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/", format: "", priority: 0, cell: |o| json!(cols::int_at(o, &["status", "desiredNumberScheduled"])) },
    Column { name: "Current", kind: "integer", description: "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/", format: "", priority: 0, cell: |o| json!(cols::int_at(o, &["status", "currentNumberScheduled"])) },
    Column { name: "Ready", kind: "integer", description: "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready.", format: "", priority: 0, cell: |o| json!(cols::int_at(o, &["status", "numberReady"])) },
    Column { name: "Up-to-date", kind: "integer", description: "The total number of nodes that are running updated daemon pod", format: "", priority: 0, cell: |o| json!(cols::int_at(o, &["status", "updatedNumberScheduled"])) },
    Column { name: "Available", kind: "integer", description: "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)", format: "", priority: 0, cell: |o| json!(cols::int_at(o, &["status", "numberAvailable"])) },
    Column { name: "Node Selector", kind: "string", description: "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/", format: "", priority: 0, cell: |o| cols::label_map_at(o, &["spec", "template", "spec", "nodeSelector"]) },
    Column { name: "Containers", kind: "string", description: "Names of each container in the template.", format: "", priority: 1, cell: |o| cols::container_names(o, cols::TEMPLATE) },
    Column { name: "Images", kind: "string", description: "Images referenced by each container in the template.", format: "", priority: 1, cell: |o| cols::container_images(o, cols::TEMPLATE) },
    Column { name: "Selector", kind: "string", description: "A label query over pods that are managed by the daemon set. Must match in order to be controlled. If empty, defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors", format: "", priority: 1, cell: |o| cols::label_selector_at(o, &["spec", "selector"]) },
];
