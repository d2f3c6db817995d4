//! What the reflector does to the caches: fill them from a list, hand each event to the
//! cache of its resource, and mark them all stale when the watch is lost.

use crate::health::INFORMER_SYNC;
use crate::shared::Shared;
use crate::storage::{KeyValue, Revision, WatchEvent};
use crate::registry::WatchCaches;
use std::collections::HashMap;
use std::sync::Arc;

/// The watch caches served at the last fill, with the server's health checks.
pub(super) struct Fanout {
    shared: Arc<Shared>,
    caches: Arc<WatchCaches>,
}

impl Fanout {
    pub(super) fn new(shared: Arc<Shared>) -> Fanout {
        let caches = shared.served.caches();
        Fanout { shared, caches }
    }

    /// Whether the caches are those the server serves now: a resource that joined or
    /// left since the last fill needs a relist to be filled or let go.
    pub(super) fn is_current(&self) -> bool {
        self.shared.served.with_caches(|now| Arc::ptr_eq(&self.caches, now))
    }

    /// Start every cache served now over with its share of a list of everything at
    /// `revision`.
    pub(super) fn fill(&mut self, items: Vec<KeyValue>, revision: Revision) {
        self.caches = self.shared.served.caches();
        let mut objects: HashMap<&str, Vec<KeyValue>> = HashMap::new();
        for kv in items {
            if let Some(cache) = self.caches.of_key(&kv.key) {
                objects.entry(cache.prefix()).or_default().push(self.caches.defaulted(kv));
            }
        }
        for cache in self.caches.iter() {
            cache.reset_with(objects.remove(cache.prefix()).unwrap_or_default(), revision);
        }
        // Once filled, the caches count as synced for good (as upstream's informer-sync):
        // a later relist is the storage check's business.
        self.shared.health.set(INFORMER_SYNC, true);
    }

    /// Take up the caches served now: those that joined since the last fill start over
    /// with their share of `items`, a list of everything at `revision` (the watch's);
    /// the others, and their watchers, go on as they are.
    pub(super) fn catch_up(&mut self, items: Vec<KeyValue>, revision: Revision) {
        let before = std::mem::replace(&mut self.caches, self.shared.served.caches());
        let joined = |cache: &Arc<crate::watch_cache::WatchCache>| {
            before.get(cache.prefix()).is_none_or(|had| !Arc::ptr_eq(had, cache))
        };
        let mut objects: HashMap<&str, Vec<KeyValue>> = HashMap::new();
        for kv in items {
            if let Some(cache) = self.caches.of_key(&kv.key).filter(|c| joined(c)) {
                objects.entry(cache.prefix()).or_default().push(self.caches.defaulted(kv));
            }
        }
        for cache in self.caches.iter().filter(|c| joined(c)) {
            cache.reset_with(objects.remove(cache.prefix()).unwrap_or_default(), revision);
        }
    }

    /// Hand `event` to its resource's cache, and tell every cache that the store has
    /// reached its revision: a consistent read is then served from any cache, whichever
    /// resource was written last.
    pub(super) fn apply(&self, event: WatchEvent) {
        let revision = event.revision();
        if let Some(cache) = self.caches.of_key(event.key()) {
            cache.apply(event);
        }
        for cache in self.caches.iter() {
            cache.advance(revision);
        }
    }

    /// No watch follows the store any more: reads and watches go to the backend until
    /// the next fill.
    pub(super) fn unsync(&self) {
        for cache in self.caches.iter() {
            cache.unsync();
        }
    }
}
