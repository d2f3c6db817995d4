//! Building and encoding the OpenAPI documents: the time the first request for
//! `/openapi/v2` (JSON + gnostic protobuf) and for `/openapi/v3` (every document, JSON +
//! gnostic protobuf) pays, the sizes of what is served, and the time to serve a cached
//! document through the core.
//!
//! Run: `cargo bench -p apiary-core --bench openapi`

use apiary_core::openapi::OpenApi;
use apiary_core::registry::Registry;
use apiary_core::{Config, Inputs, Server, Step};
use bytes::Bytes;
use std::time::{Duration, Instant, SystemTime};

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn kib(n: usize) -> String {
    format!("{:.1} KiB", n as f64 / 1024.0)
}

fn main() {
    let rounds = 7;

    // Cold builds: a fresh OpenApi each round, so nothing is cached.
    let mut v2_times = Vec::new();
    let mut v3_times = Vec::new();
    let mut v2_sizes = (0, 0);
    let mut apps = 0;
    let mut v3_total = 0;
    let mut v3_protobuf = (0, 0);
    let mut v3_count = 0;
    let mut v3_protobuf_times = Vec::new();
    for _ in 0..rounds {
        let api = OpenApi::new(Registry::builtin());
        let start = Instant::now();
        let v2 = api.v2(SystemTime::now());
        v2_times.push(start.elapsed());
        v2_sizes = (v2.json.len(), v2.protobuf.len());

        let api = OpenApi::new(Registry::builtin());
        let start = Instant::now();
        let v3 = api.v3(SystemTime::now());
        v3_times.push(start.elapsed());
        apps = v3.documents["apis/apps/v1"].bytes.len();
        v3_total = v3.documents.values().map(|d| d.bytes.len()).sum();
        v3_count = v3.documents.len();
        let start = Instant::now();
        for doc in v3.documents.values() {
            std::hint::black_box(doc.protobuf());
        }
        v3_protobuf_times.push(start.elapsed());
        v3_protobuf = (
            v3.documents["apis/apps/v1"].protobuf().len(),
            v3.documents.values().map(|d| d.protobuf().len()).sum(),
        );
    }
    println!(
        "/openapi/v2 build + encode (JSON, protobuf, hash), cold: median {:?}",
        median(v2_times)
    );
    println!(
        "/openapi/v2 sizes: JSON {}, protobuf {}",
        kib(v2_sizes.0),
        kib(v2_sizes.1)
    );
    println!(
        "/openapi/v3 build + encode (JSON, hash) of all {v3_count} documents, cold: median {:?}; their gnostic protobuf, made when first asked for: median {:?} for all",
        median(v3_times),
        median(v3_protobuf_times)
    );
    println!(
        "/openapi/v3 sizes: apis/apps/v1 {}, all documents {}",
        kib(apps),
        kib(v3_total)
    );
    println!(
        "/openapi/v3 protobuf sizes: apis/apps/v1 {}, all documents {}",
        kib(v3_protobuf.0),
        kib(v3_protobuf.1)
    );

    // Serving cached documents through the whole core (routing, authentication skipped
    // as for the loopback user, conditional GET logic).
    let server = Server::new(Config::default());
    let inputs = || Inputs {
        now: SystemTime::now(),
        monotonic: std::time::Duration::ZERO,
        entropy: [7; 48],
        peer_certificates: Vec::new(),
        peer_certificates_rejected: false,
        request_header_common_name: None,
        remote_addr: None,
    };
    let get = |path: &str, accept: &str| {
        let request = http::Request::get(path)
            .header("accept", accept)
            .body(Bytes::new())
            .unwrap();
        match server.handle_as_system(request, inputs()) {
            Step::Respond(r) => r,
            _ => unreachable!("OpenAPI requests need no storage"),
        }
    };
    let protobuf = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
    let start = Instant::now();
    let first = get("/openapi/v2", protobuf);
    println!(
        "first GET /openapi/v2 (protobuf) through the core: {:?}, {} bytes",
        start.elapsed(),
        first.body().len()
    );
    let start = Instant::now();
    let first = get("/openapi/v3/apis/apps/v1", "application/json");
    println!(
        "first GET /openapi/v3/apis/apps/v1 through the core: {:?}, {} bytes",
        start.elapsed(),
        first.body().len()
    );
    let per_round = 2_000;
    for (path, accept) in [
        ("/openapi/v2", protobuf),
        ("/openapi/v3/apis/apps/v1", "application/json"),
    ] {
        let mut times = Vec::new();
        for _ in 0..rounds {
            let start = Instant::now();
            for _ in 0..per_round {
                assert_eq!(get(path, accept).status(), 200);
            }
            times.push(start.elapsed() / per_round);
        }
        println!("cached GET {path}: median {:?}/request", median(times));
    }
}
