//! Kubernetes protobuf answers against JSON ones, on the real `apiary` binary (release
//! build, memory storage) over loopback HTTPS, rounds of the two alternating in one run:
//!
//! - a LIST of 10,000 ConfigMaps of 1 KiB (`resourceVersion=0`, from the watch cache)
//!   on one keep-alive connection: time from request to the last byte read, and bytes on
//!   the wire (the body); the first protobuf LIST, which makes the items the cache then
//!   keeps, is timed apart;
//! - GETs of one ConfigMap from 64 keep-alive connections: requests/s.
//!
//! Target (issue 19): the protobuf LIST no slower than the JSON one.
//!
//! Run: `cargo bench -p apiary-smol --bench protobuf_responses`

mod support;

use std::time::{Duration, Instant};
use support::{connect, create_concurrently_with, median, requests_per_second, round_trip, tls_config, Server, CONNECTIONS};

const OBJECTS: usize = 10_000;
const ROUNDS: usize = 7;
const GET_ROUNDS: usize = 5;
const GET_TIME: Duration = Duration::from_secs(2);
const JSON: &str = "application/json";
const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// A ConfigMap whose stored JSON is about 1 KiB.
fn create_1k(name: &str) -> Vec<u8> {
    let padding = "x".repeat(584);
    let body = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","labels":{{"app":"bench"}}}},"data":{{"payload":"{padding}"}}}}"#
    );
    format!(
        "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn get(path: &str, accept: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: {accept}\r\nUser-Agent: apiary-bench\r\n\r\n").into_bytes()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let dir = std::env::temp_dir().join(format!("apiary-bench-pb-{}", std::process::id()));
    let server = Server::start(&dir);
    let pki = dir.join("pki");
    let created = create_concurrently_with(&server, &pki, "cm", create_1k, |_, done| done >= OBJECTS);
    assert!(created >= OBJECTS);
    let config = tls_config(&pki);
    let addr = server.addr.clone();
    let list = "/api/v1/namespaces/default/configmaps?resourceVersion=0";
    let encodings = [("JSON", JSON), ("protobuf", PROTOBUF)];

    smol::block_on(async {
        let mut stream = connect(&addr, &config).await;
        let mut buf = Vec::new();
        // The first protobuf LIST makes every item from its stored JSON.
        let start = Instant::now();
        assert_eq!(round_trip(&mut stream, &get(list, PROTOBUF), &mut buf).await, 200);
        println!("first protobuf LIST of {created} ConfigMaps (items made and kept): {:.1} ms", ms(start.elapsed()));

        let mut times = [Vec::new(), Vec::new()];
        let mut bytes = [0usize; 2];
        for _ in 0..ROUNDS {
            for (i, (_, accept)) in encodings.iter().enumerate() {
                let start = Instant::now();
                assert_eq!(round_trip(&mut stream, &get(list, accept), &mut buf).await, 200);
                times[i].push(ms(start.elapsed()));
                bytes[i] = buf.len();
            }
        }
        for (i, (name, _)) in encodings.iter().enumerate() {
            println!(
                "LIST of {created} ConfigMaps as {name}: median {:.1} ms over {ROUNDS} rounds ({:.1}–{:.1}), body {} bytes ({:.2} MiB)",
                median(times[i].clone()),
                times[i].iter().cloned().fold(f64::MAX, f64::min),
                times[i].iter().cloned().fold(0.0, f64::max),
                bytes[i],
                bytes[i] as f64 / (1024.0 * 1024.0)
            );
        }
        let ratios: Vec<f64> = times[1].iter().zip(&times[0]).map(|(p, j)| p / j).collect();
        println!(
            "LIST: protobuf takes {:.2}x JSON's time (median of the rounds' ratios) for {:.2}x its bytes",
            median(ratios),
            bytes[1] as f64 / bytes[0] as f64
        );
    });

    // GET throughput, rounds alternating.
    let one = "/api/v1/namespaces/default/configmaps/cm-0-0";
    let mut rates = [Vec::new(), Vec::new()];
    for _ in 0..GET_ROUNDS {
        for (i, (_, accept)) in encodings.iter().enumerate() {
            let request = std::sync::Arc::new(get(one, accept));
            let rate = smol::block_on(requests_per_second(&addr, &config, &request, GET_TIME));
            rates[i].push(rate);
        }
    }
    for (i, (name, _)) in encodings.iter().enumerate() {
        println!("GET one 1 KiB ConfigMap as {name}, {CONNECTIONS} connections: median {:.0} requests/s over {GET_ROUNDS} rounds", median(rates[i].clone()));
    }
    let ratios: Vec<f64> = rates[1].iter().zip(&rates[0]).map(|(p, j)| p / j).collect();
    println!("GET: protobuf at {:.2}x JSON's rate (median of the rounds' ratios)", median(ratios));
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
