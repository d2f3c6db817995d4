//! DaemonSets (apps/v1): spec changes count in `metadata.generation`; the template
//! is checked as a pod's, selected by the (immutable) selector, and updated by a
//! valid strategy.

use super::Strategy;
use crate::rest::object::Object;
use crate::validation::pod_template::{
    immutable_selector, int_or_percent, int_or_percent_value, invalid_selector, not_over_100_percent, restart_always,
    selector_is_empty, selector_matches_template, validate_template, Selector,
};
use crate::validation::value::{int, non_negative, text};
use crate::validation::{FieldError, FieldPath};
use serde_json::Value;

pub struct DaemonSets;

impl Strategy for DaemonSets {
    fn name(&self) -> &'static str {
        "daemonsets"
    }

    fn tracks_generation(&self) -> bool {
        true
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
