//! RoleBindings and ClusterRoleBindings (rbac.authorization.k8s.io/v1): a user may bind
//! a role only if the user holds every permission it grants (here), or with the `bind`
//! verb on that role. The role they bind and their subjects are checked as upstream's
//! `ValidateRoleBinding` checks them; the role bound never changes.

use super::columns::{self as cols, Column};
use super::defaults::{object, objects, or_insert_str, str_of, unset_str};
use super::Strategy;
use crate::authorization::escalation::Grants;
use crate::rest::object::{meta_str, Object};
use crate::status::ApiError;
use crate::validation::{names, FieldError};
use serde_json::Value;

/// RoleBindings (`namespaced`, binding Roles or ClusterRoles) or ClusterRoleBindings
/// (binding ClusterRoles).
pub struct RoleBindings {
    resource: &'static str,
    namespaced: bool,
}

pub const ROLE_BINDINGS: RoleBindings = RoleBindings { resource: "rolebindings", namespaced: true };
pub const CLUSTER_ROLE_BINDINGS: RoleBindings = RoleBindings { resource: "clusterrolebindings", namespaced: false };

const RBAC_GROUP: &str = crate::authorization::rbac::GROUP;

fn text<'a>(v: &'a Value, field: &str) -> &'a str {
    v.get(field).and_then(Value::as_str).unwrap_or("")
}

/// A subject's or roleRef's `apiGroup`, with the default upstream's decoding gives an
/// empty one (the RBAC group, but none for a ServiceAccount).
fn api_group<'a>(v: &'a Value, default: &'a str) -> &'a str {
    match text(v, "apiGroup") {
        "" => default,
        group => group,
    }
}

fn validate(binding: &Object, namespaced: bool) -> Vec<FieldError> {
    let null = Value::Null;
    let role_ref = binding.get("roleRef").unwrap_or(&null);
    let mut errs = Vec::new();
    let group = api_group(role_ref, RBAC_GROUP);
    if group != RBAC_GROUP {
        errs.push(FieldError::not_supported("roleRef.apiGroup", group, &[RBAC_GROUP]));
    }
    let kinds: &[&str] = if namespaced { &["Role", "ClusterRole"] } else { &["ClusterRole"] };
    if !kinds.contains(&text(role_ref, "kind")) {
        errs.push(FieldError::not_supported("roleRef.kind", text(role_ref, "kind"), kinds));
    }
    match text(role_ref, "name") {
        "" => errs.push(FieldError::required("roleRef.name", "")),
        name => errs.extend(names::path_segment(name).into_iter().map(|m| FieldError::invalid("roleRef.name", name, m))),
    }
    let subjects = binding.get("subjects").and_then(Value::as_array);
    for (i, subject) in subjects.into_iter().flatten().enumerate() {
        errs.extend(validate_subject(subject, namespaced, &format!("subjects[{i}]")));
    }
    errs
}

fn validate_subject(subject: &Value, namespaced: bool, path: &str) -> Vec<FieldError> {
    let at = |child: &str| format!("{path}.{child}");
    let name = text(subject, "name");
    let mut errs = Vec::new();
    if name.is_empty() {
        errs.push(FieldError::required(&at("name"), ""));
    }
    match text(subject, "kind") {
        "ServiceAccount" => {
            if !name.is_empty() {
                errs.extend(names::dns1123_subdomain(name).into_iter().map(|m| FieldError::invalid(&at("name"), name, m)));
            }
            let group = api_group(subject, "");
            if !group.is_empty() {
                errs.push(FieldError::not_supported(&at("apiGroup"), group, &[""]));
            }
            if !namespaced && text(subject, "namespace").is_empty() {
                errs.push(FieldError::required(&at("namespace"), ""));
            }
        }
        "User" | "Group" => {
            let group = api_group(subject, RBAC_GROUP);
            if group != RBAC_GROUP {
                errs.push(FieldError::not_supported(&at("apiGroup"), group, &[RBAC_GROUP]));
            }
        }
        other => errs.push(FieldError::not_supported(&at("kind"), other, &["ServiceAccount", "User", "Group"])),
    }
    errs
}

/// The roleRef as upstream prints its internal type (Go field names, no JSON tags).
fn role_ref_shown(binding: &Object) -> String {
    let null = Value::Null;
    let r = binding.get("roleRef").unwrap_or(&null);
    let quoted = |s: &str| crate::validation::go_json_string(s);
    format!(
        "{{\"APIGroup\":{},\"Kind\":{},\"Name\":{}}}",
        quoted(api_group(r, RBAC_GROUP)),
        quoted(text(r, "kind")),
        quoted(text(r, "name"))
    )
}

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
        self.resource
    }

    fn columns(&self) -> super::columns::Columns<'_> {
        super::columns::Columns::Builtin(if self.resource == "clusterrolebindings" { CLUSTER_COLUMNS } else { COLUMNS })
    }

    fn validate_create(&self, new: &Object) -> Vec<FieldError> {
        validate(new, self.namespaced)
    }

    fn validate_update(&self, new: &Object, old: &Object) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if role_ref_shown(new) != role_ref_shown(old) {
            errs.push(FieldError::invalid_unquoted("roleRef", &role_ref_shown(new), "cannot change roleRef"));
        }
        errs.extend(validate(new, self.namespaced));
        errs
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

const COLUMNS: &[Column] = &[
    Column { name: "Role", kind: "string", description: "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.", format: "", priority: 0, cell: role_cell },
    Column { name: "Users", kind: "string", description: "Users in the roleBinding", format: "", priority: 1, cell: |o| subjects(o, "User") },
    Column { name: "Groups", kind: "string", description: "Groups in the roleBinding", format: "", priority: 1, cell: |o| subjects(o, "Group") },
    Column { name: "ServiceAccounts", kind: "string", description: "ServiceAccounts in the roleBinding", format: "", priority: 1, cell: |o| subjects(o, "ServiceAccount") },
];

const CLUSTER_COLUMNS: &[Column] = &[
    Column { name: "Role", kind: "string", description: "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.", format: "", priority: 0, cell: role_cell },
    Column { name: "Users", kind: "string", description: "Users in the clusterRoleBinding", format: "", priority: 1, cell: |o| subjects(o, "User") },
    Column { name: "Groups", kind: "string", description: "Groups in the clusterRoleBinding", format: "", priority: 1, cell: |o| subjects(o, "Group") },
    Column { name: "ServiceAccounts", kind: "string", description: "ServiceAccounts in the clusterRoleBinding", format: "", priority: 1, cell: |o| subjects(o, "ServiceAccount") },
];

/// ROLE: the kind and name of the binding's roleRef.
fn role_cell(binding: &Object) -> Value {
    let field = |k: &str| cols::at(binding, &["roleRef", k]).and_then(Value::as_str).unwrap_or("");
    serde_json::json!(format!("{}/{}", field("kind"), field("name")))
}

/// The subjects of one kind, joined with ", " (ServiceAccounts as namespace/name).
fn subjects(binding: &Object, kind: &str) -> Value {
    let names: Vec<String> = cols::at(binding, &["subjects"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|s| s.get("kind").and_then(Value::as_str) == Some(kind))
        .map(|s| {
            let name = s.get("name").and_then(Value::as_str).unwrap_or("");
            match kind {
                "ServiceAccount" => format!("{}/{name}", s.get("namespace").and_then(Value::as_str).unwrap_or("")),
                _ => name.to_owned(),
            }
        })
        .collect();
    serde_json::json!(names.join(", "))
}
