//! One client watch's queue of cached events: filled by its [`WatchCache`], drained by
//! the adapter that pumps the watch to its client.
//!
//! [`WatchCache`]: super::WatchCache

use super::CachedEvent;
use crate::storage::{Revision, StorageError};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// One client watch's queue.
pub struct Subscription {
    prefix: String,
    after: Revision,
    /// How many events may wait before the subscriber is ended as too slow.
    queue_limit: usize,
    queue: Mutex<Queue>,
}

#[derive(Default)]
struct Queue {
    events: VecDeque<Arc<CachedEvent>>,
    waker: Option<Waker>,
    ended: Option<StorageError>,
    closed: bool,
}

impl Subscription {
    /// A subscription to every event under `prefix` after revision `after`.
    pub(super) fn new(prefix: &str, after: Revision, queue_limit: usize) -> Subscription {
        Subscription {
            prefix: prefix.to_owned(),
            after,
            queue_limit,
            queue: Mutex::new(Queue::default()),
        }
    }

    /// Queue `event` if it is for this subscriber; false once the subscriber is gone.
    pub(super) fn offer(&self, event: &Arc<CachedEvent>) -> bool {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        if q.closed || q.ended.is_some() {
            return !q.closed;
        }
        if event.event.revision() <= self.after || !&event.event.key().starts_with(&self.prefix) {
            return true;
        }
        if q.events.len() >= self.queue_limit {
            q.ended = Some(StorageError::Unavailable(
                "the watch fell too far behind; watch again from the last resourceVersion seen"
                    .into(),
            ));
        } else {
            q.events.push_back(event.clone());
        }
        if let Some(w) = q.waker.take() {
            w.wake();
        }
        true
    }

    pub(super) fn end(&self, why: StorageError) {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        if q.ended.is_none() {
            q.ended = Some(why);
        }
        if let Some(w) = q.waker.take() {
            w.wake();
        }
    }

    /// The next event, the error that ended the subscription, or pending.
    pub fn poll_next(&self, cx: &mut Context<'_>) -> Poll<Result<Arc<CachedEvent>, StorageError>> {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = q.events.pop_front() {
            return Poll::Ready(Ok(e));
        }
        if let Some(why) = q.ended.take() {
            q.closed = true;
            return Poll::Ready(Err(why));
        }
        q.waker = Some(cx.waker().clone());
        Poll::Pending
    }

    /// The next event if one is queued, without waiting: lets a writer batch what has
    /// piled up into one write.
    pub fn try_next(&self) -> Option<Result<Arc<CachedEvent>, StorageError>> {
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = q.events.pop_front() {
            return Some(Ok(e));
        }
        let why = q.ended.take()?;
        q.closed = true;
        Some(Err(why))
    }

    /// The next event, or the error that ended the subscription.
    pub async fn next(&self) -> Result<Arc<CachedEvent>, StorageError> {
        std::future::poll_fn(|cx| self.poll_next(cx)).await
    }
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("prefix", &self.prefix)
            .field("after", &self.after)
            .finish_non_exhaustive()
    }
}
