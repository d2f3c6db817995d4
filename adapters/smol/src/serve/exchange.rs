//! One connection: the TLS handshake, then requests read and responses written in
//! order through the core's HTTP/1.1 codec.

use super::lifecycle::{Gate, InFlight};
use super::watch_pump::WatchClient;
use super::{drive_observed, inputs, timeout, Apiary, Driven};
use crate::memory;
use apiary_core::deadline::request_deadline;
use apiary_core::http1::{Connection, Event};
use apiary_core::inflight::{Admission, Refused};
use apiary_core::lifecycle::{timed_out, turned_away as lifecycle_answer};
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

    /// Whether to serve a request that arrived: served if it began while requests were
    /// taken, otherwise as the lifecycle decides. `Some((in_flight, None))` to serve it,
    /// `Some((None, Some(answer)))` to answer it so, `None` to close the connection.
    #[allow(clippy::type_complexity)]
    fn gate<'a>(
        &'a self,
        begun: Option<InFlight<'a>>,
        path: &str,
    ) -> Option<(Option<InFlight<'a>>, Option<http::Response<Bytes>>)> {
        let gate = match begun {
            Some(in_flight) => Gate::Serve(in_flight),
            None => self.lifecycle.admit(path, false),
        };
        match gate {
            Gate::Serve(in_flight) => Some((Some(in_flight), None)),
            Gate::Turned(admission) => {
                lifecycle_answer(admission).map(|answer| (None, Some(answer)))
            }
        }
    }

    /// Answer `turned` if the gate turned the request away; otherwise pass the in-flight
    /// limits, then run the request through the core against storage, within `deadline`
    /// if it has one. A request past its deadline (`None`) is dropped with its storage
    /// operation: each is one atomic write, so it happened in full or not at all.
    async fn handle(
        &self,
        request: http::Request<Bytes>,
        turned: Option<http::Response<Bytes>>,
        remote: SocketAddr,
        peer_certificates: &[Bytes],
        deadline: Option<Duration>,
    ) -> Option<Driven> {
        if let Some(answer) = turned {
            return Some(Driven::Respond(answer));
        }
        // The request's in-flight place (--max-requests-inflight and
        // --max-mutating-requests-inflight), held until it is answered or becomes a
        // watch, and given back however it ends.
        let _slot;
        let step = match self.inflight.admit_request(&request, peer_certificates) {
            Admission::Refused(response) => Step::Respond(response),
            Admission::Admitted(slot) => {
                _slot = slot;
                // Let the other connections' requests through the limits before this
                // one runs: a handler that never waits (memory storage) would otherwise
                // hold its executor thread until it answers, and requests past the limit
                // would queue unread in their sockets instead of being refused.
                smol::future::yield_now().await;
                self.server
                    .handle(request, inputs(Some(remote), peer_certificates.to_vec()))
            }
        };
        let driven = drive_observed(&*self.storage, &self.server, step);
        match deadline {
            Some(deadline) => timeout(deadline, driven).await,
            None => Some(driven.await),
        }
    }

    /// The headers every answer gets: `Audit-Id`, `Date`, and `Connection: close` while
    /// draining (the connection takes no more requests).
    fn finish_headers(&self, response: &mut http::Response<Bytes>, audit_id: http::HeaderValue) {
        let headers = response.headers_mut();
        if !audit_id.is_empty() {
            headers.insert(crate::audit_log::AUDIT_ID, audit_id);
        }
        if !headers.contains_key(http::header::DATE) {
            if let Ok(date) =
                http::HeaderValue::from_str(&apiary_core::time::imf_fixdate(SystemTime::now()))
            {
                headers.insert(http::header::DATE, date);
            }
        }
        if self.lifecycle.closing.fired() {
            headers.insert(
                http::header::CONNECTION,
                http::HeaderValue::from_static("close"),
            );
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
        let mut codec = Connection::new(self.limits, self.timeouts);
        let mut buf = vec![0u8; 16 * 1024];
        let mut eof = false;
        // The request whose first bytes have come, counted in flight from then on.
        let mut begun: Option<InFlight> = None;
        // Whether a request was answered: a kept-alive connection, not a new one.
        let mut answered_one = false;
        loop {
            match codec.poll() {
                Event::Request(request) => {
                    let path = request.uri().path().to_owned();
                    let started = std::time::Instant::now();
                    let Some((mut in_flight, turned)) = self.gate(begun.take(), &path) else {
                        // No new requests: close without an answer.
                        return finish(&mut stream).await;
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
                    let (deadline, turned) = match turned {
                        None if !tracked.is_long_running() => {
                            match request_deadline(self.request_timeout, request.uri().query()) {
                                Ok(deadline) => (Some(deadline), None),
                                Err(bad_timeout) => (None, Some(*bad_timeout)),
                            }
                        }
                        turned => (None, turned),
                    };
                    let driven = async {
                        self.handle(request, turned, remote, &peer_certificates, deadline)
                            .await
                            .unwrap_or_else(|| {
                                self.server.metrics().request_timed_out(&tracked);
                                Driven::Respond(timed_out())
                            })
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
                    self.finish_headers(&mut response, audit_id);
                    if response.extensions().get::<Refused>().is_some() {
                        let code = response.status().as_u16();
                        self.server.metrics().request_refused(&tracked, code);
                    } else {
                        self.server.metrics().request_finished(
                            &tracked,
                            response.status().as_u16(),
                            started.elapsed(),
                        );
                    }
                    let bytes = codec.encode_response(&response);
                    stream.write_all(&bytes).await?;
                    drop((response, bytes, in_flight));
                    answered_one = true;
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
                Event::TimedOut(mut response) => {
                    // Upstream's timeout filter answers a body that never finishes
                    // arriving; the rest of it is not read.
                    self.finish_headers(&mut response, http::HeaderValue::from_static(""));
                    stream.write_all(&codec.encode_response(&response)).await?;
                    return finish(&mut stream).await;
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

/// What ended a wait for the client's bytes.
#[derive(Debug)]
enum Woke {
    Read(io::Result<usize>),
    /// The codec's next timer is due.
    Deadline,
    /// Requests are no longer taken and the connection is idle.
    Closing,
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
