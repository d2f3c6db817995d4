//! What admission webhooks and ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1)
//! share, checked as upstream's `pkg/apis/admissionregistration/validation` checks it:
//! rules (operations, API groups and versions, resources with their subresources,
//! scope), match resources, match conditions; and the metav1 conditions of a status.

use super::value::{list, present, text};
use super::{go_json, label_selector, names, FieldError, FieldPath};
use serde_json::Value;
use std::collections::HashSet;

pub const FAILURE_POLICIES: [&str; 2] = ["Fail", "Ignore"];
pub const MATCH_POLICIES: [&str; 2] = ["Equivalent", "Exact"];
const OPERATIONS: [&str; 5] = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
const SCOPES: [&str; 3] = ["*", "Cluster", "Namespaced"];
/// More match conditions than this are refused.
const MAX_MATCH_CONDITIONS: usize = 64;

/// The strings of the list at `key` (anything else reads as "").
pub fn strings<'a>(v: &'a Value, key: &str) -> Vec<&'a str> {
    list(v, key).iter().map(|s| s.as_str().unwrap_or("")).collect()
}

/// An Invalid error about a whole list, printed as Go's JSON.
fn invalid_list(path: &FieldPath, v: &Value, key: &str, detail: &str) -> FieldError {
    FieldError::invalid_unquoted(path.as_str(), &go_json(v.get(key).unwrap_or(&Value::Null)), detail)
}

/// A string field that, when set, must be one of `supported`.
pub fn one_of(v: &Value, key: &str, path: &FieldPath, supported: &[&str]) -> Option<FieldError> {
    let value = v.get(key).filter(|x| !x.is_null())?;
    let value = value.as_str().unwrap_or("");
    (!supported.contains(&value)).then(|| FieldError::not_supported(path.child(key).as_str(), value, supported))
}

/// Upstream's `validateRuleWithOperations` (subresources allowed).
pub fn rule_with_operations(rule: &Value, path: &FieldPath) -> Vec<FieldError> {
    let operations = strings(rule, "operations");
    let at = path.child("operations");
    let mut errs = Vec::new();
    if operations.is_empty() {
        errs.push(FieldError::required(at.as_str(), ""));
    }
    if operations.len() > 1 && operations.contains(&"*") {
        errs.push(invalid_list(&at, rule, "operations", "if '*' is present, must not specify other operations"));
    }
    for (i, op) in operations.iter().enumerate() {
        if !OPERATIONS.contains(op) {
            errs.push(FieldError::not_supported(at.index(i).as_str(), op, &OPERATIONS));
        }
    }
    errs.extend(validate_rule(rule, path));
    errs
}

fn validate_rule(rule: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let groups = strings(rule, "apiGroups");
    let at = path.child("apiGroups");
    if groups.is_empty() {
        errs.push(FieldError::required(at.as_str(), ""));
    }
    if groups.len() > 1 && groups.contains(&"*") {
        errs.push(invalid_list(&at, rule, "apiGroups", "if '*' is present, must not specify other API groups"));
    }
    let versions = strings(rule, "apiVersions");
    let at = path.child("apiVersions");
    if versions.is_empty() {
        errs.push(FieldError::required(at.as_str(), ""));
    }
    if versions.len() > 1 && versions.contains(&"*") {
        errs.push(invalid_list(&at, rule, "apiVersions", "if '*' is present, must not specify other API versions"));
    }
    for (i, v) in versions.iter().enumerate() {
        if v.is_empty() {
            errs.push(FieldError::required(at.index(i).as_str(), ""));
        }
    }
    errs.extend(resources(rule, &path.child("resources")));
    errs.extend(one_of(rule, "scope", path, &SCOPES));
    errs
}

