//! What every request of one server shares: configuration, the registry, health
//! checks, watch caches and metrics.

use crate::config::Config;
use crate::health::HealthChecks;
use crate::registry::Registry;
use std::sync::Arc;

/// What every request of one server shares.
pub(crate) struct Shared {
    pub(crate) config: Config,
    pub(crate) registry: Registry,
    pub(crate) health: HealthChecks,
    /// One watch cache per resource, all fed by the reflector (`crate::reflector`).
    pub(crate) watch_caches: Vec<Arc<crate::watch_cache::WatchCache>>,
    /// The server's metrics, served at /metrics.
    pub(crate) metrics: crate::metrics::Metrics,
}

impl Shared {
    /// Upstream's `apiserver_storage_objects`: each resource's object count, from its
    /// watch cache; -1 until the cache has synced. A resource served at several
    /// versions is stored once and counted once.
    pub(crate) fn storage_objects(&self) -> Vec<(String, i64)> {
        let mut objects: Vec<(String, i64)> = Vec::new();
        for (r, c) in self.registry.resources().iter().zip(&self.watch_caches) {
            if !r.has_verb("list") {
                // Never stored (bindings).
                continue;
            }
            let name = r.group_resource();
            if !objects.iter().any(|(n, _)| *n == name) {
                objects.push((name, c.object_count().map_or(-1, |n| n as i64)));
            }
        }
        objects
    }
}

