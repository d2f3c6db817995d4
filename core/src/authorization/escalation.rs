//! Escalation prevention, as upstream's RBAC registry enforces it: a user may only
//! write a Role or ClusterRole granting what the user already holds, unless allowed
//! the `escalate` verb on it; and may only bind a role whose permissions the user
//! holds, unless allowed the `bind` verb on it. Members of `system:masters` may do
//! either.

use super::rbac::{self, covers, PolicyRule, RoleMissing};
use super::{Attributes, Decision, PRIVILEGED_GROUP};
use crate::authn::UserInfo;
use crate::shared::Shared;
use crate::status::ApiError;

/// What a write that grants permissions is checked with: who writes, where, and the
/// server's authorizers and RBAC index.
pub struct Grants<'a> {
    pub(crate) shared: &'a Shared,
    pub user: &'a UserInfo,
    /// The namespace of the object written ("" for cluster-scoped ones).
    pub namespace: &'a str,
    /// The resource written (`roles`, `clusterrolebindings`, …) and its name.
    pub resource: &'a str,
    pub name: &'a str,
}

impl Grants<'_> {
    /// `system:masters` may grant anything (upstream's `EscalationAllowed`).
    pub fn privileged(&self) -> bool {
        self.user.in_group(PRIVILEGED_GROUP)
    }

    /// Whether the user is allowed `verb` on `resource` `name` of the RBAC group.
    fn allowed(&self, verb: &str, resource: &str, name: &str) -> bool {
        let attributes = Attributes {
            user: self.user,
            verb,
            resource_request: true,
            namespace: self.namespace,
            api_group: rbac::GROUP,
            api_version: "",
            resource,
            subresource: "",
            name,
            path: "",
        };
        self.shared.authorize(attributes) == Decision::Allow
    }

    /// Upstream's `RoleEscalationAuthorized`: the `escalate` verb on the role written.
    pub fn may_escalate(&self) -> bool {
        self.allowed("escalate", self.resource, self.name)
    }

    /// Upstream's `BindingAuthorized`: the `bind` verb on the role referred to.
    pub fn may_bind(&self, role_kind: &str, role_name: &str) -> bool {
        let resource = match role_kind {
            "Role" => "roles",
            "ClusterRole" => "clusterroles",
            _ => return false,
        };
        self.allowed("bind", resource, role_name)
    }

    /// The rules of the role a binding written here refers to.
    pub fn role_rules(&self, role_kind: &str, role_name: &str) -> Result<Vec<PolicyRule>, ApiError> {
        let index = self.shared.rbac_index();
        match index.role_rules(role_kind, role_name, self.namespace) {
            Ok(rules) => Ok(rules.to_vec()),
            Err(RoleMissing::NotFound { resource, name }) => Err(ApiError::not_found(
                rbac::GROUP,
                resource.trim_end_matches('s'),
                &name,
            )),
            Err(e @ RoleMissing::UnsupportedKind(_)) => Err(ApiError::internal(e)),
        }
    }

    /// Upstream's `ConfirmNoEscalation`: the user holds every rule of `rules` here;
    /// otherwise a 403 about the object `name`, listing what is missing.
    pub fn confirm_no_escalation(&self, name: &str, rules: &[PolicyRule]) -> Result<(), ApiError> {
        self.holds(rules).map_err(|message| ApiError::forbidden(rbac::GROUP, self.resource, name, &message))
    }

    /// Whether the user holds every rule of `rules` here; why not otherwise.
    pub fn holds(&self, rules: &[PolicyRule]) -> Result<(), String> {
        let index = self.shared.rbac_index();
        let (held, errors) = rbac::policy_rules_for(&index, self.user, self.namespace);
        let missing = covers::uncovered(&held, rules);
        if missing.is_empty() {
            return Ok(());
        }
        let mut message = format!(
            "user {:?} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
            self.user.name,
            covers::go_quoted(&self.user.groups),
            covers::describe(&missing).join("\n")
        );
        if !errors.is_empty() {
            message.push_str(&format!("; resolution errors: [{}]", errors.join(" ")));
        }
        Err(message)
    }
}
