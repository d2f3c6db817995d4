//! What the benchmarks share: starting the release binary and a small HTTPS client
//! that authenticates with the admin certificate Apiary wrote.

// Each benchmark uses some of these helpers.
#![allow(dead_code)]

use futures_rustls::rustls::pki_types::{
    pem::PemObject, CertificateDer, PrivateKeyDer, ServerName,
};
use futures_rustls::rustls::{ClientConfig, RootCertStore};
use futures_rustls::TlsConnector;
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::net::TcpStream;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub mod objects;

/// A fresh data directory for a benchmark's server, named for it and this process.
pub fn bench_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("apiary-bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a data directory");
    dir
}

/// A running release `apiary` on a free loopback port; killed when dropped.
pub struct Server {
    pub child: Child,
    /// `127.0.0.1:<port>`
    pub addr: String,
}

impl Server {
    /// Start `apiary --storage memory` in `data_dir` and wait for its ready line.
    pub fn start(data_dir: &Path) -> Server {
        Self::start_with(data_dir, &["--storage", "memory"])
    }

    /// Start `apiary` with `flags` in `data_dir` and wait for its ready line.
    pub fn start_with(data_dir: &Path, flags: &[&str]) -> Server {
        // APIARY_BENCH_BINARY runs another build (an A/B against an older commit).
        let binary = std::env::var_os("APIARY_BENCH_BINARY")
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_apiary").into());
        Self::start_binary(&binary, data_dir, flags)
    }

    /// [`Server::start_with`] of the binary at `binary`.
    pub fn start_binary(binary: &std::ffi::OsStr, data_dir: &Path, flags: &[&str]) -> Server {
        let mut child = Command::new(binary)
            .args(flags)
            .args([
                "--bind-address",
                "127.0.0.1",
                "--secure-port",
                "0",
                "--data-dir",
            ])
            .arg(data_dir)
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("apiary starts");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = BufReader::new(stderr).lines();
        let addr = loop {
            let line = lines
                .next()
                .expect("apiary exited before ready")
                .expect("stderr line");
            if let Some(rest) = line.split("apiary ready at https://").nth(1) {
                break rest.split_whitespace().next().expect("address").to_owned();
            }
        };
        // APIARY_BENCH_LOG=1 shows the server's log (with RUST_LOG, its debug lines).
        let echo = std::env::var_os("APIARY_BENCH_LOG").is_some();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                if echo {
                    eprintln!("apiary: {line}");
                }
            }
        });
        Server { child, addr }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A resident-memory figure of a process from /proc (`VmRSS:` or `VmHWM:`), in KiB.
pub fn memory_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn roots(pki: &Path) -> RootCertStore {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(pki.join("ca.crt")).expect("ca.crt") {
        roots
            .add(cert.expect("CA certificate"))
            .expect("CA is usable");
    }
    roots
}

/// A client that trusts the server's CA and presents no certificate (it brings a
/// bearer token instead).
pub fn tls_config_without_certificate(pki: &Path) -> Arc<ClientConfig> {
    let provider = Arc::new(futures_rustls::rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_root_certificates(roots(pki))
        .with_no_client_auth();
    Arc::new(config)
}

pub fn tls_config(pki: &Path) -> Arc<ClientConfig> {
    let roots = roots(pki);
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

pub type Tls = futures_rustls::client::TlsStream<TcpStream>;

pub async fn connect(addr: &str, config: &Arc<ClientConfig>) -> Tls {
    let tcp = TcpStream::connect(addr).await.expect("connect");
    tcp.set_nodelay(true).ok();
    let name = ServerName::try_from("127.0.0.1").expect("server name");
    TlsConnector::from(config.clone())
        .connect(name, tcp)
        .await
        .expect("TLS handshake")
}

/// Send one request and read one Content-Length response; returns the status code.
pub async fn round_trip(stream: &mut Tls, request: &[u8], buf: &mut Vec<u8>) -> u16 {
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
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse().ok())?
                })
                .expect("content-length");
            while buf.len() < end + 4 + len {
                let n = stream.read(&mut chunk).await.expect("read body");
                assert!(n > 0, "server closed mid-body");
                buf.extend_from_slice(&chunk[..n]);
            }
            buf.drain(..end + 4);
            return status;
        }
        let n = stream.read(&mut chunk).await.expect("read head");
        assert!(n > 0, "server closed");
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// How many concurrent clients the write benchmarks use.
pub const CONNECTIONS: usize = 64;

