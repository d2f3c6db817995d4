//! Streaming a watch to its client.

use super::Apiary;
use apiary_core::http1::Connection;
use apiary_core::storage::Storage;
use apiary_core::effect::WatchResponse;
use apiary_core::WatchSource;
use smol::future::{self, FutureExt as _};
use smol::io::{AsyncReadExt as _, AsyncWriteExt as _};
use smol::Timer;
use bytes::Bytes;
use std::io;
use std::sync::Arc;
use std::time::SystemTime;

/// The most bytes of watch frames written at once.
const MAX_WATCH_BATCH: usize = 256 * 1024;

/// Where a watch's frames go: an HTTP/1.1 connection (chunks) or an HTTP/2 stream (DATA
/// frames sent as the client's flow control allows).
pub(super) trait WatchSink {
    /// Send the response head.
    async fn head(&mut self, head: &http::response::Parts) -> io::Result<()>;
    /// Append one watch frame to `batch` as the protocol carries it.
    fn frame(&mut self, frame: &[u8], batch: &mut Vec<u8>);
    /// Send a batch of framed frames now (an empty one flushes what was written).
    async fn send(&mut self, batch: Vec<u8>) -> io::Result<()>;
    /// Resolves once the client has gone away.
    async fn gone(&mut self);
    /// End the stream cleanly.
    async fn end(&mut self) -> io::Result<()>;
}

/// The client side of an HTTP/1.1 connection while it carries a watch: bytes it sends
/// meanwhile are kept for its next request.
pub(super) struct WatchClient<'a, T> {
    pub stream: &'a mut T,
    pub codec: &'a mut Connection,
    pub buf: &'a mut Vec<u8>,
    pub eof: &'a mut bool,
    /// The lifecycle's clock, for the codec's timers.
    pub lifecycle: &'a super::lifecycle::Lifecycle,
}

impl<T: smol::io::AsyncRead + smol::io::AsyncWrite + Unpin> WatchSink for WatchClient<'_, T> {
    async fn head(&mut self, head: &http::response::Parts) -> io::Result<()> {
        self.stream.write_all(&self.codec.encode_stream_head(head)).await
    }

    fn frame(&mut self, frame: &[u8], batch: &mut Vec<u8>) {
        batch.extend_from_slice(&self.codec.encode_chunk(frame));
    }

    async fn send(&mut self, batch: Vec<u8>) -> io::Result<()> {
        self.stream.write_all(&batch).await?;
        self.stream.flush().await
    }

    async fn gone(&mut self) {
        if *self.eof {
            return future::pending().await;
        }
        loop {
            match self.stream.read(self.buf).await {
                Ok(0) | Err(_) => {
                    *self.eof = true;
                    self.codec.feed_eof();
                    return;
                }
                Ok(n) => self.codec.feed(&self.buf[..n], self.lifecycle.now()),
            }
        }
    }

    async fn end(&mut self) -> io::Result<()> {
        self.stream.write_all(&self.codec.encode_stream_end()).await?;
        self.stream.flush().await
    }
}

/// Where a watch's events come from, once its source is open.
enum Source<W> {
    Cache(Arc<apiary_core::watch_cache::Subscription>),
    Backend(W),
}

/// What woke a watch up.
enum Wake {
    Event(Option<Result<apiary_core::storage::WatchEvent, apiary_core::storage::StorageError>>),
    Cached(Result<Arc<apiary_core::watch_cache::CachedEvent>, apiary_core::storage::StorageError>),
    Bookmark,
    Deadline,
    Gone,
}

