//! Watches: the logged events a watch missed, then live ones through a channel.

use crate::Shared;
use apiary_core::storage::{Revision, StorageError, WatchEvent, WatchStream};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

/// A watch on a [`MemoryStore`](crate::MemoryStore): every change under a prefix after
/// a revision, in revision order, each exactly once.
///
/// It ends (yields `None`) when every clone of the store is gone. Dropping it
/// unregisters it from the store.
pub struct MemoryWatch {
    /// Logged events from before the watch was opened, not yet yielded.
    replay: VecDeque<WatchEvent>,
    live: async_channel::Receiver<WatchEvent>,
    /// Only changes above this revision are yielded (live events below it arrive when
    /// the watch was opened ahead of the store).
    after: Revision,
    overflowed: Arc<AtomicBool>,
    /// Whether the end of the watch was reported as an error already.
    failed: bool,
    id: u64,
    store: Weak<Shared>,
}

impl MemoryWatch {
    pub(crate) fn open(
        shared: &Arc<Shared>,
        prefix: &str,
        after: Revision,
    ) -> Result<Self, StorageError> {
        let (sender, live) = async_channel::unbounded();
        let overflowed = Arc::new(AtomicBool::new(false));
        let (id, replay) =
            shared
                .lock()
                .register_watcher(prefix, after, sender, Arc::clone(&overflowed))?;
        Ok(Self {
            replay,
            live,
            after,
            overflowed,
            failed: false,
            id,
            store: Arc::downgrade(shared),
        })
    }

    /// The next change, without waiting: `None` when none is ready yet or the watch has
    /// ended (tell them apart with [`MemoryWatch::is_ended`]).
    pub fn try_next(&mut self) -> Option<Result<WatchEvent, StorageError>> {
        if let Some(event) = self.replay.pop_front() {
            return Some(Ok(event));
        }
        loop {
            match self.live.try_recv() {
                Ok(event) if event.revision() <= self.after => continue,
                Ok(event) => return Some(Ok(event)),
                Err(async_channel::TryRecvError::Empty) => return None,
                Err(async_channel::TryRecvError::Closed) => return self.end(),
            }
        }
    }

    /// Whether the watch has ended: nothing more will ever be yielded but, perhaps,
    /// the error saying why.
    pub fn is_ended(&self) -> bool {
        self.replay.is_empty() && self.live.is_closed() && self.live.is_empty()
    }

    /// What to yield once the live channel is closed and drained.
    fn end(&mut self) -> Option<Result<WatchEvent, StorageError>> {
        if self.overflowed.load(Ordering::Acquire) && !self.failed {
            self.failed = true;
            return Some(Err(StorageError::Unavailable(
                "watch fell too far behind and was closed; watch again from the last revision seen"
                    .to_owned(),
            )));
        }
        None
    }
}

impl WatchStream for MemoryWatch {
    async fn next(&mut self) -> Option<Result<WatchEvent, StorageError>> {
        if let Some(event) = self.replay.pop_front() {
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

impl Drop for MemoryWatch {
    fn drop(&mut self) {
        if let Some(shared) = self.store.upgrade() {
            shared.lock().unregister_watcher(self.id);
        }
    }
}

impl std::fmt::Debug for MemoryWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryWatch")
            .field("after", &self.after)
            .field("replay", &self.replay.len())
            .field("live", &self.live.len())
            .finish()
    }
}
