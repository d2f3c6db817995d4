//! GET of one ConfigMap over keep-alive HTTPS with 64 concurrent connections, against
//! the real `apiary` binary (release build, memory storage) on a loopback port.
//!
//! Client and server share the machine, so the figure is what one box does end to end.
//! Prints requests/s and latency percentiles for several rounds, then their medians,
//! and the server's resident memory.
//!
//! Run: `cargo bench -p apiary-smol --bench https_get`

use futures_rustls::rustls::pki_types::{pem::PemObject, CertificateDer, PrivateKeyDer, ServerName};
use futures_rustls::rustls::{ClientConfig, RootCertStore};
use futures_rustls::TlsConnector;
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::net::TcpStream;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const CONNECTIONS: usize = 64;
const ROUNDS: usize = 5;
const ROUND_TIME: Duration = Duration::from_secs(3);
const GET: &[u8] = b"GET /api/v1/namespaces/default/configmaps/bench HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\nUser-Agent: apiary-bench\r\n\r\n";

fn tls_config(pki: &Path) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(pki.join("ca.crt")).expect("ca.crt") {
        roots.add(cert.expect("CA certificate")).expect("CA is usable");
    }
    let certs: Vec<_> = CertificateDer::pem_file_iter(pki.join("admin.crt"))
        .expect("admin.crt")
        .map(|c| c.expect("admin certificate"))
        .collect();
    let key = PrivateKeyDer::from_pem_file(pki.join("admin.key")).expect("admin.key");
    let provider = Arc::new(futures_rustls::rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_root_certificates(roots)
        .with_client_auth_cert(certs, key)
        .expect("client auth");
    Arc::new(config)
}

type Tls = futures_rustls::client::TlsStream<TcpStream>;

async fn connect(addr: &str, config: &Arc<ClientConfig>) -> Tls {
    let tcp = TcpStream::connect(addr).await.expect("connect");
    tcp.set_nodelay(true).ok();
    let name = ServerName::try_from("127.0.0.1").expect("server name");
    TlsConnector::from(config.clone()).connect(name, tcp).await.expect("TLS handshake")
}

/// Send one request and read one Content-Length response; returns the status code.
async fn round_trip(stream: &mut Tls, request: &[u8], buf: &mut Vec<u8>) -> u16 {
    stream.write_all(request).await.expect("write");
    stream.flush().await.expect("flush");
    buf.clear();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = std::str::from_utf8(&buf[..end]).expect("utf-8 head");
            let status: u16 = head[9..12].parse().expect("status");
            let len: usize = head
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length").then(|| v.trim().parse().ok())?
                })
                .expect("content-length");
            while buf.len() < end + 4 + len {
                let n = stream.read(&mut chunk).await.expect("read body");
                assert!(n > 0, "server closed mid-body");
                buf.extend_from_slice(&chunk[..n]);
            }
            return status;
        }
        let n = stream.read(&mut chunk).await.expect("read head");
        assert!(n > 0, "server closed");
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn rss_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let dir = std::env::temp_dir().join(format!("apiary-bench-{}", std::process::id()));
    let mut server = Command::new(env!("CARGO_BIN_EXE_apiary"))
        .args(["--storage", "memory", "--bind-address", "127.0.0.1", "--secure-port", "0", "--data-dir"])
        .arg(&dir)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("apiary starts");
    let stderr = server.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        let line = lines.next().expect("apiary exited before ready").expect("stderr line");
        if let Some(rest) = line.split("apiary ready at https://").nth(1) {
            break rest.split_whitespace().next().expect("address").to_owned();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    let config = tls_config(&dir.join("pki"));
    let pid = server.id();
    let idle_rss = rss_kib(pid, "VmRSS:");

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
    let peak_rss = rss_kib(pid, "VmHWM:");
    let _ = server.kill();
    let _ = server.wait();
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
