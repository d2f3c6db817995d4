//! Pod templates inside other objects (PodTemplate, ReplicationController, the apps
//! workloads, Job): the template checked as a pod (upstream's
//! `ValidatePodTemplateSpec`), the selector that must pick its pods, and the few
//! rules every workload shares.

use super::pod_spec::{self, Context};
use super::value::{list, map, text};
use super::{go_json, go_json_string, FieldError, FieldPath};
use crate::selection::LabelSelector;
use serde_json::Value;

/// A template's labels, metadata and spec (`path` is the template's own).
pub fn validate_template(template: &Value, extra_volumes: &[Value], path: &FieldPath) -> Vec<FieldError> {
    let meta = template.get("metadata").unwrap_or(&Value::Null);
    // Upstream reports the template's labels at `<template>.labels`.
    let mut errs = super::object_meta::labels(path.child("labels").as_str(), meta.get("labels"));
    let spec = template.get("spec").unwrap_or(&Value::Null);
    errs.extend(pod_spec::validate(spec, extra_volumes, &path.child("spec"), Context::Template));
    if !list(spec, "ephemeralContainers").is_empty() {
        errs.push(FieldError::forbidden(
            path.child("spec").child("ephemeralContainers").as_str(),
            "ephemeral containers not allowed in pod template",
        ));
    }
    errs
}

/// A workload's selector as upstream reads a `*metav1.LabelSelector`.
pub enum Selector {
    /// No selector at all: it selects nothing.
    Nothing,
    /// A selector (empty: it selects everything).
    Labels(LabelSelector),
    /// One that is no selector (an unknown operator, `In` without values).
    Invalid,
}

impl Selector {
    pub fn of(selector: Option<&Value>) -> Selector {
        match selector.filter(|s| !s.is_null()) {
            None => Selector::Nothing,
            Some(s) => LabelSelector::from_object(s).map_or(Selector::Invalid, Selector::Labels),
        }
    }
}

/// The template's labels must be selected (unless the selector is empty: it selects
/// everything, or is invalid: reported elsewhere).
pub fn selector_matches_template(selector: &Selector, template: &Value, path: &FieldPath) -> Vec<FieldError> {
    let labels = template.get("metadata").and_then(|m| m.get("labels"));
    let selected = match selector {
        Selector::Nothing => false,
        Selector::Labels(s) => s.is_empty() || s.matches_labels(labels.and_then(Value::as_object)),
        Selector::Invalid => true,
    };
    if selected {
        return Vec::new();
    }
    let at = path.child("metadata").child("labels");
    vec![FieldError::invalid_json(at.as_str(), labels.unwrap_or(&Value::Null), "`selector` does not match template `labels`")]
}

/// Whether a metav1 LabelSelector object has no requirement at all.
pub fn selector_is_empty(selector: &Value) -> bool {
    map(selector, "matchLabels").is_none_or(|m| m.is_empty()) && list(selector, "matchExpressions").is_empty()
}

/// A LabelSelector printed as Go prints the struct in an error: `matchLabels` first,
/// then `matchExpressions`, each only when set.
pub fn selector_json(selector: &Value) -> String {
    let mut parts = Vec::new();
    if let Some(labels) = map(selector, "matchLabels").filter(|m| !m.is_empty()) {
        parts.push(format!("\"matchLabels\":{}", go_json(&Value::Object(labels.clone()))));
    }
    let expressions = list(selector, "matchExpressions");
    if !expressions.is_empty() {
        let items: Vec<String> = expressions
            .iter()
            .map(|e| {
                let mut fields =
                    vec![format!("\"key\":{}", go_json_string(text(e, "key"))), format!("\"operator\":{}", go_json_string(text(e, "operator")))];
                let values = list(e, "values");
                if !values.is_empty() {
                    fields.push(format!("\"values\":{}", go_json(&Value::Array(values.to_vec()))));
                }
                format!("{{{}}}", fields.join(","))
            })
            .collect();
        parts.push(format!("\"matchExpressions\":[{}]", items.join(",")));
    }
    format!("{{{}}}", parts.join(","))
}

/// An Invalid error about a selector (absent: `null`), printed as Go prints it.
pub fn invalid_selector(path: &FieldPath, selector: Option<&Value>, detail: &str) -> FieldError {
    let shown = selector.filter(|s| !s.is_null()).map_or_else(|| "null".to_owned(), selector_json);
    FieldError::shown(path.as_str(), super::ErrorKind::Invalid, Some(&shown), detail)
}

