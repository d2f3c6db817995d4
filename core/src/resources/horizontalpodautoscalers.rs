//! HorizontalPodAutoscalers (autoscaling/v2 and v1): no `metadata.generation`, as
//! upstream's strategy keeps none.
//!
//! Defaults: at least one replica, and an autoscaler with no metrics targets 80% CPU
//! utilization (in v1, whose objects upstream stores as v2 and reads back, as
//! `targetCPUUtilizationPercentage`, unless the metrics annotation holds others).
//! A v1 autoscaler's Table cells are computed on its v2 form, as upstream prints its
//! internal object: the CPU fields and the metrics v1 keeps in annotations. A v2 `behavior` gets every rule it leaves out:
//! scale up by 4 pods or 100% every 15 s with no stabilization, scale down by 100% every
//! 15 s after 300 s of stabilization, each choosing the largest change.
//!
//! The spec is checked as upstream's
//! `validateHorizontalPodAutoscalerSpec` checks its internal (v2) form: replica bounds,
//! the scale target, and Resource metrics' targets (a v1 `targetCPUUtilizationPercentage`
//! is the first metric, as conversion makes it); the other metric sources are checked
//! for their type only, `behavior` not yet.

use super::columns::{self as cols, Column};
use super::defaults::{is_empty, object, object_or_new, or_insert};
use super::Strategy;
use crate::rest::object::Object;
use crate::validation::quantity::Quantity;
use crate::validation::{names, FieldError};
use serde_json::{json, Map, Value};

pub struct HorizontalPodAutoscalers;

impl Strategy for HorizontalPodAutoscalers {
    fn name(&self) -> &'static str {
        "horizontalpodautoscalers"
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::Builtin(COLUMNS)
    }

    fn default(&self, obj: &mut Object) {
        let v1 = is_v1(obj);
        // A v1 autoscaler whose other metrics (in their annotation) are none targets
        // the default CPU utilization, as upstream's conversion makes it.
        let other_metrics = v1 && !annotated(obj, METRICS_ANNOTATION).is_empty();
        let Some(spec) = object(obj, "spec") else {
            return;
        };
        or_insert(spec, "minReplicas", || json!(1));
        if v1 {
            if !other_metrics {
                or_insert(spec, "targetCPUUtilizationPercentage", || json!(DEFAULT_CPU_UTILIZATION));
            }
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

pub(crate) const COLUMNS: &[Column] = &[
    Column { name: "Reference", kind: "string", format: "", description: "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.", priority: 0, cell: |o| serde_json::json!(format!("{}/{}", text(o, &["spec", "scaleTargetRef", "kind"]), text(o, &["spec", "scaleTargetRef", "name"]))) },
    Column { name: "Targets", kind: "string", format: "", description: "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond.", priority: 0, cell: targets },
    Column { name: "MinPods", kind: "string", format: "", description: "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available.", priority: 0, cell: |o| serde_json::json!(cols::at(o, &["spec", "minReplicas"]).and_then(Value::as_i64).map_or("<unset>".to_owned(), |n| n.to_string())) },
    Column { name: "MaxPods", kind: "string", format: "", description: "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas.", priority: 0, cell: |o| serde_json::json!(cols::int_at(o, &["spec", "maxReplicas"])) },
    Column { name: "Replicas", kind: "string", format: "", description: "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.", priority: 0, cell: |o| serde_json::json!(cols::int_at(o, &["status", "currentReplicas"])) },
];

fn text<'a>(obj: &'a Object, path: &[&str]) -> &'a str {
    cols::at(obj, path).and_then(Value::as_str).unwrap_or("")
}

/// TARGETS: each metric's current value over its target, the first two, as
/// upstream's `formatHPAMetrics`; a v1 autoscaler's read as v2 holds them.
fn targets(hpa: &Object) -> Value {
    if is_v1(hpa) {
        let (specs, statuses) = v1_metrics(hpa);
        return formatted_targets(&specs, &statuses);
    }
    let specs = cols::at(hpa, &["spec", "metrics"]).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let statuses = cols::at(hpa, &["status", "currentMetrics"]).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    formatted_targets(specs, statuses)
}

/// Where a v1 autoscaler keeps the metrics v1 has no field for (upstream's
/// `MetricSpecsAnnotation`), and their current values (`MetricStatusesAnnotation`),
/// each a JSON list in autoscaling/v2beta1's shape.
const METRICS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/metrics";
const CURRENT_METRICS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/current-metrics";

fn is_v1(hpa: &Object) -> bool {
    hpa.get("apiVersion").and_then(Value::as_str) == Some("autoscaling/v1")
}

