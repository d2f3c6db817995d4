//! Running a request's storage steps until it answers or becomes a watch.

use apiary_core::storage::{Storage, StorageOp};
use apiary_core::effect::WatchResponse;
use apiary_core::{Inputs, Server, Step, WatchSource};
use bytes::Bytes;
use std::net::SocketAddr;
use std::time::SystemTime;

/// Where a request ends up once its storage steps are done.
pub enum Driven {
    /// A whole response.
    Respond(http::Response<Bytes>),
    /// A watch to stream from its source.
    Watch(WatchSource, Box<dyn WatchResponse>),
}

/// Run a request until it answers or becomes a watch: perform each storage operation
/// the core asks for and resume it with the outcome.
pub async fn drive<S: Storage>(storage: &S, mut step: Step) -> Driven {
    loop {
        step = match step {
            Step::Respond(response) => return Driven::Respond(response),
            Step::Storage(op, pending) => pending.resume(storage.run(op).await),
            Step::Watch(source, stream) => return Driven::Watch(source, stream),
        };
    }
}

/// [`drive`], timing each storage operation for the server's
/// `etcd_request_duration_seconds`.
pub async fn drive_observed<S: Storage>(storage: &S, server: &Server, mut step: Step) -> Driven {
    loop {
        step = match step {
            Step::Respond(response) => return Driven::Respond(response),
            Step::Storage(op, pending) => {
                let started = std::time::Instant::now();
                let observed = match &op {
                    StorageOp::Compact { .. } | StorageOp::CurrentRevision => None,
                    op => Some(op.clone()),
                };
                let done = storage.run(op).await;
                if let Some(op) = observed {
                    server.storage_observed(&op, started.elapsed());
                }
                pending.resume(done)
            }
            Step::Watch(source, stream) => return Driven::Watch(source, stream),
        };
    }
}

/// The inputs of a request arriving now.
pub fn inputs(remote_addr: Option<SocketAddr>, peer_certificates: Vec<Bytes>) -> Inputs {
    let mut entropy = [0u8; 32];
    if getrandom::getrandom(&mut entropy).is_err() {
        // The OS generator does not fail on supported systems; never leave zeros.
        entropy.fill_with(|| fastrand::u8(..));
    }
    Inputs {
        now: SystemTime::now(),
        entropy,
        peer_certificates,
        remote_addr,
    }
}
