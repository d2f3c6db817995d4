//! One connection: the TLS handshake, then (unless the client chose HTTP/2, see
//! [`super::http2`]) requests read and responses written in order through the core's
//! HTTP/1.1 codec.

use super::watch_pump::WatchClient;
use super::{timeout, Apiary, Driven};
use crate::tls::PeerChain;
use apiary_core::http1::{Connection, Event};
use apiary_core::storage::Storage;
use bytes::Bytes;
use smol::io::{AsyncReadExt as _, AsyncWriteExt as _};
use smol::net::TcpStream;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// How long a client has to complete the TLS handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

impl<S: Storage> Apiary<S> {
    /// Serve one accepted connection: the TLS handshake, then HTTP/2 when the client
    /// chose it by ALPN, HTTP/1.1 otherwise.
    pub(super) async fn connection(
        self: &Arc<Self>,
        tcp: TcpStream,
        remote: SocketAddr,
        executor: &Arc<smol::Executor<'static>>,
    ) {
        let _ = tcp.set_nodelay(true);
        let Some(stream) = handshake("TLS", remote, self.tls.acceptor().accept(tcp)).await else {
            return;
        };
        let peer = PeerChain::new(
            stream
                .get_ref()
                .1
                .peer_certificates()
                .map(|chain| {
                    chain
                        .iter()
                        .map(|c| Bytes::copy_from_slice(c.as_ref()))
                        .collect()
                })
                .unwrap_or_default(),
        );
        if stream.get_ref().1.alpn_protocol() == Some(crate::tls::ALPN_H2) {
            tracing::debug!(%remote, "serving HTTP/2");
            self.serve_h2(stream, remote, peer, executor).await;
            return;
        }
        tracing::debug!(%remote, "serving HTTP/1.1");
        if let Err(e) = self.exchange(stream, remote, peer).await {
            tracing::debug!(%remote, "connection ended: {e}");
        }
    }

    /// Read requests and write responses, in order, until either side closes.
    async fn exchange<T>(
        &self,
        mut stream: T,
        remote: SocketAddr,
        mut peer: PeerChain,
    ) -> io::Result<()>
    where
        T: smol::io::AsyncRead + smol::io::AsyncWrite + Unpin,
    {
        let mut codec = Connection::new(self.limits, self.timeouts);
        let mut buf = vec![0u8; 16 * 1024];
        let mut eof = false;
        // The request whose first bytes have come, counted in flight from then on.
        let mut begun: Option<apiary_core::lifecycle::InFlight> = None;
        // Whether a request was answered: a kept-alive connection, not a new one.
        let mut answered_one = false;
        loop {
            match codec.poll() {
                Event::Request(request) => {
                    let Some(mut arrival) = self.arrive(request, remote, &mut peer, begun.take()) else {
                        // No new requests: close without an answer.
                        return finish(&mut stream).await;
                    };
                    let response = match self.answer(&mut arrival, remote).await {
                        Driven::Respond(response) => response,
                        Driven::Close => return finish(&mut stream).await,
                        Driven::Stream(streamed) => {
                            let mut client = WatchClient {
                                stream: &mut stream,
                                codec: &mut codec,
                                buf: &mut buf,
                                eof: &mut eof,
                                lifecycle: &self.lifecycle,
                            };
                            self.stream(arrival, &mut client, streamed).await?;
                            if codec.should_close() || self.lifecycle.closing.fired() {
                                return finish(&mut stream).await;
                            }
                            continue;
                        }
                    };
                    self.write_audit(&mut arrival.exchange);
                    let bytes = codec.encode_response(&response);
                    stream.write_all(&bytes).await?;
                    drop((response, bytes));
                    self.written(arrival);
                    answered_one = true;
                    if codec.should_close() {
                        return finish(&mut stream).await;
                    }
                }
                Event::Continue(bytes) => {
                    stream.write_all(&bytes).await?;
                    stream.flush().await?;
                }
                Event::NeedMore => {
                    if eof {
                        // The peer is gone mid-request; nothing more will come.
                        return Ok(());
                    }
                    // Responses to pipelined requests go out together, before waiting.
                    stream.flush().await?;
                    // An idle connection is closed once requests are no longer taken
                    // (as Go's Shutdown closes idle connections), so that its client
                    // goes elsewhere at once rather than on its next request.
                    let idle = answered_one && begun.is_none() && codec.buffered() == 0;
                    let closing = async {
                        if idle {
                            self.lifecycle.closing.wait().await;
                        } else {
                            smol::future::pending::<()>().await;
                        }
                        Woke::Closing
                    };
                    // The codec's timers (idle, a request's head, its body) say how
                    // long to wait; it decides what a timeout means.
                    codec.start_waiting(self.lifecycle.now());
                    let deadline = codec.poll_timeout();
                    let reading = async {
                        match deadline {
                            Some(deadline) => {
                                let wait = deadline.saturating_sub(self.lifecycle.now());
                                timeout(wait, stream.read(&mut buf))
                                    .await
                                    .map_or(Woke::Deadline, Woke::Read)
                            }
                            None => Woke::Read(stream.read(&mut buf).await),
                        }
                    };
                    let read = match smol::future::or(reading, closing).await {
                        Woke::Read(read) => read,
                        Woke::Deadline => {
                            codec.handle_timeout(self.lifecycle.now());
                            continue;
                        }
                        Woke::Closing => return finish(&mut stream).await,
                    };
                    match read {
                        Ok(0) => {
                            eof = true;
                            codec.feed_eof();
                        }
                        Ok(n) => {
                            codec.feed(&buf[..n], self.lifecycle.now());
                            if begun.is_none() {
                                begun = self.server.request_begun(self.lifecycle.now());
                            }
                        }
                        // A peer that closes without close_notify is just gone.
                        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                            eof = true;
                            codec.feed_eof();
                        }
                        Err(e) => return Err(e),
                    }
                }
                Event::TimedOut(mut response) => {
                    // Upstream's timeout filter answers a body that never finishes
                    // arriving; the rest of it is not read.
                    self.finish_headers(&mut response, http::HeaderValue::from_static(""));
                    stream.write_all(&codec.encode_response(&response)).await?;
                    return finish(&mut stream).await;
                }
                Event::Fatal(bytes) => {
                    // The request is refused before its body is read (one over
                    // --max-request-body-bytes): the client may still be sending it.
                    stream.write_all(&bytes).await?;
                    stream.flush().await?;
                    return Linger::new(self.lifecycle.now()).drain(&mut stream, &mut buf, || self.lifecycle.now()).await;
                }
                Event::Closed => return finish(&mut stream).await,
            }
        }
    }
}

