//! Upstream's garbage collector (kube-controller-manager's
//! `garbage-collector-controller`), over every served resource, custom resources
//! included: an object whose owners are all gone is deleted (its own dependents in the
//! background, or as its finalizers say); an owner deleted with `propagationPolicy:
//! Orphan` has its dependents' references to it removed before it goes, and one deleted
//! with `Foreground` waits until its blocking dependents are gone.
//!
//! The collector follows the watch caches through subscriptions of its own
//! ([`graph`]), so each pass only reads what changed; [`decide`] says what each changed
//! object needs, and the pass answers those writes as the server's own requests.

pub mod decide;
mod graph;
mod invalid_namespace;

use crate::registry::Resource;
use crate::shared::Shared;
use crate::storage::{resource_prefix, KeyValue, WatchEvent};
use crate::watch_cache::Subscription;
use bytes::Bytes;
use decide::{Action, Owner};
use graph::{Graph, Node, OwnerRef};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The collector's state between passes.
#[derive(Default)]
pub(crate) struct GarbageCollector {
    graph: Graph,
    /// The resources followed, by index (one version of each).
    resources: Vec<Followed>,
    /// Each followed cache's subscription, by its prefix.
    feeds: BTreeMap<String, (usize, Arc<Subscription>)>,
    /// The (dependent, owner) uids of references looked for in other namespaces.
    checked: BTreeSet<(String, String)>,
}

/// A resource the collector follows.
struct Followed {
    group: String,
    version: String,
    plural: String,
    kind: String,
    namespaced: bool,
}

impl Followed {
    fn api_version(&self) -> String {
        if self.group.is_empty() { self.version.clone() } else { format!("{}/{}", self.group, self.version) }
    }

    /// The path of object `name` (in `namespace`).
    fn path(&self, namespace: Option<&str>, name: &str) -> String {
        let root = if self.group.is_empty() { format!("/api/{}", self.version) } else { format!("/apis/{}", self.api_version()) };
        match namespace.filter(|_| self.namespaced) {
            Some(ns) => format!("{root}/namespaces/{ns}/{}/{name}", self.plural),
            None => format!("{root}/{}/{name}", self.plural),
        }
    }
}

/// One pass at `now`: read what changed, and answer the writes the changed objects
/// need (and the Events about references to owners in other namespaces).
pub(crate) fn pass(shared: &Shared, now: std::time::SystemTime) -> Vec<http::Request<Bytes>> {
    let mut gc = shared.garbage_collector.lock().unwrap_or_else(|p| p.into_inner());
    gc.follow(shared);
    let dirty = gc.graph.take_dirty();
    let owner = |node: &Node, r: &OwnerRef| owner_state(shared, node, r);
    let mut writes = Vec::new();
    for uid in &dirty {
        for action in decide::decide(&gc.graph, uid, &owner) {
            writes.extend(gc.request(&action));
        }
    }
    writes.extend(gc.invalid_namespace_events(shared, &dirty, now));
    writes
}

impl GarbageCollector {
    /// Follow every served resource's cache: subscribe to new ones (reading what they
    /// hold), and take in what the others saw since the last pass.
    fn follow(&mut self, shared: &Shared) {
        let registry = shared.registry();
        // A resource stored as another (events.k8s.io Events as core Events) is
        // followed as that one: its objects are the same.
        for r in registry.resources().iter().filter(|r| r.stores_own()) {
            if self.resources.iter().any(|f| f.group == r.group && f.plural == r.plural) {
                continue;
            }
            self.resources.push(Followed {
                group: r.group.clone(),
                version: r.version.clone(),
                plural: r.plural.clone(),
                kind: r.kind.clone(),
                namespaced: r.namespaced,
            });
        }

        let root = shared.config.storage_prefix.clone();
        for index in 0..self.resources.len() {
            let prefix = resource_prefix(&root, &self.resources[index].group, &self.resources[index].plural, None);
            let Some(cache) = shared.served.with_caches(|c| c.get(&prefix).cloned()) else {
                continue;
            };
            let feed = self.feeds.get(&prefix).map(|(_, sub)| sub.clone());
            let subscription = match feed {
                Some(sub) => sub,
                None => {
                    // Read what it holds, then follow from there.
                    let Some((items, revision)) = cache.snapshot("", 0) else {
                        continue;
                    };
                    let Some(sub) = cache.subscribe("", revision) else {
                        continue;
                    };
                    for kv in &items {
                        self.take(shared, index, &kv.key, Some(kv));
                    }
                    self.feeds.insert(prefix.clone(), (index, sub.clone()));
                    self.look_up_again(shared, index);
                    sub
                }
            };
            while let Some(item) = subscription.try_next() {
                match item {
                    Ok(event) => match &event.event {
                        WatchEvent::Put { kv, .. } => self.take(shared, index, &kv.key, Some(kv)),
                        WatchEvent::Delete { prev, .. } => self.take(shared, index, &prev.key, None),
                    },
                    Err(_) => {
                        // Fell behind, or the cache was filled again: read it afresh.
                        self.graph.forget_resource(index);
                        self.feeds.remove(&prefix);
                        break;
                    }
                }
            }
        }
    }

