//! Admission on the real `apiary` binary (release build, memory storage), servers
//! side by side in one run, rounds alternating (issue 20):
//! 1. ConfigMap creates with the default plugins and no webhooks against another build
//!    (`APIARY_BENCH_BASELINE`, the build before admission was filled in): target at
//!    least 0.95×.
//! 2. Creates through one local validating webhook (an HTTPS server in this process,
//!    answering `allowed: true`) against a server without it: the added latency, p50
//!    and p99, one create at a time on one connection.
//! 3. Creates under one ValidatingAdmissionPolicy of three CEL validations against a
//!    server without it, from 64 connections: target at least 0.8×.
//!
//! Run: `APIARY_BENCH_BASELINE=/path/to/old/apiary cargo bench -p apiary-smol --bench admission_writes`
//! (without it, parts 2 and 3 only).

mod support;

use base64::Engine;
use futures_rustls::rustls::pki_types::{pem::PemObject, CertificateDer, PrivateKeyDer};
use futures_rustls::rustls::ServerConfig;
use smol::io::{AsyncReadExt, AsyncWriteExt};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{call, connect, create_concurrently, median, request, round_trip, tls_config, Server};

const ROUNDS: usize = 7;
const ROUND_TIME: Duration = Duration::from_secs(2);
const LATENCY_CREATES: usize = 400;

/// A validating webhook that admits everything, over HTTPS with `pki`'s serving
/// certificate (Apiary's own, made for 127.0.0.1); its address.
fn start_webhook(pki: &Path) -> String {
    let certs: Vec<CertificateDer> = CertificateDer::pem_file_iter(pki.join("apiserver.crt")).unwrap().map(Result::unwrap).collect();
    let key = PrivateKeyDer::from_pem_file(pki.join("apiserver.key")).unwrap();
    let provider = Arc::new(futures_rustls::rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    let acceptor = futures_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        let executor = smol::Executor::new();
        smol::block_on(executor.run(async {
            let listener = smol::net::TcpListener::try_from(listener).unwrap();
            loop {
                let Ok((tcp, _)) = listener.accept().await else { continue };
                tcp.set_nodelay(true).ok();
                let acceptor = acceptor.clone();
                executor
                    .spawn(async move {
                        let Ok(mut tls) = acceptor.accept(tcp).await else { return };
                        let mut buf = Vec::new();
                        let mut chunk = [0u8; 16 * 1024];
                        loop {
                            let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                                match tls.read(&mut chunk).await {
                                    Ok(0) | Err(_) => return,
                                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                                }
                                continue;
                            };
                            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                            let length: usize = head
                                .lines()
                                .find_map(|l| l.strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0)))
                                .unwrap_or(0);
                            while buf.len() < end + 4 + length {
                                match tls.read(&mut chunk).await {
                                    Ok(0) | Err(_) => return,
                                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                                }
                            }
                            let review: serde_json::Value = serde_json::from_slice(&buf[end + 4..end + 4 + length]).unwrap_or_default();
                            buf.drain(..end + 4 + length);
                            let body = serde_json::json!({
                                "apiVersion": "admission.k8s.io/v1",
                                "kind": "AdmissionReview",
                                "response": {"uid": review["request"]["uid"], "allowed": true},
                            })
                            .to_string();
                            let response = format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len());
                            if tls.write_all(response.as_bytes()).await.is_err() || tls.flush().await.is_err() {
                                return;
                            }
                        }
                    })
                    .detach();
            }
        }));
    });
    addr
}

/// Create `objects` (path, body) on `server`, each answered 201.
fn set_up(server: &Server, pki: &Path, objects: &[(&str, serde_json::Value)]) {
    let config = tls_config(pki);
    smol::block_on(async {
        let mut stream = connect(&server.addr, &config).await;
        for (path, body) in objects {
            let (status, answer) = call(&mut stream, &request("POST", path, &body.to_string())).await;
            assert_eq!(status, 201, "{path}: {answer}");
        }
    });
}

/// `n` creates one after another on one connection: each one's latency.
fn latencies(server: &Server, pki: &Path, prefix: &str, n: usize) -> Vec<Duration> {
    let config = tls_config(pki);
    smol::block_on(async {
        let mut stream = connect(&server.addr, &config).await;
        let mut buf = Vec::with_capacity(4096);
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let create = support::create_request(&format!("{prefix}-{i}"));
            let start = Instant::now();
            assert_eq!(round_trip(&mut stream, &create, &mut buf).await, 201, "{}", String::from_utf8_lossy(&buf));
            out.push(start.elapsed());
        }
        out
    })
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Creates/s of ConfigMaps from 64 connections for one round.
fn rate(server: &Server, pki: &Path, prefix: &str) -> f64 {
    let start = Instant::now();
    let created = create_concurrently(server, pki, prefix, |begin, _| begin.elapsed() >= ROUND_TIME);
    created as f64 / start.elapsed().as_secs_f64()
}

