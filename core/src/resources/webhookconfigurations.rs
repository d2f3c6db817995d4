//! MutatingWebhookConfigurations and ValidatingWebhookConfigurations
//! (admissionregistration.k8s.io/v1): the webhooks admission calls. Defaults as
//! upstream's v1 `SetDefaults_*Webhook` (failure policy Fail, match policy Equivalent,
//! empty selectors, a 10 s timeout, a mutating webhook reinvoked Never, rules of any
//! scope, a Service's port 443). Each webhook has a fully qualified name unique in its
//! configuration, rules, side effects None or NoneOnDryRun, a timeout of 1 to 30 s, a
//! URL or a Service, AdmissionReview versions this server knows and match conditions
//! that compile (upstream's `ValidateMutatingWebhookConfiguration*`). An update is held
//! to what the stored webhooks already met, as upstream's is. Changes to the webhooks
//! count in `metadata.generation`.

use super::columns::{count_at, Column};
use super::defaults::{object_at, objects, or_insert};
use super::{Columns, Strategy};
use crate::admission::policy::{Environment, Expression};
use crate::cel::types::Type;
use crate::rest::object::Object;
use crate::validation::admission_registration::{self as rules, one_of, strings, FAILURE_POLICIES, MATCH_POLICIES};
use crate::validation::value::{list, present, text};
use crate::validation::{go_json, label_selector, names, FieldError, FieldPath};
use serde_json::{json, Value};
use std::collections::HashSet;

/// The webhook configurations of one kind: mutating or validating.
pub struct WebhookConfigurations {
    resource: &'static str,
    mutating: bool,
}

pub const MUTATING: WebhookConfigurations = WebhookConfigurations { resource: "mutatingwebhookconfigurations", mutating: true };
pub const VALIDATING: WebhookConfigurations = WebhookConfigurations { resource: "validatingwebhookconfigurations", mutating: false };

static COLUMNS: &[Column] = &[Column {
    name: "Webhooks",
    kind: "integer",
    format: "",
    description: "Webhooks indicates the number of webhooks registered in this configuration",
    priority: 0,
    cell: |o| count_at(o, &["webhooks"]),
}];

impl Strategy for WebhookConfigurations {
    fn name(&self) -> &'static str {
        self.resource
    }

    fn columns(&self) -> Columns<'_> {
        Columns::Builtin(COLUMNS)
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    fn default(&self, obj: &mut Object) {
        for hook in objects(obj, "webhooks") {
            or_insert(hook, "failurePolicy", || json!("Fail"));
            or_insert(hook, "matchPolicy", || json!("Equivalent"));
            or_insert(hook, "namespaceSelector", || json!({}));
            or_insert(hook, "objectSelector", || json!({}));
            or_insert(hook, "timeoutSeconds", || json!(10));
            if self.mutating {
                or_insert(hook, "reinvocationPolicy", || json!("Never"));
            }
            if let Some(service) = object_at(hook, &["clientConfig", "service"]) {
                or_insert(service, "port", || json!(443));
            }
            for rule in objects(hook, "rules") {
                or_insert(rule, "scope", || json!("*"));
            }
        }
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new, self.mutating, &Options::CREATE)
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        validate(new, self.mutating, &Options::update(new, old))
    }
}

/// What a configuration is held to: all of it when created, on update only what the
/// stored webhooks already met.
struct Options {
    match_conditions: bool,
    no_side_effects: bool,
    recognized_review_version: bool,
    unique_names: bool,
    allow_invalid_label_values: bool,
}

impl Options {
    const CREATE: Options = Options {
        match_conditions: true,
        no_side_effects: true,
        recognized_review_version: true,
        unique_names: true,
        allow_invalid_label_values: false,
    };