    /// Resource `index` is followed from now on: the nodes with owners of its kind take
    /// their owners again (they could not be looked up until now).
    fn look_up_again(&mut self, shared: &Shared, index: usize) {
        let followed = &self.resources[index];
        let names = |r: &OwnerRef| r.kind == followed.kind && r.api_version.rsplit_once('/').map_or("", |(g, _)| g) == followed.group;
        for node in self.graph.naming(names) {
            let owner_keys = node.owners.iter().filter_map(|r| owner_key(shared, &node, r)).collect();
            self.graph.set(&node.key.clone(), Some(node), owner_keys);
        }
    }

    /// The object at `key` of resource `index` is now `stored` (`None`: deleted).
    fn take(&mut self, shared: &Shared, index: usize, key: &str, stored: Option<&KeyValue>) {
        let concerns = stored.is_some_and(|kv| graph::may_concern(&kv.value));
        if !concerns && !self.graph.knows_key(key) {
            return;
        }
        let node = stored
            .filter(|_| concerns)
            .and_then(|kv| Some((kv.mod_revision, serde_json::from_slice::<Value>(&kv.value).ok()?)))
            .and_then(|(revision, object)| Node::read(key, index, revision, &object));
        let owner_keys = node
            .as_ref()
            .map(|n| n.owners.iter().filter_map(|r| owner_key(shared, n, r)).collect())
            .unwrap_or_default();
        self.graph.set(key, node, owner_keys);
    }

    /// The Events for references of the `dirty` nodes that name an owner found in
    /// another namespace ([`invalid_namespace`]); each reference is looked for once.
    fn invalid_namespace_events(&mut self, shared: &Shared, dirty: &[String], now: std::time::SystemTime) -> Vec<http::Request<Bytes>> {
        if !self.checked.is_empty() {
            let graph = &self.graph;
            self.checked.retain(|(dependent, _)| graph.node(dependent).is_some());
        }
        // By the owner's resource: each resource's objects are read once.
        let mut suspects: BTreeMap<String, Vec<invalid_namespace::Suspect<'_>>> = BTreeMap::new();
        for node in dirty.iter().filter_map(|uid| self.graph.node(uid)) {
            let Some(followed) = self.resources.get(node.resource) else {
                continue;
            };
            for r in &node.owners {
                let Some(resource) = owner_resource(shared, r).filter(|res| res.namespaced) else {
                    continue;
                };
                // A namespaced dependent's owner found where it looks is fine.
                if node.namespace.is_some() && owner_state(shared, node, r) != Owner::Dangling {
                    continue;
                }
                if !self.checked.insert((node.uid.clone(), r.uid.clone())) {
                    continue;
                }
                let prefix = resource.storage_prefix(&shared.config.storage_prefix, None);
                let suspect = invalid_namespace::Suspect {
                    dependent: node,
                    dependent_kind: (followed.kind.clone(), followed.api_version()),
                    reference: r,
                };
                suspects.entry(prefix).or_default().push(suspect);
            }
        }
        let mut events = Vec::new();
        for (prefix, suspects) in &suspects {
            let Some((stored, _)) = shared.served.with_caches(|c| c.get(prefix).cloned()).and_then(|c| c.snapshot("", 0)) else {
                continue;
            };
            let mut wanted: Vec<&str> = suspects.iter().map(|s| s.reference.uid.as_str()).collect();
            wanted.sort_unstable();
            wanted.dedup();
            let found = invalid_namespace::namespaces_of(stored.iter().map(|kv| &kv.value[..]), &wanted);
            for suspect in suspects {
                if let Some(namespace) = found.get(&suspect.reference.uid) {
                    events.extend(invalid_namespace::event(suspect, namespace, now));
                }
            }
        }
        events
    }

