//! What a server serves right now: a registry that resources join and leave while
//! requests run, and one watch cache per storage prefix.
//!
//! A change builds a new registry and swaps it in under a lock with the next
//! generation number; a reader clones the current [`Snapshot`] (an `Arc`) and keeps it
//! for its whole request, so a request routed before a change finishes against the
//! registry it started with. Whatever is derived from a registry (the OpenAPI
//! documents) is keyed by the generation and rebuilt once per change.
//!
//! Watch caches are keyed by storage prefix: the versions of one resource (and a
//! resource stored as another, events.k8s.io Events as core Events) share one cache,
//! created with the first of them and dropped with the last. A cache created
//! while the server runs starts unsynced, so reads and watches of it go to the backend
//! until a reflector fills it; the map is swapped whole too, so a reflector holding an
//! older map only feeds caches that may no longer be served.

use super::{Registry, Resource};
use crate::resources::SharedStrategy;
use crate::schema::ResourceSchema;
use crate::storage::KeyValue;
use crate::watch_cache::WatchCache;
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// One registry as it was served between two changes.
#[derive(Clone, Debug)]
pub struct Snapshot {
    registry: Arc<Registry>,
    /// 0 for the registry the server started with, one more at every change.
    generation: u64,
}

impl Snapshot {
    /// The registry.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// Which change of the registry this is: 0 before any.
    pub fn generation(&self) -> u64 {
        self.generation
    }
}

impl std::ops::Deref for Snapshot {
    type Target = Registry;
    fn deref(&self) -> &Registry {
        &self.registry
    }
}

/// The watch caches of the served resources, one per storage prefix.
#[derive(Clone, Debug)]
pub struct WatchCaches {
    by_prefix: BTreeMap<String, CacheEntry>,
    /// How many events a watch of any of them may leave undelivered.
    queue_limit: usize,
}

/// One cache and the name its resource is counted under in metrics.
#[derive(Clone)]
struct CacheEntry {
    cache: Arc<WatchCache>,
    /// `configmaps`, `deployments.apps`: the label of the storage metrics.
    group_resource: String,
    /// A built-in resource's strategy, whose defaults objects listed into the cache
    /// get (a custom resource is shaped by its schema as it is read instead).
    defaults: Option<SharedStrategy>,
}

impl std::fmt::Debug for CacheEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheEntry")
            .field("group_resource", &self.group_resource)
            .field("defaults", &self.defaults)
            .field("objects", &self.cache.object_count())
            .finish()
    }
}

impl WatchCaches {
    /// The cache of the resource stored under `prefix` (`/registry/configmaps/`).
    pub fn get(&self, prefix: &str) -> Option<&Arc<WatchCache>> {
        self.by_prefix.get(prefix).map(|e| &e.cache)
    }

    /// The cache whose prefix `key` starts with.
    pub fn of_key(&self, key: &str) -> Option<&Arc<WatchCache>> {
        self.entry_of_key(key).map(|e| &e.cache)
    }

    /// The group-qualified resource stored at `key`, as the storage metrics name it.
    pub(crate) fn group_resource_of_key(&self, key: &str) -> Option<&str> {
        self.entry_of_key(key).map(|e| e.group_resource.as_str())
    }

    /// Prefixes end with `/` and none starts another, so the one `key` starts with is
    /// found by trying `key` up to each of its slashes.
    fn entry_of_key(&self, key: &str) -> Option<&CacheEntry> {
        key.match_indices('/')
            .find_map(|(i, _)| self.by_prefix.get(&key[..=i]))
    }

    /// Every cache, by prefix.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<WatchCache>> {
        self.by_prefix.values().map(|e| &e.cache)
    }

    /// How many caches there are.
    pub fn len(&self) -> usize {
        self.by_prefix.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.by_prefix.is_empty()
    }

    /// Add an unsynced cache for `resource` under `prefix` unless one is there.
    fn ensure(&mut self, prefix: String, resource: &Resource) {
        let builtin = matches!(resource.schema, ResourceSchema::Builtin);
        self.by_prefix.entry(prefix).or_insert_with_key(|prefix| CacheEntry {
            cache: Arc::new(WatchCache::with_queue_limit(prefix.clone(), self.queue_limit)),
            group_resource: resource.group_resource(),
            defaults: builtin.then(|| resource.strategy.clone()),
        });
    }

    /// A listed object as its cache keeps it: with its kind's defaults, as upstream's
    /// decoding from etcd gives them to objects stored without them (by an earlier
    /// version, or another writer). Done when a list fills the caches, not per read:
    /// every object this server writes has its defaults already. The bytes are
    /// re-encoded only when defaulting changed something.
    pub fn defaulted(&self, kv: KeyValue) -> KeyValue {
        let Some(strategy) = self.entry_of_key(&kv.key).and_then(|e| e.defaults.as_ref()) else {
            return kv;
        };
        let Ok(mut object) = serde_json::from_slice::<crate::rest::object::Object>(&kv.value) else {
            return kv;
        };
        let stored = object.clone();
        strategy.default(&mut object);
        if object == stored {
            return kv;
        }
        match serde_json::to_vec(&object) {
            Ok(value) => KeyValue { value: value.into(), ..kv },
            Err(_) => kv,
        }
    }
}