pub fn create_request(name: &str) -> Vec<u8> {
    let body = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","labels":{{"app":"bench"}}}},"data":{{"key":"value","other":"some more configuration text"}}}}"#
    );
    format!(
        "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Create ConfigMaps named `<prefix>-<connection>-<i>` from [`CONNECTIONS`] clients until
/// `stop` says so; returns how many were created.
pub fn create_concurrently(
    server: &Server,
    pki: &Path,
    prefix: &str,
    stop: impl Fn(Instant, usize) -> bool + Clone + Send + 'static,
) -> usize {
    create_concurrently_with(server, pki, prefix, create_request, stop)
}

/// [`create_concurrently`] with the create request `make` makes for each name.
pub fn create_concurrently_with(
    server: &Server,
    pki: &Path,
    prefix: &str,
    make: fn(&str) -> Vec<u8>,
    stop: impl Fn(Instant, usize) -> bool + Clone + Send + 'static,
) -> usize {
    let config = tls_config(pki);
    smol::block_on(async {
        let created = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let begin = Instant::now();
        let tasks: Vec<_> = (0..CONNECTIONS)
            .map(|c| {
                let (addr, config, prefix) =
                    (server.addr.clone(), config.clone(), prefix.to_owned());
                let (created, stop) = (created.clone(), stop.clone());
                smol::spawn(async move {
                    let mut stream = connect(&addr, &config).await;
                    let mut buf = Vec::with_capacity(4096);
                    for i in 0.. {
                        let done = created.load(std::sync::atomic::Ordering::Relaxed);
                        if stop(begin, done) {
                            break;
                        }
                        let request = make(&format!("{prefix}-{c}-{i}"));
                        let status = round_trip(&mut stream, &request, &mut buf).await;
                        assert_eq!(status, 201, "{}", String::from_utf8_lossy(&buf));
                        created.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await;
        }
        created.load(std::sync::atomic::Ordering::Relaxed)
    })
}

/// A request with a JSON body (possibly empty), asking for JSON.
pub fn request(method: &str, path: &str, body: &str) -> Vec<u8> {
    format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Send one request; its status and body.
pub async fn call(stream: &mut Tls, request: &[u8]) -> (u16, String) {
    let mut buf = Vec::new();
    let status = round_trip(stream, request, &mut buf).await;
    (status, String::from_utf8_lossy(&buf).into_owned())
}

/// One round of keep-alive `request`s from [`CONNECTIONS`] connections for `time`,
/// each answered 200; requests/s.
pub async fn requests_per_second(addr: &str, config: &Arc<ClientConfig>, request: &Arc<Vec<u8>>, time: Duration) -> f64 {
    let tasks: Vec<_> = (0..CONNECTIONS)
        .map(|_| {
            let (addr, config, request) = (addr.to_owned(), config.clone(), request.clone());
            smol::spawn(async move {
                let mut stream = connect(&addr, &config).await;
                let mut buf = Vec::with_capacity(4096);
                let (mut n, deadline) = (0u64, Instant::now() + time);
                while Instant::now() < deadline {
                    assert_eq!(round_trip(&mut stream, &request, &mut buf).await, 200);
                    n += 1;
                }
                n
            })
        })
        .collect();
    let mut total = 0;
    for t in tasks {
        total += t.await;
    }
    total as f64 / time.as_secs_f64()
}

/// The median of some figures.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// A client that presents a certificate for user `name` in group `group`, signed
/// here by the CA the server made (its `ca.key` in `pki`).
pub fn user_tls_config(pki: &Path, name: &str, group: &str) -> Arc<ClientConfig> {
    use rcgen::{CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair};
    let ca_key = KeyPair::from_pem(&std::fs::read_to_string(pki.join("ca.key")).expect("ca.key")).expect("CA key");
    let mut ca = CertificateParams::default();
    ca.distinguished_name = DistinguishedName::new();
    ca.distinguished_name.push(DnType::CommonName, "apiary-ca");
    ca.is_ca = IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let issuer = ca.self_signed(&ca_key).expect("CA");
    let mut leaf = CertificateParams::default();
    leaf.distinguished_name = DistinguishedName::new();
    leaf.distinguished_name.push(DnType::OrganizationName, group);
    leaf.distinguished_name.push(DnType::CommonName, name);
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let key = KeyPair::generate().expect("key");
    let cert = leaf.signed_by(&key, &issuer, &ca_key).expect("certificate");
    let certs = vec![CertificateDer::from(cert.der().to_vec())];
    let key = PrivateKeyDer::from_pem_slice(key.serialize_pem().as_bytes()).expect("key");
    let provider = Arc::new(futures_rustls::rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_root_certificates(roots(pki))
        .with_client_auth_cert(certs, key)
        .expect("client auth");
    Arc::new(config)
}

/// The `p`th percentile (0 to 1) of some figures.
pub fn percentile(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}
