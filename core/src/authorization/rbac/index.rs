//! The RBAC objects of the cluster, indexed by subject: which bindings name a user or
//! a group, and the rules of the role each binding refers to, resolved when the index
//! is built. A decision is then a few map lookups instead of a walk over every binding
//! (upstream walks them all on every request).

use super::rule::PolicyRule;
use crate::storage::KeyValue;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::Arc;

/// A binding of a role to subjects, with the role's rules (or why they are missing).
#[derive(Debug)]
pub struct Grant {
    /// The rules of the referenced role; the error upstream's rule resolver reports
    /// when it does not exist.
    pub rules: Result<Arc<[PolicyRule]>, String>,
    /// The binding and its role as upstream names them in an allow reason:
    /// `RoleBinding "name/namespace" of Role "role"`.
    pub source: String,
    /// Its subjects, in order: whom each names, and how upstream describes it.
    pub subjects: Vec<Named>,
}

/// A subject of a binding.
#[derive(Debug)]
pub struct Named {
    pub group: bool,
    /// The user or group name (a ServiceAccount's user name).
    pub name: String,
    /// `User "jane"`, `Group "dev"`, `ServiceAccount "robot/ns"`.
    pub described: String,
}

impl Grant {
    /// Upstream's allow reason when this grant allowed `user`'s request.
    pub fn allowed_by(&self, user: &crate::authn::UserInfo) -> String {
        let subject = self
            .subjects
            .iter()
            .find(|s| if s.group { user.in_group(&s.name) } else { user.name == s.name })
            .map_or("", |s| s.described.as_str());
        format!("RBAC: allowed by {} to {subject}", self.source)
    }
}

/// The bindings of one scope (the cluster, or one namespace), by subject.
#[derive(Debug, Default)]
pub struct Bindings {
    /// In the order the bindings are listed (by name).
    pub grants: Vec<Grant>,
    by_user: HashMap<String, Vec<usize>>,
    by_group: HashMap<String, Vec<usize>>,
}

impl Bindings {
    /// The grants whose subjects include this user or one of its groups, in binding
    /// order, each once.
    pub fn applying_to<'a>(&'a self, user: &str, groups: &[String]) -> impl Iterator<Item = &'a Grant> {
        let mut found: Vec<usize> = Vec::new();
        if let Some(ids) = self.by_user.get(user) {
            found.extend(ids);
        }
        for g in groups {
            if let Some(ids) = self.by_group.get(g.as_str()) {
                found.extend(ids);
            }
        }
        if found.len() > 1 {
            found.sort_unstable();
            found.dedup();
        }
        found.into_iter().map(|i| &self.grants[i])
    }

    fn add(&mut self, subjects: &[Subject], default_namespace: &str, rules: Result<Arc<[PolicyRule]>, String>, source: String) {
        let id = self.grants.len();
        let mut named = Vec::new();
        for s in subjects {
            let (map, key) = match s.kind.as_str() {
                "User" => (&mut self.by_user, s.name.clone()),
                "Group" => (&mut self.by_group, s.name.clone()),
                // A ServiceAccount without a namespace is the binding's own namespace's
                // (none for a ClusterRoleBinding: it names no one).
                "ServiceAccount" => {
                    let ns = if s.namespace.is_empty() { default_namespace } else { &s.namespace };
                    if ns.is_empty() {
                        continue;
                    }
                    (&mut self.by_user, format!("system:serviceaccount:{ns}:{}", s.name))
                }
                _ => continue,
            };
            let ids = map.entry(key.clone()).or_default();
            if ids.last() != Some(&id) {
                ids.push(id);
            }
            let described = match s.kind.as_str() {
                "ServiceAccount" => {
                    let ns = if s.namespace.is_empty() { default_namespace } else { &s.namespace };
                    format!("ServiceAccount {:?}", format!("{}/{ns}", s.name))
                }
                kind => format!("{kind} {:?}", s.name),
            };
            named.push(Named {
                group: s.kind == "Group",
                name: key,
                described,
            });
        }
        if !named.is_empty() {
            self.grants.push(Grant {
                rules,
                source,
                subjects: named,
            });
        }
    }
}

/// Every binding in the cluster, by scope and subject, and every role's rules.
#[derive(Debug, Default)]
pub struct Index {
    pub cluster: Bindings,
    pub namespaces: HashMap<String, Bindings>,
    cluster_roles: HashMap<String, Arc<[PolicyRule]>>,
    roles: HashMap<(String, String), Arc<[PolicyRule]>>,
}

