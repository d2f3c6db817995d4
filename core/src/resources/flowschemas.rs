//! FlowSchemas (flowcontrol.apiserver.k8s.io/v1): which requests API Priority and
//! Fairness puts in which priority level, with a status only `/status` writes.
//! Defaults as upstream's v1 (matching precedence 1000). Validation is upstream's
//! `ValidateFlowSchema` in its order and words: a precedence in 1..=10000 (1 for
//! `exempt` alone), a known distinguisher, a priority level named, each rule with
//! subjects and resource or non-resource rules; the mandatory schemas (`exempt`,
//! `catch-all`) keep their fixed spec. Spec changes count in `metadata.generation`.

use super::columns::{at, Column};
use super::defaults::{object_or_new, or_insert_int};
use super::{Columns, Strategy};
use crate::bootstrap::flowcontrol::{mandatory_spec, same_spec};
use crate::rest::object::{meta_str, Object};
use crate::validation::value::{int, list, present, text};
use crate::validation::{go_json, names, ErrorKind, FieldError, FieldPath};
use serde_json::{json, Value};
use std::collections::HashSet;

pub struct FlowSchemas;

static COLUMNS: &[Column] = &[
    Column {
        name: "PriorityLevel",
        kind: "string",
        format: "",
        description: "`name` is the name of the priority level configuration being referenced Required.",
        priority: 0,
        cell: |o| json!(at(o, &["spec", "priorityLevelConfiguration", "name"]).and_then(Value::as_str).unwrap_or("")),
    },
    Column {
        name: "MatchingPrecedence",
        kind: "string",
        format: "",
        description: "`matchingPrecedence` is used to choose among the FlowSchemas that match a given request. The chosen FlowSchema is among those with the numerically lowest (which we take to be logically highest) MatchingPrecedence.  Each MatchingPrecedence value must be ranged in [1,10000]. Note that if the precedence is not specified, it will be set to 1000 as default.",
        priority: 0,
        cell: |o| json!(at(o, &["spec", "matchingPrecedence"]).and_then(Value::as_i64).unwrap_or(0)),
    },
    Column {
        name: "DistinguisherMethod",
        kind: "string",
        format: "",
        description: "`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema. `nil` specifies that the distinguisher is disabled and thus will always be the empty string.",
        priority: 0,
        cell: |o| match at(o, &["spec", "distinguisherMethod"]).filter(|d| d.is_object()) {
            Some(d) => json!(text(d, "type")),
            None => json!("<none>"),
        },
    },
    // After Age: whether the Dangling condition says the priority level is missing
    // ("?" until the status says either way).
    Column {
        name: "MissingPL",
        kind: "string",
        format: "",
        description: "references a broken or non-existent PriorityLevelConfiguration",
        priority: 0,
        cell: |o| json!(condition_status(o, "Dangling").unwrap_or("?")),
    },
];

/// The status of the first condition of `kind` in an object's status.
fn condition_status<'a>(o: &'a Object, kind: &str) -> Option<&'a str> {
    let conditions = at(o, &["status", "conditions"])?.as_array()?;
    conditions.iter().find(|c| text(c, "type") == kind).map(|c| text(c, "status"))
}

impl Strategy for FlowSchemas {
    fn name(&self) -> &'static str {
        "flowschemas"
    }

    fn columns(&self) -> Columns<'_> {
        Columns::Laid { columns: COLUMNS, age_at: Some(3) }
    }

    /// Upstream's printer lists schemas as they are matched: by precedence, then name.
    fn order_table_rows(&self, objects: &mut [&Object]) {
        let key = |o: &Object| (at(o, &["spec", "matchingPrecedence"]).and_then(Value::as_i64).unwrap_or(0), meta_str(o, "name").to_owned());
        objects.sort_by_cached_key(|o| key(o));
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Object) {
        if let Some(spec) = object_or_new(obj, "spec") {
            or_insert_int(spec, "matchingPrecedence", 1000);
        }
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        validate(new)
    }

    fn validate_status_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        conditions(new)
    }
}

const MAX_MATCHING_PRECEDENCE: i64 = 10_000;
const DISTINGUISHERS: [&str; 2] = ["ByNamespace", "ByUser"];
const SUBJECT_KINDS: [&str; 3] = ["Group", "ServiceAccount", "User"];
const VERBS: [&str; 9] = ["create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"];
const NAMESPACE_INTRO: &str = "each member of this list must be '*' or a DNS-1123 label; ";