    /// The request that carries out `action`.
    fn request(&self, action: &Action) -> Option<http::Request<Bytes>> {
        let uid = match action {
            Action::Delete { uid, .. } | Action::SetOwners { uid, .. } | Action::RemoveFinalizer { uid, .. } => uid,
        };
        let node = self.graph.node(uid)?;
        let path = self.resources.get(node.resource)?.path(node.namespace.as_deref(), &node.name);
        let test = json!({"op": "test", "path": "/metadata/uid", "value": uid});
        let (method, content_type, body) = match action {
            Action::Delete { propagation, .. } => (
                http::Method::DELETE,
                "application/json",
                json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation,
                       "preconditions": {"uid": uid, "resourceVersion": node.revision.to_string()}}),
            ),
            Action::SetOwners { owners, .. } => {
                let change = if owners.is_empty() {
                    json!({"op": "remove", "path": "/metadata/ownerReferences"})
                } else {
                    json!({"op": "replace", "path": "/metadata/ownerReferences", "value": owners})
                };
                (http::Method::PATCH, "application/json-patch+json", json!([test, change]))
            }
            Action::RemoveFinalizer { finalizer, .. } => {
                let kept: Vec<&String> = node.finalizers.iter().filter(|f| f != finalizer).collect();
                let change = json!({"op": "replace", "path": "/metadata/finalizers", "value": kept});
                (http::Method::PATCH, "application/json-patch+json", json!([test, change]))
            }
        };
        http::Request::builder()
            .method(method)
            .uri(path)
            .header(http::header::CONTENT_TYPE, content_type)
            .body(Bytes::from(body.to_string()))
            .ok()
    }
}

/// What the collector decides about `objects` (ConfigMaps of one namespace, with
/// unique names and uids, whose owners are looked up among them by name; owners of
/// other kinds cannot be): the writes they need. The decisions of a pass, without a server:
/// for fuzzing and tests.
pub fn decisions_over(objects: &[Value]) -> Vec<Action> {
    let key = |name: &str| format!("/configmaps/{name}");
    let mut graph = Graph::default();
    let mut by_name: BTreeMap<&str, &Value> = BTreeMap::new();
    for object in objects {
        let name = object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("");
        by_name.insert(name, object);
        let node = Node::read(&key(name), 0, 0, object);
        let owner_keys = node.as_ref().map(|n| n.owners.iter().map(|r| key(&r.name)).collect()).unwrap_or_default();
        graph.set(&key(name), node, owner_keys);
    }
    let owner = |_: &Node, r: &OwnerRef| {
        if r.kind != "ConfigMap" || r.api_version != "v1" {
            return Owner::Unresolvable;
        }
        by_name.get(r.name.as_str()).map_or(Owner::Dangling, |o| state_of(o, r))
    };
    graph.take_dirty().iter().flat_map(|uid| decide::decide(&graph, uid, &owner)).collect()
}

/// The resource of the owner `r` names, if it is served.
fn owner_resource(shared: &Shared, r: &OwnerRef) -> Option<Arc<Resource>> {
    let (group, version) = r.api_version.rsplit_once('/').unwrap_or(("", &r.api_version));
    let registry = shared.registry();
    let resource = registry
        .resources()
        .iter()
        .find(|res| res.group == group && res.version == version && res.kind == r.kind)
        .or_else(|| registry.resources().iter().find(|res| res.group == group && res.kind == r.kind))?
        .clone();
    Some(resource)
}

/// Where the owner `r` of `node` is stored; `None` when it cannot be (a kind not
/// served; a namespaced owner of a cluster-scoped object).
fn owner_key(shared: &Shared, node: &Node, r: &OwnerRef) -> Option<String> {
    owner_place(shared, node, r).map(|(_, key)| key)
}

/// The resource and storage key of the owner `r` of `node`, as [`owner_key`].
fn owner_place(shared: &Shared, node: &Node, r: &OwnerRef) -> Option<(Arc<Resource>, String)> {
    let resource = owner_resource(shared, r)?;
    let root = &shared.config.storage_prefix;
    let namespace = if resource.namespaced { Some(node.namespace.as_deref()?) } else { None };
    let key = resource.storage_key(root, namespace, &r.name);
    Some((resource, key))
}

/// What owner reference `r` of `node` names now, as the caches hold it.
fn owner_state(shared: &Shared, node: &Node, r: &OwnerRef) -> Owner {
    let Some((resource, key)) = owner_place(shared, node, r) else {
        return Owner::Unresolvable;
    };
    let prefix = resource.storage_prefix(&shared.config.storage_prefix, None);
    let Some(found) = shared.served.with_caches(|c| c.get(&prefix).and_then(|cache| cache.get(&key))) else {
        return Owner::Unresolvable;
    };
    match found.and_then(|kv| serde_json::from_slice::<Value>(&kv.value).ok()) {
        Some(owner) => state_of(&owner, r),
        None => Owner::Dangling,
    }
}

/// What reference `r` names, given the object stored under its owner's name: another
/// object (another uid), one waiting for its dependents, or the owner.
fn state_of(owner: &Value, r: &OwnerRef) -> Owner {
    if owner.pointer("/metadata/uid").and_then(Value::as_str) != Some(r.uid.as_str()) {
        return Owner::Dangling;
    }
    let deleting = owner.pointer("/metadata/deletionTimestamp").is_some_and(|t| !t.is_null());
    let foreground = crate::rest::object::strings(owner.pointer("/metadata/finalizers"))
        .iter()
        .any(|f| f == crate::rest::finalizers::FOREGROUND);
    if deleting && foreground {
        Owner::WaitingForDependents
    } else {
        Owner::Solid
    }
}
