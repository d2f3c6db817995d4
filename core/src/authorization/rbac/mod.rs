//! The RBAC authorizer, as upstream's `rbac` authorizer decides: a request is allowed
//! when a rule of a role bound to the user (by a ClusterRoleBinding, or a RoleBinding
//! in the request's namespace) allows it; otherwise RBAC has no opinion.
//!
//! The objects come from the watch caches of the four RBAC resources, never from
//! storage: the index over them is rebuilt when one of those caches changes, and a
//! decision reads only the index.

pub mod aggregation;
pub mod covers;
mod index;
pub mod reconcile;
pub mod rule;

pub use index::{Index, Objects, RoleMissing};
pub use rule::PolicyRule;

use super::{Attributes, NonResourceRule, Opinion, ResourceRule, Rules};
use crate::registry::Served;
use crate::watch_cache::WatchCache;
use std::sync::{Arc, OnceLock, RwLock};

/// The RBAC group and its four resources, in the order of [`Objects`].
pub const GROUP: &str = "rbac.authorization.k8s.io";
const RESOURCES: [&str; 4] = ["clusterroles", "roles", "clusterrolebindings", "rolebindings"];

/// The index and the cache changes it was built at.
#[derive(Debug, Default)]
struct Built {
    changes: [u64; 4],
    index: Arc<Index>,
}

/// The RBAC authorizer of one server.
#[derive(Default)]
pub struct Rbac {
    caches: OnceLock<Option<[Arc<WatchCache>; 4]>>,
    built: RwLock<Option<Built>>,
}

impl std::fmt::Debug for Rbac {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rbac").field("built", &self.built).finish_non_exhaustive()
    }
}

impl Rbac {
    /// The index as of the caches now, rebuilt first when they changed since.
    pub(crate) fn index(&self, served: &Served, storage_prefix: &str) -> Arc<Index> {
        let Some(caches) = self
            .caches
            .get_or_init(|| resolve_caches(served, storage_prefix))
            .as_ref()
        else {
            return Arc::default();
        };
        let changes = caches.each_ref().map(|c| c.changes());
        if let Some(built) = &*self.built.read().unwrap_or_else(|p| p.into_inner()) {
            if built.changes == changes {
                return built.index.clone();
            }
        }
        let mut slot = self.built.write().unwrap_or_else(|p| p.into_inner());
        if let Some(built) = &*slot {
            if built.changes == changes {
                return built.index.clone();
            }
        }
        // Read the changes before the objects: a change in between makes the next
        // request build again rather than keep a stale index.
        let lists = caches.each_ref().map(|c| c.last_known());
        let index = Arc::new(Index::build(Objects {
            cluster_roles: &lists[0],
            roles: &lists[1],
            cluster_role_bindings: &lists[2],
            role_bindings: &lists[3],
        }));
        *slot = Some(Built {
            changes,
            index: index.clone(),
        });
        index
    }
}

fn resolve_caches(served: &Served, storage_prefix: &str) -> Option<[Arc<WatchCache>; 4]> {
    served.with_caches(|caches| {
        let get = |resource| {
            let prefix = crate::storage::resource_prefix(storage_prefix, GROUP, resource, None);
            caches.get(&prefix).cloned()
        };
        Some([get(RESOURCES[0])?, get(RESOURCES[1])?, get(RESOURCES[2])?, get(RESOURCES[3])?])
    })
}

/// RBAC's opinion of a request: allowed, or no opinion with the errors met on the way
/// (roles that bindings refer to but do not exist), as upstream words its reason.
pub fn authorize(index: &Index, a: &Attributes<'_>) -> Opinion {
    // The namespace's bindings are looked at first: a namespaced grant is the common
    // case and the cluster's bootstrap bindings (for every authenticated user) are many.
    // Which allows makes no difference; the errors are still reported cluster first.
    let namespace = (!a.namespace.is_empty()).then(|| index.namespaces.get(a.namespace)).flatten();
    let mut errors: [Vec<&str>; 2] = Default::default();
    for (slot, scope) in [(1, namespace), (0, Some(&index.cluster))] {
        for grant in scope.into_iter().flat_map(|s| s.applying_to(&a.user.name, &a.user.groups)) {
            match &grant.rules {
                Ok(rules) => {
                    if rules.iter().any(|r| r.allows(a)) {
                        return Opinion::Allow;
                    }
                }
                Err(e) => errors[slot].push(e),
            }
        }
    }
    let errors = errors.concat();
    let reason = match errors.is_empty() {
        true => String::new(),
        false => format!("RBAC: {}", super::aggregate(&errors)),
    };
    Opinion::NoOpinion(reason)
}

/// Upstream's reason for allowing `a`: the first binding whose role allows it, and the
/// subject through which it applies (`RBAC: allowed by ClusterRoleBinding "x" of
/// ClusterRole "y" to Group "z"`); `None` when RBAC does not allow it.
pub fn allowed_by(index: &Index, a: &Attributes<'_>) -> Option<String> {
    let scopes = std::iter::once(&index.cluster).chain(if a.namespace.is_empty() {
        None
    } else {
        index.namespaces.get(a.namespace)
    });
    for scope in scopes {
        for grant in scope.applying_to(&a.user.name, &a.user.groups) {
            if let Ok(rules) = &grant.rules {
                if rules.iter().any(|r| r.allows(a)) {
                    return Some(grant.allowed_by(a.user));
                }
            }
        }
    }
    None
}

/// Every rule bound to `user` at the cluster scope and in `namespace`, in binding
/// order, with the errors of bindings whose role is missing: upstream's `RulesFor`.
pub fn policy_rules_for(index: &Index, user: &crate::authn::UserInfo, namespace: &str) -> (Vec<PolicyRule>, Vec<String>) {
    let mut rules = Vec::new();
    let mut errors = Vec::new();
    let scopes = std::iter::once(&index.cluster).chain(if namespace.is_empty() {
        None
    } else {
        index.namespaces.get(namespace)
    });
    for scope in scopes {
        for grant in scope.applying_to(&user.name, &user.groups) {
            match &grant.rules {
                Ok(list) => rules.extend(list.iter().cloned()),
                Err(e) => errors.push(e.clone()),
            }
        }
    }
    (rules, errors)
}

/// What `user` may do in `namespace`, as a rules review lists it.
pub fn rules_for(index: &Index, user: &crate::authn::UserInfo, namespace: &str) -> Rules {
    let (policy, errors) = policy_rules_for(index, user, namespace);
    let mut rules = Rules::default();
    for r in policy {
        if !r.resources.is_empty() {
            rules.resource_rules.push(ResourceRule {
                verbs: r.verbs.clone(),
                api_groups: r.api_groups.clone(),
                resources: r.resources.clone(),
                resource_names: r.resource_names.clone(),
            });
        }
        if !r.non_resource_urls.is_empty() {
            rules.non_resource_rules.push(NonResourceRule {
                verbs: r.verbs,
                non_resource_urls: r.non_resource_urls,
            });
        }
    }
    // RBAC lists every rule it has, so the list is complete even with errors.
    rules.evaluation_error = super::aggregate(&errors);
    rules
}

#[cfg(test)]
mod tests;
