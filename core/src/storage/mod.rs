//! The storage contract, after etcd's model that kube-apiserver relies on.
//!
//! One global revision counter; every write gets the next revision; an object's
//! `resourceVersion` is the revision of its last write, as a decimal string. The core
//! asks for storage work as plain [`StorageOp`] values and is resumed with a
//! [`Completion`]; backends implement [`Storage`] with plain async functions and no
//! particular runtime.

mod keys;

pub use keys::{object_key, resource_prefix};

use bytes::Bytes;
use std::future::Future;

/// A position in the global history. Revision 0 means "no writes yet".
pub type Revision = u64;

/// One stored value with the revisions etcd would report for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyValue {
    pub key: String,
    pub value: Bytes,
    /// Revision of the write that created this key (the latest incarnation).
    pub create_revision: Revision,
    /// Revision of the last write to this key: the object's resourceVersion.
    pub mod_revision: Revision,
}

/// A piece of storage work the core needs done.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StorageOp {
    /// Read the latest value of one key.
    Get { key: String },
    /// Read the keys under `prefix`, in key order, as of `revision` (latest when `None`),
    /// starting strictly after `start_after`, at most `limit` items (all when `None`;
    /// the core never asks for `Some(0)`).
    List {
        prefix: String,
        revision: Option<Revision>,
        start_after: Option<String>,
        limit: Option<usize>,
    },
    /// Create `key` only if it does not exist.
    Create { key: String, value: Bytes },
    /// Replace `key` only if its mod_revision is still `expected_revision`.
    Update {
        key: String,
        value: Bytes,
        expected_revision: Revision,
    },
    /// Delete `key`; when `expected_revision` is set, only if it still matches.
    Delete {
        key: String,
        expected_revision: Option<Revision>,
    },
    /// Forget history up to (not including) `revision`.
    Compact { revision: Revision },
    /// The newest revision.
    CurrentRevision,
}

impl StorageOp {
    /// Every key under `prefix`, at the latest revision, in one read.
    pub fn list_latest(prefix: String) -> StorageOp {
        StorageOp::List {
            prefix,
            revision: None,
            start_after: None,
            limit: None,
        }
    }
}

/// One page of a list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListPage {
    pub items: Vec<KeyValue>,
    /// The revision the list was read at.
    pub revision: Revision,
    /// Whether keys remain after the last item under the prefix at that revision.
    pub more: bool,
    /// How many keys remain after the last item.
    pub remaining: u64,
}

/// What a successful [`StorageOp`] returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StorageOutput {
    /// `Get`: the value if the key exists, and the store's current revision.
    Got {
        kv: Option<KeyValue>,
        revision: Revision,
    },
    Listed(ListPage),
    /// `Create`/`Update`: the stored value with its new revisions.
    Written(KeyValue),
    /// `Delete`: the value as it was before the delete, and the delete's revision.
    Deleted {
        prev: KeyValue,
        revision: Revision,
    },
    Compacted,
    Revision(Revision),
}

/// Why a [`StorageOp`] failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StorageError {
    /// `Create` on a key that exists.
    AlreadyExists { key: String },
    /// `Update`/`Delete` on a key that does not exist.
    NotFound { key: String },
    /// `Update`/`Delete` whose expected revision is stale; carries the current value.
    Conflict { key: String, current: KeyValue },
    /// The requested revision was compacted away.
    Compacted {
        requested: Revision,
        compacted: Revision,
    },
    /// The requested revision is newer than the store's.
    FutureRevision {
        requested: Revision,
        current: Revision,
    },
    /// The backend cannot be reached right now.
    Unavailable(String),
    /// Anything else the backend reports.
    Internal(String),
}

