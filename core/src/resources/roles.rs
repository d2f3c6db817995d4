//! Roles and ClusterRoles (rbac.authorization.k8s.io/v1): a user may write one only
//! if it grants nothing the user does not hold, or with the `escalate` verb on it; an
//! `aggregationRule`, which can gather anything, needs every permission. Rules are
//! checked as upstream's `ValidatePolicyRule` checks them.

use super::Strategy;
use crate::authorization::escalation::Grants;
use crate::authorization::rbac::PolicyRule;
use crate::rest::object::{meta_str, Object};
use crate::status::ApiError;
use crate::validation::{go_json, label_selector, FieldError};
use serde_json::Value;

/// Roles (`namespaced`) or ClusterRoles.
pub struct Roles {
    resource: &'static str,
    namespaced: bool,
}

pub const ROLES: Roles = Roles { resource: "roles", namespaced: true };
pub const CLUSTER_ROLES: Roles = Roles { resource: "clusterroles", namespaced: false };

/// Each rule names verbs, and either non-resource URLs (cluster-wide only) or API
/// groups and resources; a ClusterRole's aggregation selectors must be selectors.
fn validate(role: &Object, namespaced: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let rules = role.get("rules").and_then(Value::as_array);
    for (i, rule) in rules.into_iter().flatten().enumerate() {
        errs.extend(policy_rule(rule, namespaced, &format!("rules[{i}]")));
    }
    if let Some(aggregation) = role.get("aggregationRule").filter(|a| !a.is_null()) {
        let path = "aggregationRule.clusterRoleSelectors";
        let selectors = aggregation.get("clusterRoleSelectors").and_then(Value::as_array).filter(|s| !s.is_empty());
        let Some(selectors) = selectors else {
            return [errs, vec![FieldError::required(path, "at least one clusterRoleSelector required if aggregationRule is non-nil")]].concat();
        };
        for (i, selector) in selectors.iter().enumerate() {
            errs.extend(label_selector::validate_convertible(&format!("{path}[{i}]"), selector));
        }
    }
    errs
}

fn policy_rule(rule: &Value, namespaced: bool, path: &str) -> Vec<FieldError> {
    let list = |f: &str| rule.get(f).and_then(Value::as_array).filter(|l| !l.is_empty());
    let at = |child: &str| format!("{path}.{child}");
    let mut errs = Vec::new();
    if list("verbs").is_none() {
        errs.push(FieldError::required(&at("verbs"), "verbs must contain at least one value"));
    }
    if let Some(urls) = list("nonResourceURLs") {
        let shown = go_json(&Value::Array(urls.clone()));
        if namespaced {
            errs.push(FieldError::invalid_unquoted(&at("nonResourceURLs"), &shown, "namespaced rules cannot apply to non-resource URLs"));
        }
        if list("apiGroups").is_some() || list("resources").is_some() || list("resourceNames").is_some() {
            let why = "rules cannot apply to both regular resources and non-resource URLs";
            errs.push(FieldError::invalid_unquoted(&at("nonResourceURLs"), &shown, why));
        }
        return errs;
    }
    if list("apiGroups").is_none() {
        errs.push(FieldError::required(&at("apiGroups"), "resource rules must supply at least one api group"));
    }
    if list("resources").is_none() {
        errs.push(FieldError::required(&at("resources"), "resource rules must supply at least one resource"));
    }
    errs
}

fn rules_of(object: &Object) -> Vec<PolicyRule> {
    object
        .get("rules")
        .cloned()
        .and_then(|r| serde_json::from_value(r).ok())
        .unwrap_or_default()
}

/// Everything: what setting an aggregation rule needs (upstream's `fullAuthority`).
fn full_authority() -> [PolicyRule; 2] {
    let star = || vec!["*".to_owned()];
    [
        PolicyRule {
            verbs: star(),
            api_groups: star(),
            resources: star(),
            ..PolicyRule::default()
        },
        PolicyRule {
            verbs: star(),
            non_resource_urls: star(),
            ..PolicyRule::default()
        },
    ]
}

impl Strategy for Roles {
    fn name(&self) -> &'static str {
        self.resource
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::CREATED_AT
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new, self.namespaced)
    }

    fn validate_update(&self, new: &Object, _old: &Object) -> Vec<FieldError> {
        validate(new, self.namespaced)
    }

    fn check_grants(&self, grants: &Grants<'_>, new: &Object, old: Option<&Object>) -> Result<(), ApiError> {
        if grants.privileged() || grants.may_escalate() {
            return Ok(());
        }
        let name = meta_str(new, "name");
        grants.confirm_no_escalation(name, &rules_of(new))?;
        let rule = |o: &Object| o.get("aggregationRule").cloned().filter(|r| !r.is_null());
        let aggregation = rule(new);
        if aggregation.is_some() && aggregation != old.and_then(rule) && grants.holds(&full_authority()).is_err() {
            return Err(ApiError::forbidden(
                crate::authorization::rbac::GROUP,
                self.resource,
                name,
                "must have cluster-admin privileges to use the aggregationRule",
            ));
        }
        Ok(())
    }
}
