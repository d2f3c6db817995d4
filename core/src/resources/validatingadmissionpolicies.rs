//! ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1): CEL validations of
//! what admission sees, with a status only `/status` writes. Defaults as upstream's v1
//! (failure policy Fail; match constraints of policy Equivalent, empty selectors, rules
//! of any scope). A policy names a param kind that parses, match constraints with at
//! least one resource rule, named match conditions and CEL variables, validations or
//! audit annotations, every expression compiling in the admission environment (its
//! errors are `admission::policy::expression_errors`', placed where upstream's
//! `ValidateValidatingAdmissionPolicy*` reports them). Spec changes count in
//! `metadata.generation`.

use super::columns::{at, count_at, Column};
use super::defaults::{object, object_or_new, objects, or_insert};
use super::{Columns, Strategy};
use crate::admission::policy::expression_errors;
use crate::jsonpath::JsonPath;
use crate::rest::object::{meta_str, Object};
use crate::validation::admission_registration::{self as rules, one_of, FAILURE_POLICIES};
use crate::validation::value::{list, present, text};
use crate::validation::{go_json, names, FieldError, FieldPath};
use serde_json::{json, Map, Value};
use std::collections::HashSet;

pub struct ValidatingAdmissionPolicies;

static COLUMNS: &[Column] = &[
    Column {
        name: "Validations",
        kind: "integer",
        format: "",
        description: "Validations indicates the number of validation rules defined in this configuration",
        priority: 0,
        cell: |o| count_at(o, &["spec", "validations"]),
    },
    Column {
        name: "ParamKind",
        kind: "string",
        format: "",
        description: "ParamKind specifies the kind of resources used to parameterize this policy",
        priority: 0,
        cell: |o| match at(o, &["spec", "paramKind"]).filter(|p| p.is_object()) {
            Some(p) => json!(format!("{}/{}", text(p, "apiVersion"), text(p, "kind"))),
            None => json!("<unset>"),
        },
    },
];

impl Strategy for ValidatingAdmissionPolicies {
    fn name(&self) -> &'static str {
        "validatingadmissionpolicies"
    }

    fn columns(&self) -> Columns<'_> {
        Columns::Builtin(COLUMNS)
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Object) {
        let Some(spec) = object_or_new(obj, "spec") else {
            return;
        };
        or_insert(spec, "failurePolicy", || json!("Fail"));
        if let Some(constraints) = object(spec, "matchConstraints") {
            default_match_resources(constraints);
        }
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new, true)
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let spec = |o: &Object, key: &str| o.get("spec").and_then(|s| s.get(key)).cloned();
        let unchanged = |key| spec(new, key) == spec(old, key);
        validate(new, !(unchanged("paramKind") && unchanged("matchConditions")))
    }

    fn validate_status_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        let status = new.get("status").unwrap_or(&Value::Null);
        let path = FieldPath::new("status");
        let mut errs = Vec::new();
        let warnings = status.get("typeChecking").map(|t| list(t, "expressionWarnings")).unwrap_or(&[]);
        for (i, w) in warnings.iter().enumerate() {
            let at = path.child("typeChecking").child("expressionWarnings").index(i);
            if text(w, "warning").is_empty() {
                errs.push(FieldError::required(at.child("warning").as_str(), ""));
            }
            let field_ref = text(w, "fieldRef").trim();
            let at = at.child("fieldRef");
            if field_ref.is_empty() {
                errs.push(FieldError::required(at.as_str(), ""));
            } else if let Err(e) = JsonPath::of_path(field_ref) {
                errs.push(FieldError::invalid(at.as_str(), field_ref, format!("invalid JSONPath: {e}")));
            }
        }
        errs.extend(rules::conditions(list(status, "conditions"), &path.child("conditions")));
        errs
    }
}

