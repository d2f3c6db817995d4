//! The controllers Apiary runs over its own objects, as kube-controller-manager (and
//! the apiextensions server) would over a cluster's: so far ClusterRole aggregation
//! and the CRD controllers (names, establishing, cleanup of a deleted CRD's objects). Each is a pure
//! function of the watch caches that answers the writes it wants now; the adapter (or
//! the harness) runs them as the server's own requests whenever a cache they read
//! changes, until they want nothing.

pub(crate) mod crds;

use crate::authorization::rbac::{self, aggregation};
use crate::shared::Shared;
use crate::watch_cache::WatchCache;
use bytes::Bytes;
use serde_json::{json, Value};
use std::sync::Arc;

/// The field manager of aggregated rules, upstream's controller name.
const AGGREGATION_MANAGER: &str = "clusterrole-aggregation-controller";

/// Which cache changes the controllers have seen: they need a look when they move.
/// The last count sums the caches of the objects of CRDs being deleted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Seen([u64; 3]);

/// The controllers' view of the server.
pub(crate) fn changes(shared: &Shared) -> Seen {
    let changes = |c: Option<Arc<WatchCache>>| c.map_or(0, |c| c.changes());
    let crds = cache(shared, CRD_GROUP, "customresourcedefinitions");
    let cleaning: Vec<String> = shared.crd_cleanups.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let deleting = shared.served.with_caches(|caches| {
        cleaning.iter().map(|prefix| caches.get(prefix).map_or(0, |c| c.changes())).fold(0u64, u64::wrapping_add)
    });
    Seen([changes(cache(shared, rbac::GROUP, "clusterroles")), changes(crds), deleting])
}

const CRD_GROUP: &str = "apiextensions.k8s.io";
const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

fn cache(shared: &Shared, group: &str, resource: &str) -> Option<Arc<WatchCache>> {
    let prefix = crate::storage::resource_prefix(&shared.config.storage_prefix, group, resource, None);
    shared.served.with_caches(|c| c.get(&prefix).cloned())
}

/// The watch cache of a CRD's objects (one for all its versions).
fn custom_objects_cache(shared: &Shared, crd: &Value) -> Option<Arc<WatchCache>> {
    let text = |p: &str| crd.pointer(p).and_then(Value::as_str).unwrap_or("");
    cache(shared, text("/spec/group"), text("/status/acceptedNames/plural"))
}

fn objects(cache: Option<Arc<WatchCache>>) -> Option<Vec<Value>> {
    let (stored, _) = cache?.snapshot("", 0)?;
    Some(stored.iter().filter_map(|kv| serde_json::from_slice(&kv.value).ok()).collect())
}

/// The writes the controllers want as the caches stand now (at `now`); the resources of
/// CustomResourceDefinitions are joined to (or removed from) the registry on the way.
pub(crate) fn writes(shared: &Shared, now: std::time::SystemTime) -> Vec<http::Request<Bytes>> {
    let mut writes = cluster_role_aggregation(shared);
    if let Some(definitions) = objects(cache(shared, CRD_GROUP, "customresourcedefinitions")) {
        writes.extend(custom_resource_definitions(shared, definitions, &crate::time::rfc3339(now)));
    }
    writes
}

/// The naming, establishing and finalizer controllers of CRDs, and the registry made
/// to serve what they established.
fn custom_resource_definitions(shared: &Shared, mut definitions: Vec<Value>, now: &str) -> Vec<http::Request<Bytes>> {
    let registry = shared.registry();
    let builtin: Vec<&crate::registry::Resource> = {
        let mine = shared.crd_resources.lock().unwrap_or_else(|p| p.into_inner());
        registry
            .resources()
            .iter()
            .map(|r| &**r)
            .filter(|r| !mine.iter().any(|(g, v, p)| *g == r.group && *v == r.version && *p == r.plural))
            .collect()
    };
    let mut writes = Vec::new();
    let mut served = Vec::new();
    let mut cleaning = Vec::new();
    for i in 0..definitions.len() {
        let crd = &definitions[i];
        let name = crd.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("").to_owned();
        let taken = crds::Taken::around(crd, &definitions, &builtin);
        let mut decided = crds::decide(crd, &taken, now);
        let resources = decided.served_as.as_ref().map(|names| crds::resources_of(crd, names)).unwrap_or_default();
        // A served CRD whose objects' cache is not filled yet cannot tell what is left.
        let objects_cache = custom_objects_cache(shared, crd);
        let prefix = objects_cache.as_ref().map(|c| c.prefix().to_owned());
        let cleanup = match objects(objects_cache) {
            Some(objects) => crds::cleanup(crd, &objects),
            None if resources.is_empty() => crds::cleanup(crd, &[]),
            None => crds::Cleanup::None,
        };
        if cleanup != crds::Cleanup::None {
            cleaning.extend(prefix);
        }
        match cleanup {
            crds::Cleanup::None => {}
            crds::Cleanup::Finish => writes.push(remove_cleanup_finalizer(crd, &name)),
            cleanup @ (crds::Cleanup::Delete(_) | crds::Cleanup::Wait) => {
                crds::cleanup_in_progress(&mut decided.status, now);
                if let (crds::Cleanup::Delete(namespaces), Some(r)) = (cleanup, resources.first()) {
                    writes.extend(namespaces.iter().map(|ns| delete_collection(r, ns.as_deref())));
                }
            }
        }
        if crd.get("status") != Some(&decided.status) {
            let patch = json!([{"op": "add", "path": "/status", "value": decided.status}]);
            writes.insert(0, controller_request(&format!("{CRDS}/{name}/status"), "application/json-patch+json", patch));
        }
        // Later CRDs see the names this one was accepted with.
        definitions[i]["status"] = decided.status;
        served.extend(resources);
    }
    serve_custom_resources(shared, served);
    *shared.crd_cleanups.lock().unwrap_or_else(|p| p.into_inner()) = cleaning;
    writes
}