/// Rounds of creates on `a` and `b`, the order swapped each round: the median rates
/// and the median of the rounds' ratios a/b.
fn compare(what: &str, a: (&str, &Server, &Path), b: (&str, &Server, &Path)) -> (f64, f64, f64) {
    let (mut ra, mut rb, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let run = |(name, server, pki): (&str, &Server, &Path)| {
            let r = rate(server, pki, &format!("{what}-{round}"));
            println!("round {round} {what:<10} {name:<9} {r:>8.0} creates/s");
            r
        };
        let (x, y) = if round % 2 == 0 { (run(a), run(b)) } else { let y = run(b); (run(a), y) };
        ra.push(x);
        rb.push(y);
        ratios.push(x / y);
    }
    (median(ra), median(rb), median(ratios))
}

fn main() {
    let base = std::env::temp_dir().join(format!("apiary-bench-admission-{}", std::process::id()));
    let binary: &std::ffi::OsStr = env!("CARGO_BIN_EXE_apiary").as_ref();
    let memory = ["--storage", "memory"];
    let plain = Server::start_binary(binary, &base.join("plain"), &memory);
    let hooked = Server::start_binary(binary, &base.join("hooked"), &memory);
    let policed = Server::start_binary(binary, &base.join("policed"), &memory);
    let pki = |name: &str| base.join(name).join("pki");
    let (plain_pki, hooked_pki, policed_pki) = (pki("plain"), pki("hooked"), pki("policed"));

    let webhook = start_webhook(&hooked_pki);
    let ca = base64::engine::general_purpose::STANDARD.encode(std::fs::read(hooked_pki.join("ca.crt")).unwrap());
    let rule = serde_json::json!([{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}]);
    set_up(
        &hooked,
        &hooked_pki,
        &[(
            "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
            serde_json::json!({"metadata": {"name": "bench"}, "webhooks": [{
                "name": "bench.example.com",
                "clientConfig": {"url": format!("https://{webhook}/validate"), "caBundle": ca},
                "rules": rule, "sideEffects": "None", "admissionReviewVersions": ["v1"], "failurePolicy": "Fail",
            }]}),
        )],
    );
    set_up(
        &policed,
        &policed_pki,
        &[
            (
                "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
                serde_json::json!({"metadata": {"name": "bench"}, "spec": {
                    "matchConstraints": {"resourceRules": rule},
                    "validations": [
                        {"expression": "object.metadata.name.size() < 64"},
                        {"expression": "!has(object.data) || object.data.all(k, object.data[k].size() < 1024)"},
                        {"expression": "has(object.metadata.labels) && object.metadata.labels['app'] == 'bench'", "message": "app=bench"},
                    ],
                }}),
            ),
            (
                "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
                serde_json::json!({"metadata": {"name": "bench"}, "spec": {"policyName": "bench", "validationActions": ["Deny"]}}),
            ),
        ],
    );
    // The configurations reach the servers' caches.
    std::thread::sleep(Duration::from_millis(500));

    if let Some(old) = std::env::var_os("APIARY_BENCH_BASELINE") {
        let baseline = Server::start_binary(&old, &base.join("baseline"), &memory);
        let baseline_pki = pki("baseline");
        let (this, before, ratio) = compare("default", ("this", &plain, &plain_pki), ("baseline", &baseline, &baseline_pki));
        println!("default plugins, no webhooks: this {this:.0} vs baseline {before:.0} creates/s, median ratio {ratio:.3} (target >= 0.95)");
    }

    let (mut with, mut without) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let mut hook = || with.extend(latencies(&hooked, &hooked_pki, &format!("latency-{round}"), LATENCY_CREATES));
        let mut none = || without.extend(latencies(&plain, &plain_pki, &format!("latency-{round}"), LATENCY_CREATES));
        if round % 2 == 0 {
            hook();
            none();
        } else {
            none();
            hook();
        }
    }
    with.sort();
    without.sort();
    let (p50, p99) = (|v: &[Duration]| percentile(v, 0.5), |v: &[Duration]| percentile(v, 0.99));
    println!(
        "one validating webhook: p50 {:?} vs {:?} without (+{:?}), p99 {:?} vs {:?} (+{:?}), {} creates each",
        p50(&with),
        p50(&without),
        p50(&with).saturating_sub(p50(&without)),
        p99(&with),
        p99(&without),
        p99(&with).saturating_sub(p99(&without)),
        with.len()
    );

    let (policy, none, ratio) = compare("policy", ("policy", &policed, &policed_pki), ("without", &plain, &plain_pki));
    println!("one ValidatingAdmissionPolicy of three validations: {policy:.0} vs {none:.0} creates/s without, median ratio {ratio:.3} (target >= 0.8)");
    let _ = std::fs::remove_dir_all(&base);
}