/// The list a v1 annotation holds; none when it is absent or not a list of objects
/// (which upstream's conversion would refuse).
fn annotated(hpa: &Object, key: &str) -> Vec<Value> {
    let text = cols::at(hpa, &["metadata", "annotations", key]).and_then(Value::as_str);
    match text.map(serde_json::from_str::<Vec<Value>>) {
        Some(Ok(list)) if list.iter().all(Value::is_object) => list,
        _ => Vec::new(),
    }
}

/// A v1 autoscaler's metrics and their current values as the v2 form holds them
/// (upstream's conversion to its internal type): the CPU utilization target and the
/// annotated metrics, and the annotated current values or else the current CPU
/// utilization. No metrics at all is the default CPU target.
///
/// Apiary keeps a v1 object as it was written, so where a CPU target stood among an
/// autoscaler's metrics is not known: it comes first, where a v2 object keeps the
/// metric a v1 read shows as `targetCPUUtilizationPercentage` when the controller
/// (whose current values come in the spec's order) wrote it there.
fn v1_metrics(hpa: &Object) -> (Vec<Value>, Vec<Value>) {
    let cpu_target = |utilization: &Value| json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": utilization}}});
    let mut specs: Vec<Value> = cols::at(hpa, &["spec", "targetCPUUtilizationPercentage"]).filter(|v| !v.is_null()).map(cpu_target).into_iter().collect();
    specs.extend(annotated(hpa, METRICS_ANNOTATION).iter().map(v2_metric_spec));
    if specs.is_empty() {
        specs.push(cpu_target(&json!(DEFAULT_CPU_UTILIZATION)));
    }
    let statuses = match cols::at(hpa, &["metadata", "annotations", CURRENT_METRICS_ANNOTATION]) {
        Some(_) => annotated(hpa, CURRENT_METRICS_ANNOTATION).iter().map(v2_metric_status).collect(),
        None => cols::at(hpa, &["status", "currentCPUUtilizationPercentage"])
            .filter(|v| !v.is_null())
            .map(|u| json!({"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": u}}}))
            .into_iter()
            .collect(),
    };
    (specs, statuses)
}

/// A quantity of a v2beta1 metric as the v2 form holds it: printed canonically; a
/// field v2beta1 does not make optional is zero when absent.
fn quantity(source: &Value, field: &str, required: bool) -> Option<Value> {
    match source.get(field).filter(|v| !v.is_null()) {
        Some(v) => Some(json!(Quantity::from_json(v).map_or_else(|| v.as_str().unwrap_or_default().to_owned(), |q| q.canonical()))),
        None => required.then(|| json!("0")),
    }
}

/// The fields of `pairs` that have a value, as an object.
fn present(pairs: &[(&str, Option<Value>)]) -> Value {
    Value::Object(pairs.iter().filter_map(|(k, v)| Some(((*k).to_owned(), v.clone().filter(|v| !v.is_null())?))).collect())
}

/// A v2beta1 metric target (as a v1 annotation holds it) in v2's shape.
fn v2_metric_spec(metric: &Value) -> Value {
    let kind = metric.get("type").cloned().unwrap_or(Value::Null);
    let field = |source: &Value, f: &str| source.get(f).cloned();
    let (key, converted) = match kind.as_str().unwrap_or("") {
        k @ ("Resource" | "ContainerResource") => {
            let key = if k == "Resource" { "resource" } else { "containerResource" };
            let Some(s) = metric.get(key) else { return present(&[("type", Some(kind))]) };
            let utilization = field(s, "targetAverageUtilization").filter(|v| !v.is_null());
            let target = present(&[
                ("type", Some(json!(if utilization.is_some() { "Utilization" } else { "AverageValue" }))),
                ("averageUtilization", utilization),
                ("averageValue", quantity(s, "targetAverageValue", false)),
            ]);
            (key, present(&[("name", field(s, "name")), ("container", field(s, "container")), ("target", Some(target))]))
        }
        "Pods" => {
            let Some(s) = metric.get("pods") else { return present(&[("type", Some(kind))]) };
            let target = present(&[("type", Some(json!("AverageValue"))), ("averageValue", quantity(s, "targetAverageValue", true))]);
            let id = present(&[("name", field(s, "metricName")), ("selector", field(s, "selector"))]);
            ("pods", present(&[("metric", Some(id)), ("target", Some(target))]))
        }
        "Object" => {
            let Some(s) = metric.get("object") else { return present(&[("type", Some(kind))]) };
            let average = quantity(s, "averageValue", false);
            let target = present(&[
                ("type", Some(json!(if average.is_some() { "AverageValue" } else { "Value" }))),
                ("value", quantity(s, "targetValue", true)),
                ("averageValue", average),
            ]);
            let id = present(&[("name", field(s, "metricName")), ("selector", field(s, "selector"))]);
            ("object", present(&[("describedObject", field(s, "target")), ("metric", Some(id)), ("target", Some(target))]))
        }
        "External" => {
            let Some(s) = metric.get("external") else { return present(&[("type", Some(kind))]) };
            let value = quantity(s, "targetValue", false);
            let target = present(&[
                ("type", Some(json!(if value.is_some() { "Value" } else { "AverageValue" }))),
                ("value", value),
                ("averageValue", quantity(s, "targetAverageValue", false)),
            ]);
            let id = present(&[("name", field(s, "metricName")), ("selector", field(s, "metricSelector"))]);
            ("external", present(&[("metric", Some(id)), ("target", Some(target))]))
        }
        _ => return present(&[("type", Some(kind))]),
    };
    present(&[("type", Some(kind)), (key, Some(converted))])
}