#[derive(Deserialize)]
struct Meta {
    #[serde(default)]
    name: String,
    #[serde(default)]
    namespace: String,
}

#[derive(Deserialize)]
struct Role {
    metadata: Meta,
    #[serde(default)]
    rules: Option<Vec<PolicyRule>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RoleRef {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    name: String,
}

#[derive(Deserialize)]
struct Subject {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    namespace: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Binding {
    metadata: Meta,
    role_ref: RoleRef,
    #[serde(default)]
    subjects: Option<Vec<Subject>>,
}

/// The stored objects the index is built from, each list in key order.
pub struct Objects<'a> {
    pub cluster_roles: &'a [KeyValue],
    pub roles: &'a [KeyValue],
    pub cluster_role_bindings: &'a [KeyValue],
    pub role_bindings: &'a [KeyValue],
}

fn parse<'a, T: Deserialize<'a>>(kvs: &'a [KeyValue]) -> impl Iterator<Item = T> + 'a {
    // An object that does not parse was refused by validation; skip rather than fail
    // every decision.
    kvs.iter().filter_map(|kv| serde_json::from_slice(&kv.value).ok())
}

impl Index {
    pub fn build(objects: Objects<'_>) -> Index {
        let rules_of = |r: Role| -> (String, Arc<[PolicyRule]>) {
            (r.metadata.name, r.rules.unwrap_or_default().into())
        };
        let cluster_roles: HashMap<String, Arc<[PolicyRule]>> =
            parse(objects.cluster_roles).map(rules_of).collect();
        let mut roles: HashMap<(String, String), Arc<[PolicyRule]>> = HashMap::new();
        for r in parse::<Role>(objects.roles) {
            let ns = r.metadata.namespace.clone();
            let (name, rules) = rules_of(r);
            roles.insert((ns, name), rules);
        }
        let mut index = Index {
            cluster_roles,
            roles,
            ..Index::default()
        };
        let resolve = |role_ref: &RoleRef, namespace: &str| {
            index.role_rules(&role_ref.kind, &role_ref.name, namespace).map_err(|e| e.to_string())
        };
        let mut cluster = Bindings::default();
        let mut namespaces: HashMap<String, Bindings> = HashMap::new();
        for b in parse::<Binding>(objects.cluster_role_bindings) {
            let rules = resolve(&b.role_ref, "");
            let source = format!("ClusterRoleBinding {:?} of {} {:?}", b.metadata.name, b.role_ref.kind, b.role_ref.name);
            cluster.add(b.subjects.as_deref().unwrap_or_default(), "", rules, source);
        }
        for b in parse::<Binding>(objects.role_bindings) {
            let ns = b.metadata.namespace;
            let rules = resolve(&b.role_ref, &ns);
            let source = format!(
                "RoleBinding {:?} of {} {:?}",
                format!("{}/{ns}", b.metadata.name),
                b.role_ref.kind,
                b.role_ref.name
            );
            let scope = namespaces.entry(ns.clone()).or_default();
            scope.add(b.subjects.as_deref().unwrap_or_default(), &ns, rules, source);
        }
        index.cluster = cluster;
        index.namespaces = namespaces;
        index
    }

    /// The rules of the role a binding in `namespace` (empty for a
    /// ClusterRoleBinding) refers to: upstream's `GetRoleReferenceRules`.
    pub fn role_rules(&self, kind: &str, name: &str, namespace: &str) -> Result<Arc<[PolicyRule]>, RoleMissing> {
        match kind {
            "ClusterRole" => self.cluster_roles.get(name).cloned().ok_or(RoleMissing::NotFound {
                resource: "clusterroles",
                name: name.to_owned(),
            }),
            "Role" => self
                .roles
                .get(&(namespace.to_owned(), name.to_owned()))
                .cloned()
                .ok_or(RoleMissing::NotFound {
                    resource: "roles",
                    name: name.to_owned(),
                }),
            kind => Err(RoleMissing::UnsupportedKind(kind.to_owned())),
        }
    }
}

/// Why a role reference has no rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RoleMissing {
    NotFound { resource: &'static str, name: String },
    UnsupportedKind(String),
}

impl std::fmt::Display for RoleMissing {
    /// As upstream's errors read: `clusterrole.rbac.authorization.k8s.io "x" not found`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RoleMissing::NotFound { resource, name } => {
                let singular = resource.trim_end_matches('s');
                write!(f, "{singular}.rbac.authorization.k8s.io \"{name}\" not found")
            }
            RoleMissing::UnsupportedKind(kind) => write!(f, "unsupported role reference kind: \"{kind}\""),
        }
    }
}