/// Upstream's `validateResources`: `x/*` and `*/x` exclude what they cover, `*/*`
/// stands alone, `*` excludes resources without a subresource.
fn resources(rule: &Value, path: &FieldPath) -> Vec<FieldError> {
    let all = strings(rule, "resources");
    let mut errs = Vec::new();
    if all.is_empty() {
        errs.push(FieldError::required(path.as_str(), ""));
    }
    let (mut any_sub_of, mut sub_of_any) = (HashSet::new(), HashSet::new());
    let (mut double, mut single, mut without_sub) = (false, false, false);
    for (i, r) in all.iter().enumerate() {
        if r.is_empty() {
            errs.push(FieldError::required(path.index(i).as_str(), ""));
            continue;
        }
        double |= *r == "*/*";
        single |= *r == "*";
        let Some((res, sub)) = r.split_once('/') else {
            // Upstream remembers only the last resource without a subresource.
            without_sub = *r != "*";
            continue;
        };
        if any_sub_of.contains(res) {
            errs.push(FieldError::invalid(path.index(i).as_str(), r, format!("if '{res}/*' is present, must not specify {r}")));
        }
        if sub_of_any.contains(sub) {
            errs.push(FieldError::invalid(path.index(i).as_str(), r, format!("if '*/{sub}' is present, must not specify {r}")));
        }
        if sub == "*" {
            any_sub_of.insert(res);
        }
        if res == "*" {
            sub_of_any.insert(sub);
        }
    }
    if all.len() > 1 && double {
        errs.push(invalid_list(path, rule, "resources", "if '*/*' is present, must not specify other resources"));
    }
    if single && without_sub {
        errs.push(invalid_list(path, rule, "resources", "if '*' is present, must not specify other resources without subresources"));
    }
    errs
}

/// Upstream's `validateMatchResources`, for a policy's `matchConstraints` and a
/// binding's `matchResources`.
pub fn match_resources(mc: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if !present(mc, "matchPolicy") {
        errs.push(FieldError::required(path.child("matchPolicy").as_str(), ""));
    } else {
        errs.extend(one_of(mc, "matchPolicy", path, &MATCH_POLICIES));
    }
    for selector in ["namespaceSelector", "objectSelector"] {
        let at = path.child(selector);
        match mc.get(selector).filter(|s| !s.is_null()) {
            None => errs.push(FieldError::required(at.as_str(), "")),
            Some(s) => errs.extend(label_selector::validate(at.as_str(), s, false)),
        }
    }
    for rules in ["resourceRules", "excludeResourceRules"] {
        for (i, rule) in list(mc, rules).iter().enumerate() {
            errs.extend(named_rule(rule, &path.child(rules).index(i)));
        }
    }
    errs
}

fn named_rule(rule: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen = HashSet::new();
    let at = path.child("resourceNames");
    for (i, name) in strings(rule, "resourceNames").into_iter().enumerate() {
        errs.extend(names::path_segment(name).into_iter().map(|m| FieldError::invalid(at.index(i).as_str(), name, m)));
        if !seen.insert(name) {
            errs.push(FieldError::duplicate(at.index(i).as_str(), name));
        }
    }
    errs.extend(rule_with_operations(rule, path));
    errs
}

/// Upstream's `validateMatchConditions`; `compiled` gives the compile error of the
/// `i`th condition's trimmed expression, if any.
pub fn match_conditions(
    conditions: &[Value],
    path: &FieldPath,
    compiled: impl Fn(usize, &str) -> Option<FieldError>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if conditions.len() > MAX_MATCH_CONDITIONS {
        errs.push(FieldError::too_many(path.as_str(), conditions.len(), MAX_MATCH_CONDITIONS));
    }
    let mut seen = HashSet::new();
    for (i, c) in conditions.iter().enumerate() {
        let at = path.index(i);
        let expression = text(c, "expression").trim();
        if expression.is_empty() {
            errs.push(FieldError::required(at.child("expression").as_str(), ""));
        } else {
            errs.extend(compiled(i, expression));
        }
        let name = text(c, "name");
        let name_at = at.child("name");
        if name.is_empty() {
            errs.push(FieldError::required(name_at.as_str(), ""));
            continue;
        }
        errs.extend(names::qualified_name(name).into_iter().map(|m| FieldError::invalid(name_at.as_str(), name, m)));
        if !seen.insert(name) {
            errs.push(FieldError::duplicate(name_at.as_str(), name));
        }
    }
    errs
}

const CONDITION_STATUSES: [&str; 3] = ["False", "True", "Unknown"];
const MAX_REASON: usize = 1024;
const MAX_MESSAGE: usize = 32 * 1024;
const REASON_MSG: &str = "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')";

