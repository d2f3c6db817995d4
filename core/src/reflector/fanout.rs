//! What the reflector does to the caches: fill them from a list, hand each event to the
//! cache of its resource, and mark them all stale when the watch is lost.

use crate::health::INFORMER_SYNC;
use crate::shared::Shared;
use crate::storage::{KeyValue, Revision, WatchEvent};
use crate::watch_cache::WatchCache;
use std::sync::Arc;

/// Every watch cache of one server, with its health checks.
pub(super) struct Fanout {
    shared: Arc<Shared>,
}

impl Fanout {
    pub(super) fn new(shared: Arc<Shared>) -> Fanout {
        Fanout { shared }
    }

    fn caches(&self) -> &[Arc<WatchCache>] {
        &self.shared.watch_caches
    }

    /// The index of the cache whose prefix `key` starts with (the prefixes are
    /// disjoint, so there is at most one).
    fn cache_of(&self, key: &str) -> Option<usize> {
        self.caches()
            .iter()
            .position(|c| key.starts_with(c.prefix()))
    }

    /// Start every cache over with its share of a list of everything at `revision`.
    pub(super) fn fill(&self, items: Vec<KeyValue>, revision: Revision) {
        let mut objects: Vec<Vec<KeyValue>> = vec![Vec::new(); self.caches().len()];
        for kv in items {
            if let Some(i) = self.cache_of(&kv.key) {
                objects[i].push(kv);
            }
        }
        for (cache, objects) in self.caches().iter().zip(objects) {
            cache.reset_with(objects, revision);
        }
        // Once filled, the caches count as synced for good (as upstream's informer-sync):
        // a later relist is the storage check's business.
        self.shared.health.set(INFORMER_SYNC, true);
    }

    /// Hand `event` to its resource's cache, and tell every cache that the store has
    /// reached its revision: a consistent read is then served from any cache, whichever
    /// resource was written last.
    pub(super) fn apply(&self, event: WatchEvent) {
        let revision = event.revision();
        if let Some(i) = self.cache_of(event.key()) {
            self.caches()[i].apply(event);
        }
        for cache in self.caches() {
            cache.advance(revision);
        }
    }

    /// No watch follows the store any more: reads and watches go to the backend until
    /// the next fill.
    pub(super) fn unsync(&self) {
        for cache in self.caches() {
            cache.unsync();
        }
    }
}
