//! The controllers Apiary runs over its own objects, as kube-controller-manager would
//! over a cluster's: so far the ClusterRole aggregation controller. Each is a pure
//! function of the watch caches that answers the writes it wants now; the adapter (or
//! the harness) runs them as the server's own requests whenever a cache they read
//! changes, until they want nothing.

mod crds;

use crate::authorization::rbac::{self, aggregation};
use crate::shared::Shared;
use crate::watch_cache::WatchCache;
use bytes::Bytes;
use std::sync::Arc;

/// The field manager of aggregated rules, upstream's controller name.
const AGGREGATION_MANAGER: &str = "clusterrole-aggregation-controller";

/// Which cache changes the controllers have seen: they need a look when they move.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Seen([u64; 2]);

/// The controllers' view of the server.
pub(crate) fn changes(shared: &Shared) -> Seen {
    let changes = |c: Option<Arc<WatchCache>>| c.map_or(0, |c| c.changes());
    Seen([changes(cache(shared, rbac::GROUP, "clusterroles")), changes(cache(shared, CRD_GROUP, "customresourcedefinitions"))])
}

const CRD_GROUP: &str = "apiextensions.k8s.io";

fn cache(shared: &Shared, group: &str, resource: &str) -> Option<Arc<WatchCache>> {
    let prefix = crate::storage::resource_prefix(&shared.config.storage_prefix, group, resource, None);
    shared.served.with_caches(|c| c.get(&prefix).cloned())
}

fn objects(cache: Option<Arc<WatchCache>>) -> Option<Vec<serde_json::Value>> {
    let (stored, _) = cache?.snapshot("", 0)?;
    Some(stored.iter().filter_map(|kv| serde_json::from_slice(&kv.value).ok()).collect())
}

/// The writes the controllers want as the caches stand now (at `now`); the resources of
/// CustomResourceDefinitions are joined to (or removed from) the registry on the way.
pub(crate) fn writes(shared: &Shared, now: std::time::SystemTime) -> Vec<http::Request<Bytes>> {
    let mut writes = cluster_role_aggregation(shared);
    if let Some(definitions) = objects(cache(shared, CRD_GROUP, "customresourcedefinitions")) {
        serve_custom_resources(shared, &definitions);
        let now = crate::time::rfc3339(now);
        for crd in &definitions {
            if let Some(status) = crds::wanted_status(crd, &now) {
                let name = crd.pointer("/metadata/name").and_then(serde_json::Value::as_str).unwrap_or("");
                writes.push(
                    http::Request::patch(format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}/status"))
                        .header(http::header::CONTENT_TYPE, "application/merge-patch+json")
                        .body(Bytes::from(serde_json::json!({"status": status}).to_string()))
                        .expect("a well-formed controller request"),
                );
            }
        }
    }
    writes
}

/// Make the registry serve exactly the CRDs' resources: add the new and the changed,
/// remove those it served for a CRD (or version) that is gone. Resources added by other
/// means (`Server::add_resource`) are left alone.
fn serve_custom_resources(shared: &Shared, definitions: &[serde_json::Value]) {
    let wanted: Vec<crate::registry::Resource> = definitions.iter().flat_map(crds::resources_of).collect();
    let registry = shared.registry();
    let mut mine = shared.crd_resources.lock().unwrap_or_else(|p| p.into_inner());
    for resource in &wanted {
        let same = registry
            .lookup(&resource.group, &resource.version, &resource.plural)
            .is_some_and(|served| *served == *resource);
        if !same {
            shared.served.add(resource.clone());
        }
        let id = (resource.group.clone(), resource.version.clone(), resource.plural.clone());
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