/// apps/v1's selector: required, not empty, and a selector at all (`empty_for`
/// names the kind in the refusal of an empty one). The selector's own syntax
/// (`matchExpressions`) is checked with the object's other label rules.
pub fn required_selector(spec: &Value, path: &FieldPath, empty_for: &str) -> (Vec<FieldError>, Selector) {
    let at = path.child("selector");
    let given = spec.get("selector").filter(|s| !s.is_null());
    let mut errs = Vec::new();
    match given {
        None => errs.push(FieldError::required(at.as_str(), "")),
        Some(s) if selector_is_empty(s) => errs.push(invalid_selector(&at, Some(s), &format!("empty selector is invalid for {empty_for}"))),
        Some(_) => {}
    }
    let selector = Selector::of(given);
    if matches!(selector, Selector::Invalid) {
        errs.push(invalid_selector(&at, given, "invalid label selector"));
    }
    (errs, selector)
}

/// An update may not change the selector (apps/v1, batch/v1).
pub fn immutable_selector(new: &Value, old: &Value, path: &FieldPath) -> Vec<FieldError> {
    let (a, b) = (new.get("selector").filter(|s| !s.is_null()), old.get("selector").filter(|s| !s.is_null()));
    if a == b {
        return Vec::new();
    }
    vec![invalid_selector(&path.child("selector"), a, "field is immutable")]
}

/// Pods of long-running workloads restart always (absent, defaulting makes it so).
pub fn restart_always(template: &Value, path: &FieldPath) -> Vec<FieldError> {
    match template.get("spec").map(|s| text(s, "restartPolicy")).unwrap_or("") {
        "" | "Always" => Vec::new(),
        other => vec![FieldError::not_supported(path.child("spec").child("restartPolicy").as_str(), other, &["Always"])],
    }
}

/// The template of a ReplicaSet-like workload (RC, ReplicaSet, Deployment): there,
/// selected, valid, restarting always, without a deadline. `None` is a missing
/// template (core/v1's is optional); apps/v1's is always there, null being empty.
pub fn replicated_template(template: Option<&Value>, selector: &Selector, path: &FieldPath, kind: &str) -> Vec<FieldError> {
    let Some(template) = template else {
        return vec![FieldError::required(path.as_str(), "")];
    };
    let mut errs = selector_matches_template(selector, template, path);
    errs.extend(validate_template(template, &[], path));
    errs.extend(restart_always(template, path));
    if let Some(deadline) = template.get("spec").and_then(|s| s.get("activeDeadlineSeconds")).filter(|v| !v.is_null()) {
        let at = path.child("spec").child("activeDeadlineSeconds");
        errs.push(FieldError::invalid_json(at.as_str(), deadline, format!("activeDeadlineSeconds in {kind} is not Supported")));
    }
    errs
}

/// An int-or-percent (`maxSurge`, `maxUnavailable`): a count not below 0, or a
/// percent string.
pub fn int_or_percent(value: Option<&Value>, path: &FieldPath) -> Vec<FieldError> {
    match value {
        Some(Value::String(s)) if !is_percent(s) => vec![FieldError::invalid(
            path.as_str(),
            s,
            "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
        )],
        Some(Value::Number(n)) => super::value::non_negative(path, n.as_i64()),
        _ => Vec::new(),
    }
}

fn is_percent(s: &str) -> bool {
    s.strip_suffix('%').is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The number an int-or-percent stands for (0 when it is no number), and whether it
/// was a percent.
pub fn int_or_percent_value(value: Option<&Value>) -> (i64, bool) {
    match value {
        Some(Value::Number(n)) => (n.as_i64().unwrap_or(0), false),
        Some(Value::String(s)) => match s.strip_suffix('%') {
            Some(n) => (n.parse().unwrap_or(0), true),
            None => (s.parse().unwrap_or(0), false),
        },
        _ => (0, false),
    }
}

/// A percent above 100 (`maxUnavailable` may not be).
pub fn not_over_100_percent(value: Option<&Value>, path: &FieldPath) -> Vec<FieldError> {
    match (value, int_or_percent_value(value)) {
        (Some(v), (n, true)) if n > 100 => vec![FieldError::invalid_json(path.as_str(), v, "must not be greater than 100%")],
        _ => Vec::new(),
    }
}
