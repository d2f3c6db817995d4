//! What the core benchmarks share: driving a request through the core over the memory
//! backend, inline, as the server itself.

#![allow(dead_code)]

use apiary_core::{Inputs, Server, Step};
use apiary_memory::MemoryStore;
use bytes::Bytes;
use std::time::{Duration, Instant, SystemTime};

/// Inputs of a request arriving now.
pub fn inputs() -> Inputs {
    Inputs {
        now: SystemTime::now(),
        monotonic: std::time::Duration::ZERO,
        entropy: [7; 48],
        peer_certificates: Vec::new(),
        peer_certificates_rejected: false,
        request_header_common_name: None,
        remote_addr: None,
    }
}

/// Run `req` to its response; also the time spent in the store.
pub fn drive_timed(
    server: &Server,
    store: &MemoryStore,
    req: http::Request<Bytes>,
) -> (http::Response<Bytes>, Duration) {
    let mut in_storage = Duration::ZERO;
    let mut step = server.handle_as_system(req, inputs());
    loop {
        step = match step {
            Step::Respond(r) => return (r, in_storage),
            Step::Storage(op, pending) => {
                let start = Instant::now();
                let done = store.apply(op);
                in_storage += start.elapsed();
                pending.resume(done)
            }
            Step::Watch(..) | Step::Call(..) | Step::Calls(..) | Step::Relay(..) => {
                unreachable!("the benchmarks send no watches or outbound requests")
            }
        }
    }
}

/// Run `req` to its response.
pub fn drive(
    server: &Server,
    store: &MemoryStore,
    req: http::Request<Bytes>,
) -> http::Response<Bytes> {
    drive_timed(server, store, req).0
}

/// Write what the server writes of itself at start (the default namespaces and the
/// bootstrap RBAC policy).
pub fn bootstrap(server: &Server, store: &MemoryStore) {
    let mut bootstrap = server.bootstrap();
    while let Some(req) = bootstrap.next_request() {
        let response = drive_timed(server, store, req).0;
        bootstrap.answered(&response).expect("bootstrap writes succeed");
    }
}

/// Time this thread has spent on a CPU (Linux's schedstat): on a shared machine a
/// steadier figure than the wall clock, which also counts time others ran.
pub fn thread_cpu() -> Duration {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .map(Duration::from_nanos)
        .unwrap_or_default()
}