/// Upstream's v1 `SetDefaults_MatchResources`, and its rules' scope.
pub(super) fn default_match_resources(mc: &mut Map<String, Value>) {
    or_insert(mc, "matchPolicy", || json!("Equivalent"));
    or_insert(mc, "namespaceSelector", || json!({}));
    or_insert(mc, "objectSelector", || json!({}));
    for key in ["resourceRules", "excludeResourceRules"] {
        for rule in objects(mc, key) {
            or_insert(rule, "scope", || json!("*"));
        }
    }
}

const REASONS: [&str; 3] = ["Forbidden", "Invalid", "RequestEntityTooLarge"];
const MAX_AUDIT_ANNOTATIONS: usize = 20;
const MAX_VALUE_EXPRESSION: usize = 5 * 1024;

/// Upstream's `validateValidatingAdmissionPolicySpec`, in its order.
fn validate(policy: &Object, match_conditions: bool) -> Vec<FieldError> {
    let spec = policy.get("spec").unwrap_or(&Value::Null);
    let path = FieldPath::new("spec");
    let compiled = expression_errors(policy);
    let compile_error = |at: &FieldPath| compiled.iter().find(|e| e.field == at.as_str()).cloned();
    let mut errs = Vec::new();
    if !present(spec, "failurePolicy") {
        errs.push(FieldError::required(path.child("failurePolicy").as_str(), ""));
    }
    errs.extend(one_of(spec, "failurePolicy", &path, &FAILURE_POLICIES));
    if let Some(kind) = spec.get("paramKind").filter(|k| !k.is_null()) {
        errs.extend(param_kind(kind, &path.child("paramKind")));
    }
    let constraints = path.child("matchConstraints");
    match spec.get("matchConstraints").filter(|m| !m.is_null()) {
        None => errs.push(FieldError::required(constraints.as_str(), "")),
        Some(mc) => {
            errs.extend(rules::match_resources(mc, &constraints));
            if list(mc, "resourceRules").is_empty() {
                errs.push(FieldError::required(constraints.child("resourceRules").as_str(), ""));
            }
        }
    }
    if match_conditions {
        let at = path.child("matchConditions");
        errs.extend(rules::match_conditions(list(spec, "matchConditions"), &at, |i, _| {
            compile_error(&at.index(i).child("expression"))
        }));
    }
    for (i, variable) in list(spec, "variables").iter().enumerate() {
        let at = path.child("variables").index(i);
        let name = text(variable, "name");
        if name.trim().is_empty() {
            errs.push(FieldError::required(at.child("name").as_str(), "name is not specified"));
        } else if !is_cel_identifier(name) {
            errs.push(FieldError::invalid(at.child("name").as_str(), name, "name is not a valid CEL identifier"));
        }
        if text(variable, "expression").trim().is_empty() {
            errs.push(FieldError::required(at.child("expression").as_str(), "expression is not specified"));
        } else {
            errs.extend(compile_error(&at.child("expression")));
        }
    }
    let (validations, annotations) = (list(spec, "validations"), list(spec, "auditAnnotations"));
    if validations.is_empty() && annotations.is_empty() {
        let detail = "validations or auditAnnotations must contain at least one item";
        errs.push(FieldError::required(path.child("validations").as_str(), detail));
        errs.push(FieldError::required(path.child("auditAnnotations").as_str(), detail));
        return errs;
    }
    for (i, v) in validations.iter().enumerate() {
        errs.extend(validation(v, &path.child("validations").index(i), &compile_error));
    }
    if annotations.len() > MAX_AUDIT_ANNOTATIONS {
        let detail = format!("must not have more than {MAX_AUDIT_ANNOTATIONS} auditAnnotations");
        errs.push(FieldError::invalid_unquoted(path.child("auditAnnotations").as_str(), &internal_annotations(annotations), &detail));
    }
    let mut keys = HashSet::new();
    for (i, a) in annotations.iter().enumerate() {
        let at = path.child("auditAnnotations").index(i);
        errs.extend(audit_annotation(meta_str(policy, "name"), a, &at, &compile_error));
        let key = text(a, "key");
        if !keys.insert(key) {
            errs.push(FieldError::duplicate(at.child("key").as_str(), key));
        }
    }
    errs
}

