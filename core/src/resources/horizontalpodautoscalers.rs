//! HorizontalPodAutoscalers (autoscaling/v2 and v1): no `metadata.generation`, as
//! upstream's strategy keeps none.
//!
//! Defaults: at least one replica, and an autoscaler with no metrics targets 80% CPU
//! utilization (in v1, whose objects upstream stores as v2 and reads back, as
//! `targetCPUUtilizationPercentage`). A v2 `behavior` gets every rule it leaves out:
//! scale up by 4 pods or 100% every 15 s with no stabilization, scale down by 100% every
//! 15 s after 300 s of stabilization, each choosing the largest change.

use super::defaults::{is_empty, object, object_or_new, or_insert};
use super::Strategy;
use crate::rest::object::Object;
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
}

/// One direction's rules: what it leaves out is the direction's default.
fn scaling_rules(rules: &mut Map<String, Value>, stabilization: i64, policies: impl FnOnce() -> Value) {
    or_insert(rules, "stabilizationWindowSeconds", || json!(stabilization));
    or_insert(rules, "selectPolicy", || json!("Max"));
    or_insert(rules, "policies", policies);
}
