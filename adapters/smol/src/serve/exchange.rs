//! One connection: the TLS handshake, then requests read and responses written in
//! order through the core's HTTP/1.1 codec.

use super::watch_pump::WatchClient;
use super::lifecycle::{Gate, InFlight};
use super::{drive_observed, inputs, timeout, Apiary, Driven};
use apiary_core::lifecycle::{timed_out, turned_away as lifecycle_answer};
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
        // The request whose first bytes have come, counted in flight from then on.
        let mut begun: Option<InFlight> = None;
        loop {
            match codec.poll() {
                Event::Request(request) => {
                    let path = request.uri().path().to_owned();
                    let started = std::time::Instant::now();
                    // Served if it began while requests were taken; otherwise the
                    // lifecycle decides (shutting down, not yet installed).
                    let gate = match begun.take() {
                        Some(in_flight) => Gate::Serve(in_flight),
                        None => self.lifecycle.admit(&path, false),
                    };
                    let (mut in_flight, turned) = match gate {
                        Gate::Serve(in_flight) => (Some(in_flight), None),
                        Gate::Turned(admission) => match lifecycle_answer(admission) {
                            Some(response) => (None, Some(response)),
                            // No new requests: close without an answer.
                            None => return finish(&mut stream).await,
                        },
                    };
                    let tracked = self.server.request_started(&request);
                    // Audit (upstream's WithAuditInit and WithAudit): the Audit-Id every
                    // answer carries, and the record of an audited request.
                    let audit_id = crate::audit_log::audit_id_header(&request);
                    let mut audit = match (&self.audit_log, &turned) {
                        (Some(log), None) => log.begin(
                            &self.server,
                            &request,
                            &audit_id,
                            remote,
                            &peer_certificates,
                        ),
                        _ => None,
                    };
                    let deadline = (!tracked.is_long_running())
                        .then(|| request_deadline(self.request_timeout, request.uri().query()));
                    // The request's in-flight place (--max-requests-inflight and
                    // --max-mutating-requests-inflight), held until its response is
                    // written and given back however it ends.
                    let _inflight;
                    let step = match turned {
                        Some(response) => Step::Respond(response),
                        None => match self.inflight.admit_request(&request, &peer_certificates) {
                            Admission::Refused(response) => Step::Respond(response),
                            Admission::Admitted(slot) => {
                                _inflight = slot;
                                self.server.handle(
                                    request,
                                    inputs(Some(remote), peer_certificates.clone()),
                                )
                            }
                        },
                    };
                    // A request past its deadline is dropped with its storage operation:
                    // each is one atomic write, so it happened in full or not at all.
                    let driven = async {
                        let driven = drive_observed(&*self.storage, &self.server, step);
                        match deadline {
                            Some(deadline) => timeout(deadline, driven)
                                .await
                                .unwrap_or_else(|| Driven::Respond(timed_out())),
                            None => driven.await,
                        }
                    };
                    let mut response = match AssertUnwindSafe(driven).catch_unwind().await {
                        Ok(Driven::Respond(response)) => response,
                        Ok(Driven::Watch(request, watch)) => {
                            if let Some(in_flight) = in_flight.as_mut() {
                                in_flight.long_running();
                            }
                            self.answered
                                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let client = WatchClient {
                                stream: &mut stream,
                                codec: &mut codec,
                                buf: &mut buf,
                                eof: &mut eof,
                                audit_id: &audit_id,
                            };
                            self.server.metrics().watch_started(&tracked);
                            if let Some(audit) = &audit {
                                audit.response_started(200);
                            }
                            let pumped = self.pump_watch(client, request, watch).await;
                            self.server.metrics().watch_finished(&tracked, 200);
                            if let Some(audit) = &audit {
                                audit.stream_complete(200);
                            }
                            pumped?;
                            if codec.should_close() || self.lifecycle.closing.fired() {
                                return finish(&mut stream).await;
                            }
                            continue;
                        }
                        Err(panic) => {
                            tracing::error!(%remote, %path, "request handler panicked");
                            if let Some(audit) = audit.take() {
                                audit.panicked(&*panic);
                            }
                            panic_response()
                        }
                    };
                    if let Some(audit) = &audit {
                        audit.response_complete(&response);
                    }
                    if !audit_id.is_empty() {
                        response
                            .headers_mut()
                            .insert(crate::audit_log::AUDIT_ID, audit_id);
                    }
                    if !response.headers().contains_key(http::header::DATE) {
                        if let Ok(date) = http::HeaderValue::from_str(
                            &apiary_core::time::imf_fixdate(SystemTime::now()),
                        ) {
                            response.headers_mut().insert(http::header::DATE, date);
                        }
                    }
                    if self.lifecycle.closing.fired() {
                        // Draining: this connection takes no more requests.
                        response.headers_mut().insert(
                            http::header::CONNECTION,
                            http::HeaderValue::from_static("close"),
                        );
                    }
                    self.server.metrics().request_finished(
                        &tracked,
                        response.status().as_u16(),
                        started.elapsed(),
                    );
                    let bytes = codec.encode_response(&response);
                    stream.write_all(&bytes).await?;
                    drop((response, bytes, in_flight));
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
                        Ok(n) => {
                            codec.feed(&buf[..n]);
                            if begun.is_none() {
                                begun = self.lifecycle.begin();
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

/// How long a request may take: `--request-timeout`, or less when the client asks for
/// less with `?timeout=` (as kubectl's `--request-timeout` does).
fn request_deadline(request_timeout: Duration, query: Option<&str>) -> Duration {
    let asked = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|pair| pair.strip_prefix("timeout="))
        .and_then(|value| apiary_core::duration::parse_duration(value).ok())
        .filter(|asked| !asked.is_zero());
    match asked {
        Some(asked) => asked.min(request_timeout),
        None => request_timeout,
    }
}

fn panic_response() -> http::Response<Bytes> {
    http::Response::builder()
        .status(http::StatusCode::INTERNAL_SERVER_ERROR)
        .header(http::header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header("X-Content-Type-Options", "nosniff")
        .body(Bytes::from_static(PANIC_BODY.as_bytes()))
        .expect("static response")
}
