//! ValidatingAdmissionPolicyBindings (admissionregistration.k8s.io/v1): which policy
//! applies where, with which params and what a failed validation does. Defaults as
//! upstream's v1 (match resources of policy Equivalent, empty selectors, rules of any
//! scope; a param ref is not defaulted). A binding names its policy, a param by name or
//! by selector (not both) with what to do when it is missing, and one or more of Deny,
//! Warn and Audit, never Deny with Warn (upstream's
//! `ValidateValidatingAdmissionPolicyBinding*`). Spec changes count in
//! `metadata.generation`.

use super::columns::{at, Column};
use super::defaults::object_at;
use super::validatingadmissionpolicies::default_match_resources;
use super::{Columns, Strategy};
use crate::rest::object::Object;
use crate::validation::admission_registration::{self as rules, strings};
use crate::validation::value::{list, text};
use crate::validation::{go_json, label_selector, names, FieldError, FieldPath};
use serde_json::{json, Value};
use std::collections::HashSet;

pub struct ValidatingAdmissionPolicyBindings;

static COLUMNS: &[Column] = &[
    Column {
        name: "PolicyName",
        kind: "string",
        format: "",
        description: "PolicyName indicates the policy definition which the policy binding binded to",
        priority: 0,
        cell: |o| super::columns::str_at(o, &["spec", "policyName"]),
    },
    Column {
        name: "ParamRef",
        kind: "string",
        format: "",
        description: "ParamRef indicates the param resource which sets the configration param",
        priority: 0,
        cell: |o| json!(param_ref_cell(at(o, &["spec", "paramRef"]))),
    },
];

/// What upstream's printer shows of a param ref: `namespace/name` (`*/name` without a
/// namespace), else the selector as Go prints a `*metav1.LabelSelector`.
fn param_ref_cell(param_ref: Option<&Value>) -> String {
    let Some(pr) = param_ref.filter(|p| p.is_object()) else {
        return "<unset>".to_owned();
    };
    match (text(pr, "name"), text(pr, "namespace"), pr.get("selector").filter(|s| !s.is_null())) {
        ("", _, Some(selector)) => go_label_selector(selector),
        ("", _, None) => "<unset>".to_owned(),
        (name, "", _) => format!("*/{name}"),
        (name, namespace, _) => format!("{namespace}/{name}"),
    }
}

/// A LabelSelector as its generated Go `String()` prints it.
fn go_label_selector(selector: &Value) -> String {
    let mut labels: Vec<(&String, &Value)> = selector.get("matchLabels").and_then(Value::as_object).into_iter().flatten().collect();
    labels.sort_by(|a, b| a.0.cmp(b.0));
    let labels: String = labels.iter().map(|(k, v)| format!("{k}: {},", v.as_str().unwrap_or(""))).collect();
    let expressions: String = list(selector, "matchExpressions")
        .iter()
        .map(|e| {
            let values = strings(e, "values").join(" ");
            format!("LabelSelectorRequirement{{Key:{},Operator:{},Values:[{values}],}},", text(e, "key"), text(e, "operator"))
        })
        .collect();
    format!("&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}")
}

impl Strategy for ValidatingAdmissionPolicyBindings {
    fn name(&self) -> &'static str {
        "validatingadmissionpolicybindings"
    }

    fn columns(&self) -> Columns<'_> {
        Columns::Builtin(COLUMNS)
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Object) {
        if let Some(resources) = object_at(obj, &["spec", "matchResources"]) {
            default_match_resources(resources);
        }
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        validate(new)
    }
}

const ACTIONS: [&str; 3] = ["Audit", "Deny", "Warn"];

/// Upstream's `validateValidatingAdmissionPolicyBindingSpec`.
fn validate(binding: &Object) -> Vec<FieldError> {
    let spec = binding.get("spec").unwrap_or(&Value::Null);
    let path = FieldPath::new("spec");
    let mut errs = Vec::new();
    let policy = text(spec, "policyName");
    let at = path.child("policyName");
    if policy.is_empty() {
        errs.push(FieldError::required(at.as_str(), ""));
    } else {
        errs.extend(names::dns1123_subdomain(policy).into_iter().map(|m| FieldError::invalid(at.as_str(), policy, m)));
    }
    if let Some(pr) = spec.get("paramRef").filter(|p| !p.is_null()) {
        errs.extend(param_ref(pr, &path.child("paramRef")));
    }
    if let Some(mr) = spec.get("matchResources").filter(|m| !m.is_null()) {
        // Upstream's path is spelled so.
        errs.extend(rules::match_resources(mr, &path.child("matchResouces")));
    }
    errs.extend(validation_actions(spec, &path.child("validationActions")));
    errs
}

