//! GET of one ConfigMap over keep-alive HTTPS with 64 concurrent connections, against
//! the real `apiary` binary (release build, memory storage) on a loopback port.
//!
//! Client and server share the machine, so the figure is what one box does end to end.
//! Prints requests/s and latency percentiles for several rounds, then their medians,
//! and the server's resident memory.
//!
//! Run: `cargo bench -p apiary-smol --bench https_get`

mod support;

use std::time::{Duration, Instant};
use support::{connect, memory_kib, round_trip, tls_config, Server};

const CONNECTIONS: usize = 64;
const ROUNDS: usize = 5;
const ROUND_TIME: Duration = Duration::from_secs(3);
const GET: &[u8] = b"GET /api/v1/namespaces/default/configmaps/bench HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\nUser-Agent: apiary-bench\r\n\r\n";

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let dir = std::env::temp_dir().join(format!("apiary-bench-{}", std::process::id()));
    let server = Server::start(&dir);
    let url = server.addr.clone();
    let config = tls_config(&dir.join("pki"));
    let pid = server.pid();
    let idle_rss = memory_kib(pid, "VmRSS:");

    let rounds: Vec<(f64, Duration, Duration)> = smol::block_on(async {
        let mut setup = connect(&url, &config).await;
        let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bench"},"data":{"key":"value"}}"#;
        let create = format!(
            "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let mut buf = Vec::new();
        assert_eq!(round_trip(&mut setup, create.as_bytes(), &mut buf).await, 201);

        let mut results = Vec::new();
        for round in 0..ROUNDS {
            let mut tasks = Vec::new();
            for _ in 0..CONNECTIONS {
                let (url, config) = (url.clone(), config.clone());
                tasks.push(smol::spawn(async move {
                    let mut stream = connect(&url, &config).await;
                    let mut buf = Vec::with_capacity(4096);
                    let mut latencies = Vec::new();
                    let deadline = Instant::now() + ROUND_TIME;
                    while Instant::now() < deadline {
                        let start = Instant::now();
                        assert_eq!(round_trip(&mut stream, GET, &mut buf).await, 200);
                        latencies.push(start.elapsed());
                    }
                    latencies
                }));
            }
            let mut all = Vec::new();
            for t in tasks {
                all.extend(t.await);
            }
            all.sort();
            let rps = all.len() as f64 / ROUND_TIME.as_secs_f64();
            let (p50, p99) = (percentile(&all, 0.50), percentile(&all, 0.99));
            println!(
                "round {}: {:.0} requests/s, p50 {:.2} ms, p99 {:.2} ms",
                round + 1,
                rps,
                p50.as_secs_f64() * 1e3,
                p99.as_secs_f64() * 1e3
            );
            results.push((rps, p50, p99));
        }
        results
    });
    let peak_rss = memory_kib(pid, "VmHWM:");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);

    let median = |mut v: Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    println!(
        "https GET configmap, {CONNECTIONS} keep-alive connections: median {:.0} requests/s, p50 {:.2} ms, p99 {:.2} ms; server RSS {} KiB idle, {} KiB peak",
        median(rounds.iter().map(|r| r.0).collect()),
        median(rounds.iter().map(|r| r.1.as_secs_f64() * 1e3).collect()),
        median(rounds.iter().map(|r| r.2.as_secs_f64() * 1e3).collect()),
        idle_rss,
        peak_rss
    );
}
