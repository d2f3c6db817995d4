//! A request through the aggregator against the same request straight to the
//! extension API server: two release `apiary` binaries chained, the extension serving
//! a CRD's group and registered on the front by an APIService (ExternalName Service,
//! the front's generated front-proxy certificate trusted by the extension with
//! `--requestheader-client-ca-file`). One keep-alive HTTPS connection to each sends
//! GETs of one object and LISTs of 100, one at a time; the two alternate round by
//! round, so the machine's noise falls on both alike. Prints each round's p50 and p99,
//! then the medians, the added p50 and the ratio.
//!
//! Run: `cargo bench -p apiary-smol --bench aggregator`

mod support;

use std::time::{Duration, Instant};
use support::{call, connect, percentile, median, request, round_trip, tls_config, Server, Tls};

const ROUNDS: usize = 7;
const REQUESTS: usize = 1000;
const OBJECTS: usize = 100;
const CRD: &str = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","names":{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList"},"scope":"Namespaced","versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}"#;
const WIDGETS: &str = "/apis/example.com/v1/namespaces/default/widgets";

/// `request` until it answers `want`, for at most a minute.
async fn until(stream: &mut Tls, request: &[u8], want: impl Fn(u16, &str) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, body) = call(stream, request).await;
        if want(status, &body) {
            return;
        }
        assert!(Instant::now() < deadline, "not ready within a minute: {status} {body}");
        smol::Timer::after(Duration::from_millis(100)).await;
    }
}

/// The CRD and its widgets on the extension.
async fn fill_extension(extension: &mut Tls) {
    assert_eq!(call(extension, &request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CRD)).await.0, 201);
    until(extension, &request("GET", WIDGETS, ""), |status, _| status == 200).await;
    for i in 0..OBJECTS {
        let widget = format!(r#"{{"apiVersion":"example.com/v1","kind":"Widget","metadata":{{"name":"widget-{i:03}"}},"spec":{{"size":{i},"colour":"blue"}}}}"#);
        assert_eq!(call(extension, &request("POST", WIDGETS, &widget)).await.0, 201);
    }
}

/// The extension's group registered on the front, and Available.
async fn register(front: &mut Tls, port: &str) {
    let service = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"extension","namespace":"default"},"spec":{"type":"ExternalName","externalName":"127.0.0.1"}}"#;
    assert_eq!(call(front, &request("POST", "/api/v1/namespaces/default/services", service)).await.0, 201);
    let apiservice = format!(
        r#"{{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{{"name":"v1.example.com"}},"spec":{{"group":"example.com","version":"v1","groupPriorityMinimum":1000,"versionPriority":15,"insecureSkipTLSVerify":true,"service":{{"namespace":"default","name":"extension","port":{port}}}}}}}"#
    );
    assert_eq!(call(front, &request("POST", "/apis/apiregistration.k8s.io/v1/apiservices", &apiservice)).await.0, 201);
    let get = request("GET", "/apis/apiregistration.k8s.io/v1/apiservices/v1.example.com", "");
    until(front, &get, |_, body| body.contains(r#""type":"Available","status":"True""#)).await;
}

/// Latencies (ms) of `REQUESTS` sequential `request`s on `stream`, each answered 200.
async fn latencies(stream: &mut Tls, request: &[u8]) -> Vec<f64> {
    let mut buf = Vec::with_capacity(64 * 1024);
    let mut out = Vec::with_capacity(REQUESTS);
    for _ in 0..REQUESTS {
        let start = Instant::now();
        assert_eq!(round_trip(stream, request, &mut buf).await, 200);
        out.push(start.elapsed().as_secs_f64() * 1e3);
    }
    out
}

fn main() {
    let front_dir = support::bench_dir("aggregator-front");
    let front = Server::start(&front_dir);
    let ca = front_dir.join("pki").join("front-proxy-ca.crt");
    let extension_dir = support::bench_dir("aggregator-extension");
    let extension = Server::start_with(
        &extension_dir,
        &[
            "--storage",
            "memory",
            "--requestheader-client-ca-file",
            ca.to_str().expect("a UTF-8 path"),
            "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        ],
    );
    let port = extension.addr.rsplit(':').next().expect("a port").to_owned();
    let front_tls = tls_config(&front_dir.join("pki"));
    let extension_tls = tls_config(&extension_dir.join("pki"));
    smol::block_on(async {
        let mut direct = connect(&extension.addr, &extension_tls).await;
        let mut aggregated = connect(&front.addr, &front_tls).await;
        fill_extension(&mut direct).await;
        register(&mut aggregated, &port).await;
        let get = request("GET", &format!("{WIDGETS}/widget-042"), "");
        let list = request("GET", WIDGETS, "");
        // Warm both paths (the front's pooled connection to the extension included).
        for stream in [&mut direct, &mut aggregated] {
            latencies(stream, &get).await;
        }
        for (what, request) in [("GET one widget", &get), (&*format!("LIST {OBJECTS} widgets"), &list)] {
            let (mut direct_p50, mut through_p50) = (Vec::new(), Vec::new());
            println!("{what}, {REQUESTS} one at a time per round:");
            for round in 0..ROUNDS {
                // Alternate which goes first.
                let (d, t) = if round % 2 == 0 {
                    let d = latencies(&mut direct, request).await;
                    (d, latencies(&mut aggregated, request).await)
                } else {
                    let t = latencies(&mut aggregated, request).await;
                    (latencies(&mut direct, request).await, t)
                };
                let (dp50, tp50) = (percentile(d.clone(), 0.5), percentile(t.clone(), 0.5));
                println!(
                    "  round {round}: straight p50 {dp50:.3} ms p99 {:.3} ms; through the aggregator p50 {tp50:.3} ms p99 {:.3} ms",
                    percentile(d, 0.99),
                    percentile(t, 0.99)
                );
                direct_p50.push(dp50);
                through_p50.push(tp50);
            }
            let (d, t) = (median(direct_p50), median(through_p50));
            println!("  median p50: straight {d:.3} ms, through the aggregator {t:.3} ms; added {:.3} ms ({:.2}×)", t - d, t / d);
        }
    });
    drop((front, extension));
    for dir in [front_dir, extension_dir] {
        let _ = std::fs::remove_dir_all(dir);
    }
}
