//! GET of one ConfigMap through the core alone: no sockets, no TLS, the memory
//! backend answering storage steps inline. Prints the median time per request over
//! several rounds.
//!
//! Run: `cargo bench -p apiary-core --bench core_get`

mod support;

use apiary_core::{Config, Server};
use apiary_memory::MemoryStore;
use bytes::Bytes;
use std::time::{Duration, Instant};
use support::drive;

fn main() {
    let server = Server::new(Config::default());
    let store = MemoryStore::new();
    support::bootstrap(&server, &store);
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bench"},"data":{"key":"value"}}"#;
    let create = http::Request::post("/api/v1/namespaces/default/configmaps")
        .header("content-type", "application/json")
        .body(Bytes::from_static(body.as_bytes()))
        .unwrap();
    assert_eq!(drive(&server, &store, create).status(), 201);

    let get = || {
        http::Request::get("/api/v1/namespaces/default/configmaps/bench")
            .header("accept", "application/json")
            .body(Bytes::new())
            .unwrap()
    };
    let per_round = 20_000;
    let mut rounds = Vec::new();
    for _ in 0..9 {
        let start = Instant::now();
        for _ in 0..per_round {
            let r = drive(&server, &store, get());
            assert_eq!(r.status(), 200);
        }
        rounds.push(start.elapsed() / per_round);
    }
    rounds.sort();
    let median: Duration = rounds[rounds.len() / 2];
    println!(
        "core GET configmap: median {:.2} µs/request ({:.0} requests/s on one core), rounds min {:.2} µs max {:.2} µs",
        median.as_secs_f64() * 1e6,
        1.0 / median.as_secs_f64(),
        rounds[0].as_secs_f64() * 1e6,
        rounds[rounds.len() - 1].as_secs_f64() * 1e6
    );
}