/// A JSON patch taking the cleanup finalizer away (the CRD then goes).
fn remove_cleanup_finalizer(crd: &Value, name: &str) -> http::Request<Bytes> {
    let remaining: Vec<String> = crate::rest::object::strings(crd.pointer("/metadata/finalizers"))
        .into_iter()
        .filter(|f| f != crds::CLEANUP_FINALIZER)
        .collect();
    // No finalizer can join a CRD being deleted, so the list read is the list to keep.
    let patch = json!([{"op": "replace", "path": "/metadata/finalizers", "value": remaining}]);
    controller_request(&format!("{CRDS}/{name}"), "application/json-patch+json", patch)
}

/// A DELETE of every object of `r` in `namespace` (all of them when cluster-scoped).
fn delete_collection(r: &crate::registry::Resource, namespace: Option<&str>) -> http::Request<Bytes> {
    let path = match namespace {
        Some(ns) => format!("/apis/{}/{}/namespaces/{ns}/{}", r.group, r.version, r.plural),
        None => format!("/apis/{}/{}/{}", r.group, r.version, r.plural),
    };
    http::Request::delete(path).body(Bytes::new()).expect("a well-formed controller request")
}

fn controller_request(path: &str, content_type: &str, body: Value) -> http::Request<Bytes> {
    http::Request::patch(path)
        .header(http::header::CONTENT_TYPE, content_type)
        .body(Bytes::from(body.to_string()))
        .expect("a well-formed controller request")
}

/// Make the registry serve exactly the CRDs' resources: add the new and the changed,
/// remove those it served for a CRD (or version) that is gone. Resources added by other
/// means (`Server::add_resource`) are left alone, and so are built-in resources a CRD
/// would shadow.
fn serve_custom_resources(shared: &Shared, wanted: Vec<crate::registry::Resource>) {
    let registry = shared.registry();
    let mut mine = shared.crd_resources.lock().unwrap_or_else(|p| p.into_inner());
    for resource in &wanted {
        let id = (resource.group.clone(), resource.version.clone(), resource.plural.clone());
        let served = registry.lookup(&resource.group, &resource.version, &resource.plural);
        if served.is_some() && !mine.contains(&id) {
            continue;
        }
        if served.is_none_or(|served| *served != *resource) {
            shared.served.add(resource.clone());
        }
        if !mine.contains(&id) {
            mine.push(id);
        }
    }
    mine.retain(|(group, version, plural)| {
        let still = wanted.iter().any(|w| w.group == *group && w.version == *version && w.plural == *plural);
        if !still {
            shared.served.remove(group, version, plural);
        }
        still
    });
}

/// ClusterRole aggregation: the rules aggregated roles must be given.
fn cluster_role_aggregation(shared: &Shared) -> Vec<http::Request<Bytes>> {
    let Some(roles) = objects(cache(shared, rbac::GROUP, "clusterroles")) else {
        return Vec::new();
    };
    aggregation::stale(&roles)
        .into_iter()
        .map(|stale| {
            // Applied as upstream's controller applies them: it owns the rules.
            let body = serde_json::json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": stale.name},
                "rules": stale.rules,
            });
            http::Request::patch(format!(
                "/apis/rbac.authorization.k8s.io/v1/clusterroles/{}?fieldManager={AGGREGATION_MANAGER}&force=true",
                stale.name
            ))
            .header(http::header::CONTENT_TYPE, "application/apply-patch+yaml")
            .body(Bytes::from(body.to_string()))
            .expect("a well-formed controller request")
        })
        .collect()
}
