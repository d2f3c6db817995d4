//! The resource registry: every resource the server serves, described as plain data.
//!
//! The built-in Kubernetes v1.33 API is one static table ([`builtin`]) with one row per
//! resource; [`Registry::builtin`] turns it into owned [`Resource`] values at startup.
//! Custom resources join the same registry at run time (`Server::add_resource`, which
//! [`Registry::insert`]s into a copy and serves it), so routing, discovery, OpenAPI and
//! error messages treat built-in and custom resources alike.
//!
//! The registry answers the questions the rest of the server asks about resources: does
//! `apps/v1 deployments` exist, is it namespaced, which verbs and subresources does it
//! serve, what is its kind, its list kind, its short names, which rule validates its
//! `metadata.name`, which strategy its objects follow (`resources/`), and which groups
//! and versions exist in which order.
//!
//! A server serves one registry at a time and swaps it whole when a resource joins or
//! leaves ([`served`]): each entry is shared (`Arc`), so a request keeps the entry and
//! the snapshot it was routed with while the server moves on.

mod builtin;
mod served;
#[cfg(test)]
mod tests;

pub use served::{Snapshot, WatchCaches};
pub(crate) use served::Served;

use crate::resources::SharedStrategy;
use crate::schema::ResourceSchema;
use std::sync::Arc;

/// The rule kube-apiserver's validation applies to `metadata.name` of a resource.
///
/// Every name must also be a valid path segment (the generic object-meta check run after
/// the type's own validation); the variants other than [`NameRule::PathSegment`] are the
/// stricter rules the resource's own validation adds on top.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NameRule {
    /// RFC 1123 subdomain: lower-case alphanumerics, `-` and `.`, at most 253 characters
    /// (most resources: pods, configmaps, secrets, deployments, nodes, leases, …).
    Dns1123Subdomain,
    /// RFC 1123 label: lower-case alphanumerics and `-`, at most 63 characters
    /// (namespaces).
    Dns1123Label,
    /// RFC 1035 label: like an RFC 1123 label but starting with a letter (services).
    Dns1035Label,
    /// Only a valid path segment: not `.` or `..`, no `/` or `%` (RBAC objects, and
    /// resources whose validation checks nothing more, such as core/v1 events and
    /// poddisruptionbudgets).
    PathSegment,
}

/// One subresource of a resource, as discovery reports it (`pods/status`,
/// `deployments/scale`, …).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subresource {
    /// The subresource name, without the resource: `status`, `scale`, `log`.
    pub name: String,
    /// The kind the subresource returns (`Pod` for `pods/status`, `Scale` for
    /// `deployments/scale`, `PodExecOptions` for `pods/exec`).
    pub kind: String,
    /// The group of `kind` when it differs from the parent's (`autoscaling` for
    /// `deployments/scale`, `policy` for `pods/eviction`); `None` when the kind lives in
    /// the parent's group.
    pub group: Option<String>,
    /// The version of `kind` when it differs from the parent's (`v1` for
    /// `deployments/scale`); `None` when the kind lives in the parent's version.
    pub version: Option<String>,
    /// The verbs served on the subresource, as kube lists them.
    pub verbs: Vec<String>,
}

impl Subresource {
    /// Whether `verb` is served on this subresource.
    pub fn has_verb(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }
}

/// One resource in one group version: `apps/v1 deployments`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resource {
    /// API group; `""` for the core (legacy) group served under `/api`.
    pub group: String,
    /// API version within the group: `v1`, `v2`, `v1beta1`.
    pub version: String,
    /// The kind of one object: `Deployment`.
    pub kind: String,
    /// The resource name used in URLs: `deployments`.
    pub plural: String,
    /// The singular name: `deployment`.
    pub singular: String,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// Verbs served on the resource, in the order kube lists them.
    pub verbs: Vec<String>,
    /// Short names (`deploy`), in the order kube lists them.
    pub short_names: Vec<String>,
    /// Categories (`all`), in the order kube lists them.
    pub categories: Vec<String>,
    /// Subresources, sorted by name as discovery lists them.
    pub subresources: Vec<Subresource>,
    /// The rule for `metadata.name`.
    pub name_rule: NameRule,
    /// The storage version hash shown in `/api/v1` and `/apis/<group>/<version>`, when
    /// kube publishes one.
    pub storage_version_hash: Option<String>,
    /// The rules its objects follow: defaults, preparation, columns, selectable fields,
    /// subresource handlers (compared and printed by name).
    pub strategy: SharedStrategy,
    /// The schema its bodies decode against and its OpenAPI documents show.
    pub schema: ResourceSchema,
}

