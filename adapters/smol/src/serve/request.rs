//! What every request goes through whatever protocol carried it (HTTP/1.1 or HTTP/2):
//! the connection's inputs, the core's exchange driven to its answer (a panic answered
//! as upstream answers one), audit lines, and the bookkeeping once the answer is out.

use super::watch_pump::WatchSink;
use super::drive::Streamed;
use super::{drive_exchange, inputs, Apiary, Driven};
use crate::memory;
use crate::tls::PeerChain;
use apiary_core::exchange::{answer_headers, Arrived, Exchange};
use apiary_core::lifecycle::InFlight;
use apiary_core::storage::Storage;
use bytes::Bytes;
use smol::future::FutureExt as _;
use std::io;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::Ordering;
use std::time::{Instant, SystemTime};

/// A request handed to the core, with what its bookkeeping needs once it is answered.
pub(super) struct Arrival {
    pub exchange: Exchange,
    pub path: String,
    pub started: Instant,
}

impl<S: Storage> Apiary<S> {
    /// Hand a decoded request to the core with the connection's inputs: its peer chain
    /// verified against the client CA of this moment, not of the handshake. `None`: no
    /// new requests are taken.
    pub(super) fn arrive(
        &self,
        request: http::Request<Bytes>,
        remote: SocketAddr,
        peer: &mut PeerChain,
        begun: Option<InFlight>,
    ) -> Option<Arrival> {
        let path = request.uri().path().to_owned();
        let peer = self.tls.authenticate_peer(peer);
        let mut inputs = inputs(self.lifecycle.now(), Some(remote), peer.certificates);
        inputs.peer_certificates_rejected = peer.rejected;
        inputs.request_header_common_name = peer.front_proxy_name;
        match self.server.exchange(request, inputs, begun) {
            Arrived::Exchange(exchange) => Some(Arrival { exchange, path, started: Instant::now() }),
            Arrived::Refused => None,
        }
    }

    /// Drive the exchange to its answer; a panic in the handler is answered 500.
    pub(super) async fn answer(&self, arrival: &mut Arrival, remote: SocketAddr) -> Driven {
        let now = || self.lifecycle.now();
        let driven = drive_exchange(&*self.storage, &mut arrival.exchange, now);
        match AssertUnwindSafe(driven).catch_unwind().await {
            Ok(driven) => driven,
            Err(panic) => {
                tracing::error!(%remote, path = %arrival.path, "request handler panicked");
                let message = panic_message(&*panic);
                Driven::Respond(arrival.exchange.panicked(&message, self.lifecycle.now()))
            }
        }
    }

    /// The answer is written: end the exchange (the lifecycle stops counting it), and
    /// give memory back after a request that built large documents.
    pub(super) fn written(&self, arrival: Arrival) {
        arrival.exchange.written(self.lifecycle.now());
        self.answered.fetch_add(1, Ordering::Relaxed);
        if memory::built_large_documents(&arrival.path, arrival.started.elapsed()) {
            memory::release_free_memory();
        }
    }

    /// Stream an answer to `sink` (a watch, or another server's answer) with the audit
    /// lines before and after it, and end the exchange.
    pub(super) async fn stream(&self, mut arrival: Arrival, sink: &mut impl WatchSink, streamed: Box<Streamed>) -> io::Result<()> {
        self.answered.fetch_add(1, Ordering::Relaxed);
        self.write_audit(&mut arrival.exchange);
        let pumped = match *streamed {
            Streamed::Watch(source, head, watch) => self.pump_watch(sink, head, source, watch).await,
            Streamed::Relay(head, body) => self.pump_relay(sink, head, body).await,
        };
        arrival.exchange.stream_ended(self.lifecycle.now());
        self.write_audit(&mut arrival.exchange);
        arrival.exchange.written(self.lifecycle.now());
        pumped
    }

    /// The headers every answer gets (the core adds them to the answers of its chain;
    /// this is for the answers the connection writes itself).
    pub(super) fn finish_headers(&self, response: &mut http::Response<Bytes>, audit_id: http::HeaderValue) {
        let closing = self.lifecycle.closing.fired();
        answer_headers(response.headers_mut(), &audit_id, SystemTime::now(), closing);
    }

    /// Append a request's audit events to the audit log.
    pub(super) fn write_audit(&self, exchange: &mut Exchange) {
        let lines = exchange.take_audit_lines();
        if let Some(log) = &self.audit_log {
            for line in lines {
                log.write(line);
            }
        }
    }
}

/// The text a panic was raised with.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}
