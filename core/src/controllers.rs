//! The controllers Apiary runs over its own objects, as kube-controller-manager would
//! over a cluster's: so far the ClusterRole aggregation controller. Each is a pure
//! function of the watch caches that answers the writes it wants now; the adapter (or
//! the harness) runs them as the server's own requests whenever a cache they read
//! changes, until they want nothing.

use crate::authorization::rbac::{self, aggregation};
use crate::shared::Shared;
use bytes::Bytes;

/// The field manager of aggregated rules, upstream's controller name.
const AGGREGATION_MANAGER: &str = "clusterrole-aggregation-controller";

/// Which cache changes the controllers have seen: they need a look when it moves.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Seen(u64);

/// The controllers' view of the server.
pub(crate) fn changes(shared: &Shared) -> Seen {
    Seen(cluster_roles_cache(shared).map_or(0, |c| c.changes()))
}

fn cluster_roles_cache(shared: &Shared) -> Option<std::sync::Arc<crate::watch_cache::WatchCache>> {
    let prefix = crate::storage::resource_prefix(&shared.config.storage_prefix, rbac::GROUP, "clusterroles", None);
    shared.served.with_caches(|c| c.get(&prefix).cloned())
}

/// The writes the controllers want as the caches stand now.
pub(crate) fn writes(shared: &Shared) -> Vec<http::Request<Bytes>> {
    let Some((stored, _)) = cluster_roles_cache(shared).and_then(|c| c.snapshot("", 0)) else {
        return Vec::new();
    };
    let roles: Vec<serde_json::Value> = stored
        .iter()
        .filter_map(|kv| serde_json::from_slice(&kv.value).ok())
        .collect();
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