/// Upstream's `ValidateFlowSchema` after the metadata: the spec, the mandatory
/// schemas' fixed spec, the status.
fn validate(fs: &Object) -> Vec<FieldError> {
    let name = meta_str(fs, "name");
    let spec = fs.get("spec").unwrap_or(&Value::Null);
    let path = FieldPath::new("spec");
    let mut errs = Vec::new();
    let precedence = int(spec, "matchingPrecedence").unwrap_or(0);
    let at = path.child("matchingPrecedence");
    if precedence <= 0 {
        errs.push(invalid_int(&at, precedence, "must be a positive value"));
    }
    if precedence > MAX_MATCHING_PRECEDENCE {
        errs.push(invalid_int(&at, precedence, &format!("must not be greater than {MAX_MATCHING_PRECEDENCE}")));
    }
    if precedence == 1 && name != "exempt" {
        errs.push(invalid_int(&at, precedence, "only the schema named 'exempt' may have matchingPrecedence 1"));
    }
    if let Some(method) = spec.get("distinguisherMethod").filter(|m| m.is_object()) {
        if !DISTINGUISHERS.contains(&text(method, "type")) {
            let shown = format!("{{\"Type\":{}}}", crate::validation::go_json_string(text(method, "type")));
            errs.push(not_supported(&path.child("distinguisherMethod").child("type"), &shown, &DISTINGUISHERS));
        }
    }
    let level = spec.get("priorityLevelConfiguration").map(|p| text(p, "name")).unwrap_or("");
    let at = path.child("priorityLevelConfiguration").child("name");
    if level.is_empty() {
        errs.push(FieldError::required(at.as_str(), "must reference a priority level"));
    } else {
        errs.extend(names::dns1123_subdomain(level).into_iter().map(|m| FieldError::invalid(at.as_str(), level, m)));
    }
    for (i, rule) in list(spec, "rules").iter().enumerate() {
        errs.extend(rules_with_subjects(rule, &path.child("rules").index(i)));
    }
    if let Some(fixed) = mandatory_spec("FlowSchema", name) {
        if !same_spec(spec, fixed) {
            let detail = format!("spec of '{name}' must equal the fixed value");
            errs.push(FieldError::invalid_unquoted("spec", &internal_spec(spec), &detail));
        }
    }
    errs.extend(conditions(fs));
    errs
}

/// Upstream's `ValidateFlowSchemaPolicyRulesWithSubjects`.
fn rules_with_subjects(rule: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let subjects = list(rule, "subjects");
    if subjects.is_empty() {
        errs.push(FieldError::required(path.child("subjects").as_str(), "subjects must contain at least one value"));
    }
    for (i, subject) in subjects.iter().enumerate() {
        errs.extend(self::subject(subject, &path.child("subjects").index(i)));
    }
    let (resource_rules, non_resource_rules) = (list(rule, "resourceRules"), list(rule, "nonResourceRules"));
    if resource_rules.is_empty() && non_resource_rules.is_empty() {
        errs.push(FieldError::required(path.as_str(), "at least one of resourceRules and nonResourceRules has to be non-empty"));
    }
    for (i, r) in resource_rules.iter().enumerate() {
        errs.extend(resource_rule(r, &path.child("resourceRules").index(i)));
    }
    for (i, r) in non_resource_rules.iter().enumerate() {
        errs.extend(non_resource_rule(r, &path.child("nonResourceRules").index(i)));
    }
    errs
}

/// Upstream's `ValidateFlowSchemaSubject`: the member the kind names, and no other.
fn subject(subject: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let kind = text(subject, "kind");
    let (member, others): (&str, [&str; 2]) = match kind {
        "ServiceAccount" => ("serviceAccount", ["user", "group"]),
        "User" => ("user", ["serviceAccount", "group"]),
        "Group" => ("group", ["serviceAccount", "user"]),
        _ => {
            errs.push(FieldError::not_supported(path.child("kind").as_str(), kind, &SUBJECT_KINDS));
            return errs;
        }
    };
    let at = path.child(member);
    match subject.get(member).filter(|m| !m.is_null()) {
        None => errs.push(FieldError::required(at.as_str(), format!("{member} is required when subject kind is '{kind}'"))),
        Some(m) => {
            let name = text(m, "name");
            if name.is_empty() {
                errs.push(FieldError::required(at.child("name").as_str(), ""));
            } else if kind == "ServiceAccount" && name != "*" {
                let problems = names::dns1123_subdomain(name);
                errs.extend(problems.into_iter().map(|p| FieldError::invalid(at.child("name").as_str(), name, p)));
            }
            if kind == "ServiceAccount" {
                let namespace = text(m, "namespace");
                let at = at.child("namespace");
                if namespace.is_empty() {
                    errs.push(FieldError::required(at.as_str(), "must specify namespace for service account"));
                } else {
                    errs.extend(names::dns1123_label(namespace).into_iter().map(|p| FieldError::invalid(at.as_str(), namespace, p)));
                }
            }
        }
    }
    for other in others {
        if present(subject, other) {
            let owner = match other {
                "serviceAccount" => "ServiceAccount",
                "user" => "User",
                _ => "Group",
            };
            let detail = format!("{other} is forbidden when subject kind is not '{owner}'");
            errs.push(FieldError::forbidden(path.child(other).as_str(), detail));
        }
    }
    errs
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    list(v, key).iter().map(|s| s.as_str().unwrap_or("").to_owned()).collect()
}