/// A v2beta1 metric's current value (as a v1 annotation holds it) in v2's shape.
fn v2_metric_status(metric: &Value) -> Value {
    let kind = metric.get("type").cloned().unwrap_or(Value::Null);
    let field = |source: &Value, f: &str| source.get(f).cloned();
    let (key, converted) = match kind.as_str().unwrap_or("") {
        k @ ("Resource" | "ContainerResource") => {
            let key = if k == "Resource" { "resource" } else { "containerResource" };
            let Some(s) = metric.get(key) else { return present(&[("type", Some(kind))]) };
            let current = present(&[("averageUtilization", field(s, "currentAverageUtilization")), ("averageValue", quantity(s, "currentAverageValue", true))]);
            (key, present(&[("name", field(s, "name")), ("container", field(s, "container")), ("current", Some(current))]))
        }
        "Pods" => {
            let Some(s) = metric.get("pods") else { return present(&[("type", Some(kind))]) };
            let id = present(&[("name", field(s, "metricName")), ("selector", field(s, "selector"))]);
            ("pods", present(&[("metric", Some(id)), ("current", Some(present(&[("averageValue", quantity(s, "currentAverageValue", true))])))]))
        }
        "Object" => {
            let Some(s) = metric.get("object") else { return present(&[("type", Some(kind))]) };
            let current = present(&[("value", quantity(s, "currentValue", true)), ("averageValue", quantity(s, "averageValue", false))]);
            let id = present(&[("name", field(s, "metricName")), ("selector", field(s, "selector"))]);
            ("object", present(&[("describedObject", field(s, "target")), ("metric", Some(id)), ("current", Some(current))]))
        }
        "External" => {
            let Some(s) = metric.get("external") else { return present(&[("type", Some(kind))]) };
            let current = present(&[("value", quantity(s, "currentValue", true)), ("averageValue", quantity(s, "currentAverageValue", false))]);
            let id = present(&[("name", field(s, "metricName")), ("selector", field(s, "metricSelector"))]);
            ("external", present(&[("metric", Some(id)), ("current", Some(current))]))
        }
        _ => return present(&[("type", Some(kind))]),
    };
    present(&[("type", Some(kind)), (key, Some(converted))])
}

/// The TARGETS cell of metric targets `specs` and their current values `statuses`
/// (the same position, the same metric) in v2's shape.
fn formatted_targets(specs: &[Value], statuses: &[Value]) -> Value {
    if specs.is_empty() {
        return serde_json::json!("<none>");
    }
    let get = |v: Option<&Value>, path: &[&str]| -> Option<String> {
        let v = path.iter().try_fold(v?, |v, k| v.get(k)).filter(|v| !v.is_null())?;
        Some(match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    };
    let list: Vec<String> = specs
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            let status = |source: &str| statuses.get(i).and_then(|s| s.get(source)).filter(|s| !s.is_null());
            let unknown = || "<unknown>".to_owned();
            let plain = |source: &str| {
                let target = spec.get(source);
                match get(target, &["target", "averageValue"]) {
                    Some(avg) => {
                        let current = get(status(source), &["current", "averageValue"]).unwrap_or_else(unknown);
                        format!("{current}/{avg} (avg)")
                    }
                    None => {
                        let current = status(source).map(|s| get(Some(s), &["current", "value"]).unwrap_or_else(|| "0".to_owned())).unwrap_or_else(unknown);
                        format!("{current}/{}", get(target, &["target", "value"]).unwrap_or_else(|| "0".to_owned()))
                    }
                }
            };
            let resource = |source: &str| {
                let target = spec.get(source);
                let name = get(target, &["name"]).unwrap_or_default();
                match get(target, &["target", "averageValue"]) {
                    Some(avg) => {
                        let current = status(source).map(|s| get(Some(s), &["current", "averageValue"]).unwrap_or_else(|| "0".to_owned())).unwrap_or_else(unknown);
                        format!("{name}: {current}/{avg}")
                    }
                    None => {
                        let current = get(status(source), &["current", "averageUtilization"]).map_or_else(unknown, |u| format!("{u}%"));
                        let target = get(target, &["target", "averageUtilization"]).map_or_else(|| "<auto>".to_owned(), |u| format!("{u}%"));
                        format!("{name}: {current}/{target}")
                    }
                }
            };
            match spec.get("type").and_then(Value::as_str).unwrap_or("") {
                "External" => plain("external"),
                "Object" => plain("object"),
                "Pods" => {
                    let current = status("pods").map(|s| get(Some(s), &["current", "averageValue"]).unwrap_or_else(|| "0".to_owned())).unwrap_or_else(unknown);
                    format!("{current}/{}", get(spec.get("pods"), &["target", "averageValue"]).unwrap_or_else(|| "0".to_owned()))
                }
                "Resource" => resource("resource"),
                "ContainerResource" => resource("containerResource"),
                _ => "<unknown type>".to_owned(),
            }
        })
        .collect();
    let shown = list.iter().take(2).cloned().collect::<Vec<_>>().join(", ");
    serde_json::json!(if list.len() > 2 { format!("{shown} + {} more...", list.len() - 2) } else { shown })
}

