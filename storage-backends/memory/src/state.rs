//! The store's data and the operations on it, all done under the store's lock.

use apiary_core::storage::{
    Completion, KeyValue, ListPage, Revision, StorageError, StorageOp, StorageOutput, WatchEvent,
};
use bytes::Bytes;
use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// One version of a key: a value, or a tombstone left by a delete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Version {
    pub(crate) mod_revision: Revision,
    pub(crate) create_revision: Revision,
    /// `None` for a tombstone.
    pub(crate) value: Option<Bytes>,
}

/// Every version of one key still kept, oldest first; never empty.
#[derive(Debug, Default)]
pub(crate) struct KeyHistory {
    pub(crate) versions: Vec<Version>,
}

impl KeyHistory {
    /// The newest version, if it is a value.
    fn latest(&self) -> Option<&Version> {
        self.versions.last().filter(|v| v.value.is_some())
    }

    /// The version visible at `revision`, if it is a value.
    fn at(&self, revision: Revision) -> Option<&Version> {
        let visible = self
            .versions
            .partition_point(|v| v.mod_revision <= revision);
        visible
            .checked_sub(1)
            .map(|i| &self.versions[i])
            .filter(|v| v.value.is_some())
    }

    /// Drop the versions nobody can read once history before `revision` is gone: keep
    /// the version visible at `revision` (unless it is a tombstone) and every newer
    /// one. Returns whether anything is left.
    pub(crate) fn compact(&mut self, revision: Revision) -> bool {
        let visible = self
            .versions
            .partition_point(|v| v.mod_revision <= revision);
        if visible > 0 {
            let keep_from = if self.versions[visible - 1].value.is_some() {
                visible - 1
            } else {
                visible
            };
            self.versions.drain(..keep_from);
        }
        !self.versions.is_empty()
    }
}

fn key_value(key: &str, version: &Version) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: version.value.clone().unwrap_or_default(),
        create_revision: version.create_revision,
        mod_revision: version.mod_revision,
    }
}

/// A registered watch: where its live events go.
pub(crate) struct Watcher {
    pub(crate) id: u64,
    pub(crate) prefix: String,
    pub(crate) sender: async_channel::Sender<WatchEvent>,
    /// Set when the watch was cut off for falling too far behind.
    pub(crate) overflowed: Arc<AtomicBool>,
}

/// Everything the store holds.
pub(crate) struct State {
    /// The newest revision; 0 before any write.
    revision: Revision,
    /// History before this revision is gone.
    compacted: Revision,
    keys: BTreeMap<String, KeyHistory>,
    /// One event per write, for revisions `compacted + 1 ..= revision`, in order.
    log: VecDeque<WatchEvent>,
    watchers: Vec<Watcher>,
    next_watcher_id: u64,
    /// How many undelivered live events a watcher may have.
    watch_backlog: usize,
}

impl State {
    pub(crate) fn new(watch_backlog: usize) -> Self {
        Self {
            revision: 0,
            compacted: 0,
            keys: BTreeMap::new(),
            log: VecDeque::new(),
            watchers: Vec::new(),
            next_watcher_id: 0,
            watch_backlog,
        }
    }

    pub(crate) fn revision(&self) -> Revision {
        self.revision
    }

    pub(crate) fn compacted(&self) -> Revision {
        self.compacted
    }

    pub(crate) fn key_count(&self) -> usize {
        self.keys.len()
    }

    pub(crate) fn watcher_count(&self) -> usize {
        self.watchers.len()
    }

    #[cfg(test)]
    pub(crate) fn log_len(&self) -> usize {
        self.log.len()
    }

    #[cfg(test)]
    pub(crate) fn history(&self, key: &str) -> Option<&KeyHistory> {
        self.keys.get(key)
    }

    pub(crate) fn apply(&mut self, op: StorageOp) -> Completion {
        match op {
            StorageOp::Get { key } => Ok(StorageOutput::Got {
                kv: self.latest(&key),
                revision: self.revision,
            }),
            StorageOp::List {
                prefix,
                revision,
                start_after,
                limit,
            } => self
                .list(&prefix, revision, start_after.as_deref(), limit)
                .map(StorageOutput::Listed),
            StorageOp::Create { key, value } => self.create(key, value),
            StorageOp::Update {
                key,
                value,
                expected_revision,
            } => self.update(key, value, expected_revision),
            StorageOp::Delete {
                key,
                expected_revision,
            } => self.delete(key, expected_revision),
            StorageOp::Compact { revision } => self.compact(revision),
            StorageOp::CurrentRevision => Ok(StorageOutput::Revision(self.revision)),
        }
    }

    fn latest(&self, key: &str) -> Option<KeyValue> {
        let version = self.keys.get(key)?.latest()?;
        Some(key_value(key, version))
    }

    /// Check that `revision` can still be read.
    fn readable(&self, revision: Revision) -> Result<(), StorageError> {
        if revision > self.revision {
            return Err(StorageError::FutureRevision {
                requested: revision,
                current: self.revision,
            });
        }
        if revision < self.compacted {
            return Err(StorageError::Compacted {
                requested: revision,
                compacted: self.compacted,
            });
        }
        Ok(())
    }

