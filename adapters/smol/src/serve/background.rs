//! What runs beside the requests: the reflector feeding the watch caches, the storage
//! probe behind /readyz, the compactor and the return of free memory to the OS.

use super::{timeout, Apiary};
use apiary_core::health::INFORMER_SYNC;
use crate::memory;
use apiary_core::storage::Storage;
use smol::Timer;
use std::time::Duration;

/// How often an outside storage backend is probed for /readyz.
const STORAGE_PROBE_INTERVAL: Duration = Duration::from_secs(1);
/// How long a probe may take before the backend counts as down.
const STORAGE_PROBE_TIMEOUT: Duration = Duration::from_secs(3);

impl<S: Storage> Apiary<S> {
    /// Feed every resource's watch cache from one list and one backend watch of the
    /// whole key space: each change goes to its resource's cache, and every cache
    /// learns that the store has reached the change's revision, so a consistent read is
    /// served from a cache whenever the reflector has caught up, whichever resource was
    /// written last. Start over whenever the watch ends.
    pub(super) async fn reflect(&self) {
        use apiary_core::storage::{StorageOp, StorageOutput, WatchStream as _};
        let root = format!("{}/", self.storage_prefix.trim_end_matches('/'));
        let mut backoff = Duration::from_millis(100);
        loop {
            // The caches served at this list; one added later stays unsynced (served by
            // the backend) until the next list.
            let caches = self.server.watch_caches();
            let cache_of = |key: &str| caches.of_key(key);
            let listed = self
                .storage
                .run(StorageOp::list_latest(root.clone()))
                .await;
            if let Ok(StorageOutput::Listed(page)) = listed {
                if let Ok(mut events) = self.storage.watch(&root, page.revision).await {
                    let mut objects: Vec<Vec<_>> = vec![Vec::new(); caches.len()];
                    for kv in page.items {
                        if let Some(i) = caches.iter().position(|c| kv.key.starts_with(c.prefix()))
                        {
                            objects[i].push(kv);
                        }
                    }
                    for (cache, objects) in caches.iter().zip(objects) {
                        cache.reset_with(objects, page.revision);
                    }
                    // Once filled, the caches count as synced for good (as upstream's
                    // informer-sync): a later relist is the storage check's business.
                    self.server.health().set(INFORMER_SYNC, true);
                    backoff = Duration::from_millis(100);
                    while let Some(Ok(event)) = events.next().await {
                        let revision = event.revision();
                        if let Some(cache) = cache_of(event.key()) {
                            cache.apply(event);
                        }
                        for cache in caches.iter() {
                            cache.advance(revision);
                        }
                    }
                }
            }
            for cache in caches.iter() {
                cache.unsync();
            }
            tracing::debug!("the watch caches lost their backend watch; relisting in {backoff:?}");
            Timer::after(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(5));
        }
    }

    /// Keep the storage readiness check true to whether the backend answers.
    pub(super) async fn probe_storage(&self, check: &str) {
        use apiary_core::storage::StorageOp;
        let mut was = None;
        loop {
            let probe = self.storage.run(StorageOp::CurrentRevision);
            let ok = matches!(timeout(STORAGE_PROBE_TIMEOUT, probe).await, Some(Ok(_)));
            if was != Some(ok) {
                if ok {
                    tracing::info!("storage check {check} passes");
                } else {
                    tracing::warn!("storage check {check} fails: the backend does not answer");
                }
                was = Some(ok);
            }
            self.server.health().set(check, ok);
            Timer::after(STORAGE_PROBE_INTERVAL).await;
        }
    }

    /// Every `interval`, compact away the history before the revision seen at the
    /// previous tick, as kube-apiserver's compactor does: clients keep at least one
    /// interval of history to resume watches from.
    pub(super) async fn compact_periodically(&self, interval: Duration) {
        let mut last = apiary_core::storage::CompactorTick::default();
        loop {
            Timer::after(interval).await;
            match self.storage.compactor_tick(last).await {
                Ok(next) => {
                    tracing::debug!(
                        compacted_before = last.revision,
                        next = next.revision,
                        "compactor tick"
                    );
                    last = next;
                }
                // Try again at the next tick, from the same point.
                Err(e) => tracing::warn!(revision = last.revision, "compaction failed: {e}"),
            }
        }
    }

    /// Every [`memory::TRIM_INTERVAL`] in which requests were answered, hand the heap
    /// pages they freed back to the OS.
    pub(super) async fn release_memory_periodically(&self) {
        use std::sync::atomic::Ordering;
        loop {
            Timer::after(memory::TRIM_INTERVAL).await;
            if self.answered.swap(0, Ordering::Relaxed) > 0 {
                memory::release_free_memory();
            }
        }
    }
}