/// A list shown as upstream shows a bad `[]string`: its JSON.
fn shown(items: &[String]) -> String {
    go_json(&json!(items))
}

/// The verbs of a rule: present, `*` alone, or known ones.
fn verbs(rule: &Value, path: &FieldPath) -> Option<FieldError> {
    let verbs = strings(rule, "verbs");
    let at = path.child("verbs");
    if verbs.is_empty() {
        Some(FieldError::required(at.as_str(), "verbs must contain at least one value"))
    } else if verbs.iter().any(|v| v == "*") {
        (verbs.len() > 1).then(|| FieldError::invalid_unquoted(at.as_str(), &shown(&verbs), "if '*' is present, must not specify other verbs"))
    } else if verbs.iter().any(|v| !VERBS.contains(&v.as_str())) {
        Some(not_supported(&at, &shown(&verbs), &VERBS))
    } else {
        None
    }
}

/// Upstream's `ValidateFlowSchemaResourcePolicyRule`.
fn resource_rule(rule: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs: Vec<FieldError> = verbs(rule, path).into_iter().collect();
    for (key, what) in [("apiGroups", "api group"), ("resources", "resource")] {
        let items = strings(rule, key);
        let at = path.child(key);
        if items.is_empty() {
            errs.push(FieldError::required(at.as_str(), format!("resource rules must supply at least one {what}")));
        } else if items.len() > 1 && items.iter().any(|i| i == "*") {
            let detail = format!("if '*' is present, must not specify other {what}s");
            errs.push(FieldError::invalid_unquoted(at.as_str(), &shown(&items), &detail));
        }
    }
    let namespaces = strings(rule, "namespaces");
    let at = path.child("namespaces");
    let cluster_scope = rule.get("clusterScope").and_then(Value::as_bool).unwrap_or(false);
    if namespaces.is_empty() && !cluster_scope {
        errs.push(FieldError::required(at.as_str(), "resource rules that are not cluster scoped must supply at least one namespace"));
    } else if namespaces.iter().any(|n| n == "*") {
        if namespaces.len() > 1 {
            errs.push(FieldError::invalid_unquoted(at.as_str(), &shown(&namespaces), "if '*' is present, must not specify other namespaces"));
        }
    } else {
        for (i, ns) in namespaces.iter().enumerate() {
            for problem in names::dns1123_label(ns) {
                errs.push(FieldError::invalid(at.index(i).as_str(), ns, format!("{NAMESPACE_INTRO}{problem}")));
            }
        }
    }
    errs
}

/// Upstream's `ValidateFlowSchemaNonResourcePolicyRule`.
fn non_resource_rule(rule: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errs: Vec<FieldError> = verbs(rule, path).into_iter().collect();
    let urls = strings(rule, "nonResourceURLs");
    let at = path.child("nonResourceURLs");
    if urls.is_empty() {
        errs.push(FieldError::required(at.as_str(), "nonResourceURLs must contain at least one value"));
    } else if urls.iter().any(|u| u == "*") {
        if urls.len() > 1 {
            errs.push(FieldError::invalid_unquoted(at.as_str(), &shown(&urls), "if '*' is present, must not specify other non-resource URLs"));
        }
    } else {
        for (i, url) in urls.iter().enumerate() {
            if let Some(problem) = non_resource_url(url) {
                errs.push(FieldError::invalid(at.index(i).as_str(), url, problem));
            }
        }
    }
    errs
}