    fn update(new: &Object, old: &Object) -> Options {
        let (new, old) = (hooks(new), hooks(old));
        let mut names = HashSet::new();
        Options {
            // Unchanged match conditions are not compiled again.
            match_conditions: new.len() != old.len()
                || new.iter().zip(old).any(|(n, o)| list(n, "matchConditions") != list(o, "matchConditions")),
            no_side_effects: old.iter().all(|h| NO_SIDE_EFFECTS.contains(&text(h, "sideEffects"))),
            recognized_review_version: old.iter().all(|h| {
                let versions = strings(h, "admissionReviewVersions");
                versions.is_empty() || versions.iter().any(|v| REVIEW_VERSIONS.contains(v))
            }),
            unique_names: old.iter().all(|h| names.insert(text(h, "name"))),
            allow_invalid_label_values: old.iter().any(|h| {
                ["namespaceSelector", "objectSelector"]
                    .iter()
                    .filter_map(|s| h.get(*s).filter(|v| !v.is_null()))
                    .any(|s| !label_selector::validate("", s, false).is_empty())
            }),
        }
    }
}

const NO_SIDE_EFFECTS: [&str; 2] = ["None", "NoneOnDryRun"];
const SIDE_EFFECTS: [&str; 4] = ["None", "NoneOnDryRun", "Some", "Unknown"];
const REINVOCATION_POLICIES: [&str; 2] = ["IfNeeded", "Never"];
/// The AdmissionReview versions this server (and the one before it) understands.
const REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];

fn hooks(obj: &Object) -> &[Value] {
    obj.get("webhooks").and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn validate(config: &Object, mutating: bool, opts: &Options) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names = HashSet::new();
    for (i, hook) in hooks(config).iter().enumerate() {
        let path = FieldPath::new("webhooks").index(i);
        errs.extend(webhook(hook, mutating, opts, &path));
        errs.extend(review_versions(hook, opts.recognized_review_version, &path.child("admissionReviewVersions")));
        let name = text(hook, "name");
        if opts.unique_names && !name.is_empty() && !names.insert(name) {
            errs.push(FieldError::duplicate(path.child("name").as_str(), name));
        }
    }
    errs
}

/// Upstream's `validateMutatingWebhook` and `validateValidatingWebhook`.
fn webhook(hook: &Value, mutating: bool, opts: &Options, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = fully_qualified_name(path.child("name").as_str(), text(hook, "name"));
    for (i, rule) in list(hook, "rules").iter().enumerate() {
        errs.extend(rules::rule_with_operations(rule, &path.child("rules").index(i)));
    }
    errs.extend(one_of(hook, "failurePolicy", path, &FAILURE_POLICIES));
    errs.extend(one_of(hook, "matchPolicy", path, &MATCH_POLICIES));
    let allowed: &[&str] = if opts.no_side_effects { &NO_SIDE_EFFECTS } else { &SIDE_EFFECTS };
    if !present(hook, "sideEffects") {
        let detail = format!("must specify one of {}", allowed.join(", "));
        errs.push(FieldError::required(path.child("sideEffects").as_str(), detail));
    }
    errs.extend(one_of(hook, "sideEffects", path, allowed));
    if let Some(t) = hook.get("timeoutSeconds").and_then(Value::as_i64).filter(|t| !(1..=30).contains(t)) {
        let detail = "the timeout value must be between 1 and 30 seconds";
        errs.push(FieldError::invalid_unquoted(path.child("timeoutSeconds").as_str(), &t.to_string(), detail));
    }
    for selector in ["namespaceSelector", "objectSelector"] {
        if let Some(s) = hook.get(selector).filter(|s| !s.is_null()) {
            errs.extend(label_selector::validate(path.child(selector).as_str(), s, opts.allow_invalid_label_values));
        }
    }
    if mutating {
        errs.extend(one_of(hook, "reinvocationPolicy", path, &REINVOCATION_POLICIES));
    }
    errs.extend(client_config(hook.get("clientConfig").unwrap_or(&Value::Null), &path.child("clientConfig")));
    if opts.match_conditions {
        let conditions = list(hook, "matchConditions");
        errs.extend(rules::match_conditions(conditions, &path.child("matchConditions"), |i, expression| {
            let env = Environment { has_params: false, variables: None };
            let at = path.child("matchConditions").index(i).child("expression");
            let compiled = Expression::compile(expression, &env, &[Type::Bool]);
            compiled.error().map(|e| FieldError::invalid(at.as_str(), expression, e))
        }));
    }
    errs
}

