//! HorizontalPodAutoscalers (autoscaling/v2 and v1): no `metadata.generation`, as
//! upstream's strategy keeps none.
//!
//! Defaults: at least one replica, and an autoscaler with no metrics targets 80% CPU
//! utilization (in v1, whose objects upstream stores as v2 and reads back, as
//! `targetCPUUtilizationPercentage`). A v2 `behavior` gets every rule it leaves out:
//! scale up by 4 pods or 100% every 15 s with no stabilization, scale down by 100% every
//! 15 s after 300 s of stabilization, each choosing the largest change.
//!
//! The spec is checked as upstream's
//! `validateHorizontalPodAutoscalerSpec` checks its internal (v2) form: replica bounds,
//! the scale target, and Resource metrics' targets (a v1 `targetCPUUtilizationPercentage`
//! is the first metric, as conversion makes it); the other metric sources are checked
//! for their type only, `behavior` not yet.

use super::defaults::{is_empty, object, object_or_new, or_insert};
use super::Strategy;
use crate::rest::object::Object;
use crate::validation::{names, FieldError};
use serde_json::{json, Map, Value};

pub struct HorizontalPodAutoscalers;

impl Strategy for HorizontalPodAutoscalers {
    fn name(&self) -> &'static str {
        "horizontalpodautoscalers"
    }

    fn default(&self, obj: &mut Object) {
        let v1 = obj.get("apiVersion").and_then(Value::as_str) == Some("autoscaling/v1");
        let Some(spec) = object(obj, "spec") else {
            return;
        };
        or_insert(spec, "minReplicas", || json!(1));
        if v1 {
            or_insert(spec, "targetCPUUtilizationPercentage", || json!(80));
            return;
        }
        if is_empty(spec, "metrics") {
            spec.insert(
                "metrics".into(),
                json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]),
            );
        }
        if let Some(behavior) = object(spec, "behavior") {
            if let Some(up) = object_or_new(behavior, "scaleUp") {
                scaling_rules(up, 0, || json!([{"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]));
            }
            if let Some(down) = object_or_new(behavior, "scaleDown") {
                scaling_rules(down, 300, || json!([{"type": "Percent", "value": 100, "periodSeconds": 15}]));
            }
        }
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        validate(new)
    }
}

/// The metric source types, in upstream's (sorted) order, and the field each fills.
const SOURCES: [(&str, &str); 5] = [
    ("ContainerResource", "containerResource"),
    ("External", "external"),
    ("Object", "object"),
    ("Pods", "pods"),
    ("Resource", "resource"),
];

/// What the default CPU target is when none is given (upstream's defaulting).
const DEFAULT_CPU_UTILIZATION: i64 = 80;

fn validate(hpa: &Object) -> Vec<FieldError> {
    let null = Value::Null;
    let spec = hpa.get("spec").unwrap_or(&null);
    let min = spec.get("minReplicas").and_then(Value::as_i64).unwrap_or(1);
    let max = spec.get("maxReplicas").and_then(Value::as_i64).unwrap_or(0);
    let mut errs = Vec::new();
    let replicas = |n: i64| n.to_string();
    if min < 1 {
        errs.push(FieldError::invalid_unquoted("spec.minReplicas", &replicas(min), "must be greater than or equal to 1"));
    }
    if max < 1 {
        errs.push(FieldError::invalid_unquoted("spec.maxReplicas", &replicas(max), "must be greater than 0"));
    }
    if max < min {
        errs.push(FieldError::invalid_unquoted("spec.maxReplicas", &replicas(max), "must be greater than or equal to `minReplicas`"));
    }
    let target = scale_target(spec.get("scaleTargetRef").unwrap_or(&null));
    if !target.is_empty() {
        errs.extend(target);
    } else {
        errs.extend(metrics(&metrics_of(hpa), min));
    }
    errs
}

/// The metrics as upstream's internal type holds them: v1's CPU target becomes a
/// Resource metric; none given is the default CPU target.
fn metrics_of(hpa: &Object) -> Vec<Value> {
    let spec = hpa.get("spec");
    let cpu = |utilization: i64| json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": utilization}}});
    if hpa.get("apiVersion").and_then(Value::as_str) == Some("autoscaling/v1") {
        let utilization = spec.and_then(|s| s.get("targetCPUUtilizationPercentage")).and_then(Value::as_i64);
        return vec![cpu(utilization.unwrap_or(DEFAULT_CPU_UTILIZATION))];
    }
    match spec.and_then(|s| s.get("metrics")).and_then(Value::as_array) {
        Some(metrics) => metrics.clone(),
        None => vec![cpu(DEFAULT_CPU_UTILIZATION)],
    }
}

fn scale_target(target: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for field in ["kind", "name"] {
        let path = format!("spec.scaleTargetRef.{field}");
        match target.get(field).and_then(Value::as_str).unwrap_or("") {
            "" => errs.push(FieldError::required(&path, "")),
            value => errs.extend(names::path_segment(value).into_iter().map(|m| FieldError::invalid(&path, value, m))),
        }
    }
    if target.get("apiVersion").and_then(Value::as_str).unwrap_or("").is_empty() {
        errs.push(FieldError::invalid("spec.scaleTargetRef.apiVersion", "", "apiVersion must specify API group"));
    }
    errs
}

fn metrics(metrics: &[Value], min_replicas: i64) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut scales_to_zero = false;
    for (i, metric) in metrics.iter().enumerate() {
        let path = format!("spec.metrics[{i}]");
        errs.extend(metric_spec(metric, &path));
        let kind = metric.get("type").and_then(Value::as_str).unwrap_or("");
        scales_to_zero |= kind == "Object" || kind == "External";
    }
    if min_replicas == 0 && !scales_to_zero {
        errs.push(FieldError::forbidden("spec.metrics", "must specify at least one Object or External metric to support scaling to zero replicas"));
    }
    errs
}

fn metric_spec(metric: &Value, path: &str) -> Vec<FieldError> {
    let at = |child: &str| format!("{path}.{child}");
    let kind = metric.get("type").and_then(Value::as_str).unwrap_or("");
    let types: Vec<&str> = SOURCES.iter().map(|(t, _)| *t).collect();
    let mut errs = Vec::new();
    if kind.is_empty() {
        errs.push(FieldError::required(&at("type"), "must specify a metric source type"));
    }
    if !types.contains(&kind) {
        errs.push(FieldError::not_supported(&at("type"), kind, &types));
    }
    let present: Vec<&str> = SOURCES.iter().map(|(_, f)| *f).filter(|f| metric.get(*f).is_some_and(|v| !v.is_null())).collect();
    if let [only] = present.as_slice() {
        if *only == "resource" || *only == "containerResource" {
            errs.extend(resource_source(&metric[*only], &at(only)));
        }
    }
    match SOURCES.iter().find(|(t, _)| *t == kind) {
        Some((_, field)) => {
            if !present.contains(field) {
                errs.push(FieldError::required(&at(field), "must populate information for the given metric source"));
            }
            if present.len() > 1 {
                for other in present.iter().filter(|f| *f != field) {
                    errs.push(FieldError::forbidden(&at(other), "must populate the given metric source only"));
                }
            }
        }
        None => errs.push(FieldError::not_supported(&at("type"), kind, &types)),
    }
    errs
}

/// A resource metric names its resource and has a target: a utilization or an
/// average value, not both.
fn resource_source(source: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if source.get("name").and_then(Value::as_str).unwrap_or("").is_empty() {
        errs.push(FieldError::required(&format!("{path}.name"), "must specify a resource name"));
    }
    let null = Value::Null;
    let target = source.get("target").unwrap_or(&null);
    let at = |child: &str| format!("{path}.target.{child}");
    let utilization = target.get("averageUtilization").and_then(Value::as_i64);
    // Without a type the target's values are not looked at.
    match target.get("type").and_then(Value::as_str).unwrap_or("") {
        "" => errs.push(FieldError::required(&at("type"), "must specify a metric target type")),
        kind => {
            if !["Utilization", "Value", "AverageValue"].contains(&kind) {
                errs.push(FieldError::invalid(&at("type"), kind, "must be either Utilization, Value, or AverageValue"));
            }
            if let Some(u) = utilization.filter(|u| *u < 1) {
                errs.push(FieldError::invalid_unquoted(&at("averageUtilization"), &u.to_string(), "must be greater than 0"));
            }
        }
    }
    let average_value = target.get("averageValue").filter(|v| !v.is_null());
    match (utilization, average_value) {
        (None, None) => errs.push(FieldError::required(&at("averageUtilization"), "must set either a target raw value or a target utilization")),
        (Some(_), Some(_)) => errs.push(FieldError::forbidden(&at("averageValue"), "may not set both a target raw value and a target utilization")),
        _ => {}
    }
    errs
}

/// One direction's rules: what it leaves out is the direction's default.
fn scaling_rules(rules: &mut Map<String, Value>, stabilization: i64, policies: impl FnOnce() -> Value) {
    or_insert(rules, "stabilizationWindowSeconds", || json!(stabilization));
    or_insert(rules, "selectPolicy", || json!("Max"));
    or_insert(rules, "policies", policies);
}