/// What is wrong with a non-resource URL: it starts with a slash, has no white-space
/// or double slash, and a wildcard only as a last `/*`.
fn non_resource_url(url: &str) -> Option<&'static str> {
    if url.is_empty() {
        return Some("must not be empty");
    }
    if url == "/" {
        return None;
    }
    if !url.starts_with('/') {
        return Some("must start with slash");
    }
    if url.contains(' ') {
        return Some("must not contain white-space");
    }
    if url.contains("//") {
        return Some("must not contain double slash");
    }
    let wildcards = url.matches('*').count();
    if wildcards > 1 || (wildcards == 1 && !url.ends_with("/*")) {
        return Some("wildcard can only do suffix matching");
    }
    None
}

/// Upstream's status checks of FlowSchemas and PriorityLevelConfigurations alike:
/// each condition has a type, none twice.
pub(super) fn conditions(obj: &Object) -> Vec<FieldError> {
    let status = obj.get("status").unwrap_or(&Value::Null);
    let path = FieldPath::new("status").child("conditions");
    let mut seen = HashSet::new();
    let mut errs = Vec::new();
    for (i, c) in list(status, "conditions").iter().enumerate() {
        let kind = text(c, "type");
        if !seen.insert(kind) {
            errs.push(FieldError::duplicate(path.index(i).child("type").as_str(), kind));
        }
        if kind.is_empty() {
            errs.push(FieldError::required(path.index(i).child("type").as_str(), "must not be empty"));
        }
    }
    errs
}

pub(super) fn invalid_int(path: &FieldPath, value: i64, detail: &str) -> FieldError {
    FieldError::invalid_unquoted(path.as_str(), &value.to_string(), detail)
}

/// An Unsupported value error whose value is shown as it is (not quoted).
pub(super) fn not_supported(path: &FieldPath, shown: &str, supported: &[&str]) -> FieldError {
    let listed: Vec<String> = supported.iter().map(|s| crate::validation::quoted(s)).collect();
    FieldError::shown(path.as_str(), ErrorKind::NotSupported, Some(shown), &format!("supported values: {}", listed.join(", ")))
}

/// Go's JSON of one struct: its fields in declaration order.
pub(super) fn go_struct(fields: &[(&str, String)]) -> String {
    let inner: Vec<String> = fields.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
    format!("{{{}}}", inner.join(","))
}

/// A string field as Go's JSON writes it.
pub(super) fn go_str(v: &Value, key: &str) -> String {
    crate::validation::go_json_string(text(v, key))
}

/// A number field (0 when absent), or `null` for an absent pointer.
pub(super) fn go_int(v: &Value, key: &str, pointer: bool) -> String {
    match v.get(key).and_then(Value::as_i64) {
        Some(n) => n.to_string(),
        None if pointer => "null".to_owned(),
        None => "0".to_owned(),
    }
}

/// A list as Go writes a slice: `null` when empty.
pub(super) fn go_list(v: &Value, key: &str, item: impl Fn(&Value) -> String) -> String {
    let items = list(v, key);
    if items.is_empty() && !v.get(key).is_some_and(Value::is_array) {
        return "null".to_owned();
    }
    format!("[{}]", items.iter().map(item).collect::<Vec<_>>().join(","))
}

/// A pointer to a struct: `null` when absent.
pub(super) fn go_ptr(v: &Value, key: &str, item: impl Fn(&Value) -> String) -> String {
    match v.get(key).filter(|x| x.is_object()) {
        Some(x) => item(x),
        None => "null".to_owned(),
    }
}

