//! Roles and ClusterRoles (rbac.authorization.k8s.io/v1): a user may write one only
//! if it grants nothing the user does not hold, or with the `escalate` verb on it; an
//! `aggregationRule`, which can gather anything, needs every permission.

use super::Strategy;
use crate::authorization::escalation::Grants;
use crate::authorization::rbac::PolicyRule;
use crate::rest::object::{meta_str, Object};
use crate::status::ApiError;

pub struct Roles(pub &'static str);

pub const ROLES: Roles = Roles("roles");
pub const CLUSTER_ROLES: Roles = Roles("clusterroles");

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
        self.0
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
                self.0,
                name,
                "must have cluster-admin privileges to use the aggregationRule",
            ));
        }
        Ok(())
    }
}
