//! Apiary's in-memory storage backend: an MVCC map with a revision log, after etcd.
//!
//! One global revision counter (0 before the first write; every write takes the next
//! revision). Each key keeps the history of its versions — values and tombstones — so a
//! list can be read at any revision that was not compacted away. Every write is also
//! appended to a revision log, from which a watch replays the changes it missed before
//! it switches to live events; both happen under the store's one lock, so a watch sees
//! each change exactly once, in revision order.
//!
//! [`MemoryStore`] is cheap to clone (the clones share one store) and needs no async
//! runtime: every operation completes immediately, and watch events are handed over
//! through a runtime-agnostic channel.
//!
//! ```
//! use apiary_core::storage::{StorageOp, StorageOutput};
//! use apiary_memory::MemoryStore;
//!
//! let store = MemoryStore::new();
//! let created = store.apply(StorageOp::Create {
//!     key: "/registry/configmaps/default/a".into(),
//!     value: "{}".into(),
//! });
//! let Ok(StorageOutput::Written(kv)) = created else { panic!("{created:?}") };
//! assert_eq!(kv.mod_revision, 1);
//! ```

mod state;
mod watch;

use apiary_core::storage::{Completion, Revision, Storage, StorageError, StorageOp, WatchEvent};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use state::State;
pub use watch::MemoryWatch;

/// How many live events a watch may leave unread before it is ended with an error
/// (see [`MemoryStore::with_watch_backlog`]).
pub const DEFAULT_WATCH_BACKLOG: usize = 100_000;

/// The in-memory store. Clones share the same data.
#[derive(Clone)]
pub struct MemoryStore {
    shared: Arc<Shared>,
}

/// What every clone of a store, and every watch on it, shares.
pub(crate) struct Shared {
    state: Mutex<State>,
}

impl Shared {
    /// The store's state. No code panics while holding the lock, but if a caller's
    /// thread ever did, the state is still consistent (every write is applied as a
    /// whole before anything that can fail), so a poisoned lock is simply taken over.
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl MemoryStore {
    /// An empty store at revision 0.
    pub fn new() -> Self {
        Self::with_watch_backlog(DEFAULT_WATCH_BACKLOG)
    }

    /// An empty store whose watches may fall at most `backlog` live events behind.
    ///
    /// A watch whose reader leaves more than `backlog` events unread is cut off: it
    /// still yields every event it had received, then one
    /// [`StorageError::Unavailable`], then ends. The reader can watch again from the
    /// last revision it saw. This keeps a stalled reader from holding the store's
    /// memory without ever silently skipping an event.
    pub fn with_watch_backlog(backlog: usize) -> Self {
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State::new(backlog.max(1))),
            }),
        }
    }

    /// Perform one operation right away. [`Storage::run`] is this, as a future.
    pub fn apply(&self, op: StorageOp) -> Completion {
        self.shared.lock().apply(op)
    }

    /// Open a watch right away. [`Storage::watch`] is this, as a future.
    ///
    /// The watch yields every change under `prefix` with a revision above `after`:
    /// first those already in the revision log, then live ones. `after` may be above
    /// the current revision (the watch then waits for it); below the compacted
    /// revision it fails with [`StorageError::Compacted`].
    pub fn open_watch(&self, prefix: &str, after: Revision) -> Result<MemoryWatch, StorageError> {
        MemoryWatch::open(&self.shared, prefix, after)
    }

    /// The revision of the newest write (0 before any).
    pub fn current_revision(&self) -> Revision {
        self.shared.lock().revision()
    }

    /// The revision history was last compacted at (0 before any compaction). Lists at
    /// a lower revision, and watches after one, fail with [`StorageError::Compacted`].
    pub fn compacted_revision(&self) -> Revision {
        self.shared.lock().compacted()
    }

    /// How many watches are registered: open ones, and dropped ones not yet pruned.
    /// Dropping a watch unregisters it at once, so after drops this counts open ones.
    pub fn watcher_count(&self) -> usize {
        self.shared.lock().watcher_count()
    }
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.shared.lock();
        f.debug_struct("MemoryStore")
            .field("revision", &state.revision())
            .field("compacted", &state.compacted())
            .field("keys", &state.key_count())
            .field("watchers", &state.watcher_count())
            .finish()
    }
}

impl Storage for MemoryStore {
    type Watch = MemoryWatch;

    async fn run(&self, op: StorageOp) -> Completion {
        self.apply(op)
    }

    async fn watch(&self, prefix: &str, after: Revision) -> Result<MemoryWatch, StorageError> {
        self.open_watch(prefix, after)
    }
}

#[cfg(test)]
mod tests;

/// The memory store answers at once: the core's deterministic harness runs it
/// synchronously.
impl apiary_core::harness::SyncStorage for MemoryStore {
    type Watch = MemoryWatch;

    fn run_now(&self, op: StorageOp) -> Completion {
        self.apply(op)
    }

    fn watch_now(&self, prefix: &str, after: Revision) -> Result<MemoryWatch, StorageError> {
        self.open_watch(prefix, after)
    }
}

impl apiary_core::harness::SyncWatch for MemoryWatch {
    fn next_now(&mut self) -> Option<Result<WatchEvent, StorageError>> {
        self.try_next()
    }
}