impl Resource {
    /// Whether objects of this resource have a Kubernetes protobuf form: every
    /// built-in kind has one, custom resources none.
    pub fn has_protobuf(&self) -> bool {
        crate::go_types::message_in(&self.group, &self.version, &self.kind).is_some()
    }

    /// The kind of a list of these objects: `ConfigMapList`.
    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }

    /// The `apiVersion` of objects of this resource: `v1` for the core group, else
    /// `apps/v1`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The group-qualified resource as kube names it in error messages: `configmaps`
    /// for the core group, `deployments.apps` otherwise.
    pub fn group_resource(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// The group whose storage keys hold this resource's objects: its own, or that of
    /// the resource it shares them with ([`crate::resources::Strategy::storage_group`]:
    /// events.k8s.io Events are stored as core Events, under `/registry/events/`).
    pub fn storage_group(&self) -> &str {
        self.strategy.storage_group().unwrap_or(&self.group)
    }

    /// Whether the resource's objects are stored under its own group's keys, rather
    /// than those of another resource that serves them too.
    pub fn stores_own(&self) -> bool {
        self.strategy.storage_group().is_none()
    }

    /// The key prefix of the resource's objects (in `namespace` when given), under
    /// the storage root `root`.
    pub fn storage_prefix(&self, root: &str, namespace: Option<&str>) -> String {
        crate::storage::resource_prefix(root, self.storage_group(), &self.plural, namespace)
    }

    /// The storage key of the object `name` (in `namespace` when given).
    pub fn storage_key(&self, root: &str, namespace: Option<&str>, name: &str) -> String {
        crate::storage::object_key(root, self.storage_group(), &self.plural, namespace, name)
    }

    /// Whether `verb` is served on the resource itself.
    pub fn has_verb(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }

    /// The subresource called `name`, if the resource has one.
    pub fn subresource(&self, name: &str) -> Option<&Subresource> {
        self.subresources.iter().find(|s| s.name == name)
    }

    /// Whether the resource serves a `status` subresource, which alone may write the
    /// status of its objects.
    pub fn has_status(&self) -> bool {
        self.subresource("status").is_some()
    }

    /// Whether a DELETE answers with the deleted object rather than a success Status
    /// (kube-apiserver's `ReturnDeletedObject` storages).
    pub fn delete_returns_object(&self) -> bool {
        self.strategy.delete_returns_object()
    }

    /// Whether the resource lives in the core group (served under `/api`).
    pub fn is_core(&self) -> bool {
        self.group.is_empty()
    }
}

/// One API group as `/apis` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupInfo {
    /// The group name: `apps`.
    pub name: String,
    /// The served versions, most preferred first: `["v2", "v1"]` for `autoscaling`.
    pub versions: Vec<String>,
    /// The preferred version: the first of `versions`.
    pub preferred_version: String,
}

