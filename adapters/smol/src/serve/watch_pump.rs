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

/// The client side of a connection while it carries a watch.
pub(super) struct WatchClient<'a, T> {
    pub stream: &'a mut T,
    pub codec: &'a mut Connection,
    pub buf: &'a mut Vec<u8>,
    pub eof: &'a mut bool,
    /// The stream's response head.
    pub head: http::response::Parts,
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
    Client(io::Result<usize>),
}

impl<S: Storage> Apiary<S> {
    /// Stream a watch: the head, the initial frames, then a frame per event of the source
    /// the core chose (a watch cache subscription, or a backend watch opened here) and a
    /// bookmark per interval, until the stream ends, its timeout passes or the client
    /// goes away. Bytes the client sends meanwhile are kept for the next request.
    pub(super) async fn pump_watch<T>(
        &self,
        client: WatchClient<'_, T>,
        source: WatchSource,
        mut watch: Box<dyn WatchResponse>,
    ) -> io::Result<()>
    where
        T: smol::io::AsyncRead + smol::io::AsyncWrite + Unpin,
    {
        use apiary_core::storage::WatchStream as _;
        use smol::stream::StreamExt as _;
        let WatchClient {
            stream,
            codec,
            buf,
            eof,
            head,
        } = client;
        stream.write_all(&codec.encode_stream_head(&head)).await?;
        for frame in watch.take_initial() {
            stream.write_all(&codec.encode_chunk(&frame)).await?;
        }
        let mut events = match source {
            WatchSource::Cache(subscription) => Some(Source::Cache(subscription)),
            WatchSource::Backend { prefix, after } => match self.storage.watch(&prefix, after).await {
                Ok(events) => Some(Source::Backend(events)),
                Err(e) => {
                    let frame = watch.on_error(e);
                    stream.write_all(&codec.encode_chunk(&frame)).await?;
                    None
                }
            },
        };
        stream.flush().await?;
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
            let closed = *eof;
            let read = async {
                if closed {
                    future::pending().await
                } else {
                    Wake::Client(stream.read(buf).await)
                }
            };
            let frame = match event.or(expired).or(ending).or(bookmark).or(read).await {
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
                            batch.extend_from_slice(&codec.encode_chunk(&frame));
                        }
                        if watch.is_done() || batch.len() >= MAX_WATCH_BATCH {
                            break;
                        }
                        next = subscription.try_next();
                    }
                    if !batch.is_empty() {
                        stream.write_all(&batch).await?;
                        stream.flush().await?;
                    }
                    None
                }
                Wake::Event(None) | Wake::Deadline => break,
                Wake::Bookmark => watch.bookmark(),
                Wake::Client(Ok(0)) | Wake::Client(Err(_)) => {
                    // The client is gone; nobody is left to read the end of the stream.
                    *eof = true;
                    codec.feed_eof();
                    return Ok(());
                }
                Wake::Client(Ok(n)) => {
                    codec.feed(&buf[..n], self.lifecycle.now());
                    None
                }
            };
            if let Some(frame) = frame {
                stream.write_all(&codec.encode_chunk(&frame)).await?;
                stream.flush().await?;
            }
        }
        stream.write_all(&codec.encode_stream_end()).await?;
        stream.flush().await
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
