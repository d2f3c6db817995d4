//! RoleBindings and ClusterRoleBindings (rbac.authorization.k8s.io/v1): a user may bind
//! a role only if the user holds every permission it grants (here), or with the `bind`
//! verb on that role.

use super::defaults::{object, objects, or_insert_str, str_of, unset_str};
use super::Strategy;
use crate::authorization::escalation::Grants;
use crate::rest::object::{meta_str, Object};
use crate::status::ApiError;
use serde_json::Value;

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

pub struct RoleBindings(pub &'static str);

pub const ROLE_BINDINGS: RoleBindings = RoleBindings("rolebindings");
pub const CLUSTER_ROLE_BINDINGS: RoleBindings = RoleBindings("clusterrolebindings");

/// Whether an update changes only what the garbage collector writes (owners and
/// finalizers), which needs no grant check (upstream's `IsOnlyMutatingGCFields`).
fn only_gc_fields_changed(old: &Object, new: &Object) -> bool {
    let strip = |o: &Object| {
        let mut o = o.clone();
        if let Some(Value::Object(meta)) = o.get_mut("metadata") {
            for field in ["ownerReferences", "finalizers", "managedFields", "resourceVersion"] {
                meta.remove(field);
            }
        }
        o
    };
    strip(old) == strip(new)
}

impl Strategy for RoleBindings {
    fn name(&self) -> &'static str {
        self.0
    }

    /// Users and groups are RBAC's own subjects, and the role RBAC's: their apiGroup
    /// says so when left out.
    fn default(&self, obj: &mut Object) {
        if let Some(role_ref) = object(obj, "roleRef") {
            or_insert_str(role_ref, "apiGroup", RBAC_GROUP);
        }
        for subject in objects(obj, "subjects") {
            if unset_str(subject, "apiGroup") && matches!(str_of(subject, "kind"), "User" | "Group") {
                subject.insert("apiGroup".into(), Value::String(RBAC_GROUP.into()));
            }
        }
    }

    fn check_grants(&self, grants: &Grants<'_>, new: &Object, old: Option<&Object>) -> Result<(), ApiError> {
        if old.is_some_and(|old| only_gc_fields_changed(old, new)) || grants.privileged() {
            return Ok(());
        }
        let role_ref = |field| {
            new.get("roleRef")
                .and_then(|r| r.get(field))
                .and_then(Value::as_str)
                .unwrap_or("")
        };
        let (kind, role) = (role_ref("kind"), role_ref("name"));
        if grants.may_bind(kind, role) {
            return Ok(());
        }
        let rules = grants.role_rules(kind, role)?;
        grants.confirm_no_escalation(meta_str(new, "name"), &rules)
    }
}
