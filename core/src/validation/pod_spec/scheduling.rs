//! Where a pod may run: node selector labels, tolerations and node affinity.

use crate::selection::labels::label_value_errors;
use crate::validation::names::qualified_name;
use crate::validation::value::{int, invalid_int, list, present, text};
use crate::validation::{FieldError, FieldPath};
use serde_json::Value;

const EFFECTS: &[&str] = &["NoSchedule", "PreferNoSchedule", "NoExecute"];

pub(crate) fn validate_tolerations(tolerations: &[Value], path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, toleration) in tolerations.iter().enumerate() {
        let at = path.index(i);
        let key = text(toleration, "key");
        if !key.is_empty() {
            errs.extend(qualified_name(key).into_iter().map(|m| FieldError::invalid(at.child("key").as_str(), key, m)));
        }
        let operator = text(toleration, "operator");
        let effect = text(toleration, "effect");
        if key.is_empty() && operator != "Exists" {
            errs.push(FieldError::invalid(
                at.child("operator").as_str(),
                operator,
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ));
        }
        if present(toleration, "tolerationSeconds") && effect != "NoExecute" {
            errs.push(FieldError::invalid(at.child("effect").as_str(), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
        }
        let value = text(toleration, "value");
        match operator {
            // An empty operator means Equal.
            "" | "Equal" => {
                let problems = label_value_errors(value);
                if !problems.is_empty() {
                    errs.push(FieldError::invalid(at.child("operator").as_str(), value, problems.join(";")));
                }
            }
            "Exists" if !value.is_empty() => {
                errs.push(FieldError::invalid(at.child("operator").as_str(), value, "value must be empty when `operator` is 'Exists'"));
            }
            "Exists" => {}
            other => errs.push(FieldError::not_supported(at.child("operator").as_str(), other, &["Equal", "Exists"])),
        }
        if !effect.is_empty() && !EFFECTS.contains(&effect) {
            errs.push(FieldError::not_supported(at.child("effect").as_str(), effect, EFFECTS));
        }
    }
    errs
}

pub(super) fn validate_affinity(affinity: Option<&Value>, path: &FieldPath) -> Vec<FieldError> {
    let Some(node) = affinity.and_then(|a| a.get("nodeAffinity")).filter(|n| !n.is_null()) else {
        return Vec::new();
    };
    let path = path.child("nodeAffinity");
    let mut errs = Vec::new();
    if let Some(required) = node.get("requiredDuringSchedulingIgnoredDuringExecution").filter(|r| !r.is_null()) {
        errs.extend(node_selector(required, &path.child("requiredDuringSchedulingIgnoredDuringExecution")));
    }
    let preferred_path = path.child("preferredDuringSchedulingIgnoredDuringExecution");
    for (i, preferred) in list(node, "preferredDuringSchedulingIgnoredDuringExecution").iter().enumerate() {
        let at = preferred_path.index(i);
        let weight = int(preferred, "weight").unwrap_or(0);
        if !(1..=100).contains(&weight) {
            errs.push(invalid_int(&at.child("weight"), weight, "must be in the range 1-100"));
        }
        errs.extend(selector_term(preferred.get("preference").unwrap_or(&Value::Null), &at.child("preference")));
    }
    errs
}

/// A node selector (a pod's required node affinity, a volume's): at least one term,
/// each well formed.
pub fn node_selector(selector: &Value, path: &FieldPath) -> Vec<FieldError> {
    let terms_path = path.child("nodeSelectorTerms");
    let terms = list(selector, "nodeSelectorTerms");
    if terms.is_empty() {
        return vec![FieldError::required(terms_path.as_str(), "must have at least one node selector term")];
    }
    terms.iter().enumerate().flat_map(|(i, term)| selector_term(term, &terms_path.index(i))).collect()
}

fn selector_term(term: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (j, requirement) in list(term, "matchExpressions").iter().enumerate() {
        let at = path.child("matchExpressions").index(j);
        let values = list(requirement, "values");
        match text(requirement, "operator") {
            "In" | "NotIn" if values.is_empty() => {
                errs.push(FieldError::required(at.child("values").as_str(), "must be specified when `operator` is 'In' or 'NotIn'"))
            }
            "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(FieldError::forbidden(
                at.child("values").as_str(),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            "Gt" | "Lt" if values.len() != 1 => errs.push(FieldError::required(
                at.child("values").as_str(),
                "must be specified single value when `operator` is 'Lt' or 'Gt'",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt" => {}
            other => errs.push(FieldError::invalid(at.child("operator").as_str(), other, "not a valid selector operator")),
        }
        let key = text(requirement, "key");
        errs.extend(qualified_name(key).into_iter().map(|m| FieldError::invalid(at.child("key").as_str(), key, m)));
    }
    errs
}