impl std::fmt::Display for StorageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::AlreadyExists { key } => write!(f, "key {key} already exists"),
            Self::NotFound { key } => write!(f, "key {key} not found"),
            Self::Conflict { key, current } => write!(
                f,
                "key {key} was modified (now at revision {})",
                current.mod_revision
            ),
            Self::Compacted {
                requested,
                compacted,
            } => write!(
                f,
                "revision {requested} has been compacted (compacted up to {compacted})"
            ),
            Self::FutureRevision { requested, current } => write!(
                f,
                "revision {requested} is newer than the current revision {current}"
            ),
            Self::Unavailable(why) => write!(f, "storage unavailable: {why}"),
            Self::Internal(why) => write!(f, "storage error: {why}"),
        }
    }
}

impl std::error::Error for StorageError {}

/// What the core is resumed with after a [`StorageOp`].
pub type Completion = Result<StorageOutput, StorageError>;

/// A change seen by a watch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchEvent {
    /// A create or update; `prev` is the value before an update.
    Put {
        kv: KeyValue,
        prev: Option<KeyValue>,
    },
    /// A delete at `revision`; `prev` is the value that was deleted.
    Delete { prev: KeyValue, revision: Revision },
}

impl WatchEvent {
    /// The key the change is about.
    pub fn key(&self) -> &str {
        match self {
            Self::Put { kv, .. } => &kv.key,
            Self::Delete { prev, .. } => &prev.key,
        }
    }

    /// The revision of the write that produced this event.
    pub fn revision(&self) -> Revision {
        match self {
            Self::Put { kv, .. } => kv.mod_revision,
            Self::Delete { revision, .. } => *revision,
        }
    }
}

/// A stream of changes under a prefix, in revision order, each exactly once.
///
/// An `Err` item ends the watch (a slow reader cut off, a backend connection lost, or
/// `Compacted` when a compaction overtook history the watch had yet to read back, as
/// etcd cancels such a watch): the caller watches again from the last revision it saw
/// (and relists on `Compacted`). Dropping the stream cancels the watch.
pub trait WatchStream: Send {
    /// The next change; `None` when the watch has ended.
    fn next(&mut self) -> impl Future<Output = Option<Result<WatchEvent, StorageError>>> + Send;
}

/// What the periodic compactor carries from one tick to the next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompactorTick {
    /// The newest revision at the previous tick: this tick compacts history before it.
    pub revision: Revision,
    /// For backends shared by several servers: how many ticks the servers have taken
    /// together, so that only one of them compacts per interval.
    pub claim: i64,
}

/// A storage backend: memory, sqlite, etcd. Every one passes the conformance suite.
pub trait Storage: Send + Sync + 'static {
    type Watch: WatchStream + 'static;

    /// One tick of the periodic compactor (kube-apiserver's `--etcd-compaction-interval`):
    /// compact away history before the revision the previous tick saw, and return what
    /// the next tick needs. Backends shared by several servers override it so that one
    /// server compacts per interval.
    fn compactor_tick(
        &self,
        last: CompactorTick,
    ) -> impl Future<Output = Result<CompactorTick, StorageError>> + Send {
        async move {
            if last.revision > 0 {
                match self
                    .run(StorageOp::Compact {
                        revision: last.revision,
                    })
                    .await
                {
                    // Compacted further already, by hand: nothing to do.
                    Ok(_) | Err(StorageError::Compacted { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
            match self.run(StorageOp::CurrentRevision).await? {
                StorageOutput::Revision(revision) => Ok(CompactorTick {
                    revision,
                    claim: last.claim,
                }),
                other => Err(StorageError::Internal(format!(
                    "CurrentRevision answered {other:?}"
                ))),
            }
        }
    }

    /// Perform one operation.
    fn run(&self, op: StorageOp) -> impl Future<Output = Completion> + Send;

    /// Watch keys under `prefix` for every change after revision `after`.
    /// A compacted `after` (below the compacted revision) fails with
    /// [`StorageError::Compacted`]; an `after` beyond the newest revision waits for it.
    fn watch(
        &self,
        prefix: &str,
        after: Revision,
    ) -> impl Future<Output = Result<Self::Watch, StorageError>> + Send;
}