/// apimachinery's `ValidateConditions` over metav1 Conditions.
pub fn conditions(conditions: &[Value], path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut types = HashSet::new();
    for (i, c) in conditions.iter().enumerate() {
        let at = path.index(i);
        let field = |f: &str| at.child(f).as_str().to_owned();
        let kind = text(c, "type");
        if !types.insert(kind) {
            errs.push(FieldError::duplicate(&field("type"), kind));
        }
        errs.extend(names::label_key(kind).into_iter().map(|m| FieldError::invalid(&field("type"), kind, m)));
        let status = text(c, "status");
        if !CONDITION_STATUSES.contains(&status) {
            errs.push(FieldError::not_supported(&field("status"), status, &CONDITION_STATUSES));
        }
        if let Some(g) = c.get("observedGeneration").and_then(Value::as_i64).filter(|g| *g < 0) {
            errs.push(FieldError::invalid_unquoted(&field("observedGeneration"), &g.to_string(), "must be greater than or equal to zero"));
        }
        if text(c, "lastTransitionTime").is_empty() {
            errs.push(FieldError::required(&field("lastTransitionTime"), "must be set"));
        }
        let reason = text(c, "reason");
        if reason.is_empty() {
            errs.push(FieldError::required(&field("reason"), "must be set"));
        } else {
            if !is_condition_reason(reason) {
                errs.push(FieldError::invalid(&field("reason"), reason, REASON_MSG));
            }
            if reason.len() > MAX_REASON {
                errs.push(FieldError::too_long(&field("reason"), MAX_REASON));
            }
        }
        if text(c, "message").len() > MAX_MESSAGE {
            errs.push(FieldError::too_long(&field("message"), MAX_MESSAGE));
        }
    }
    errs
}

/// `[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?`, anchored.
fn is_condition_reason(s: &str) -> bool {
    let b = s.as_bytes();
    let inner = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b',' | b':');
    let last = b[b.len() - 1];
    b[0].is_ascii_alphabetic() && b.iter().all(inner) && (b.len() == 1 || last.is_ascii_alphanumeric() || last == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(errs: Vec<FieldError>) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn resources_exclude_what_their_wildcards_cover() {
        let rule = json!({"operations": ["*", "CREATE"], "apiGroups": ["*", "apps"], "apiVersions": ["v1", ""],
            "resources": ["pods/*", "pods/log", "*/status", "deployments/status", "*", "jobs"]});
        assert_eq!(messages(rule_with_operations(&rule, &FieldPath::new("r"))), [
            r#"r.operations: Invalid value: ["*","CREATE"]: if '*' is present, must not specify other operations"#,
            r#"r.apiGroups: Invalid value: ["*","apps"]: if '*' is present, must not specify other API groups"#,
            "r.apiVersions[1]: Required value",
            r#"r.resources[1]: Invalid value: "pods/log": if 'pods/*' is present, must not specify pods/log"#,
            r#"r.resources[3]: Invalid value: "deployments/status": if '*/status' is present, must not specify deployments/status"#,
            r#"r.resources: Invalid value: ["pods/*","pods/log","*/status","deployments/status","*","jobs"]: if '*' is present, must not specify other resources without subresources"#,
        ]);
        let rule = json!({"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["*/*", "pods"]});
        assert_eq!(messages(rule_with_operations(&rule, &FieldPath::new("r"))), [
            r#"r.resources: Invalid value: ["*/*","pods"]: if '*/*' is present, must not specify other resources"#,
        ]);
    }

    #[test]
    fn match_resources_name_their_resources_once() {
        let mc = json!({"matchPolicy": "Loose", "namespaceSelector": {}, "objectSelector": {},
            "resourceRules": [{"resourceNames": ["a", "a", "b/c"], "operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}]});
        assert_eq!(messages(match_resources(&mc, &FieldPath::new("m"))), [
            r#"m.matchPolicy: Unsupported value: "Loose": supported values: "Equivalent", "Exact""#,
            r#"m.resourceRules[0].resourceNames[1]: Duplicate value: "a""#,
            r#"m.resourceRules[0].resourceNames[2]: Invalid value: "b/c": may not contain '/'"#,
        ]);
    }

    #[test]
    fn conditions_as_apimachinery_checks_them() {
        let cs = [json!({"type": "Ready", "status": "Maybe", "reason": "9lives", "lastTransitionTime": "2024-01-01T00:00:00Z"}), json!({"type": "Ready", "status": "True"})];
        assert_eq!(messages(conditions(&cs, &FieldPath::new("c"))), [
            r#"c[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown""#.to_owned(),
            format!(r#"c[0].reason: Invalid value: "9lives": {REASON_MSG}"#),
            r#"c[1].type: Duplicate value: "Ready""#.to_owned(),
            "c[1].lastTransitionTime: Required value: must be set".to_owned(),
            "c[1].reason: Required value: must be set".to_owned(),
        ]);
        assert!(is_condition_reason("A") && is_condition_reason("Some_Reason:x,y_") && !is_condition_reason("A:"));
    }
}
