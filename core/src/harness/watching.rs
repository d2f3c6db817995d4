//! Requests that go on while others run: a held request stepped one storage operation
//! at a time ([`Harness::step`]), and a watch kept open ([`Harness::open_watch`]) whose
//! new frames are read whenever a test or a simulation looks ([`Harness::pump_watch`]),
//! until it is closed or ends. Several harnesses over one store are several replicas of
//! a server.

use super::{Harness, Held, Stopped, SyncStorage, SyncWatch};
use crate::effect::{CallOutcome, Outbound, WatchResponse};
use crate::exchange::Exchange;
use crate::http1::Connection;
use crate::storage::StorageError;
use crate::watch_cache::Subscription;
use crate::WatchSource;
use bytes::Bytes;
use std::sync::Arc;
use std::time::SystemTime;

/// Where a held request is after one more step.
#[derive(Debug)]
pub enum Stepped {
    /// Held at its next storage operation (or still queued for a seat).
    Held(Box<Held>),
    /// Answered: the bytes the server wrote.
    Answered(Vec<u8>),
}

/// Where an open watch's events come from.
pub(super) enum Feed<W> {
    Cache(Arc<Subscription>),
    Backend(W),
}

impl<W: SyncWatch> Feed<W> {
    /// The feed of `source`: the cache's subscription, or a backend watch opened now.
    pub(super) fn open<S: SyncStorage<Watch = W>>(store: &S, source: WatchSource) -> Result<Feed<W>, StorageError> {
        match source {
            WatchSource::Cache(subscription) => Ok(Feed::Cache(subscription)),
            WatchSource::Backend { prefix, after } => store.watch_now(&prefix, after).map(Feed::Backend),
        }
    }

    /// Write the frame of every event there is now, observed at `now`.
    pub(super) fn pump(
        &mut self,
        stream: &mut dyn WatchResponse,
        now: SystemTime,
        calls: &dyn Fn(&Outbound) -> CallOutcome,
        mut write: impl FnMut(Bytes),
    ) {
        while !stream.is_done() {
            let frame = match self {
                Feed::Cache(subscription) => match subscription.try_next() {
                    Some(Ok(event)) => stream.on_cached(&event, now),
                    Some(Err(e)) => Some(stream.on_error(e)),
                    None => return,
                },
                Feed::Backend(events) => match events.next_now() {
                    Some(event) => stream.on_event(event, now),
                    None => return,
                },
            };
            if let Some(frame) = after_call(stream, frame, now, calls) {
                write(frame);
            }
        }
    }
}

/// `frame`, unless the watch asked for a call first: then what its answer gives.
fn after_call(
    stream: &mut dyn WatchResponse,
    frame: Option<Bytes>,
    now: SystemTime,
    calls: &dyn Fn(&Outbound) -> CallOutcome,
) -> Option<Bytes> {
    match stream.take_call() {
        Some(outbound) => stream.call_done(calls(&outbound), now),
        None => frame,
    }
}

/// A watch kept open and what was written when it opened; or, for a request that did
/// not become a watch, what was written instead.
pub type Opened<W> = Result<(OpenWatch<W>, Vec<u8>), Vec<u8>>;

/// A watch being streamed to a client that reads it now and then.
pub struct OpenWatch<W> {
    connection: Connection,
    exchange: Exchange,
    stream: Box<dyn WatchResponse>,
    /// `None` once the source failed (its ERROR frame was written).
    feed: Option<Feed<W>>,
}

impl<W> std::fmt::Debug for OpenWatch<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let feed = match &self.feed {
            Some(Feed::Cache(_)) => "the watch cache",
            Some(Feed::Backend(_)) => "the backend",
            None => "none (failed)",
        };
        f.debug_struct("OpenWatch").field("exchange", &self.exchange).field("feed", &feed).field("done", &self.stream.is_done()).finish_non_exhaustive()
    }
}

impl<W> OpenWatch<W> {
    /// Whether the server has ended the stream (an ERROR event such as 410 Gone).
    pub fn is_done(&self) -> bool {
        self.stream.is_done() || self.feed.is_none()
    }
}

impl<S: SyncStorage> Harness<S> {
    /// Run a held request's storage operation and go on to its next one, or to its
    /// answer; a queued request looks again whether its turn has come.
    pub fn step(&self, held: Held) -> Stepped {
        let Held { mut connection, mut exchange, op } = held;
        let stopped = match op {
            Some(op) => self.storage(&mut exchange, op).unwrap_or_else(|| self.drive(&mut exchange, true)),
            None => self.drive(&mut exchange, true),
        };
        match stopped {
            Stopped::Held(op) => Stepped::Held(Box::new(Held { connection, exchange, op: Some(op) })),
            Stopped::Queued => Stepped::Held(Box::new(Held { connection, exchange, op: None })),
            stopped => {
                let mut out = Vec::new();
                self.write(&mut connection, exchange, stopped, &mut out);
                Stepped::Answered(out)
            }
        }
    }

    /// Send a request on a new connection and, if it becomes a watch, keep it open:
    /// the watch and the bytes written so far (its head and initial frames). Anything
    /// else is answered as [`Harness::send`] answers it: `Err` with the bytes.
    pub fn open_watch(&self, bytes: &[u8]) -> Opened<S::Watch> {
        let Some((mut connection, mut exchange)) = self.arrive(bytes) else {
            return Err(Vec::new());
        };
        let mut out = Vec::new();
        match self.drive(&mut exchange, false) {
            Stopped::Watching(source, head, mut stream) => {
                out.extend_from_slice(&connection.encode_stream_head(&head));
                for frame in stream.take_initial() {
                    out.extend_from_slice(&connection.encode_chunk(&frame));
                }
                let feed = match Feed::open(&self.store, source) {
                    Ok(feed) => Some(feed),
                    Err(e) => {
                        out.extend_from_slice(&connection.encode_chunk(&stream.on_error(e)));
                        None
                    }
                };
                let mut watch = OpenWatch { connection, exchange, stream, feed };
                out.extend(self.pump_watch(&mut watch));
                Ok((watch, out))
            }
            stopped => {
                self.write(&mut connection, exchange, stopped, &mut out);
                Err(out)
            }
        }
    }

    /// The frames of the changes an open watch has to deliver now.
    pub fn pump_watch(&self, watch: &mut OpenWatch<S::Watch>) -> Vec<u8> {
        let mut out = Vec::new();
        let now = self.epoch + self.clock.get();
        let calls = self.calls.borrow();
        if let Some(feed) = watch.feed.as_mut() {
            let connection = &mut watch.connection;
            feed.pump(&mut *watch.stream, now, &*calls, |frame| out.extend_from_slice(&connection.encode_chunk(&frame)));
        }
        out
    }

    /// End an open watch (its timeout, or the client going away): the last frames and
    /// the end of the stream.
    pub fn close_watch(&self, mut watch: OpenWatch<S::Watch>) -> Vec<u8> {
        let mut out = self.pump_watch(&mut watch);
        let OpenWatch { mut connection, mut exchange, .. } = watch;
        out.extend_from_slice(&connection.encode_stream_end());
        exchange.stream_ended(self.clock.get());
        self.audit_lines.borrow_mut().extend(exchange.take_audit_lines());
        exchange.written(self.clock.get());
        out
    }
}
