//! One connection: the TLS handshake, then requests read and responses written in
//! order through the core's HTTP/1.1 codec.

use super::watch_pump::WatchClient;
use super::{drive_observed, inputs, timeout, Apiary, Driven};
use crate::memory;
use apiary_core::http1::{Connection, Event};
use apiary_core::inflight::Admission;
use apiary_core::storage::Storage;
use apiary_core::Step;
use bytes::Bytes;
use smol::future::FutureExt as _;
use smol::io::{AsyncReadExt as _, AsyncWriteExt as _};
use smol::net::TcpStream;
use std::io;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::time::{Duration, SystemTime};

/// How long a client has to complete the TLS handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a connection may sit with no bytes from the client while the server waits
/// for them (kube-apiserver's IdleTimeout).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// What kube-apiserver answers when a handler panics.
const PANIC_BODY: &str = "This request caused apiserver to panic. Look in the logs for details.\n";

impl<S: Storage> Apiary<S> {
    pub(super) async fn connection(&self, tcp: TcpStream, remote: SocketAddr) {
        let _ = tcp.set_nodelay(true);
        let stream = match timeout(HANDSHAKE_TIMEOUT, self.acceptor.accept(tcp)).await {
            Some(Ok(stream)) => stream,
            Some(Err(e)) => {
                tracing::debug!(%remote, "TLS handshake failed: {e}");
                return;
            }
            None => {
                tracing::debug!(%remote, "TLS handshake timed out");
                return;
            }
        };
        let peer_certificates: Vec<Bytes> = stream
            .get_ref()
            .1
            .peer_certificates()
            .map(|chain| {
                chain
                    .iter()
                    .map(|c| Bytes::copy_from_slice(c.as_ref()))
                    .collect()
            })
            .unwrap_or_default();
        if let Err(e) = self.exchange(stream, remote, peer_certificates).await {
            tracing::debug!(%remote, "connection ended: {e}");
        }
    }

    /// Read requests and write responses, in order, until either side closes.
    async fn exchange<T>(
        &self,
        mut stream: T,
        remote: SocketAddr,
        peer_certificates: Vec<Bytes>,
    ) -> io::Result<()>
    where
        T: smol::io::AsyncRead + smol::io::AsyncWrite + Unpin,
    {
        let mut codec = Connection::new(self.limits);
        let mut buf = vec![0u8; 16 * 1024];
        let mut eof = false;
        loop {
            match codec.poll() {
                Event::Request(request) => {
                    let path = request.uri().path().to_owned();
                    let started = std::time::Instant::now();
                    let tracked = self.server.request_started(&request);
                    // The request's in-flight place (--max-requests-inflight and
                    // --max-mutating-requests-inflight), held until its response is
                    // written and given back however it ends.
                    let _inflight;
                    let step = match self.inflight.admit_request(&request, &peer_certificates) {
                        Admission::Refused(response) => Step::Respond(response),
                        Admission::Admitted(slot) => {
                            _inflight = slot;
                            self.server
                                .handle(request, inputs(Some(remote), peer_certificates.clone()))
                        }
                    };
                    let driven = drive_observed(&*self.storage, &self.server, step);
                    let mut response = match AssertUnwindSafe(driven).catch_unwind().await {
                        Ok(Driven::Respond(response)) => response,
                        Ok(Driven::Watch(request, watch)) => {
                            self.answered
                                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let client = WatchClient {
                                stream: &mut stream,
                                codec: &mut codec,
                                buf: &mut buf,
                                eof: &mut eof,
                            };
                            self.server.metrics().watch_started(&tracked);
                            let pumped = self.pump_watch(client, request, watch).await;
                            self.server.metrics().watch_finished(&tracked, 200);
                            pumped?;
                            if codec.should_close() {
                                return finish(&mut stream).await;
                            }
                            continue;
                        }
                        Err(_) => {
                            tracing::error!(%remote, %path, "request handler panicked");
                            panic_response()
                        }
                    };
                    if !response.headers().contains_key(http::header::DATE) {
                        if let Ok(date) = http::HeaderValue::from_str(
                            &apiary_core::time::imf_fixdate(SystemTime::now()),
                        ) {
                            response.headers_mut().insert(http::header::DATE, date);
                        }
                    }
                    self.server.metrics().request_finished(
                        &tracked,
                        response.status().as_u16(),
                        started.elapsed(),
                    );
                    let bytes = codec.encode_response(&response);
                    stream.write_all(&bytes).await?;
                    drop((response, bytes));
                    self.answered
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if memory::built_large_documents(&path, started.elapsed()) {
                        memory::release_free_memory();
                    }
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
                    let read = match timeout(IDLE_TIMEOUT, stream.read(&mut buf)).await {
                        Some(read) => read,
                        None => return finish(&mut stream).await,
                    };
                    match read {
                        Ok(0) => {
                            eof = true;
                            codec.feed_eof();
                        }
                        Ok(n) => codec.feed(&buf[..n]),
                        // A peer that closes without close_notify is just gone.
                        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                            eof = true;
                            codec.feed_eof();
                        }
                        Err(e) => return Err(e),
                    }
                }
                Event::Fatal(bytes) => {
                    stream.write_all(&bytes).await?;
                    return finish(&mut stream).await;
                }
                Event::Closed => return finish(&mut stream).await,
            }
        }
    }
}

/// Flush what is buffered and close: TLS close_notify, then the socket.
async fn finish<T: smol::io::AsyncWrite + Unpin>(stream: &mut T) -> io::Result<()> {
    stream.flush().await?;
    stream.close().await
}

fn panic_response() -> http::Response<Bytes> {
    http::Response::builder()
        .status(http::StatusCode::INTERNAL_SERVER_ERROR)
        .header(http::header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header("X-Content-Type-Options", "nosniff")
        .body(Bytes::from_static(PANIC_BODY.as_bytes()))
        .expect("static response")
}
