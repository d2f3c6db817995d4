//! HTTP/2 connections: the h2 crate terminates the frames; every stream it accepts
//! becomes one request that runs through the same exchange as an HTTP/1.1 request, in a
//! task of its own, so that the streams of a connection are served side by side.
//!
//! The settings are kube-apiserver's (its `secure_serving.go`): at most
//! `--http2-max-streams-per-connection` concurrent streams (100 when 0, upstream's
//! default since the 2023 "rapid reset" attack), frames and per-stream receive windows
//! of 256 KiB, a connection window of that times the streams, 1 MiB of header list.
//!
//! Shutting down, the connection says GOAWAY (h2's graceful shutdown) once no new
//! requests are taken, finishes the streams it has, and closes.

mod settings;
mod stream;

pub(super) use settings::Settings;

use super::lifecycle::Lifecycle;
use super::Apiary;
use crate::tls::PeerChain;
use apiary_core::storage::Storage;
use apiary_io_compat::Compat;
use bytes::Bytes;
use smol::future::FutureExt as _;
use smol::Timer;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Where a connection is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Taking new streams.
    Serving,
    /// GOAWAY sent: the streams the client opened before it are finished, no new one
    /// is taken; the connection closes when the last ends.
    Draining,
}

/// A stream the client opened: its request, and where its answer goes.
type Opened = (http::Request<h2::RecvStream>, h2::server::SendResponse<Bytes>);

/// What woke the connection's task.
#[derive(Debug)]
// Not boxed: made once per stream and taken apart at once.
#[allow(clippy::large_enum_variant)]
enum Woke {
    /// A new stream, the connection's end (`None`), or its failure.
    Accepted(Option<Result<Opened, h2::Error>>),
    /// Requests are no longer taken, or an answer said `Connection: close`: GOAWAY.
    GoAway(&'static str),
    /// The idle timer is due.
    IdleCheck,
}

/// What a connection's streams share with it.
pub(super) struct Shared {
    /// The client's certificate chain, verified request by request.
    peer: Mutex<PeerChain>,
    /// Streams whose handler is still running (a stream the client has reset included).
    handlers: AtomicUsize,
    /// Streams the client reset before they were answered.
    premature_resets: AtomicUsize,
    /// An answer said `Connection: close`: the connection sends GOAWAY, as Go's does.
    close_asked: AtomicBool,
    wake: smol::channel::Sender<()>,
}

impl Shared {
    /// The client reset a stream before it was answered.
    fn reset_early(&self) {
        self.premature_resets.fetch_add(1, Ordering::AcqRel);
    }

    /// Ask the connection to say GOAWAY.
    fn ask_goaway(&self) {
        self.close_asked.store(true, Ordering::Release);
        let _ = self.wake.try_send(());
    }
}

/// Counts an open connection until it is dropped.
struct Open<'a>(&'a AtomicUsize);

impl<'a> Open<'a> {
    fn new(count: &'a AtomicUsize) -> Open<'a> {
        count.fetch_add(1, Ordering::AcqRel);
        Open(count)
    }
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Counts a stream's handler while it runs.
struct Handler(Arc<Shared>);

impl Handler {
    fn new(shared: &Arc<Shared>) -> Handler {
        shared.handlers.fetch_add(1, Ordering::AcqRel);
        Handler(shared.clone())
    }
}

impl Drop for Handler {
    fn drop(&mut self) {
        self.0.handlers.fetch_sub(1, Ordering::AcqRel);
    }
}

impl<S: Storage> Apiary<S> {
    /// Serve an HTTP/2 connection until the client or the server ends it.
    pub(super) async fn serve_h2<T>(
        self: &Arc<Self>,
        io: T,
        remote: SocketAddr,
        peer: PeerChain,
        executor: &Arc<smol::Executor<'static>>,
    ) where
        T: smol::io::AsyncRead + smol::io::AsyncWrite + Unpin + Send + 'static,
    {
        let handshake = self.http2.builder().handshake::<_, Bytes>(Compat(io));
        let Some(mut connection) = super::exchange::handshake("HTTP/2", remote, handshake).await else {
            return;
        };
        let _open = Open::new(&self.open_h2);
        let (wake, woken) = smol::channel::bounded(1);
        let shared = Arc::new(Shared {
            peer: Mutex::new(peer),
            handlers: AtomicUsize::new(0),
            premature_resets: AtomicUsize::new(0),
            close_asked: AtomicBool::new(false),
            wake,
        });
        let mut phase = Phase::Serving;
        let mut streams = 0u64;
        loop {
            let serving = phase == Phase::Serving;
            let accept = async { Woke::Accepted(connection.accept().await) };
            let closing = async {
                match serving {
                    true => goaway_reason(&self.lifecycle, &shared, &woken).await,
                    false => smol::future::pending().await,
                }
            };
            // Made anew on each wake: it fires after an idle period without any.
            let idle = async {
                Timer::after(self.timeouts.idle).await;
                Woke::IdleCheck
            };
            match accept.or(closing).or(idle).await {
                Woke::Accepted(Some(Ok((request, respond)))) => {
                    streams += 1;
                    let resets = shared.premature_resets.load(Ordering::Acquire);
                    let running = shared.handlers.load(Ordering::Acquire);
                    if let Some(why) = self.http2.reset_flood(streams, resets as u64, running) {
                        // The 2023 "rapid reset" attack: streams opened and reset at once
                        // cost the server work each while the client pays nothing.
                        tracing::warn!(%remote, streams, resets, "HTTP/2 client cut off: {why}");
                        connection.abrupt_shutdown(h2::Reason::ENHANCE_YOUR_CALM);
                        phase = Phase::Draining;
                        continue;
                    }
                    // Counted in flight from its headers on, as an HTTP/1.1 request from
                    // its first bytes.
                    let begun = self.server.request_begun(self.lifecycle.now());
                    let handler = Handler::new(&shared);
                    let this = self.clone();
                    executor
                        .spawn(async move {
                            this.serve_stream(handler, request, respond, remote, begun).await;
                        })
                        .detach();
                }
                Woke::Accepted(Some(Err(e))) => {
                    tracing::debug!(%remote, streams, "HTTP/2 connection failed: {e}");
                    break;
                }
                Woke::Accepted(None) => break,
                Woke::GoAway(why) => {
                    tracing::debug!(%remote, "HTTP/2 GOAWAY: {why}");
                    connection.graceful_shutdown();
                    phase = Phase::Draining;
                }
                Woke::IdleCheck => {
                    // No new stream for a whole idle period and none running: close, as
                    // Go's IdleTimeout does.
                    if shared.handlers.load(Ordering::Acquire) == 0 && phase == Phase::Serving {
                        connection.graceful_shutdown();
                        phase = Phase::Draining;
                    }
                }
            }
        }
        tracing::debug!(%remote, streams, "HTTP/2 connection closed");
    }
}

/// Resolves once the connection must say GOAWAY: requests are no longer taken, or an
/// answer asked to close the connection.
async fn goaway_reason(lifecycle: &Lifecycle, shared: &Shared, woken: &smol::channel::Receiver<()>) -> Woke {
    let closing = async {
        lifecycle.closing.wait().await;
        Woke::GoAway("no new requests are taken")
    };
    let asked = async {
        loop {
            if shared.close_asked.load(Ordering::Acquire) {
                return Woke::GoAway("an answer said Connection: close");
            }
            if woken.recv().await.is_err() {
                return smol::future::pending().await;
            }
        }
    };
    closing.or(asked).await
}
