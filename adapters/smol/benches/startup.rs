//! Time from starting the release `apiary` binary to its ready line, on a fresh data
//! directory (creating the CA and certificates) and on one that already has them; then,
//! on a running server, the first and a cached GET of /openapi/v2 (protobuf) and of
//! /openapi/v3/apis/apps/v1 over HTTPS, with the resident memory before and after the
//! documents were built. Prints medians.
//!
//! Run: `cargo bench -p apiary-smol --bench startup`

mod support;

use std::path::Path;
use std::time::{Duration, Instant};
use support::{connect, memory_kib, round_trip, tls_config, Server};

const STARTS: usize = 11;

fn start_once(dir: &Path) -> Duration {
    let begin = Instant::now();
    let server = Server::start(dir);
    let elapsed = begin.elapsed();
    drop(server);
    elapsed
}

fn median_ms(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1e3
}

const V2: &[u8] = b"GET /openapi/v2 HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf\r\n\r\n";
const V3: &[u8] = b"GET /openapi/v3/apis/apps/v1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n";

/// The first GET (which builds the document) and the median of later ones; body size.
fn time_gets(server: &Server, pki: &Path, request: &'static [u8]) -> (Duration, Duration, usize) {
    let config = tls_config(pki);
    smol::block_on(async {
        let mut stream = connect(&server.addr, &config).await;
        let mut buf = Vec::new();
        let begin = Instant::now();
        assert_eq!(round_trip(&mut stream, request, &mut buf).await, 200);
        let first = begin.elapsed();
        let size = buf.len();
        let mut later = Vec::new();
        for _ in 0..21 {
            let begin = Instant::now();
            assert_eq!(round_trip(&mut stream, request, &mut buf).await, 200);
            later.push(begin.elapsed());
        }
        later.sort();
        (first, later[later.len() / 2], size)
    })
}

fn main() {
    let root = std::env::temp_dir().join(format!("apiary-startup-{}", std::process::id()));
    let fresh: Vec<Duration> = (0..STARTS).map(|i| start_once(&root.join(format!("fresh-{i}")))).collect();
    let warm_dir = root.join("warm");
    start_once(&warm_dir);
    let warm: Vec<Duration> = (0..STARTS).map(|_| start_once(&warm_dir)).collect();
    println!(
        "startup to ready: median {:.1} ms on a fresh data dir (creates the PKI), {:.1} ms on an existing one ({STARTS} starts each)",
        median_ms(fresh),
        median_ms(warm)
    );

    let server = Server::start(&warm_dir);
    let pki = warm_dir.join("pki");
    let before = memory_kib(server.pid(), "VmRSS:");
    let (v2_first, v2_cached, v2_size) = time_gets(&server, &pki, V2);
    let after_v2 = memory_kib(server.pid(), "VmRSS:");
    let (v3_first, v3_cached, v3_size) = time_gets(&server, &pki, V3);
    let after = memory_kib(server.pid(), "VmRSS:");
    // The server hands freed pages back every 10 s while it is busy.
    std::thread::sleep(Duration::from_secs(11));
    let settled = memory_kib(server.pid(), "VmRSS:");
    drop(server);
    let _ = std::fs::remove_dir_all(&root);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "GET /openapi/v2 (protobuf, {} KiB): first {:.1} ms, cached median {:.2} ms",
        v2_size / 1024,
        ms(v2_first),
        ms(v2_cached)
    );
    println!(
        "GET /openapi/v3/apis/apps/v1 ({} KiB): first {:.1} ms, cached median {:.2} ms",
        v3_size / 1024,
        ms(v3_first),
        ms(v3_cached)
    );
    println!(
        "server RSS: {before} KiB before the documents were requested, {after_v2} KiB after v2, {after} KiB after v3 too, {settled} KiB 11 s later"
    );
}