/// The spec as upstream prints its internal type in an error: Go's field names.
fn internal_spec(spec: &Value) -> String {
    let strings = |v: &Value| go_json(v);
    let named = |v: &Value| go_struct(&[("Name", go_str(v, "name"))]);
    let subject = |s: &Value| {
        go_struct(&[
            ("Kind", go_str(s, "kind")),
            ("User", go_ptr(s, "user", named)),
            ("Group", go_ptr(s, "group", named)),
            ("ServiceAccount", go_ptr(s, "serviceAccount", |a| go_struct(&[("Namespace", go_str(a, "namespace")), ("Name", go_str(a, "name"))]))),
        ])
    };
    let resource_rule = |r: &Value| {
        go_struct(&[
            ("Verbs", go_list(r, "verbs", strings)),
            ("APIGroups", go_list(r, "apiGroups", strings)),
            ("Resources", go_list(r, "resources", strings)),
            ("ClusterScope", r.get("clusterScope").and_then(Value::as_bool).unwrap_or(false).to_string()),
            ("Namespaces", go_list(r, "namespaces", strings)),
        ])
    };
    let non_resource_rule = |r: &Value| go_struct(&[("Verbs", go_list(r, "verbs", strings)), ("NonResourceURLs", go_list(r, "nonResourceURLs", strings))]);
    let rule = |r: &Value| {
        go_struct(&[
            ("Subjects", go_list(r, "subjects", subject)),
            ("ResourceRules", go_list(r, "resourceRules", resource_rule)),
            ("NonResourceRules", go_list(r, "nonResourceRules", non_resource_rule)),
        ])
    };
    go_struct(&[
        ("PriorityLevelConfiguration", named(spec.get("priorityLevelConfiguration").unwrap_or(&Value::Null))),
        ("MatchingPrecedence", go_int(spec, "matchingPrecedence", false)),
        ("DistinguisherMethod", go_ptr(spec, "distinguisherMethod", |d| go_struct(&[("Type", go_str(d, "type"))]))),
        ("Rules", go_list(spec, "rules", rule)),
    ])
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Field errors as their messages.
    pub(in crate::resources) fn messages(errs: Vec<FieldError>) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    fn schema(name: &str, spec: Value) -> Object {
        let mut o = json!({"metadata": {"name": name}, "spec": spec}).as_object().unwrap().clone();
        FlowSchemas.default(&mut o);
        o
    }

    #[test]
    fn rules_are_checked_in_upstreams_order() {
        let fs = schema("s", json!({"matchingPrecedence": 1, "priorityLevelConfiguration": {"name": "Bad_Name"}, "rules": [
            {"subjects": [{"kind": "User", "group": {"name": "g"}}],
             "resourceRules": [{"verbs": ["get", "fly"], "apiGroups": ["*", "apps"], "resources": ["pods"], "namespaces": ["*", "x"]}],
             "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["/a/*/b"]}]}]}));
        let subdomain = names::dns1123_subdomain("Bad_Name").join("");
        assert_eq!(messages(validate(&fs)), [
            "spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1".to_owned(),
            format!("spec.priorityLevelConfiguration.name: Invalid value: \"Bad_Name\": {subdomain}"),
            "spec.rules[0].subjects[0].user: Required value: user is required when subject kind is 'User'".to_owned(),
            "spec.rules[0].subjects[0].group: Forbidden: group is forbidden when subject kind is not 'Group'".to_owned(),
            r#"spec.rules[0].resourceRules[0].verbs: Unsupported value: ["get","fly"]: supported values: "create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch""#.to_owned(),
            r#"spec.rules[0].resourceRules[0].apiGroups: Invalid value: ["*","apps"]: if '*' is present, must not specify other api groups"#.to_owned(),
            r#"spec.rules[0].resourceRules[0].namespaces: Invalid value: ["*","x"]: if '*' is present, must not specify other namespaces"#.to_owned(),
            r#"spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: "/a/*/b": wildcard can only do suffix matching"#.to_owned(),
        ]);
    }

    #[test]
    fn mandatory_schemas_keep_their_spec() {
        let fixed = mandatory_spec("FlowSchema", "catch-all").unwrap().clone();
        assert!(validate(&schema("catch-all", fixed.clone())).is_empty());
        let mut changed = fixed;
        changed["matchingPrecedence"] = json!(9000);
        let errs = messages(validate(&schema("catch-all", changed)));
        assert_eq!(errs.len(), 1);
        assert!(errs[0].starts_with(r#"spec: Invalid value: {"PriorityLevelConfiguration":{"Name":"catch-all"},"MatchingPrecedence":9000,"DistinguisherMethod":{"Type":"ByUser"},"Rules":[{"Subjects":[{"Kind":"Group","User":null,"Group":{"Name":"system:unauthenticated"},"ServiceAccount":null}"#), "{}", errs[0]);
        assert!(errs[0].ends_with("spec of 'catch-all' must equal the fixed value"));
    }

    #[test]
    fn the_missing_level_column_reads_the_dangling_condition() {
        let mut fs = schema("s", json!({}));
        assert_eq!((COLUMNS[3].cell)(&fs), "?");
        fs.insert("status".into(), json!({"conditions": [{"type": "Dangling", "status": "True"}]}));
        assert_eq!((COLUMNS[3].cell)(&fs), "True");
        assert_eq!((COLUMNS[2].cell)(&fs), "<none>");
    }
}