/// apimachinery's `IsFullyQualifiedName`: a DNS subdomain of three segments or more.
fn fully_qualified_name(field: &str, name: &str) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(field, "")];
    }
    let problems = names::dns1123_subdomain(name);
    if !problems.is_empty() {
        return vec![FieldError::invalid(field, name, problems.join(","))];
    }
    if name.split('.').count() < 3 {
        return vec![FieldError::invalid(field, name, "should be a domain with at least three segments separated by dots")];
    }
    Vec::new()
}

fn client_config(cc: &Value, path: &FieldPath) -> Vec<FieldError> {
    use super::customresourcedefinitions::{webhook_service, webhook_url};
    match (cc.get("url").filter(|u| !u.is_null()), cc.get("service").filter(|s| !s.is_null())) {
        (Some(url), None) => webhook_url(&path.child("url"), url.as_str().unwrap_or("")),
        (None, Some(service)) => webhook_service(&path.child("service"), service),
        _ => vec![FieldError::required(path.as_str(), "exactly one of url or service is required")],
    }
}

/// Upstream's `validateAdmissionReviewVersions`.
fn review_versions(hook: &Value, require_recognized: bool, path: &FieldPath) -> Vec<FieldError> {
    let versions = strings(hook, "admissionReviewVersions");
    if versions.is_empty() {
        return vec![FieldError::required(path.as_str(), format!("must specify one of {}", REVIEW_VERSIONS.join(", ")))];
    }
    let mut errs = Vec::new();
    let mut seen = HashSet::new();
    for (i, v) in versions.iter().enumerate() {
        let at = path.index(i);
        if !seen.insert(*v) {
            errs.push(FieldError::invalid(at.as_str(), v, "duplicate version"));
            continue;
        }
        errs.extend(names::dns1035_label(v).into_iter().map(|m| FieldError::invalid(at.as_str(), v, m)));
    }
    if require_recognized && !versions.iter().any(|v| REVIEW_VERSIONS.contains(v)) {
        let shown = go_json(hook.get("admissionReviewVersions").unwrap_or(&Value::Null));
        let detail = format!("must include at least one of {}", REVIEW_VERSIONS.join(", "));
        errs.push(FieldError::invalid_unquoted(path.as_str(), &shown, &detail));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(webhooks: Value) -> Object {
        json!({"metadata": {"name": "c"}, "webhooks": webhooks}).as_object().unwrap().clone()
    }

    fn messages(errs: Vec<FieldError>) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn an_update_is_held_to_what_the_stored_webhooks_met() {
        let old = config(json!([
            {"name": "a.b.c", "sideEffects": "Some", "admissionReviewVersions": ["v9"], "clientConfig": {"url": "https://h"}},
            {"name": "a.b.c", "sideEffects": "None", "admissionReviewVersions": ["v1"], "clientConfig": {"url": "https://h"}},
        ]));
        // Created, it is refused; updated from itself, what was already so passes.
        assert_eq!(messages(MUTATING.validate_create(&old)), [
            r#"webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun""#,
            r#"webhooks[0].admissionReviewVersions: Invalid value: ["v9"]: must include at least one of v1, v1beta1"#,
            r#"webhooks[1].name: Duplicate value: "a.b.c""#,
        ]);
        assert!(MUTATING.validate_update(&old, &old).is_empty());
    }

    #[test]
    fn match_conditions_compile_unless_unchanged() {
        let hook = |expression: &str| {
            config(json!([{"name": "a.b.c", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                "clientConfig": {"service": {"name": "s", "namespace": "n", "port": 443}},
                "matchConditions": [{"name": "m", "expression": expression}]}]))
        };
        let bad = hook(" 1 + ");
        let errs = messages(VALIDATING.validate_create(&bad));
        assert_eq!(errs.len(), 1);
        assert!(errs[0].starts_with(r#"webhooks[0].matchConditions[0].expression: Invalid value: "1 +": compilation failed: ERROR: <input>:1:4:"#), "{errs:?}");
        assert!(VALIDATING.validate_update(&bad, &bad).is_empty());
        assert_eq!(VALIDATING.validate_update(&bad, &hook("true")).len(), 1);
    }
}