    pub(crate) fn list(
        &self,
        prefix: &str,
        revision: Option<Revision>,
        start_after: Option<&str>,
        limit: Option<usize>,
    ) -> Result<ListPage, StorageError> {
        let at = match revision {
            Some(revision) => {
                self.readable(revision)?;
                revision
            }
            None => self.revision,
        };
        // Keys under the prefix sort at or after it; begin past `start_after` when that
        // is further along.
        let lower = match start_after {
            Some(after) if after >= prefix => Bound::Excluded(after),
            _ => Bound::Included(prefix),
        };
        let limit = limit.unwrap_or(usize::MAX);
        let mut items = Vec::new();
        let mut remaining = 0u64;
        for (key, history) in self.keys.range::<str, _>((lower, Bound::Unbounded)) {
            if !key.starts_with(prefix) {
                break;
            }
            let Some(version) = history.at(at) else {
                continue;
            };
            if items.len() < limit {
                items.push(key_value(key, version));
            } else {
                remaining += 1;
            }
        }
        Ok(ListPage {
            items,
            revision: at,
            more: remaining > 0,
            remaining,
        })
    }

    fn create(&mut self, key: String, value: Bytes) -> Completion {
        if self.keys.get(&key).and_then(KeyHistory::latest).is_some() {
            return Err(StorageError::AlreadyExists { key });
        }
        let revision = self.revision + 1;
        let version = Version {
            mod_revision: revision,
            create_revision: revision,
            value: Some(value),
        };
        let kv = key_value(&key, &version);
        self.record(
            key,
            version,
            WatchEvent::Put {
                kv: kv.clone(),
                prev: None,
            },
        );
        Ok(StorageOutput::Written(kv))
    }

    fn update(&mut self, key: String, value: Bytes, expected_revision: Revision) -> Completion {
        let Some(current) = self.latest(&key) else {
            return Err(StorageError::NotFound { key });
        };
        if current.mod_revision != expected_revision {
            return Err(StorageError::Conflict { key, current });
        }
        let version = Version {
            mod_revision: self.revision + 1,
            create_revision: current.create_revision,
            value: Some(value),
        };
        let kv = key_value(&key, &version);
        self.record(
            key,
            version,
            WatchEvent::Put {
                kv: kv.clone(),
                prev: Some(current),
            },
        );
        Ok(StorageOutput::Written(kv))
    }

    fn delete(&mut self, key: String, expected_revision: Option<Revision>) -> Completion {
        let Some(prev) = self.latest(&key) else {
            return Err(StorageError::NotFound { key });
        };
        if expected_revision.is_some_and(|expected| expected != prev.mod_revision) {
            return Err(StorageError::Conflict { key, current: prev });
        }
        let revision = self.revision + 1;
        let tombstone = Version {
            mod_revision: revision,
            create_revision: prev.create_revision,
            value: None,
        };
        self.record(
            key,
            tombstone,
            WatchEvent::Delete {
                prev: prev.clone(),
                revision,
            },
        );
        Ok(StorageOutput::Deleted { prev, revision })
    }

    /// Apply one write: advance the revision, keep the version, log the event and hand
    /// it to the watchers.
    fn record(&mut self, key: String, version: Version, event: WatchEvent) {
        debug_assert_eq!(version.mod_revision, self.revision + 1);
        debug_assert_eq!(event.revision(), version.mod_revision);
        self.revision = version.mod_revision;
        match self.keys.get_mut(&key) {
            Some(history) => history.versions.push(version),
            None => {
                self.keys.insert(
                    key,
                    KeyHistory {
                        versions: vec![version],
                    },
                );
            }
        }
        self.notify(&event);
        self.log.push_back(event);
    }

    /// Send a live event to every watcher of its key, dropping the watchers that went
    /// away or fell too far behind.
    fn notify(&mut self, event: &WatchEvent) {
        let key = event.key();
        let backlog = self.watch_backlog;
        self.watchers.retain(|watcher| {
            if !key.starts_with(&watcher.prefix) {
                return !watcher.sender.is_closed();
            }
            if watcher.sender.len() >= backlog {
                // Dropping the sender ends the stream once it has drained what it has;
                // the flag makes it report why.
                watcher.overflowed.store(true, Ordering::Release);
                return false;
            }
            watcher.sender.try_send(event.clone()).is_ok()
        });
    }

    /// Register a watcher for changes under `prefix` after `after`; returns its id and
    /// the logged events it must replay first. Done under one lock with the writes, so
    /// nothing falls between the replayed and the live events.
    pub(crate) fn register_watcher(
        &mut self,
        prefix: &str,
        after: Revision,
        sender: async_channel::Sender<WatchEvent>,
        overflowed: Arc<AtomicBool>,
    ) -> Result<(u64, VecDeque<WatchEvent>), StorageError> {
        if after < self.compacted {
            return Err(StorageError::Compacted {
                requested: after,
                compacted: self.compacted,
            });
        }
        let start = self.log.partition_point(|event| event.revision() <= after);
        let replay = self
            .log
            .range(start..)
            .filter(|event| event.key().starts_with(prefix))
            .cloned()
            .collect();
        let id = self.next_watcher_id;
        self.next_watcher_id += 1;
        self.watchers.push(Watcher {
            id,
            prefix: prefix.to_owned(),
            sender,
            overflowed,
        });
        Ok((id, replay))
    }

    pub(crate) fn unregister_watcher(&mut self, id: u64) {
        self.watchers.retain(|watcher| watcher.id != id);
    }

    fn compact(&mut self, revision: Revision) -> Completion {
        if revision > self.revision {
            return Err(StorageError::FutureRevision {
                requested: revision,
                current: self.revision,
            });
        }
        if revision < self.compacted {
            return Err(StorageError::Compacted {
                requested: revision,
                compacted: self.compacted,
            });
        }
        if revision > self.compacted {
            self.keys.retain(|_, history| history.compact(revision));
            let keep_from = self
                .log
                .partition_point(|event| event.revision() <= revision);
            self.log.drain(..keep_from);
            self.compacted = revision;
        }
        Ok(StorageOutput::Compacted)
    }
}
