//! Watches: the committed changes a watch missed, read back from the log in chunks,
//! then live changes the writer hands over after each commit.
//!
//! The writer publishes a batch's events under the registry's lock right after the
//! batch commits, and records the batch's last revision as `published`. A new watch
//! registers under the same lock and notes `published`: every change up to it is in
//! the log already, every later one will come live. Nothing falls between the two.

use crate::reads;
use crate::Common;
use apiary_core::storage::{Revision, StorageError, WatchEvent, WatchStream};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// How many missed changes a watch reads back when it is opened.
const EAGER_REPLAY: usize = 10_000;

/// The live watches and the revision handed to them last.
pub(crate) struct Registry {
    inner: Mutex<RegistryState>,
    /// How many live events a watch may leave unread before it is cut off.
    backlog: usize,
}

struct RegistryState {
    published: Revision,
    watchers: Vec<Watcher>,
    next_id: u64,
    /// Set when the store is dropped: no watch may register any more.
    closed: bool,
}

struct Watcher {
    id: u64,
    prefix: String,
    sender: async_channel::Sender<WatchEvent>,
    overflowed: Arc<AtomicBool>,
}

impl Registry {
    pub(crate) fn new(published: Revision, backlog: usize) -> Self {
        Self {
            inner: Mutex::new(RegistryState {
                published,
                watchers: Vec::new(),
                next_id: 0,
                closed: false,
            }),
            backlog: backlog.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, RegistryState> {
        // Nothing panics while holding it; a poisoned lock still guards a whole state.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Hand a committed batch's events, in revision order, to the watches of their keys,
    /// dropping the watches that went away or fell too far behind.
    pub(crate) fn publish(&self, events: &[WatchEvent]) {
        let Some(last) = events.last() else { return };
        let mut state = self.lock();
        for event in events {
            let key = event.key();
            state.watchers.retain(|watcher| {
                if !key.starts_with(&watcher.prefix) {
                    return !watcher.sender.is_closed();
                }
                if watcher.sender.len() >= self.backlog {
                    watcher.overflowed.store(true, Ordering::Release);
                    return false;
                }
                watcher.sender.try_send(event.clone()).is_ok()
            });
        }
        state.published = last.revision();
    }

    /// End every watch (their streams drain what they hold, then stop) and refuse new
    /// ones: the store is going away.
    pub(crate) fn close(&self) {
        let mut state = self.lock();
        state.closed = true;
        state.watchers.clear();
    }

    pub(crate) fn watcher_count(&self) -> usize {
        self.lock().watchers.len()
    }

    fn unregister(&self, id: u64) {
        self.lock().watchers.retain(|watcher| watcher.id != id);
    }
}

/// A watch on a [`SqliteStore`](crate::SqliteStore): every change under a prefix after
/// a revision, in revision order, each exactly once.
pub struct SqliteWatch {
    common: Arc<Common>,
    id: u64,
    prefix: String,
    /// Logged changes above this revision and up to `replay_until` are still to be
    /// read back from the database.
    replay_after: Revision,
    replay_until: Revision,
    replayed: VecDeque<WatchEvent>,
    live: async_channel::Receiver<WatchEvent>,
    /// Live events at or below this revision are skipped (a watch opened ahead of the
    /// store waits for its revision).
    after: Revision,
    overflowed: Arc<AtomicBool>,
    /// Whether the watch has reported the error that ended it.
    failed: bool,
}

impl SqliteWatch {
    /// Register the watch, then read back the logged changes it missed: up to
    /// [`EAGER_REPLAY`] of them now, so that a compaction that comes after the watch was
    /// opened cannot take them away; the rest of a longer history in chunks as the
    /// watch is read (a compaction carried out past those ends the watch with
    /// `Compacted`, as etcd cancels a watch that compaction overtakes).
    pub(crate) async fn open(
        common: &Arc<Common>,
        prefix: &str,
        after: Revision,
    ) -> Result<Self, StorageError> {
        let mut watch = Self::register(common, prefix, after)?;
        while watch.replayed.len() < EAGER_REPLAY && watch.replay_after < watch.replay_until {
            watch.read_log().await?;
        }
        Ok(watch)
    }

    fn register(common: &Arc<Common>, prefix: &str, after: Revision) -> Result<Self, StorageError> {
        let compacted = common.compacted();
        if after < compacted {
            return Err(StorageError::Compacted {
                requested: after,
                compacted,
            });
        }
        let (sender, live) = async_channel::unbounded();
        let overflowed = Arc::new(AtomicBool::new(false));
        let (id, published) = {
            let mut state = common.registry.lock();
            if state.closed {
                return Err(StorageError::Unavailable("the store is closed".to_owned()));
            }
            let id = state.next_id;
            state.next_id += 1;
            state.watchers.push(Watcher {
                id,
                prefix: prefix.to_owned(),
                sender,
                overflowed: Arc::clone(&overflowed),
            });
            (id, state.published)
        };
        Ok(Self {
            common: Arc::clone(common),
            id,
            prefix: prefix.to_owned(),
            replay_after: after,
            replay_until: published,
            replayed: VecDeque::new(),
            live,
            after,
            overflowed,
            failed: false,
        })
    }

    /// Read the next chunk of logged changes, on the blocking pool.
    async fn read_log(&mut self) -> Result<(), StorageError> {
        let (prefix, after, until) = (self.prefix.clone(), self.replay_after, self.replay_until);
        let events = self
            .common
            .read(move |conn| reads::replay(conn, &prefix, after, until))
            .await?;
        // A short chunk means the range is done; otherwise go on after its last change.
        self.replay_after = match events.last() {
            Some(last) if events.len() == reads::REPLAY_CHUNK => last.revision(),
            _ => until,
        };
        self.replayed.extend(events);
        Ok(())
    }

    fn fail(&mut self, error: StorageError) -> Option<Result<WatchEvent, StorageError>> {
        self.failed = true;
        self.replay_after = self.replay_until;
        self.live.close();
        Some(Err(error))
    }

    /// What to yield once the live channel is closed and drained.
    fn end(&mut self) -> Option<Result<WatchEvent, StorageError>> {
        if self.overflowed.load(Ordering::Acquire) && !self.failed {
            return self.fail(StorageError::Unavailable(
                "watch fell too far behind and was closed; watch again from the last revision seen"
                    .to_owned(),
            ));
        }
        None
    }
}

impl WatchStream for SqliteWatch {
    async fn next(&mut self) -> Option<Result<WatchEvent, StorageError>> {
        if self.failed {
            return None;
        }
        while self.replayed.is_empty() && self.replay_after < self.replay_until {
            if let Err(e) = self.read_log().await {
                return self.fail(e);
            }
        }
        if let Some(event) = self.replayed.pop_front() {
            return Some(Ok(event));
        }
        loop {
            match self.live.recv().await {
                Ok(event) if event.revision() <= self.after => continue,
                Ok(event) => return Some(Ok(event)),
                Err(async_channel::RecvError) => return self.end(),
            }
        }
    }
}

impl Drop for SqliteWatch {
    fn drop(&mut self) {
        self.common.registry.unregister(self.id);
    }
}

impl std::fmt::Debug for SqliteWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteWatch")
            .field("prefix", &self.prefix)
            .field("replay_after", &self.replay_after)
            .field("replay_until", &self.replay_until)
            .field("live", &self.live.len())
            .finish()
    }
}