/// Upstream's `validateParamKind`.
fn param_kind(kind: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let at = path.child("apiVersion");
    let api_version = text(kind, "apiVersion");
    if api_version.is_empty() {
        errs.push(FieldError::required(at.as_str(), ""));
    } else if api_version.matches('/').count() > 1 {
        errs.push(FieldError::invalid(at.as_str(), api_version, format!("unexpected GroupVersion string: {api_version}")));
    } else {
        let (group, version) = match api_version {
            "/" => ("", ""),
            gv => gv.split_once('/').unwrap_or(("", gv)),
        };
        let problems = names::dns1123_subdomain(group);
        if !group.is_empty() && !problems.is_empty() {
            errs.push(FieldError::invalid(at.as_str(), group, problems.join(",")));
        }
        if version.is_empty() {
            errs.push(FieldError::invalid(at.as_str(), api_version, "version must be specified"));
        } else {
            let problems = names::dns1035_label(version);
            if !problems.is_empty() {
                errs.push(FieldError::invalid(at.as_str(), version, problems.join(",")));
            }
        }
    }
    let kind_name = text(kind, "kind");
    let at = path.child("kind");
    if kind_name.is_empty() {
        errs.push(FieldError::required(at.as_str(), ""));
    } else {
        let problems = names::dns1035_label(&kind_name.to_lowercase());
        if !problems.is_empty() {
            let detail = format!("may have mixed case, but should otherwise match: {}", problems.join(","));
            errs.push(FieldError::invalid(at.as_str(), kind_name, detail));
        }
    }
    errs
}

/// Upstream's `validateValidation`.
fn validation(v: &Value, path: &FieldPath, compile_error: &dyn Fn(&FieldPath) -> Option<FieldError>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if text(v, "expression").trim().is_empty() {
        errs.push(FieldError::required(path.child("expression").as_str(), "expression is not specified"));
    } else {
        errs.extend(compile_error(&path.child("expression")));
    }
    let message_expression = text(v, "messageExpression");
    if !message_expression.is_empty() && message_expression.trim().is_empty() {
        let at = path.child("messageExpression");
        errs.push(FieldError::invalid(at.as_str(), message_expression, "must be non-empty if specified"));
    } else if !message_expression.is_empty() {
        errs.extend(compile_error(&path.child("messageExpression")));
    }
    let message = text(v, "message");
    let at = path.child("message");
    if !message.is_empty() && message.trim().is_empty() {
        errs.push(FieldError::invalid(at.as_str(), message, "message must be non-empty if specified"));
    } else if message.trim().contains(['\n', '\r']) {
        errs.push(FieldError::invalid(at.as_str(), message, "message must not contain line breaks"));
    }
    errs.extend(one_of(v, "reason", path, &REASONS));
    errs
}

/// Upstream's `validateAuditAnnotation`.
fn audit_annotation(
    policy: &str,
    a: &Value,
    path: &FieldPath,
    compile_error: &dyn Fn(&FieldPath) -> Option<FieldError>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (key, at) = (text(a, "key"), path.child("key"));
    if policy.is_empty() {
        errs.push(FieldError::invalid(at.as_str(), key, "requires metadata.name be non-empty"));
    } else {
        let qualified = format!("{policy}/{key}");
        errs.extend(names::qualified_name(&qualified).into_iter().map(|m| FieldError::invalid(at.as_str(), &qualified, m)));
    }
    let value = text(a, "valueExpression").trim();
    let at = path.child("valueExpression");
    if value.is_empty() {
        errs.push(FieldError::required(at.as_str(), "valueExpression is not specified"));
    } else if value.len() > MAX_VALUE_EXPRESSION {
        let detail = format!("must not exceed {MAX_VALUE_EXPRESSION} bytes in length");
        errs.push(FieldError::required(at.as_str(), detail));
    } else {
        errs.extend(compile_error(&at));
    }
    errs
}