/// The set of resources the server serves.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Registry {
    resources: Vec<Arc<Resource>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Registry {
        Registry::default()
    }

    /// The built-in resources of Kubernetes v1.33 that Apiary serves.
    pub fn builtin() -> Registry {
        Registry {
            resources: builtin::TABLE
                .iter()
                .map(|row| Arc::new(row.to_resource()))
                .collect(),
        }
    }

    /// The resource `plural` in `group`/`version` (`""` for the core group).
    pub fn lookup(&self, group: &str, version: &str, plural: &str) -> Option<&Resource> {
        self.lookup_shared(group, version, plural).map(|r| &**r)
    }

    /// [`Registry::lookup`], as the shared entry a request can keep.
    pub fn lookup_shared(&self, group: &str, version: &str, plural: &str) -> Option<&Arc<Resource>> {
        self.resources
            .iter()
            .find(|r| r.plural == plural && r.version == version && r.group == group)
    }

    /// The position of the resource `plural` in `group`/`version`.
    pub fn index_of(&self, group: &str, version: &str, plural: &str) -> Option<usize> {
        self.resources
            .iter()
            .position(|r| r.plural == plural && r.version == version && r.group == group)
    }

    /// The resource serving `kind` in `group`/`version`.
    pub fn lookup_kind(&self, group: &str, version: &str, kind: &str) -> Option<&Resource> {
        self.resources
            .iter()
            .find(|r| r.kind == kind && r.version == version && r.group == group)
            .map(|r| &**r)
    }

    /// Every resource, in registration order.
    pub fn resources(&self) -> &[Arc<Resource>] {
        &self.resources
    }

    /// The resources of one group version, sorted by resource name as discovery lists
    /// them.
    pub fn resources_in(&self, group: &str, version: &str) -> Vec<&Resource> {
        let mut found: Vec<&Resource> = self
            .resources
            .iter()
            .filter(|r| r.group == group && r.version == version)
            .map(|r| &**r)
            .collect();
        found.sort_by(|a, b| a.plural.cmp(&b.plural));
        found
    }

    /// The API groups served under `/apis` (the core group is not one of them), in the
    /// order kube-apiserver lists them, each with its versions most preferred first.
    pub fn groups(&self) -> Vec<GroupInfo> {
        let mut names: Vec<&str> = Vec::new();
        for r in &self.resources {
            if !r.group.is_empty() && !names.contains(&r.group.as_str()) {
                names.push(&r.group);
            }
        }
        names.sort_by(|a, b| compare_groups(a, b));
        names
            .into_iter()
            .map(|name| {
                let versions: Vec<String> = self
                    .versions_of(name)
                    .into_iter()
                    .map(str::to_owned)
                    .collect();
                GroupInfo {
                    name: name.to_owned(),
                    preferred_version: versions[0].clone(),
                    versions,
                }
            })
            .collect()
    }

    /// The versions served for `group` (`""` for the core group), most preferred first;
    /// empty when the group is not served.
    pub fn versions_of(&self, group: &str) -> Vec<&str> {
        let mut versions: Vec<&str> = Vec::new();
        for r in &self.resources {
            if r.group == group && !versions.contains(&r.version.as_str()) {
                versions.push(&r.version);
            }
        }
        versions.sort_by(|a, b| compare_versions(a, b));
        versions
    }

    /// The preferred version of `group`, if the group is served.
    pub fn preferred_version(&self, group: &str) -> Option<&str> {
        self.versions_of(group).first().copied()
    }

    /// Whether `group`/`version` is served.
    pub fn has_group_version(&self, group: &str, version: &str) -> bool {
        self.resources
            .iter()
            .any(|r| r.group == group && r.version == version)
    }

    /// Add a resource, replacing (and returning) one with the same group, version and
    /// plural.
    pub fn insert(&mut self, resource: Resource) -> Option<Arc<Resource>> {
        let existing =
            self.index_of(&resource.group, &resource.version, &resource.plural);
        let resource = Arc::new(resource);
        match existing {
            Some(i) => Some(std::mem::replace(&mut self.resources[i], resource)),
            None => {
                self.resources.push(resource);
                None
            }
        }
    }

    /// Remove and return the resource `plural` in `group`/`version`.
    pub fn remove(&mut self, group: &str, version: &str, plural: &str) -> Option<Arc<Resource>> {
        let i = self.index_of(group, version, plural)?;
        Some(self.resources.remove(i))
    }
}

/// The built-in groups in the order kube-apiserver lists them in `/apis` (its API
/// service group priorities, highest first; ties broken by name). Groups Apiary does not
/// serve are kept so that anything later added to them still sorts where kube puts it.
const GROUP_ORDER: &[&str] = &[
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "internal.apiserver.k8s.io",
    "resource.k8s.io",
    "storagemigration.k8s.io",
];

/// Group order: built-in groups by their priority, then every other group (custom
/// resources get a lower priority than any built-in) by name.
fn compare_groups(a: &str, b: &str) -> std::cmp::Ordering {
    let rank = |g: &str| GROUP_ORDER.iter().position(|known| *known == g);
    match (rank(a), rank(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// Version order, most preferred first, as kube sorts versions: GA before beta before
/// alpha; within a level, higher major then higher minor first; versions not of the
/// `v<N>[alpha|beta<M>]` form last, by name.
pub fn compare_versions(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (parse_kube_version(a), parse_kube_version(b)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// `(stability, major, minor)` where stability is 0 alpha, 1 beta, 2 GA; larger sorts
/// as more preferred.
fn parse_kube_version(v: &str) -> Option<(u8, u64, u64)> {
    let rest = v.strip_prefix('v')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let major: u64 = rest[..digits].parse().ok()?;
    let rest = &rest[digits..];
    if rest.is_empty() {
        return Some((2, major, 0));
    }
    let (stability, minor) = if let Some(m) = rest.strip_prefix("beta") {
        (1, m)
    } else if let Some(m) = rest.strip_prefix("alpha") {
        (0, m)
    } else {
        return None;
    };
    if minor.is_empty() || !minor.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((stability, major, minor.parse().ok()?))
}
