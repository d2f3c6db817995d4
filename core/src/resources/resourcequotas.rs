//! ResourceQuotas (core/v1): a DELETE answers with the deleted object.
//!
//! A quota counts resources a quota may count, in amounts that are not negative; its
//! scopes are known ones that apply to what it counts, not two that contradict each
//! other, and they do not change (upstream's `ValidateResourceQuota*`). Its status,
//! written by the quota controller, holds resources and amounts alike.

use super::columns::{self as cols, Column};
use super::Strategy;
use crate::rest::object::Object;
use crate::validation::quantity::Quantity;
use crate::validation::resource_names::{is_quota_resource, quantity_value, quota_resource_name};
use crate::validation::value::{list, map, text};
use crate::validation::{go_json, go_json_string, FieldError, FieldPath};
use serde_json::Value;

pub struct ResourceQuotas;

impl Strategy for ResourceQuotas {
    fn name(&self) -> &'static str {
        "resourcequotas"
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::Builtin(COLUMNS)
    }

    fn delete_returns_object(&self) -> bool {
        true
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        let mut errs = spec(new);
        errs.extend(status(new));
        errs
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let mut errs = spec(new);
        let scopes = |o: &Object| {
            let mut s: Vec<String> = scopes(o.get("spec").unwrap_or(&Value::Null)).into_iter().map(str::to_owned).collect();
            s.sort();
            s.dedup();
            s
        };
        if scopes(new) != scopes(old) {
            let shown = new.get("spec").and_then(|s| s.get("scopes")).cloned().unwrap_or(Value::Null);
            errs.push(FieldError::immutable("spec.scopes", &shown));
        }
        errs
    }

    fn validate_status_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        status(new)
    }
}

/// Scopes every quota may name (VolumeAttributesClass waits for its feature gate).
const SCOPES: [&str; 6] = ["Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass", "CrossNamespacePodAffinity"];

/// Scopes that select pods by what the pods ask for, or by a fixed property.
const EXISTS_ONLY: [&str; 5] = ["BestEffort", "NotBestEffort", "Terminating", "NotTerminating", "CrossNamespacePodAffinity"];

/// Scopes no quota may name both of.
const CONFLICTING: [[&str; 2]; 2] = [["BestEffort", "NotBestEffort"], ["Terminating", "NotTerminating"]];

/// Whether a quota scoped by `scope` may count `resource`: pod scopes count pods and
/// their compute, BestEffort pods only.
fn scope_applies(scope: &str, resource: &str) -> bool {
    const COMPUTE: [&str; 6] = ["cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory"];
    match scope {
        "Terminating" | "NotTerminating" | "NotBestEffort" | "PriorityClass" | "CrossNamespacePodAffinity" => {
            resource == "pods" || COMPUTE.contains(&resource)
        }
        "BestEffort" => resource == "pods",
        _ => true,
    }
}

fn scopes(spec: &Value) -> Vec<&str> {
    list(spec, "scopes").iter().filter_map(Value::as_str).collect()
}

/// Resource amounts under `path` (`spec.hard`, `status.used`).
fn amounts(amounts: Option<&serde_json::Map<String, Value>>, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (name, amount) in amounts.into_iter().flatten() {
        let at = path.key(name);
        errs.extend(quota_resource_name(name, &at));
        if let Some(q) = Quantity::from_json(amount) {
            errs.extend(quantity_value(name, &q, &at));
        }
    }
    errs
}

fn spec(rq: &Object) -> Vec<FieldError> {
    let spec = rq.get("spec").unwrap_or(&Value::Null);
    let path = FieldPath::new("spec");
    let hard = map(spec, "hard");
    // Upstream checks each scope against the standard counted resources, by name.
    let counted: Vec<&str> = hard.into_iter().flat_map(|h| h.keys()).map(String::as_str).filter(|r| is_quota_resource(r)).collect();
    let mut errs = amounts(hard, &path.child("hard"));
    let named = scopes(spec);
    let shown = go_json(spec.get("scopes").unwrap_or(&Value::Null));
    let invalid = |at: &str, shown: &str, detail: &str| FieldError::invalid_unquoted(at, shown, detail);
    for scope in &named {
        if !SCOPES.contains(scope) {
            errs.push(invalid("spec.scopes", &shown, "unsupported scope"));
        }
        for _ in counted.iter().filter(|r| !scope_applies(scope, r)) {
            errs.push(invalid("spec.scopes", &shown, "unsupported scope applied to resource"));
        }
    }
    for pair in CONFLICTING {
        if pair.iter().all(|s| named.contains(s)) {
            errs.push(invalid("spec.scopes", &shown, "conflicting scopes"));
        }
    }
    let Some(selector) = spec.get("scopeSelector").filter(|s| !s.is_null()) else { return errs };
    let at = path.child("scopeSelector").child("matchExpressions");
    let field = |f: &str| at.child(f).as_str().to_owned();
    let mut selected = Vec::new();
    for req in list(selector, "matchExpressions") {
        let scope = text(req, "scopeName");
        let operator = text(req, "operator");
        let values = list(req, "values");
        if !SCOPES.contains(&scope) {
            errs.push(FieldError::invalid(&field("scopeName"), scope, "unsupported scope"));
        }
        for _ in counted.iter().filter(|r| !scope_applies(scope, r)) {
            errs.push(invalid(at.as_str(), &selector_json(selector), "unsupported scope applied to resource"));
        }
        if EXISTS_ONLY.contains(&scope) && operator != "Exists" {
            errs.push(FieldError::invalid(
                &field("operator"),
                operator,
                "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
            ));
        }
        match operator {
            "In" | "NotIn" if values.is_empty() => errs.push(FieldError::required(
                &field("values"),
                "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
            )),
            "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(invalid(
                &field("values"),
                &go_json(&Value::Array(values.to_vec())),
                "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => errs.push(FieldError::invalid(&field("operator"), other, "not a valid selector operator")),
        }
        selected.push(scope);
    }
    for pair in CONFLICTING {
        if pair.iter().all(|s| selected.contains(s)) {
            errs.push(invalid(at.as_str(), &shown, "conflicting scopes"));
        }
    }
    errs
}