/// A handshake (`what`: TLS, HTTP/2) within [`HANDSHAKE_TIMEOUT`]; its failure is the
/// client's, logged at debug.
pub(super) async fn handshake<T, E: std::fmt::Display>(
    what: &str,
    remote: SocketAddr,
    shake: impl std::future::Future<Output = Result<T, E>>,
) -> Option<T> {
    match timeout(HANDSHAKE_TIMEOUT, shake).await {
        Some(Ok(done)) => Some(done),
        Some(Err(e)) => {
            tracing::debug!(%remote, "{what} handshake failed: {e}");
            None
        }
        None => {
            tracing::debug!(%remote, "{what} handshake timed out");
            None
        }
    }
}

/// What ended a wait for the client's bytes.
#[derive(Debug)]
enum Woke {
    Read(io::Result<usize>),
    /// The codec's next timer is due.
    Deadline,
    /// Requests are no longer taken and the connection is idle.
    Closing,
}

/// A connection answered with a refusal and about to close, while its client may still
/// be sending what the server will not read: its bytes are read and dropped until the
/// client closes, or for at most [`Linger::MAX_TIME`] and [`Linger::MAX_BYTES`]. As Go's
/// server lingers before it closes, so that the client reads the answer rather than a
/// reset (closing a socket with unread bytes resets it).
#[derive(Debug)]
struct Linger {
    until: Duration,
    dropped: usize,
}

impl Linger {
    const MAX_TIME: Duration = Duration::from_secs(5);
    const MAX_BYTES: usize = 64 << 20;

    fn new(now: Duration) -> Linger {
        Linger { until: now + Self::MAX_TIME, dropped: 0 }
    }

    /// Close the sending side (TLS close_notify), drop what arrives, then close.
    async fn drain<T>(mut self, stream: &mut T, buf: &mut [u8], now: impl Fn() -> Duration) -> io::Result<()>
    where
        T: smol::io::AsyncRead + smol::io::AsyncWrite + Unpin,
    {
        let _ = stream.close().await;
        while self.dropped < Self::MAX_BYTES {
            let left = self.until.saturating_sub(now());
            match timeout(left, stream.read(buf)).await {
                Some(Ok(n)) if n > 0 => self.dropped += n,
                _ => break,
            }
        }
        Ok(())
    }
}

/// Flush what is buffered and close: TLS close_notify, then the socket.
async fn finish<T: smol::io::AsyncWrite + Unpin>(stream: &mut T) -> io::Result<()> {
    stream.flush().await?;
    stream.close().await
}
