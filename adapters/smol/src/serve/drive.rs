//! Running a request's effects — storage operations, outbound calls, yields — until it
//! answers, becomes a watch, or has an answer to relay.

use crate::outbound::StreamedBody;
use apiary_core::effect::{CallError, CallOutcome, Outbound, WatchResponse};
use apiary_core::exchange::{Exchange, Next};
use apiary_core::storage::Storage;
use apiary_core::{Inputs, Step, WatchSource};
use bytes::Bytes;
use std::net::SocketAddr;
use std::time::{Duration, SystemTime};

/// Where a request ends up once its effects are done.
pub enum Driven {
    /// A whole response.
    Respond(http::Response<Bytes>),
    /// An answer to stream.
    Stream(Box<Streamed>),
    /// Close the connection without an answer.
    Close,
}

impl Driven {
    /// Say `Connection: close` on the answer's head (HTTP/2 turns it into GOAWAY).
    pub fn close_after(&mut self) {
        let headers = match self {
            Driven::Respond(response) => response.headers_mut(),
            Driven::Stream(streamed) => match &mut **streamed {
                Streamed::Watch(_, head, _) | Streamed::Relay(head, _) => &mut head.headers,
            },
            Driven::Close => return,
        };
        headers.insert(http::header::CONNECTION, http::HeaderValue::from_static("close"));
    }
}

/// An answer streamed to its client as it comes, with its head.
pub enum Streamed {
    /// A watch: its frames come from its source.
    Watch(WatchSource, http::response::Parts, Box<dyn WatchResponse>),
    /// Another server's answer: its head as the client gets it, its body as it comes.
    Relay(http::response::Parts, StreamedBody),
}

/// Run a request the server makes of itself until it answers or becomes a watch.
pub async fn drive<S: Storage>(storage: &S, mut step: Step) -> Driven {
    loop {
        step = match step {
            Step::Respond(response) => return Driven::Respond(response),
            Step::Storage(op, pending) => pending.resume(storage.run(op).await),
            Step::Call(outbound, pending) => pending.resume(call(outbound).await),
            Step::Calls(outbound, pending) => pending.resume(call_all(outbound).await),
            Step::Relay(_, pending) => pending.failed(CallError::Unreachable("the server's own requests relay nothing".into())),
            Step::Watch(request, stream) => {
                let head = stream.head();
                return Driven::Stream(Box::new(Streamed::Watch(request, head, stream)));
            }
        };
    }
}

/// Run a client request's exchange until it answers or becomes a watch: perform each
/// effect it asks for and feed the outcome back with the time, within its deadline.
/// `now` reads the monotonic clock the lifecycle uses.
pub async fn drive_exchange<S: Storage>(
    storage: &S,
    exchange: &mut Exchange,
    now: impl Fn() -> Duration,
) -> Driven {
    loop {
        match exchange.poll() {
            Next::Respond(response) => return Driven::Respond(response),
            Next::Watch {
                source,
                head,
                stream,
            } => return Driven::Stream(Box::new(Streamed::Watch(source, head, stream))),
            Next::Close => return Driven::Close,
            Next::Yield => smol::future::yield_now().await,
            // Queued for a seat: until its turn comes or it is time to look again.
            Next::Wait { turn, until } => {
                super::timeout(until.saturating_sub(now()), turn).await;
                exchange.waited(now());
            }
            Next::Storage(op) => match within(exchange.deadline(), &now, storage.run(op)).await {
                Some(done) => exchange.storage_done(done, now()),
                // Dropped with its storage operation: each is one atomic write, so it
                // happened in full or not at all.
                None => return Driven::Respond(exchange.expired(now())),
            },
            Next::Call(outbound) => match within(exchange.deadline(), &now, call(outbound)).await {
                Some(outcome) => exchange.call_done(outcome, now()),
                None => return Driven::Respond(exchange.expired(now())),
            },
            Next::Calls(outbound) => match within(exchange.deadline(), &now, call_all(outbound)).await {
                Some(outcomes) => exchange.calls_done(outcomes, now()),
                None => return Driven::Respond(exchange.expired(now())),
            },
            Next::Relay(outbound) => match within(exchange.deadline(), &now, crate::outbound::shared().open(outbound)).await {
                Some(Ok((head, body))) => match exchange.relay_started(head, now()) {
                    Some(head) => return Driven::Stream(Box::new(Streamed::Relay(head, body))),
                    None => return Driven::Close,
                },
                Some(Err(e)) => exchange.call_done(Err(e), now()),
                None => return Driven::Respond(exchange.expired(now())),
            },
        }
    }
}

/// `fut`, unless `deadline` passes first (`None`).
async fn within<T>(
    deadline: Option<Duration>,
    now: &impl Fn() -> Duration,
    fut: impl std::future::Future<Output = T>,
) -> Option<T> {
    match deadline {
        Some(deadline) => super::timeout(deadline.saturating_sub(now()), fut).await,
        None => Some(fut.await),
    }
}

/// Send an outbound request with the process's client (see [`crate::outbound`]).
async fn call(outbound: Outbound) -> CallOutcome {
    crate::outbound::shared().call(outbound).await
}

/// Send outbound requests side by side: their answers, in order, once all are in.
async fn call_all(outbound: Vec<Outbound>) -> Vec<CallOutcome> {
    let calls: Vec<_> = outbound.into_iter().map(|o| Box::pin(call(o))).collect();
    JoinAll { calls, done: Vec::new() }.await
}

/// Polls every call until each has answered (a `join_all` without the futures crate).
struct JoinAll<F> {
    calls: Vec<std::pin::Pin<Box<F>>>,
    done: Vec<Option<CallOutcome>>,
}

impl<F: std::future::Future<Output = CallOutcome>> std::future::Future for JoinAll<F> {
    type Output = Vec<CallOutcome>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Vec<CallOutcome>> {
        let this = self.get_mut();
        if this.done.len() < this.calls.len() {
            this.done.resize_with(this.calls.len(), || None);
        }
        for (call, done) in this.calls.iter_mut().zip(this.done.iter_mut()) {
            if done.is_none() {
                if let std::task::Poll::Ready(outcome) = call.as_mut().poll(cx) {
                    *done = Some(outcome);
                }
            }
        }
        match this.done.iter().all(Option::is_some) {
            true => std::task::Poll::Ready(this.done.iter_mut().map(|d| d.take().expect("answered")).collect()),
            false => std::task::Poll::Pending,
        }
    }
}

/// The inputs of a request arriving now; `monotonic` is the lifecycle's clock.
pub fn inputs(monotonic: Duration, remote_addr: Option<SocketAddr>, peer_certificates: Vec<Bytes>) -> Inputs {
    let mut entropy = [0u8; 48];
    if getrandom::getrandom(&mut entropy).is_err() {
        // The OS generator does not fail on supported systems; never leave zeros.
        entropy.fill_with(|| fastrand::u8(..));
    }
    Inputs {
        now: SystemTime::now(),
        monotonic,
        entropy,
        peer_certificates,
        // The connection sets it when the chain it hands over was rejected.
        peer_certificates_rejected: false,
        request_header_common_name: None,
        remote_addr,
    }
}