impl<S: Storage> Apiary<S> {
    /// Stream a watch: the head, the initial frames, then a frame per event of the source
    /// the core chose (a watch cache subscription, or a backend watch opened here) and a
    /// bookmark per interval, until the stream ends, its timeout passes or the client
    /// goes away.
    pub(super) async fn pump_watch(
        &self,
        sink: &mut impl WatchSink,
        head: http::response::Parts,
        source: WatchSource,
        mut watch: Box<dyn WatchResponse>,
    ) -> io::Result<()> {
        use apiary_core::storage::WatchStream as _;
        use smol::stream::StreamExt as _;
        sink.head(&head).await?;
        let mut batch = Vec::new();
        for frame in watch.take_initial() {
            sink.frame(&frame, &mut batch);
        }
        let mut events = match source {
            WatchSource::Cache(subscription) => Some(Source::Cache(subscription)),
            WatchSource::Backend { prefix, after } => match self.storage.watch(&prefix, after).await {
                Ok(events) => Some(Source::Backend(events)),
                Err(e) => {
                    let frame = watch.on_error(e);
                    sink.frame(&frame, &mut batch);
                    None
                }
            },
        };
        sink.send(batch).await?;
        let mut deadline = Timer::after(watch.timeout());
        let mut bookmarks = watch.bookmark_interval().map(Timer::interval);
        while let Some(source) = events.as_mut().filter(|_| !watch.is_done()) {
            let event = async {
                match source {
                    Source::Cache(subscription) => Wake::Cached(subscription.next().await),
                    Source::Backend(backend) => Wake::Event(backend.next().await),
                }
            };
            let expired = async {
                (&mut deadline).await;
                Wake::Deadline
            };
            // Shutting down ends the watch as its timeout would: a clean end of stream.
            let ending = async {
                self.lifecycle.end_watches.wait().await;
                Wake::Deadline
            };
            let bookmark = async {
                match bookmarks.as_mut() {
                    Some(timer) => {
                        timer.next().await;
                        Wake::Bookmark
                    }
                    None => future::pending().await,
                }
            };
            let gone = async {
                sink.gone().await;
                Wake::Gone
            };
            let frame = match event.or(expired).or(ending).or(bookmark).or(gone).await {
                Wake::Event(Some(event)) => {
                    let frame = watch.on_event(event, SystemTime::now());
                    after_call(&mut *watch, frame).await
                }
                Wake::Cached(first) => {
                    // Write what has piled up in one go: one TLS record and one flush
                    // for a burst of events, not one per event.
                    let Some(Source::Cache(subscription)) = events.as_ref() else {
                        unreachable!("cached events come from a cache subscription")
                    };
                    let now = SystemTime::now();
                    let mut batch = Vec::new();
                    let mut next = Some(first);
                    while let Some(item) = next.take() {
                        let frame = match item {
                            Ok(event) => {
                                let frame = watch.on_cached(&event, now);
                                after_call(&mut *watch, frame).await
                            }
                            Err(e) => Some(watch.on_error(e)),
                        };
                        if let Some(frame) = frame {
                            sink.frame(&frame, &mut batch);
                        }
                        if watch.is_done() || batch.len() >= MAX_WATCH_BATCH {
                            break;
                        }
                        next = subscription.try_next();
                    }
                    if !batch.is_empty() {
                        sink.send(batch).await?;
                    }
                    None
                }
                Wake::Event(None) | Wake::Deadline => break,
                Wake::Bookmark => watch.bookmark(),
                // The client is gone; nobody is left to read the end of the stream.
                Wake::Gone => return Ok(()),
            };
            if let Some(frame) = frame {
                let mut batch = Vec::new();
                sink.frame(&frame, &mut batch);
                sink.send(batch).await?;
            }
        }
        sink.end().await
    }
}

/// `frame`, unless the watch needs an outbound call before it can write the event it
/// was given (a conversion webhook's): then the frame the call's outcome gives. Events
/// wait meanwhile, so they keep their order.
async fn after_call(watch: &mut dyn WatchResponse, frame: Option<Bytes>) -> Option<Bytes> {
    match watch.take_call() {
        Some(outbound) => {
            let outcome = crate::outbound::shared().call(outbound).await;
            watch.call_done(outcome, SystemTime::now())
        }
        None => frame,
    }
}