const EXCLUSIVE: &str = "name and selector are mutually exclusive";

fn param_ref(pr: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = text(pr, "name");
    let selector = pr.get("selector").filter(|s| !s.is_null());
    let name_at = path.child("name");
    if !name.is_empty() {
        errs.extend(names::path_segment(name).into_iter().map(|m| FieldError::invalid(name_at.as_str(), name, m)));
        if selector.is_some() {
            errs.push(FieldError::forbidden(name_at.as_str(), EXCLUSIVE));
        }
    }
    if let Some(selector) = selector {
        let at = path.child("selector");
        errs.extend(label_selector::validate(at.as_str(), selector, false));
        if !name.is_empty() {
            errs.push(FieldError::forbidden(at.as_str(), EXCLUSIVE));
        }
    }
    if name.is_empty() && selector.is_none() {
        errs.push(FieldError::required(path.as_str(), "one of name or selector must be specified"));
    }
    let at = path.child("parameterNotFoundAction");
    match text(pr, "parameterNotFoundAction") {
        "" => errs.push(FieldError::required(at.as_str(), "")),
        "Deny" | "Allow" => {}
        other => errs.push(FieldError::not_supported(at.as_str(), other, &["Deny", "Allow"])),
    }
    errs
}

/// Upstream's `validateValidationActions`.
fn validation_actions(spec: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen = HashSet::new();
    for (i, action) in strings(spec, "validationActions").into_iter().enumerate() {
        if !ACTIONS.contains(&action) {
            errs.push(FieldError::not_supported(path.index(i).as_str(), action, &ACTIONS));
        }
        if !seen.insert(action) {
            errs.push(FieldError::duplicate(path.index(i).as_str(), action));
        }
    }
    if seen.contains("Deny") && seen.contains("Warn") {
        let shown = go_json(spec.get("validationActions").unwrap_or(&Value::Null));
        let detail = "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)";
        errs.push(FieldError::invalid_unquoted(path.as_str(), &shown, detail));
    }
    if seen.is_empty() {
        errs.push(FieldError::required(path.as_str(), "at least one validation action is required"));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(binding: Value) -> Vec<String> {
        validate(binding.as_object().unwrap()).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn param_refs_name_one_param_and_what_a_missing_one_does() {
        let b = json!({"spec": {"policyName": "p", "validationActions": ["Deny", "Warn"],
            "paramRef": {"name": "a/b", "selector": {}, "parameterNotFoundAction": "Ignore"}}});
        assert_eq!(messages(b), [
            r#"spec.paramRef.name: Invalid value: "a/b": may not contain '/'"#,
            "spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
            "spec.paramRef.selector: Forbidden: name and selector are mutually exclusive",
            r#"spec.paramRef.parameterNotFoundAction: Unsupported value: "Ignore": supported values: "Deny", "Allow""#,
            r#"spec.validationActions: Invalid value: ["Deny","Warn"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"#,
        ]);
        assert_eq!(messages(json!({"spec": {"policyName": "p", "validationActions": ["Audit"], "paramRef": {}}})), [
            "spec.paramRef: Required value: one of name or selector must be specified",
            "spec.paramRef.parameterNotFoundAction: Required value",
        ]);
    }

    #[test]
    fn a_selector_param_ref_is_shown_as_go_prints_it() {
        let selector = json!({"matchLabels": {"b": "2", "a": "1"}, "matchExpressions": [{"key": "k", "operator": "In", "values": ["x", "y"]}]});
        assert_eq!(
            param_ref_cell(Some(&json!({"selector": selector}))),
            "&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[x y],},},}"
        );
        assert_eq!(param_ref_cell(Some(&json!({"name": "p"}))), "*/p");
        assert_eq!(param_ref_cell(None), "<unset>");
    }
}