/// The served registry and its caches, changed together.
#[derive(Debug)]
pub(crate) struct Served {
    /// `--etcd-prefix`: where every resource's keys live.
    storage_prefix: String,
    current: RwLock<Current>,
}

/// The registry and caches being served; each swapped whole on a change.
#[derive(Clone, Debug)]
struct Current {
    snapshot: Snapshot,
    caches: Arc<WatchCaches>,
}

impl Served {
    /// Serve `registry`, with a cache for each of its resources.
    #[cfg(test)]
    pub(crate) fn new(storage_prefix: String, registry: Registry) -> Served {
        Served::with_queue_limit(storage_prefix, registry, crate::watch_cache::MAX_QUEUED)
    }

    /// Serve `registry`, with a cache for each of its resources whose watches may
    /// each leave `queue_limit` events undelivered.
    pub(crate) fn with_queue_limit(storage_prefix: String, registry: Registry, queue_limit: usize) -> Served {
        let mut caches = WatchCaches { by_prefix: BTreeMap::new(), queue_limit };
        for r in registry.resources() {
            caches.ensure(cache_prefix(&storage_prefix, r), r);
        }
        Served {
            storage_prefix,
            current: RwLock::new(Current {
                snapshot: Snapshot {
                    registry: Arc::new(registry),
                    generation: 0,
                },
                caches: Arc::new(caches),
            }),
        }
    }

    /// The registry being served.
    pub(crate) fn snapshot(&self) -> Snapshot {
        self.read().snapshot.clone()
    }

    /// The watch caches being served.
    pub(crate) fn caches(&self) -> Arc<WatchCaches> {
        self.read().caches.clone()
    }

    /// `f` of the watch caches being served, read in place: the hot paths (a request's
    /// cache lookups, storage metrics, every event the reflector fans out) take no
    /// reference count the other threads would contend for.
    pub(crate) fn with_caches<R>(&self, f: impl FnOnce(&Arc<WatchCaches>) -> R) -> R {
        f(&self.read().caches)
    }

    /// The watch cache of `resource`.
    pub(crate) fn cache_of(&self, resource: &Resource) -> Option<Arc<WatchCache>> {
        let prefix = cache_prefix(&self.storage_prefix, resource);
        self.read().caches.get(&prefix).cloned()
    }

    /// Serve `resource`, replacing (and returning) the one with its group, version and
    /// plural; its cache is created unless another version already has it.
    pub(crate) fn add(&self, resource: Resource) -> Option<Arc<Resource>> {
        let prefix = cache_prefix(&self.storage_prefix, &resource);
        let mut current = self.write();
        let mut registry = Registry::clone(&current.snapshot.registry);
        if current.caches.get(&prefix).is_none() {
            let mut caches = WatchCaches::clone(&current.caches);
            caches.ensure(prefix, &resource);
            current.caches = Arc::new(caches);
        }
        let replaced = registry.insert(resource);
        current.swap_in(registry);
        replaced
    }

    /// Stop serving `plural` in `group`/`version`; its cache goes with the last version
    /// stored under its prefix.
    pub(crate) fn remove(&self, group: &str, version: &str, plural: &str) -> Option<Arc<Resource>> {
        let mut current = self.write();
        let mut registry = Registry::clone(&current.snapshot.registry);
        let removed = registry.remove(group, version, plural)?;
        let prefix = cache_prefix(&self.storage_prefix, &removed);
        let still_stored = registry
            .resources()
            .iter()
            .any(|r| cache_prefix(&self.storage_prefix, r) == prefix);
        if !still_stored {
            let mut caches = WatchCaches::clone(&current.caches);
            caches.by_prefix.remove(&prefix);
            current.caches = Arc::new(caches);
        }
        current.swap_in(registry);
        Some(removed)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Current> {
        // Every writer leaves `Current` whole, so a poisoned lock still holds a valid one.
        self.current.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Current> {
        self.current.write().unwrap_or_else(|e| e.into_inner())
    }
}

impl Current {
    /// Serve `registry` as the next generation.
    fn swap_in(&mut self, registry: Registry) {
        self.snapshot = Snapshot {
            registry: Arc::new(registry),
            generation: self.snapshot.generation + 1,
        };
    }
}

/// Where every version of `resource` is stored: the prefix its cache is keyed by.
fn cache_prefix(storage_prefix: &str, resource: &Resource) -> String {
    resource.storage_prefix(storage_prefix, None)
}
