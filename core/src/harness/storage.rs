//! Storage as the harness runs it: every operation done at once, watches read as far
//! as the store has got.

use crate::storage::{Completion, Revision, StorageError, StorageOp, WatchEvent};

/// A storage backend that answers synchronously (the memory backend).
pub trait SyncStorage {
    type Watch: SyncWatch;
    /// Run one operation.
    fn run_now(&self, op: StorageOp) -> Completion;
    /// Every change under `prefix` after revision `after`.
    fn watch_now(&self, prefix: &str, after: Revision) -> Result<Self::Watch, StorageError>;
}

/// A backend watch read without waiting.
pub trait SyncWatch {
    /// The next event already there, if any.
    fn next_now(&mut self) -> Option<Result<WatchEvent, StorageError>>;
}