/// A scope selector as Go writes the struct: its fields in declaration order.
fn selector_json(selector: &Value) -> String {
    let reqs: Vec<String> = list(selector, "matchExpressions")
        .iter()
        .map(|r| {
            let mut out = format!("{{\"scopeName\":{},\"operator\":{}", go_json_string(text(r, "scopeName")), go_json_string(text(r, "operator")));
            if !list(r, "values").is_empty() {
                out.push_str(&format!(",\"values\":{}", go_json(&Value::Array(list(r, "values").to_vec()))));
            }
            out + "}"
        })
        .collect();
    format!("{{\"matchExpressions\":[{}]}}", reqs.join(","))
}

fn status(rq: &Object) -> Vec<FieldError> {
    let status = rq.get("status").unwrap_or(&Value::Null);
    let path = FieldPath::new("status");
    let mut errs = amounts(map(status, "hard"), &path.child("hard"));
    errs.extend(amounts(map(status, "used"), &path.child("used")));
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(spec: Value) -> Vec<String> {
        let rq = json!({"spec": spec});
        ResourceQuotas.validate_create(rq.as_object().unwrap()).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn scopes_apply_to_what_is_counted() {
        assert!(errors(json!({"hard": {"pods": "1", "cpu": "2"}, "scopes": ["NotBestEffort"]})).is_empty());
        assert_eq!(
            errors(json!({"hard": {"pods": "1"}, "scopes": ["BestEffort", "NotBestEffort"]})),
            ["spec.scopes: Invalid value: [\"BestEffort\",\"NotBestEffort\"]: conflicting scopes"]
        );
        assert_eq!(
            errors(json!({"hard": {"cpu": "1"}, "scopeSelector": {"matchExpressions": [{"scopeName": "BestEffort", "operator": "In", "values": ["a"]}]}})),
            [
                "spec.scopeSelector.matchExpressions: Invalid value: {\"matchExpressions\":[{\"scopeName\":\"BestEffort\",\"operator\":\"In\",\"values\":[\"a\"]}]}: unsupported scope applied to resource",
                "spec.scopeSelector.matchExpressions.operator: Invalid value: \"In\": must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
            ]
        );
    }
}

pub(crate) const COLUMNS: &[Column] = &[
    Column { name: "Request", kind: "string", format: "", description: "Request represents a minimum amount of cpu/memory that a container may consume.", priority: 0, cell: |o| quota_column(o, false) },
    Column { name: "Limit", kind: "string", format: "", description: "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.", priority: 0, cell: |o| quota_column(o, true) },
];

/// REQUEST or LIMIT: `resource: used/hard` for each hard resource, sorted by name,
/// those named `limits.*` in LIMIT and the others in REQUEST.
fn quota_column(quota: &Object, limits: bool) -> Value {
    let hard = cols::at(quota, &["status", "hard"]).and_then(Value::as_object);
    let mut names: Vec<&String> = hard.into_iter().flat_map(|h| h.keys()).collect();
    names.sort();
    let shown: Vec<String> = names
        .into_iter()
        .filter(|n| (n.split('.').count() > 1 && n.split('.').next() == Some("limits")) == limits)
        .map(|n| {
            let used = cols::quantity_at(quota, &["status", "used", n]);
            let hard = cols::quantity_at(quota, &["status", "hard", n]);
            format!("{n}: {}/{}", used.as_str().unwrap_or(""), hard.as_str().unwrap_or(""))
        })
        .collect();
    serde_json::json!(shown.join(", "))
}