/// Audit annotations as upstream prints its internal type: Go's field names.
fn internal_annotations(annotations: &[Value]) -> String {
    let items: Vec<Value> = annotations
        .iter()
        .map(|a| json!({"Key": text(a, "key"), "ValueExpression": text(a, "valueExpression")}))
        .collect();
    go_json(&Value::Array(items))
}

/// `[_a-zA-Z][_a-zA-Z0-9]*`, not a word CEL reserves.
fn is_cel_identifier(name: &str) -> bool {
    const RESERVED: &[&str] = &[
        "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if", "import",
        "let", "loop", "package", "namespace", "return", "var", "void", "while",
    ];
    let b = name.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
        && !RESERVED.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(spec: Value) -> Object {
        json!({"metadata": {"name": "p"}, "spec": spec}).as_object().unwrap().clone()
    }

    fn messages(errs: Vec<FieldError>) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    const RULES: &str = r#"{"resourceRules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}]}"#;

    fn defaulted(spec: Value) -> Object {
        let mut p = policy(spec);
        ValidatingAdmissionPolicies.default(&mut p);
        p
    }

    #[test]
    fn param_kinds_variables_and_annotations_are_checked_in_order() {
        let constraints: Value = serde_json::from_str(RULES).unwrap();
        let p = defaulted(json!({
            "paramKind": {"apiVersion": "a/b/c", "kind": "Config_Map"},
            "matchConstraints": constraints,
            "variables": [{"name": "in", "expression": "1"}, {"name": " ", "expression": ""}],
            "validations": [{"expression": "true", "message": "two\nlines", "messageExpression": "  "}],
            "auditAnnotations": [{"key": "k", "valueExpression": "'v'"}, {"key": "k", "valueExpression": "'w'"}],
        }));
        let lower = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
        assert_eq!(messages(validate(&p, true)), [
            r#"spec.paramKind.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c"#.to_owned(),
            format!(r#"spec.paramKind.kind: Invalid value: "Config_Map": may have mixed case, but should otherwise match: {lower}"#),
            r#"spec.variables[0].name: Invalid value: "in": name is not a valid CEL identifier"#.to_owned(),
            "spec.variables[1].name: Required value: name is not specified".to_owned(),
            "spec.variables[1].expression: Required value: expression is not specified".to_owned(),
            r#"spec.validations[0].messageExpression: Invalid value: "  ": must be non-empty if specified"#.to_owned(),
            "spec.validations[0].message: Invalid value: \"two\\nlines\": message must not contain line breaks".to_owned(),
            r#"spec.auditAnnotations[1].key: Duplicate value: "k""#.to_owned(),
        ]);
    }

    #[test]
    fn unchanged_match_conditions_are_not_compiled_again() {
        let constraints: Value = serde_json::from_str(RULES).unwrap();
        let p = defaulted(json!({"matchConstraints": constraints, "validations": [{"expression": "true"}],
            "matchConditions": [{"name": "m", "expression": "1 +"}]}));
        assert_eq!(ValidatingAdmissionPolicies.validate_create(&p).len(), 1);
        assert!(ValidatingAdmissionPolicies.validate_update(&p, &p).is_empty());
    }

    #[test]
    fn the_status_holds_type_checking_warnings_and_conditions() {
        let mut p = policy(json!({}));
        p.insert("status".into(), json!({"typeChecking": {"expressionWarnings": [{"fieldRef": "spec.validations[0", "warning": ""}]},
            "conditions": [{"type": "Ready", "status": "True", "reason": "Done", "lastTransitionTime": "2024-01-01T00:00:00Z"}]}));
        assert_eq!(messages(ValidatingAdmissionPolicies.validate_status_update(&p, &p)), [
            "status.typeChecking.expressionWarnings[0].warning: Required value",
            r#"status.typeChecking.expressionWarnings[0].fieldRef: Invalid value: "spec.validations[0": invalid JSONPath: unterminated array"#,
        ]);
    }
}