#[cfg(test)]
mod tests {
    use super::{targets, HorizontalPodAutoscalers};
    use crate::resources::Strategy;
    use serde_json::{json, Value};

    fn object(v: Value) -> crate::rest::object::Object {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn a_v1_autoscaler_with_annotated_metrics_gets_no_default_cpu_target() {
        let metrics = r#"[{"type":"Resource","resource":{"name":"memory","targetAverageUtilization":75}}]"#;
        let mut annotated = object(json!({"apiVersion": "autoscaling/v1", "metadata": {"annotations": {"autoscaling.alpha.kubernetes.io/metrics": metrics}}, "spec": {"maxReplicas": 3}}));
        HorizontalPodAutoscalers.default(&mut annotated);
        assert_eq!(annotated["spec"], json!({"maxReplicas": 3, "minReplicas": 1}));
        assert_eq!(targets(&annotated), json!("memory: <unknown>/75%"));
        let mut plain = object(json!({"apiVersion": "autoscaling/v1", "metadata": {}, "spec": {"maxReplicas": 3}}));
        HorizontalPodAutoscalers.default(&mut plain);
        assert_eq!(plain["spec"]["targetCPUUtilizationPercentage"], json!(80));
    }

    #[test]
    fn v1_targets_read_the_cpu_fields_and_the_annotations() {
        let hpa = |annotations: Value, spec: Value, status: Value| object(json!({"apiVersion": "autoscaling/v1", "metadata": {"annotations": annotations}, "spec": spec, "status": status}));
        // No metrics at all: the default CPU target.
        assert_eq!(targets(&hpa(json!({}), json!({}), json!({}))), json!("cpu: <unknown>/80%"));
        assert_eq!(targets(&hpa(json!({}), json!({"targetCPUUtilizationPercentage": 50}), json!({"currentCPUUtilizationPercentage": 7}))), json!("cpu: 7%/50%"));
        // v2beta1's fields, quantities printed canonically, absent required ones zero.
        let metrics = json!([
            {"type": "Object", "object": {"metricName": "rps", "targetValue": "10000"}},
            {"type": "External", "external": {"metricName": "q", "targetAverageValue": "1.5"}},
        ])
        .to_string();
        let current = json!([{"type": "Object", "object": {"metricName": "rps"}}, {"type": "External", "external": {"metricName": "q", "currentAverageValue": "2"}}]).to_string();
        let annotations = json!({"autoscaling.alpha.kubernetes.io/metrics": metrics, "autoscaling.alpha.kubernetes.io/current-metrics": current});
        assert_eq!(targets(&hpa(annotations, json!({}), json!({"currentCPUUtilizationPercentage": 9}))), json!("0/10k, 2/1500m (avg)"));
        // Annotations that are not lists of metrics are none.
        let broken = json!({"autoscaling.alpha.kubernetes.io/metrics": "{", "autoscaling.alpha.kubernetes.io/current-metrics": "[1]"});
        assert_eq!(targets(&hpa(broken, json!({"targetCPUUtilizationPercentage": 60}), json!({"currentCPUUtilizationPercentage": 9}))), json!("cpu: <unknown>/60%"));
        // A metric of a type v2 does not know, or without its source.
        let odd = json!({"autoscaling.alpha.kubernetes.io/metrics": r#"[{"type":"Pods"},{"type":"Nope"},{"type":"Resource"}]"#});
        assert_eq!(targets(&hpa(odd, json!({}), json!({}))), json!("<unknown>/0, <unknown type> + 1 more..."));
    }
}
