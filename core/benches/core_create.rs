//! CREATE through the core alone: a Deployment (about 1 KiB of JSON, decoded against its
//! schema), a Pod of about 4 KiB (the same as `builtin_writes` on the binary creates)
//! and a ConfigMap, each under a fresh name, over the memory backend, no sockets.
//! Prints the median time per request over several rounds, and what the schemas cost on
//! first use: the time of the first create and the growth of the process's resident
//! memory.
//!
//! Run: `cargo bench -p apiary-core --bench core_create` (`-- Pod` times only the kinds
//! named).

mod support;
#[path = "../../adapters/smol/benches/support/objects.rs"]
mod objects;

use apiary_core::{Config, Server};
use apiary_memory::MemoryStore;
use bytes::Bytes;
use std::time::{Duration, Instant};
use support::{drive, thread_cpu};

fn post(path: &str, body: String) -> http::Request<Bytes> {
    http::Request::post(path)
        .header("content-type", "application/json")
        .body(Bytes::from(body))
        .unwrap()
}

fn deployment(name: &str) -> String {
    format!(
        r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"{name}","labels":{{"app":"web","tier":"frontend"}},"annotations":{{"owner":"team-a"}}}},"spec":{{"replicas":3,"revisionHistoryLimit":5,"selector":{{"matchLabels":{{"app":"web"}}}},"strategy":{{"type":"RollingUpdate","rollingUpdate":{{"maxSurge":"25%","maxUnavailable":1}}}},"template":{{"metadata":{{"labels":{{"app":"web","tier":"frontend"}}}},"spec":{{"containers":[{{"name":"web","image":"nginx:1.27","imagePullPolicy":"IfNotPresent","ports":[{{"containerPort":80,"protocol":"TCP","name":"http"}}],"env":[{{"name":"MODE","value":"prod"}},{{"name":"POD","valueFrom":{{"fieldRef":{{"fieldPath":"metadata.name"}}}}}}],"resources":{{"requests":{{"cpu":"100m","memory":"128Mi"}},"limits":{{"cpu":"1","memory":"256Mi"}}}},"readinessProbe":{{"httpGet":{{"path":"/healthz","port":"http"}},"periodSeconds":5}},"volumeMounts":[{{"name":"cache","mountPath":"/cache"}}]}}],"volumes":[{{"name":"cache","emptyDir":{{}}}}],"terminationGracePeriodSeconds":30}}}}}}}}"#
    )
}

fn pod(name: &str) -> String {
    objects::pod(name).to_string()
}

fn configmap(name: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"}},"data":{{"key":"value"}}}}"#
    )
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        })
        .unwrap_or(0)
}


fn median(mut rounds: Vec<Duration>) -> (Duration, Duration, Duration) {
    rounds.sort();
    (
        rounds[rounds.len() / 2],
        rounds[0],
        rounds[rounds.len() - 1],
    )
}

fn main() {
    let server = Server::new(Config::default());
    let store = MemoryStore::new();
    let before = rss_kib();
    let start = Instant::now();
    apiary_core::schema::warm();
    println!(
        "schemas built on first use: {:.2} ms; RSS {before} KiB before, {} KiB after",
        start.elapsed().as_secs_f64() * 1e3,
        rss_kib()
    );
    let before = rss_kib();
    let start = Instant::now();
    support::bootstrap(&server, &store);
    println!(
        "bootstrap (4 namespaces and the RBAC policy's 127 objects): {:.2} ms; RSS {before} KiB before, {} KiB after",
        start.elapsed().as_secs_f64() * 1e3,
        rss_kib()
    );
    // The first create of a kind other than the bootstrap's namespaces.
    let before = rss_kib();
    let start = Instant::now();
    let r = drive(
        &server,
        &store,
        post(
            "/apis/apps/v1/namespaces/default/deployments",
            deployment("first"),
        ),
    );
    let first = start.elapsed();
    assert_eq!(r.status(), 201, "{:?}", r.body());
    println!(
        "first Deployment create: {:.2} ms; RSS {before} KiB before, {} KiB after",
        first.as_secs_f64() * 1e3,
        rss_kib()
    );

    let per_round = 5_000;
    for (label, path, make) in [
        (
            "Deployment",
            "/apis/apps/v1/namespaces/default/deployments",
            deployment as fn(&str) -> String,
        ),
        ("Pod (4 KiB)", "/api/v1/namespaces/default/pods", pod),
        (
            "ConfigMap",
            "/api/v1/namespaces/default/configmaps",
            configmap,
        ),
    ] {
        let named: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
        if !named.is_empty() && !named.iter().any(|n| label.starts_with(n.as_str())) {
            continue;
        }
        let (mut rounds, mut cpu) = (Vec::new(), Vec::new());
        for round in 0..9 {
            let bodies: Vec<String> = (0..per_round)
                .map(|i| make(&format!("b-{round}-{i}")))
                .collect();
            let (start, start_cpu) = (Instant::now(), thread_cpu());
            for body in bodies {
                let r = drive(&server, &store, post(path, body));
                assert_eq!(r.status(), 201);
            }
            rounds.push(start.elapsed() / per_round);
            cpu.push((thread_cpu() - start_cpu) / per_round);
        }
        let (median, min, max) = median(rounds);
        println!(
            "core CREATE {label}: median {:.2} µs/request ({:.0} requests/s on one core), rounds min {:.2} µs max {:.2} µs; on-CPU median {:.2} µs",
            median.as_secs_f64() * 1e6,
            1.0 / median.as_secs_f64(),
            min.as_secs_f64() * 1e6,
            max.as_secs_f64() * 1e6,
            self::median(cpu).0.as_secs_f64() * 1e6
        );
    }

    // The decode step alone, plain JSON parsing (what create did before schemas) against
    // decoding against the schema, interleaved rounds.
    let body = deployment("decode");
    let gvk = ("apps", "v1", "Deployment");
    let (mut plain, mut schema) = (Vec::new(), Vec::new());
    for _ in 0..9 {
        let start = Instant::now();
        for _ in 0..per_round {
            std::hint::black_box(
                serde_json::from_slice::<serde_json::Value>(body.as_bytes()).unwrap(),
            );
        }
        plain.push(start.elapsed() / per_round);
        let start = Instant::now();
        for _ in 0..per_round {
            std::hint::black_box(
                apiary_core::schema::decode(
                    apiary_core::negotiation::Format::Json,
                    body.as_bytes(),
                    gvk,
                    apiary_core::schema::FieldValidation::Warn,
                )
                .unwrap(),
            );
        }
        schema.push(start.elapsed() / per_round);
    }
    let (p, s) = (median(plain).0, median(schema).0);
    println!(
        "decode the Deployment body: plain JSON {:.2} µs, against its schema {:.2} µs",
        p.as_secs_f64() * 1e6,
        s.as_secs_f64() * 1e6
    );

    // What an OpenAPI request pays on first use: the full definitions, descriptions and all.
    let before = rss_kib();
    let start = Instant::now();
    let n = apiary_core::schema::definitions().len();
    println!(
        "full definitions ({n}) parsed on first use: {:.2} ms; RSS {before} KiB before, {} KiB after",
        start.elapsed().as_secs_f64() * 1e3,
        rss_kib()
    );
}
